"""What every ``piquet`` subcommand shares: the argument parser class, the ``--rules``/``--variant``
/``--seed`` arguments, one user-error type and the checks of output paths.

A subcommand reports a user error (a bad flag value, an unknown rule set, an agent spec that does
not build, an output path that cannot be written) by raising :class:`CLIError`; ``piquet``'s
:func:`~piquet_cli.main` turns it, and every error in :data:`USER_ERRORS`, into one line
``piquet COMMAND: REASON`` on stderr and exit status 2 (the status argparse uses for bad flags).

Seeds follow one policy: ``--seed N`` fixes every random choice of a run; without it a fresh seed
is drawn from the operating system and printed, so any run can be repeated.

>>> p = Parser(prog="piquet demo")
>>> add_rules_arguments(p)
>>> add_seed_argument(p)
>>> args = p.parse_args(["--rules", "classic", "--variant", "normand", "--seed", "3"])
>>> rules_from_args(args).name, resolve_seed(args)
('classic+normand', 3)
>>> rules_from_args(p.parse_args(["--rules", "bogus"]))
Traceback (most recent call last):
...
piquet_cli.common.CLIError: unknown rules preset 'bogus'; expected one of ...
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import re
import secrets
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piquet_cli.flags import reason as flag_reason
from piquet_env.rules import RULE_SETS, VARIANTS, Rules, make_rules

if TYPE_CHECKING:  # the train extra may be absent: the env-only commands import this module
    from piquet_training.settings.schema import S


class CLIError(ValueError):
    """A user error on the command line: the message says what was wrong (no traceback shown).
    One made of a library's error (:func:`cli_error`) keeps it as ``of``, with the ``prefix``
    written before it."""

    of: BaseException | None = None
    prefix: str = ""


USER_ERRORS: dict[str, str] = {
    "piquet_cli.common": "CLIError",
    "piquet_agents.checkpoint": "CheckpointError",
    "piquet_training.run_folder": "RunFolderError",
    "piquet_training.exploit.result": "ExploitError",
    "piquet_training.settings.schema": "ConfigError",
    "piquet_training.evaluation.ray_cluster": "ClusterError",
    "piquet_env.exact.policy": "ExactPolicyError",
}
"""Errors (module: class) that :func:`run_command` reports as ``piquet COMMAND: REASON``, exit 2.

Named rather than imported, so that the CLI starts without loading torch: an error class whose
module was never imported cannot have been raised.
"""


def user_error_types() -> tuple[type[BaseException], ...]:
    """The classes of :data:`USER_ERRORS` whose modules are loaded."""
    found = []
    for module, name in USER_ERRORS.items():
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


EXIT_USER_ERROR = 2
"""Exit status of a user error (bad flags, bad values, unusable paths), as argparse uses."""

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), the shell's convention."""

# ------------------------------------------------------------------------------- help text

_REST = [
    (re.compile(r":[a-z]+:`~?([^`]+)`"), r"\1"),  # :mod:`x`, :func:`~a.b` -> x, a.b
    (re.compile(r"``([^`]+)``"), r"\1"),  # ``code`` -> code
    (re.compile(r"`([^`]+)`"), r"\1"),  # `code` -> code
    (re.compile(r"^\.\. code-block::.*\n\n?", re.MULTILINE), ""),  # directive lines
]


def plain_text(doc: str) -> str:
    """A docstring with its reStructuredText markup removed, for ``--help``.

    >>> plain_text("``piquet train`` runs :mod:`piquet_training.ppo.trainer` (see `help`)")
    'piquet train runs piquet_training.ppo.trainer (see help)'
    """
    for pattern, repl in _REST:
        doc = pattern.sub(repl, doc)
    return doc


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the description's prose paragraphs to the terminal but keeps indented lines
    (examples, tables) exactly as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for para in re.split(r"\n\s*\n", text.strip("\n")):
            if any(line[:1].isspace() for line in para.splitlines()):
                out.append("\n".join(indent + line for line in para.splitlines()))
            else:
                out.append(
                    textwrap.fill(
                        " ".join(para.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                    )
                )
        return "\n\n".join(out)


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` for ``piquet``: reST markup is removed from the description,
    the epilog and every argument's help (whatever the formatter), prose is wrapped by
    :class:`HelpFormatter`, and errors are worded like every other ``piquet`` error: the usage,
    then ``piquet COMMAND: REASON``, exit status 2. Subparsers made through ``add_subparsers``
    inherit the class.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        for key in ("description", "epilog"):
            if kwargs.get(key):
                kwargs[key] = plain_text(kwargs[key])
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        """``ArgumentParser.add_argument`` with the help text's reST markup removed."""
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = plain_text(kwargs["help"])
        return super().add_argument(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        """Print the usage and ``PROG: MESSAGE`` to stderr and exit with status 2."""
        self.print_usage(sys.stderr)
        self.exit(EXIT_USER_ERROR, f"{self.prog}: {message}\n")


# ------------------------------------------------------------------------- shared arguments


def add_rules_arguments(p: argparse.ArgumentParser, default: str | None = "standard") -> None:
    """Add ``--rules NAME`` and the repeatable ``--variant NAME`` (see :func:`rules_from_args`);
    ``default=None`` leaves ``args.rules`` None when not given (a config's rules then hold)."""
    p.add_argument(
        "--rules",
        default=default,
        metavar="NAME",
        help=f"rule set: {' or '.join(RULE_SETS)}, or a preset with variants ('classic+mini'; "
        f"a variant alone, 'mini', is under the standard rules) (default: "
        f"{default or 'that of the config'})",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help=f"a variant to add: {', '.join(VARIANTS[:-1])} or {VARIANTS[-1]} (repeatable)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The :class:`~piquet_env.rules.Rules` named by ``--rules`` and ``--variant``.

    Raises :class:`CLIError` for an unknown rule set or variant, or a variant given twice.
    """
    try:
        return make_rules(args.rules, args.variant)
    except ValueError as err:
        raise cli_error(err) from None


def add_seed_argument(p: argparse.ArgumentParser, what: str = "the cards and the agents") -> None:
    """Add ``--seed N`` (read by :func:`resolve_seed`): ``what`` says what it seeds."""
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help=f"seed of {what} (default: a fresh seed, printed so the run can be repeated)",
    )


def resolve_seed(args: argparse.Namespace) -> int:
    """``--seed`` if given, else a fresh seed from the operating system; stored back in ``args``
    so the whole command uses (and can print) the same one."""
    if args.seed is None:
        args.seed = secrets.randbits(32)
    if args.seed < 0:
        raise CLIError(f"--seed must be 0 or more, got {args.seed}")
    return args.seed


def seed_text(seed: int) -> str:
    """How every command names the seed it used, so that a run can be repeated (one wording).

    >>> seed_text(123)
    'seed 123 (repeat with --seed 123)'
    """
    return f"seed {seed} (repeat with --seed {seed})"


def at_least(name: str, value: float, low: float) -> None:
    """Raise :class:`CLIError` naming flag ``name`` unless ``value >= low`` (NaN fails).

    >>> at_least("--deals", 0, 1)
    Traceback (most recent call last):
    ...
    piquet_cli.common.CLIError: --deals must be at least 1, got 0
    """
    if not value >= low:
        raise CLIError(f"{name} must be at least {low:g}, got {value:g}")


def positive(name: str, value: float) -> None:
    """Raise :class:`CLIError` naming flag ``name`` unless ``value > 0`` (NaN and inf fail)."""
    if not 0 < value < float("inf"):
        raise CLIError(f"{name} must be a positive number, got {value:g}")


# ---------------------------------------------------------------------------- output paths


def run_folder(kind: str, name: str) -> Path:
    """``runs/<kind>-<name>``, the name (an agent spec, a label) made a folder name.

    >>> run_folder("exploit", "mcts:100:policy=a/b.safetensors").as_posix()
    'runs/exploit-mcts_100_policy=a_b.safetensors'
    """
    return Path("runs") / (f"{kind}-" + re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_"))


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")  # pragma: no cover - a relative path's parents end at "."


def check_output_path(path: str | os.PathLike, flag: str, *, directory: bool = False) -> Path:
    """Check, before any work starts, that ``path`` can be written; return it as a ``Path``.

    ``directory=False``: ``path`` is a file to write (it may exist, as a writable file, not a
    directory), in a folder that exists: a missing folder is refused, never made (``--json
    /nonexistent/dir/x.json`` made ``/nonexistent/dir``). ``directory=True``: a run's own folder
    to write files into (it may exist, as a writable directory); missing parent folders are fine
    as long as the closest existing ancestor is a writable directory (they are created when
    writing). ``flag`` names the option in the error.

    Raises :class:`CLIError` saying what is in the way.
    """
    p = Path(path)
    if str(path) == "":
        raise CLIError(f"{flag}: the path is empty")
    if os.path.lexists(p):
        if directory and not p.is_dir():
            raise CLIError(f"{flag} {p}: exists and is not a directory")
        if not directory and p.is_dir():
            raise CLIError(f"{flag} {p}: is a directory; give a file name")
        if not os.access(p, os.W_OK | (os.X_OK if directory else 0)):
            raise CLIError(f"{flag} {p}: not writable")
        return p
    parent = p.parent if str(p.parent) else Path(".")
    base = _nearest_existing(parent)
    if not base.is_dir():
        raise CLIError(f"{flag} {p}: {base} is a file, not a directory")
    if not directory and base != parent:  # a file's folder is not made: a typo would make one
        raise CLIError(f"{flag} {p}: folder {parent} does not exist (create it, or give another)")
    if not os.access(base, os.W_OK | os.X_OK):
        raise CLIError(f"{flag} {p}: directory {base} is not writable")
    return p


def write_or_fall_back(
    path: str | os.PathLike,
    write: Callable[[Path], None],
    flag: str,
    command: str,
) -> Path:
    """Call ``write(path)`` (creating missing parent folders); if that fails with an ``OSError``,
    write to a fresh temporary folder instead and say so on stderr, so nothing computed is lost.

    Returns the path actually written. Raises the original error only if the fallback fails too.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target)
        return target
    except OSError as err:
        fallback = Path(tempfile.mkdtemp(prefix="piquet-")) / (target.name or "output")
        try:
            write(fallback)
        except OSError:
            raise err from None
        print(
            f"piquet {command}: could not write {flag} {target} ({err.strerror or err}); "
            f"written to {fallback} instead",
            file=sys.stderr,
        )
        return fallback


def cli_error(err: BaseException, prefix: str = "") -> CLIError:
    """The library's error ``err`` as a :class:`CLIError` (``prefix``, such as ``"--exact: "``,
    before its text) that keeps ``err`` (``of``), so that the settings it names are reported as
    the command's flags (:func:`piquet_cli.flags.reason`)."""
    wrapped = CLIError(f"{prefix}{err}")
    wrapped.of, wrapped.prefix = err, prefix
    return wrapped


def report_user_error(command: str | None, err: BaseException) -> int:
    """Print ``piquet COMMAND: REASON`` to stderr and return exit status 2; the settings and run
    folders that the library's errors name are written as the command's flags
    (:func:`piquet_cli.flags.reason`)."""
    prog = f"piquet {command}" if command else "piquet"
    print(f"{prog}: {flag_reason(command, err)}", file=sys.stderr)
    return EXIT_USER_ERROR


RAY_QUIET_LOGGERS = ("ray._common.deprecation",)
"""Ray's loggers that ``piquet`` commands silence below ERROR: RLlib's deprecation warnings,
about RLlib's own code, which a user of the command can do nothing about."""


def quiet_ray() -> None:
    """Before a command runs: Ray's worker processes print into their log files rather than
    onto this terminal (``RAY_LOG_TO_DRIVER=0`` unless set; the driver's own messages are
    :mod:`piquet_training.evaluation.ray_cluster`'s), and :data:`RAY_QUIET_LOGGERS` are
    silenced. Nothing is imported."""
    if "RAY_LOG_TO_DRIVER" not in os.environ:
        os.environ["RAY_LOG_TO_DRIVER"] = "0"
        constants = sys.modules.get("ray._private.ray_constants")  # Ray read it when imported
        if constants is not None and hasattr(constants, "RAY_LOG_TO_DRIVER"):
            constants.RAY_LOG_TO_DRIVER = False
    for name in RAY_QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


LIBRARY_LOGGER = "piquet_training"
"""The library's logger (:data:`piquet_training.evaluation.ray_cluster.LOGGER`: a cluster join
tried again, ...), whose warnings a command prints as its own lines; named here, so that a
command that needs no torch imports none."""


def run_command(
    command: str | None, func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace
) -> int:
    """Run one subcommand's ``func`` (after :func:`quiet_ray`): user errors become ``piquet
    COMMAND: REASON`` and exit status 2, the library's warnings ``piquet COMMAND: WARNING`` on
    stderr, Ctrl-C exits with 130 without a traceback; anything else is a bug and propagates."""
    quiet_ray()
    prog = f"piquet {command}" if command else "piquet"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: %(message)s"))
    log = logging.getLogger(LIBRARY_LOGGER)
    log.addHandler(handler)
    try:
        return int(func(args) or 0)
    except ValueError as err:
        if not isinstance(err, user_error_types()):
            raise
        return report_user_error(command, err)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        log.removeHandler(handler)


TRAIN_MODULES = ("torch", "tqdm", "rich", "matplotlib", "safetensors", "openskill")
"""The modules of the ``train`` extra that importing :mod:`piquet_training` needs (its
``TRAIN_EXTRA``, named here so that ``piquet`` can say what is missing without importing it)."""


def missing(modules: Sequence[str], extra: str = "train") -> str | None:
    """``needs A, B: pip install -e '.[EXTRA]'`` naming those of ``modules`` that are not
    installed, or None if all are.

    >>> missing(["json"]) is None
    True
    >>> missing(["json", "no_such_module_xyz"], "render")
    "needs no_such_module_xyz: pip install -e '.[render]'"
    """
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    return f"needs {', '.join(absent)}: pip install -e '.[{extra}]'" if absent else None


def require(modules: Sequence[str], extra: str = "train") -> None:
    """Raise :class:`CLIError` before any work starts if an optional dependency is missing,
    naming the packages and the extra that installs them (:func:`missing`).

    >>> require(["json"])
    >>> require(["json", "no_such_module_xyz"])
    Traceback (most recent call last):
    ...
    piquet_cli.common.CLIError: needs no_such_module_xyz: pip install -e '.[train]'
    """
    reason = missing(modules, extra)
    if reason:
        raise CLIError(reason)


def parse_specs(specs: Sequence[str], rules: Rules) -> None:
    """Build each agent spec once, so a bad spec fails (as :class:`CLIError`) before any game is
    played."""
    from piquet_agents.registry import make_agent

    for spec in specs:
        try:
            make_agent(spec, rules)
        except ValueError as err:
            if isinstance(err, user_error_types()):
                raise
            raise cli_error(err) from None
        except (OSError, ImportError) as err:
            raise CLIError(f"agent {spec!r}: {err}") from None


def add_settings_arguments(
    p: argparse.ArgumentParser, *, config_metavar: str, config_help: str, example: str
) -> None:
    """``--config``, ``--set``, ``--resume`` and ``--show-config``: where a run's settings come
    from, as :func:`build_settings` reads them (both training backends' parsers)."""
    p.add_argument("--config", metavar=config_metavar, help=config_help)
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help=f"override one setting (repeatable), e.g. --set {example}",
    )
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR (or a checkpoint file)")
    p.add_argument(
        "--show-config", action="store_true", help="print the effective settings as TOML and exit"
    )


def add_fanout_arguments(p: argparse.ArgumentParser, what: str = "the pairs") -> None:
    """``--workers N`` and ``--ray ADDRESS``: where ``what`` are played (:func:`fanout_from_args`
    reads them)."""
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help=f"tasks at a time playing {what}: processes here, or Ray tasks with --ray "
        "(default: 1; the results do not depend on it)",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="play on Ray: local (a Ray instance started here), auto (the cluster this machine "
        "joined with ray start) or ray://HOST:PORT; the same results as here, pair for pair "
        "(needs the ray extra; docs: Evaluating on a cluster)",
    )


def fanout_from_args(args: argparse.Namespace, *, join: bool = True) -> Any:
    """The :class:`~piquet_training.evaluation.executor.Fanout` of ``--workers`` and ``--ray``,
    checked: a bad value, or ``--ray`` without Ray installed, is a :class:`CLIError`. With
    ``join``, a cluster is joined here (:func:`join_cluster`); without, the caller joins it
    once its other checks are done."""
    from piquet_training.evaluation.executor import Fanout, RayNotInstalledError, import_ray

    at_least("--workers", args.workers, 1)
    try:
        fanout = Fanout(args.workers, args.ray)
    except ValueError as exc:
        raise CLIError(f"--ray: {exc}") from None
    if fanout.ray is not None:
        try:
            import_ray()
        except RayNotInstalledError as exc:
            raise cli_error(exc) from None
    if join:
        join_cluster(fanout)
    return fanout


def join_cluster(fanout: Any) -> None:
    """Join the cluster of ``fanout`` (``--ray auto`` or ``ray://``; nothing to do otherwise)
    once for the run, before any work, and say on standard error what was joined (its address,
    nodes and CPUs); one that cannot be joined is a :class:`CLIError` naming the address and
    what to check (:func:`~piquet_training.evaluation.ray_cluster.join_ray`)."""
    if fanout.ray in (None, "local"):
        return
    from piquet_training.evaluation.ray_cluster import ClusterError, join_ray

    try:
        joined = join_ray(fanout.workers, fanout.ray)
    except ClusterError as exc:  # a CLIError: no caller's ConnectionError handler rewords it
        raise cli_error(exc) from None
    if joined is not None:
        print(joined.line(), file=sys.stderr, flush=True)


def build_settings(
    cls: type[S], args: argparse.Namespace, backend: str, *, flags: dict[str, Any] | None = None
) -> S:
    """A run's settings of class ``cls`` from the parsed flags (``--resume``, ``--config``,
    ``--set``) and ``flags``, a backend's own options, in the order
    :func:`~piquet_training.settings.resolve.resolve_settings` decides."""
    from piquet_training.settings.resolve import resolve_settings

    return resolve_settings(
        cls,
        backend,
        resume=getattr(args, "resume", None),
        config=getattr(args, "config", None),
        overrides=getattr(args, "set", None) or [],
        flags=flags,
    )
