"""Hostile tabular policy files (``policy.npz``, the solver's agent spec): every bad file is refused
on loading with one line naming it (``ExactPolicyError``), and from the command line with exit
status 2, never a traceback, a crash mid-game, a silent bad play or a large allocation.

Each file is a real solution of tiny rules (CFR+, 20 iterations), then corrupted."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from piquet_env.exact import policy as P
from piquet_env.exact import solve as S
from piquet_env.exact import tree as T
from piquet_env.rules import make_rules

TINY = "mini[suits=2,ranks=2,hand_size=1]"
"""Four cards, one each, a talon of two: 784 information states, 852 slots, 1,424 histories."""


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    tree = T.build_tree(make_rules(TINY))
    solver = S.CFRPlus(tree).run(20)
    path = tmp_path_factory.mktemp("solved") / "policy.npz"
    return P.TabularPolicy.from_tree(tree, solver.average, iterations=20).save(path)


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files}


def _meta(arrays: dict[str, np.ndarray]) -> dict:
    return json.loads(arrays["meta"].tobytes().decode())


def _write(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    np.savez(path, **arrays)
    return path


def _with(solved: Path, tmp_path: Path, **changes: np.ndarray) -> Path:
    arrays = _arrays(solved)
    arrays.update(changes)
    return _write(tmp_path / "bad.npz", arrays)


def _refused(path: Path, match: str) -> None:
    with pytest.raises(P.ExactPolicyError, match=match) as info:
        P.TabularPolicy.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_solution_itself_loads(solved):
    table = P.TabularPolicy.load(solved)
    assert table.rules == make_rules(TINY) and table.key.shape == (784, 2)
    assert table.probs.size == 852 and table.meta["iterations"] == 20


@pytest.mark.parametrize(
    "content",
    [b"", b"PK\x03\x04 garbage", bytes(range(256)) * 4],
    ids=["empty", "a zip's magic then garbage", "garbage"],
)
def test_an_empty_or_garbage_file_is_refused(tmp_path, content):
    path = tmp_path / "t.npz"
    path.write_bytes(content)
    _refused(path, "not a tabular policy file")


def test_a_truncated_file_is_refused(solved, tmp_path):
    data = solved.read_bytes()
    for cut in (1000, len(data) // 2, len(data) - 10):
        path = tmp_path / f"cut{cut}.npz"
        path.write_bytes(data[:cut])
        _refused(path, "not a tabular policy file")


def test_a_damaged_member_is_refused(solved, tmp_path):
    # the central directory intact, a member's compressed bytes flipped: a bad stream or CRC
    data = bytearray(solved.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("probs.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 40
    data[start : start + 20] = bytes(20)
    path = tmp_path / "flipped.npz"
    path.write_bytes(bytes(data))
    _refused(path, "not a tabular policy file")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "fifo.npz"
    import os

    os.mkfifo(path)
    _refused(path, "is a FIFO")


def test_deeply_nested_metadata_is_refused(solved, tmp_path):
    nested = ("[" * 100_000 + "]" * 100_000).encode()
    path = _with(solved, tmp_path, meta=np.frombuffer(nested, dtype=np.uint8))
    _refused(path, "metadata is not JSON")


def test_a_zero_dimensional_key_is_refused(solved, tmp_path):
    path = _with(solved, tmp_path, key=np.array(7, dtype=np.uint64))
    _refused(path, r"member 'key' has shape \(\), not 2-dimensional")


def test_an_object_array_is_refused_unread(solved, tmp_path):
    arrays = _arrays(solved)
    arrays["probs"] = np.array([{"p": 1}] * 852, dtype=object)
    path = tmp_path / "pickled.npz"
    np.savez(path, allow_pickle=True, **arrays)
    _refused(path, "member 'probs' has dtype object")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (np.nan, "probability nan"),
        (np.inf, "probability inf"),
        (-0.25, "probability -0.25"),
    ],
)
def test_a_probability_that_is_not_a_finite_non_negative_number_is_refused(
    solved, tmp_path, value, match
):
    probs = _arrays(solved)["probs"]
    probs[5] = value
    _refused(_with(solved, tmp_path, probs=probs), match)


def test_probabilities_not_summing_to_one_are_refused(solved, tmp_path):
    arrays = _arrays(solved)
    probs, start = arrays["probs"], arrays["slot_start"]
    i = int(np.flatnonzero(np.diff(start) == 2)[0])  # an information state of two actions
    probs[start[i] : start[i + 1]] = 0.0  # zero everywhere: no move to play
    _refused(
        _with(solved, tmp_path, probs=probs), f"information state {i}'s probabilities sum to 0"
    )
    probs[start[i] : start[i + 1]] = 0.75  # 1.5 in all
    _refused(_with(solved, tmp_path, probs=probs), "sum to 1.5, not 1")


def test_an_action_out_of_range_or_not_legal_is_refused(solved, tmp_path):
    action = _arrays(solved)["slot_action"]
    action[3] = 99
    _refused(_with(solved, tmp_path, slot_action=action), "plays action 99, outside 0..34")
    action = _arrays(solved)["slot_action"]
    start = _arrays(solved)["slot_start"]
    i = int(np.flatnonzero(np.diff(start) == 2)[0])
    a = start[i]
    action[a], action[a + 1] = action[a + 1], action[a]  # the same set, out of order
    _refused(_with(solved, tmp_path, slot_action=action), "not its legal actions")


def test_a_bad_player_is_refused(solved, tmp_path):
    player = _arrays(solved)["player"]
    player[10] = 2
    _refused(_with(solved, tmp_path, player=player), "information state 10 has player 2")


def test_slot_starts_that_do_not_ascend_are_refused(solved, tmp_path):
    start = _arrays(solved)["slot_start"]
    start[5], start[6] = start[6], start[5]
    _refused(_with(solved, tmp_path, slot_start=start), "slot starts are not ascending")


def test_a_member_declaring_more_than_the_tree_needs_is_refused_before_reading(solved, tmp_path):
    # TINY's tree has 1,424 histories: the cap is 2 x 1,424 + 16 elements per array; 8 MiB of
    # zeros (compressed to a few KiB) declares far more and is refused by its declared size
    arrays = _arrays(solved)
    arrays["probs"] = np.zeros(1 << 21, dtype=np.float32)
    path = tmp_path / "zeros.npz"
    np.savez_compressed(path, **arrays)
    assert path.stat().st_size < 100_000
    _refused(path, r"member 'probs' declares 8,388,\d+ bytes, more than")


def test_a_header_declaring_a_huge_shape_is_refused_before_reading(solved, tmp_path):
    # a small member whose .npy header claims 10**12 elements: refused from the header alone
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)}
    )
    path = tmp_path / "huge.npz"
    arrays = _arrays(solved)
    with zipfile.ZipFile(path, "w") as zf:
        for name, arr in arrays.items():
            if name == "probs":
                zf.writestr("probs.npy", header.getvalue())  # the magic and header, no data
            else:
                buf = io.BytesIO()
                np.save(buf, arr)
                zf.writestr(f"{name}.npy", buf.getvalue())
    _refused(path, r"member 'probs' has shape \(1000000000000,\), more than")


def test_rules_too_large_for_a_tree_are_refused(solved, tmp_path):
    arrays = _arrays(solved)
    meta = _meta(arrays)
    meta["rules"] = "standard"
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    _refused(_write(tmp_path / "std.npz", arrays), "too large to solve exactly")


def test_the_command_line_gives_one_line_and_exit_2(solved, tmp_path, capsys):
    from piquet_cli import main

    cut = tmp_path / "t.npz"
    cut.write_bytes(solved.read_bytes()[:1000])
    probs = _arrays(solved)["probs"]
    probs[0] = np.nan
    nan = _with(solved, tmp_path, probs=probs)
    for path in (cut, nan):
        rc = main(["eval", str(path), "random", "--rules", TINY, "--deals", "2"])
        err = capsys.readouterr().err
        assert rc == 2
        assert err.count("\n") == 1 and err.startswith("piquet eval: ") and str(path) in err
