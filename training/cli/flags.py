"""The one map from the library's setting names to ``piquet``'s flags.

The library's user errors name what to change as settings, by the library's own names
(:class:`piquet_env.errors.Setting`: ``rules='mini'``, ``resume``); a run folder's refusal names
its folder and the run files it holds (``RunFolderError.path`` and ``held``). Here, and only here,
they become the flags of the command that was run (``--rules mini``, ``--resume``): :func:`reason`
is what ``piquet COMMAND: REASON`` prints.

>>> from piquet_env.errors import Message, Setting
>>> err = ValueError(Message("too large; use ", Setting("rules", "mini")))
>>> str(err)
"too large; use rules='mini'"
>>> reason("exploit", err)
'too large; use --rules mini'
>>> reason("train", ValueError(Message("run with ", Setting("tensorboard", False))))
'run with --set tensorboard=false'
"""

from __future__ import annotations

from piquet_env.errors import Setting, message_of
from piquet_env.untrusted import short_json

FLAGS: dict[str, str] = {
    "backend": "--backend",
    "iterations": "--iterations",
    "mode": "--mode",
    "overrides": "--set",
    "overwrite": "--overwrite",
    "pairs": "--deals",
    "ray": "--ray",
    "resume": "--resume",
    "rules": "--rules",
    "save_dir": "--save-games",
    "seed": "--seed",
    "work_dir": "--work",
}
"""Each setting's flag, the same in every command that has it."""

COMMAND_FLAGS: dict[str, dict[str, str]] = {
    "exploit": {
        "target": "TARGET",
        "budget": "--steps N (env steps) or --minutes M (a time cap)",
        "reference": "--reference",
        "start": "--start",
        "search": "--search",
        "belief": "--belief",
        "expert_rounds": "--expert-rounds",
        "expert_leaves": "--expert-leaves",
        "expert_pairs": "--expert-pairs",
        "expert_floor": "--expert-floor",
        "pairs": "--eval-deals",
        "out_dir": "--out",
    },
}
"""A command's own flag for a setting, where it is not :data:`FLAGS`'s."""

ELSEWHERE = {
    "train": "train elsewhere with --set out_dir=DIR (--out DIR for --backend rllib)",
    "exploit": "exploit elsewhere with --out DIR",
    "solve": "solve elsewhere with --out DIR",
}
"""How each command puts a run in another folder: the flags of a run folder's refusal."""


def flag(setting: Setting, command: str | None = None) -> str:
    """``setting`` as ``command``'s flag: ``--rules mini``, ``--resume``, ``--set key=value``
    for a setting with no flag of its own (lower-case booleans, as ``--set`` reads them)."""
    name = COMMAND_FLAGS.get(command or "", {}).get(setting.name) or FLAGS.get(setting.name)
    value = setting.value
    if name is None:
        if value is None:
            return f"--set {setting.name}"
        text = str(value).lower() if isinstance(value, bool) else str(value)
        return f"--set {setting.name}={text}"
    if value is None or value is True:
        return name
    return f"{name} {value}"


def reason(command: str | None, err: BaseException) -> str:
    """What ``piquet COMMAND`` says of the user error ``err``: a run folder's refusal of a new
    run in the command's flags (:data:`ELSEWHERE`), a structured message with each setting as
    :func:`flag`, else the error's text."""
    of = getattr(err, "of", None)  # a CLIError made of the library's error
    if isinstance(of, BaseException):
        return f"{getattr(err, 'prefix', '')}{reason(command, of)}"
    held = getattr(err, "held", ())
    if type(err).__name__ == "RunFolderError" and held:
        path = getattr(err, "path", "")
        resume = "--resume" if command == "exploit" else f"--resume {path}"  # exploit: --out's
        elsewhere = ELSEWHERE.get(command or "", "run elsewhere")
        return (
            f"{path} holds a run already ({', '.join(held)}): continue it with {resume}, replace "
            f"it with --overwrite, or {elsewhere}"
        )
    message = message_of(err)
    if message is not None:
        return message.render(lambda s: flag(s, command))
    setting = getattr(err, "setting", "")
    if isinstance(setting, str) and setting:
        return _setting_reason(command, err, setting)
    if isinstance(err, KeyError) and err.args:  # KeyError's str() adds quotes
        return str(err.args[0])
    return str(err).strip() or type(err).__name__


def _setting_reason(command: str | None, err: BaseException, setting: str) -> str:
    """An error about one setting (its ``setting`` attribute, as
    :class:`~piquet_training.exploit.result.ExploitError` has): its text with the setting's name
    made the flag; a resumed run's setting that differs from the run's own (``recorded`` in
    ``path``, ``asked`` now) says which flag to give."""
    name = flag(Setting(setting), command)
    recorded, path = getattr(err, "recorded", None), getattr(err, "path", "")
    if recorded is not None:
        if setting == "backend":
            given = f"{name} {recorded}"
            return f"--resume: {path} is a run of {given}: continue it with {given}"
        asked = getattr(err, "asked", None)
        return (
            f"--resume: {path} is a run of {name} {short_json(recorded)}, not "
            f"{short_json(asked)}: resume it with the same {name}, or give another "
            f"{flag(Setting('out_dir'), command)}"
        )
    if setting == "budget":
        return f"give the budget: {name}"
    text = str(err)
    prefix = f"{setting}: "
    return f"{name}: {text[len(prefix) :]}" if text.startswith(prefix) else text
