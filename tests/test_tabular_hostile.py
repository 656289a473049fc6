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


def _bomb(solved: Path, path: Path, rules: str, **members: tuple[str, tuple[int, ...]]) -> Path:
    """The solution ``solved`` renamed to ``rules``, with each member of ``members`` (name ->
    dtype, shape) replaced by that many zeros, deflated as they are written: a real zip bomb,
    some MiB that decompress to far more."""
    arrays = _arrays(solved)
    meta = _meta(arrays)
    meta["rules"] = rules
    meta["rules_fields"] = make_rules(rules).to_dict()
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            if name not in members:
                buf = io.BytesIO()
                np.save(buf, arr)
                zf.writestr(f"{name}.npy", buf.getvalue())
                continue
            descr, shape = members[name]
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                header, {"descr": descr, "fortran_order": False, "shape": shape}
            )
            size = int(np.prod(shape)) * np.dtype(descr).itemsize
            with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                f.write(header.getvalue())
                zeros = bytes(1 << 20)
                for lo in range(0, size, len(zeros)):
                    f.write(zeros[: min(len(zeros), size - lo)])
    return path


def _refused_within(path: Path, match: str, most: int) -> None:
    """Refused as :func:`_refused`, having allocated no more than ``most`` bytes at its peak."""
    import tracemalloc

    tracemalloc.start()
    try:
        _refused(path, match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < most, f"{peak:,} bytes at the peak"


BOMB_RULES = "mini[suits=3,hand_size=3]"
"""Rules whose tree could need some 200 M elements an array: a 1.2 GiB key passes their caps."""


def test_a_zip_bomb_key_is_refused_by_its_declared_size_before_it_is_decompressed(solved, tmp_path):
    # 64 MiB of zero keys deflated to some 64 KiB: within what the rules' caps allow, refused
    # because keys are hashes, which never compress (a saved policy stores them at 1.0); the
    # peak is the rules' size estimate, a few MiB, never the 64 MiB
    path = _bomb(solved, tmp_path / "bomb.npz", BOMB_RULES, key=("<u8", (1 << 22, 2)))
    assert path.stat().st_size < 1 << 20
    _refused_within(
        path, r"member 'key' declares 67,108,864 bytes stored in [\d,]+: keys", 16 << 20
    )


def test_members_that_do_not_fit_together_are_refused_before_any_is_decompressed(solved, tmp_path):
    # honest keys, but 32 MiB of probabilities for the 852 slots the actions declare
    path = _bomb(solved, tmp_path / "probs.npz", BOMB_RULES, probs=("<f8", (1 << 22,)))
    _refused_within(path, r"its arrays do not fit together \(.*probs \(4194304,\)", 16 << 20)
    path = _bomb(solved, tmp_path / "wide.npz", TINY, player=("<i8", (784,)))
    _refused(path, "member 'player' has dtype int64, wider than int8")


def test_a_member_whose_zip_entry_and_header_disagree_is_refused(solved, tmp_path):
    # the header says 10 probabilities, the entry holds the 852 of the solution
    arrays = _arrays(solved)
    buf = io.BytesIO()
    np.save(buf, arrays["probs"])
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10,)}
    )
    data = buf.getvalue()
    lying = header.getvalue() + data[len(header.getvalue()) :]
    path = tmp_path / "lying.npz"
    with zipfile.ZipFile(path, "w") as zf:
        for name, arr in arrays.items():
            b = io.BytesIO()
            np.save(b, arr)
            zf.writestr(f"{name}.npy", lying if name == "probs" else b.getvalue())
    _refused(path, r"member 'probs' declares [\d,]+ bytes, not the 168 of its header's shape")


def _eval(path: Path, capsys) -> str:
    from piquet_cli import main

    argv = ["eval", str(path), "random", "--rules", TINY, "--deals", "20", "--no-progress"]
    rc = main([*argv, "--seed", "1"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("piquet eval: "), err
    return err


def test_an_empty_policy_is_refused_on_loading(solved, tmp_path, capsys):
    empty = {
        "key": np.zeros((0, 2), np.uint64),
        "player": np.zeros(0, np.int8),
        "legal": np.zeros(0, np.uint64),
        "slot_start": np.zeros(1, np.int64),
        "slot_action": np.zeros(0, np.int8),
        "probs": np.zeros(0, np.float32),
    }
    path = _with(solved, tmp_path, **empty)
    _refused(path, "no information states")
    assert "no information states" in _eval(path, capsys)


def test_a_policy_whose_keys_are_all_equal_is_refused_on_loading(solved, tmp_path, capsys):
    key = _arrays(solved)["key"]
    key[:] = key[0]
    player = np.zeros(len(key), np.int8)
    path = _with(solved, tmp_path, key=key, player=player)
    _refused(path, "information states 0 and 1 have the same key")
    assert "have the same key" in _eval(path, capsys)


def test_a_policy_playing_an_illegal_move_is_one_line_in_play(solved, tmp_path, capsys):
    # each information state's actions moved to other ones, consistently: the file passes every
    # check of its own, and its moves are not the game's
    arrays = _arrays(solved)
    action = arrays["slot_action"].astype(np.int64)
    start, legal = arrays["slot_start"], arrays["legal"].copy()
    forced = np.flatnonzero(np.diff(start) == 1)
    for i in forced:
        a = int(action[start[i]])
        action[start[i]] = a + 1 if a < 30 else a - 1
        legal[i] = np.uint64(1) << np.uint64(action[start[i]])
    path = _with(solved, tmp_path, slot_action=action.astype(np.int8), legal=legal)
    P.TabularPolicy.load(path)  # its own checks pass
    err = _eval(path, capsys)
    assert "where the game allows" in err and str(path) in err
