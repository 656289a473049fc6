"""Agent specs: every spec that cannot be built gets one kind of error, naming the spec and what is
wrong (issue 16: ``mcts:0`` and ``mcts:-3`` were refused with different reasons)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_agents.mcts import MCTSAgent
from piquet_agents.registry import AgentSpecError, make_agent
from piquet_env.rules import STANDARD

ITERATIONS = "iterations must be a positive integer (or 0 with a time=SECONDS option)"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("mcts:0", f"{ITERATIONS}, got '0'"),
        ("mcts:-3", f"{ITERATIONS}, got '-3'"),
        ("mcts:abc", f"{ITERATIONS}, got 'abc'"),
        ("mcts:1.5", f"{ITERATIONS}, got '1.5'"),
        ("mcts:0:c=1", f"{ITERATIONS}, got '0'"),
        ("mcts:100:c=-1", "option c must be a finite number >= 0, got '-1'"),
        ("mcts:100:c=nan", "option c must be a finite number >= 0, got 'nan'"),
        ("mcts:100:c=inf", "option c must be a finite number >= 0, got 'inf'"),
        ("mcts:100:c=high", "option c='high' is not a number"),
        ("mcts:100:time=0", "option time must be a finite number > 0, got '0'"),
        ("mcts:100:time=-0.5", "option time must be a finite number > 0, got '-0.5'"),
        ("mcts:100:scale=0", "option scale must be a finite number > 0, got '0'"),
        ("mcts:100:rollout=perfect", "option rollout must be one of ('greedy', 'heuristic')"),
        ("mcts:100:c=1:c=2", "option c given twice"),
        ("mcts:100:c", "bad option 'c'; options are c=VALUE, time=VALUE"),
        ("mcts:100:depth=3", "bad option 'depth=3'"),
        ("alphazero", "not an agent name nor an existing path; expected random, heuristic"),
        ("heuristic:seed=x", "the heuristic's one option is seed=N"),
        ("random:3", "not an agent name nor an existing path"),
        ("heuristic2", "not an agent name nor an existing path"),
        ("runs/x/policy.safetensors", "no checkpoint file or run directory at this path"),
        ("policy.safetensors", "no checkpoint file or run directory at this path"),
        ("", "expected a non-empty string"),
        ("   ", "expected a non-empty string"),
    ],
)
def test_bad_specs_get_one_kind_of_error(spec: str, reason: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, STANDARD)
    assert str(info.value).startswith(f"agent spec {(spec.strip() or spec)!r}: ")
    assert reason in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_spec_that_is_not_a_string() -> None:
    with pytest.raises(AgentSpecError, match="agent spec 5: expected a non-empty string"):
        make_agent(5, STANDARD)  # type: ignore[arg-type]
    with pytest.raises(AgentSpecError, match="rules must be a Rules object"):
        make_agent("random", "standard")  # type: ignore[arg-type]


def test_an_unusable_checkpoint_is_an_agent_spec_error_caused_by_the_checkpoint(
    tmp_path: Path,
) -> None:
    from piquet_agents.checkpoint import CheckpointError

    path = tmp_path / "junk.safetensors"
    path.write_bytes(b"junk")
    with pytest.raises(AgentSpecError, match="cannot use the checkpoint: .*junk.safetensors") as e:
        make_agent(str(path), STANDARD)
    assert isinstance(e.value.__cause__, CheckpointError)
    empty = tmp_path / "run"
    empty.mkdir()
    with pytest.raises(AgentSpecError, match="is a directory without policy.safetensors"):
        make_agent(str(empty), STANDARD)


def test_good_specs() -> None:
    a = make_agent("mcts:0:time=0.05", STANDARD, seed=1)
    assert isinstance(a, MCTSAgent) and a.iterations is None and a.time_limit == 0.05
    b = make_agent("MCTS:30:C=0:rollout=greedy:scale=10", STANDARD)
    assert (b.iterations, b.c, b.rollout, b.scale) == (30, 0.0, "greedy", 10.0)
    assert make_agent(" Heuristic ", STANDARD).name == "heuristic"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iterations": True}, "iterations must be a non-negative int"),
        ({"iterations": 10, "c": float("nan")}, "c must be >= 0"),
        ({"iterations": 10, "scale": float("inf")}, "scale > 0"),
        ({"iterations": 10, "time_limit": float("nan")}, "time_limit must be a finite"),
        ({"iterations": 10, "exchange_alternatives": -1}, "exchange_alternatives"),
        ({"iterations": 10, "exchange_budget": 0}, "exchange_budget"),
    ],
)
def test_search_agent_arguments_are_checked(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MCTSAgent(**kwargs)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=30),
        st.builds(
            lambda a, b: f"mcts:{a}:{b}",
            st.text(max_size=8),
            st.text(max_size=12),
        ),
    )
)
def test_any_text_is_an_agent_or_an_agent_spec_error(spec: str) -> None:
    try:
        agent = make_agent(spec, STANDARD)
    except AgentSpecError as exc:
        assert str(exc).startswith("agent spec ")
    else:
        assert agent.name


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        # int() refuses '²' (a plain ValueError before) and takes '٣' and '１' (taken before)
        ("mcts:²:policy=baseline", "with policy= iterations must be a positive integer, got '²'"),
        ("mcts:200:policy=baseline:batch=²", "option batch must be a positive integer, got '²'"),
        ("mcts:٣:policy=baseline", "with policy= iterations must be a positive integer, got '٣'"),
        ("mcts:٣", f"{ITERATIONS}, got '٣'"),
        ("mcts:１", f"{ITERATIONS}, got '１'"),
        ("mcts:10:c=١", "option c='١' is not a number"),
        ("mcts:10:policy=baseline:mix=０.5", "option mix='０.5' is not a number"),
    ],
)
def test_counts_and_numbers_in_other_digits_are_refused_by_name(spec: str, reason: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, STANDARD)
    assert str(info.value) == f"agent spec {spec!r}: {reason} (digits 0-9 only)"


@pytest.mark.parametrize("spec", ["mcts:+5", "mcts:1_0", "mcts:20:policy=baseline:batch=+4"])
def test_counts_are_plain_digits(spec: str) -> None:
    """``int()`` takes a sign and underscores; the grammar's counts are digits alone."""
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, STANDARD)
    assert "must be a positive integer" in str(info.value)
    assert str(info.value).endswith(f"got {spec.rpartition('=' if '=' in spec else ':')[2]!r}")


@pytest.fixture
def colon_run(tmp_path: Path) -> Path:
    """A run directory whose path holds ``:`` (its policy: the shipped one)."""
    from piquet_agents.baseline import BASELINE_PATH

    run = tmp_path / "run:2"
    run.mkdir()
    (run / "policy.safetensors").symlink_to(BASELINE_PATH)
    return run


def test_a_path_with_a_colon_is_a_path(colon_run: Path) -> None:
    from piquet_agents.guided_search import GuidedSearchAgent
    from piquet_agents.policy import PolicyAgent
    from piquet_agents.registry import spec_files

    policy = str(colon_run / "policy.safetensors")
    assert isinstance(make_agent(str(colon_run), STANDARD), PolicyAgent)
    for spec, batch in [
        (f"mcts:20:policy={colon_run}", 16),
        (f"mcts:20:policy={policy}", 16),
        (f"mcts:20:policy={colon_run}:batch=4:margin=2", 4),
        (f"mcts:20:mix=0.5:policy={policy}:batch=4", 4),
    ]:
        agent = make_agent(spec, STANDARD)
        assert isinstance(agent, GuidedSearchAgent) and agent.batch == batch, spec
        assert spec_files(spec) == [policy]
    # a path that does not exist runs to the next option, and the error names all of it
    missing = f"mcts:20:policy={colon_run}x:y:batch=4"
    with pytest.raises(AgentSpecError) as info:
        make_agent(missing, STANDARD)
    assert str(info.value) == (
        f"agent spec {missing!r}: policy: no checkpoint file or run directory at '{colon_run}x:y'"
    )
    with pytest.raises(AgentSpecError, match="bad option 'btach=4'; with policy= the options"):
        make_agent(f"mcts:20:policy={colon_run}:btach=4", STANDARD)


def test_an_existing_path_wins_over_an_option(tmp_path: Path) -> None:
    from piquet_agents.baseline import BASELINE_PATH
    from piquet_agents.registry import guided_options

    odd = tmp_path / "p:batch=4"  # a folder whose name reads as an option
    odd.mkdir()
    (odd / "policy.safetensors").symlink_to(BASELINE_PATH)
    spec = f"mcts:20:policy={odd}:batch=2"
    assert guided_options(spec.split(":")) == [f"policy={odd}", "batch=2"]
    assert make_agent(spec, STANDARD).batch == 2
    assert guided_options(f"mcts:20:policy={tmp_path}/p:batch=3".split(":")) == [
        f"policy={tmp_path}/p",
        "batch=3",
    ]


def test_the_new_forms_build(tmp_path):
    """``heuristic:seed=N`` keeps its seed when reset; ``PATH:sample`` and ``baseline:sample``
    sample; a tabular file builds its agent; FORMS comes from the table of kinds."""
    from piquet_agents.registry import FORMS, KINDS

    assert tuple((k.form, k.help) for k in KINDS) == FORMS
    fixed = make_agent("heuristic:seed=7", STANDARD, seed=3)
    fixed.reset(99)
    assert fixed.seed == 7 and fixed.name == "heuristic:seed=7"
    plain = make_agent("heuristic", STANDARD, seed=3)
    plain.reset(99)
    assert plain.seed == 99
    pytest.importorskip("torch")
    sampled = make_agent("baseline:sample", STANDARD, seed=1)
    assert not sampled.greedy and sampled.name == "baseline:sample"
    assert make_agent("baseline", STANDARD).greedy


# ------------------------------------------------------------------ py:MODULE:FACTORY agents

AGENT_FILE = """\
from piquet_agents import HeuristicAgent


class Mine(HeuristicAgent):
    pass


def make(rules, seed, label="mine", weights=""):
    agent = Mine(seed=seed)
    agent.name = label
    agent.rules_seen = rules.name
    agent.weights = weights
    return agent


def broken(rules, seed):
    raise RuntimeError("no weights here")


def not_an_agent(rules, seed):
    return 42


NOT_CALLABLE = 3
"""


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_agent.py"
    path.write_text(AGENT_FILE)
    return path


def test_a_py_spec_builds_the_agent_of_a_file_or_module(agent_file: Path, monkeypatch) -> None:
    from piquet_agents.registry import spec_files
    from piquet_env.rules import CLASSIC

    agent = make_agent(f"py:{agent_file}:make", CLASSIC, seed=3)
    assert agent.name == "mine" and agent.rules_seen == "classic" and agent.seed == 3
    assert spec_files(f"py:{agent_file}:make") == [str(agent_file)]
    again = make_agent(f"PY:{agent_file}:make", STANDARD)  # the file runs once per process
    assert type(again) is type(agent)
    monkeypatch.syspath_prepend(str(agent_file.parent))
    by_name = make_agent("py:my_agent:make", STANDARD)
    assert by_name.name == "mine" and by_name.rules_seen == "standard"
    assert spec_files("py:my_agent:make") == [str(agent_file)]
    opts = make_agent(f"py:{agent_file}:make:label=x:weights=C:/w:a.pt", STANDARD)
    assert opts.name == "x" and opts.weights == "C:/w:a.pt"  # a value runs to the next KEY=
    colon = agent_file.parent / "a:b"
    colon.mkdir()
    (colon / "agent.py").write_text(AGENT_FILE)
    assert make_agent(f"py:{colon}/agent.py:make:label=y", STANDARD).name == "y"


def test_a_py_agent_plays_a_match(agent_file: Path) -> None:
    from piquet_training.evaluation.duplicate import evaluate

    rep = evaluate(f"py:{agent_file}:make", "heuristic", STANDARD, n=3, seed=0)
    assert rep.mean_diff == 0.0  # the heuristic against itself, seat for seat
    assert rep.agent_a == f"py:{agent_file}:make"


@pytest.mark.parametrize(
    ("rest", "reason"),
    [
        ("{file}", "expected py:MODULE:FACTORY or py:FILE.py:FACTORY, then :KEY=VALUE options"),
        ("{file}:", "expected py:MODULE:FACTORY or py:FILE.py:FACTORY"),
        ("{file}:not-a-name", "expected py:MODULE:FACTORY"),
        ("{file}:make:loose", "expected py:MODULE:FACTORY"),
        ("my agent:make", "MODULE a dotted name or FILE a .py file"),
        ("{file}:make:label=a:label=b", "option label given twice"),
        ("{file}:make:colour=red", "make(rules, seed, colour=...) failed: TypeError"),
        ("{dir}/absent.py:make", "no Python file at "),
        ("no_such_module_xyz:make", "cannot import 'no_such_module_xyz'"),
        ("{file}:nothing", "has no 'nothing'"),
        ("{file}:NOT_CALLABLE", "NOT_CALLABLE is not callable"),
        ("{file}:broken", "broken(rules, seed) failed: RuntimeError: no weights here"),
        ("{file}:not_an_agent", "not_an_agent(rules, seed) returned int, not an agent"),
    ],
)
def test_a_bad_py_spec_says_what_is_wrong(agent_file: Path, rest: str, reason: str) -> None:
    spec = "py:" + rest.format(file=agent_file, dir=agent_file.parent)
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, STANDARD)
    assert str(info.value).startswith(f"agent spec {spec!r}: ")
    assert reason in str(info.value)


def test_a_py_file_that_fails_to_import_names_the_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("raise ImportError('needs rlcard')\n")
    with pytest.raises(AgentSpecError, match="importing .*bad.py' failed: ImportError: needs"):
        make_agent(f"py:{bad}:make", STANDARD)
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def make(:\n")
    with pytest.raises(AgentSpecError, match="failed: SyntaxError"):
        make_agent(f"py:{syntax}:make", STANDARD)
