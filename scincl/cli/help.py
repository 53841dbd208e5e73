"""``--help`` of every ``cli_*.py`` command: its docstring and every flag it takes, with type, default and source.

:func:`scincl.cli.run_cli` answers ``CMD --help`` (and ``-h``) itself, on stdout with exit code 0,
before fire sees the command line: fire's own help lists only a function's signature, so a command
taking ``**kwargs`` (``run_specter``'s settings, ``train``'s ``TrainingArguments``) showed almost
none of its flags. The flags come from one place each:

- the command's signature (type hint, default; source: the function);
- for a ``**kwargs`` command, what :func:`scincl.cli.accepts_flags` registered with it: a
  ``describe`` callable returning :class:`FlagInfo` rows built from the settings where they are
  defined (:func:`dataclass_flags` for ``RunSettings``, ``Recipe``, ``Experiment``: their fields' ``setting()``
  metadata;
  :func:`miner_flags` for the triplet miner's flags; :func:`training_flags` for the Trainer);
- the value range of :data:`scincl.cli.flags.RANGES`, where the flag has one (a SciNCL setting's
  range and help text: :mod:`scincl.settings.schema`).
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from scincl.settings.run import REPO_ROOT

HELP_TOKENS = ("--help", "-h")


@dataclass
class FlagInfo:
    """One flag of a command as ``--help`` lists it."""

    name: str
    type: str
    default: str
    source: str
    help: str = ""
    choices: Sequence[str] = ()  # the values it takes (a settings field's ``choices`` metadata)
    declared: bool = False  # help from the field's setting() metadata (:func:`setting_help`): shown as it is


def _type_name(annotation: Any, default: Any = inspect.Parameter.empty) -> str:
    """``Optional[int]`` -> ``int``; ``Tuple[int, ...]`` -> ``Tuple[int, ...]``; no hint -> the default's type."""
    if isinstance(annotation, str):
        annotation = annotation.replace("typing.", "")
        match = re.fullmatch(r"Optional\[(.*)\]", annotation)
        return match.group(1) if match else annotation
    if annotation is inspect.Parameter.empty or annotation is Any:
        if default is inspect.Parameter.empty or default is None:
            return "any"
        return type(default).__name__
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        return _type_name(args[0])
    if typing.get_origin(annotation) is typing.Union and set(args) == {str, os.PathLike}:
        return "str"  # a path (scincl.io.PathLike)
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default_text(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return "required"
    if isinstance(value, (list, tuple)) and not value:
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


def source_of(obj: Any) -> str:
    """``path/in/repo.py:Name`` of a function or class (the module name outside the repository)."""
    try:
        path = Path(inspect.getsourcefile(obj)).resolve()
        where = str(path.relative_to(REPO_ROOT))
    except (TypeError, ValueError, OSError):
        where = getattr(obj, "__module__", "?")
    return f"{where}:{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def signature_flags(function: Callable) -> List[FlagInfo]:
    """The flags (and positional arguments) of a function's signature."""
    hints = typing.get_type_hints(function) if not isinstance(function, type) else {}
    source = source_of(inspect.unwrap(function))
    out = []
    for name, param in inspect.signature(function).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            continue
        if param.kind is param.VAR_POSITIONAL:
            out.append(FlagInfo(name, f"{_type_name(hints.get(name, param.annotation))} ...", "positional, any number",
                                source))
            continue
        out.append(FlagInfo(name, _type_name(hints.get(name, param.annotation), param.default),
                            _default_text(param.default), source))
    return out


def setting_help(name: str, meta: Dict[str, Any]) -> str:
    """The help of a field declared with :func:`scincl.settings.schema.setting`: ``help (default from: source)``;
    for a SciNCL setting (a :mod:`scincl.settings.schema` field of the same name) also the paper's default and its
    source, unless the field's default comes from there too (then :func:`~scincl.settings.schema.help_of`)."""
    from scincl.settings.schema import FIELDS, SCINCL, help_of

    schema = FIELDS.get(name)
    if schema is None:
        return f"{meta['help']} (default from: {meta['source']})"
    if meta["source"] == schema.metadata["source"]:
        return help_of(name)
    return (f"{meta['help']} (default from: {meta['source']}; SciNCL default {getattr(SCINCL, name)!r}: "
            f"{schema.metadata['source']})")


def dataclass_flags(cls: type, exclude: Iterable[str] = (), defaults: Optional[Dict[str, str]] = None,
                    source: Optional[str] = None) -> List[FlagInfo]:
    """The fields of a settings dataclass as flags (``defaults`` overrides a field's shown default, e.g. the values
    the run presets give it). A field declared with :func:`scincl.settings.schema.setting` gives its help and the
    source of its default (:func:`setting_help`); another field no help."""
    hints = typing.get_type_hints(cls)
    defaults, exclude = defaults or {}, set(exclude)
    out = []
    for f in dataclasses.fields(cls):
        if f.name in exclude:
            continue
        if f.name in defaults:
            default = defaults[f.name]
        elif f.default is not dataclasses.MISSING:
            default = _default_text(f.default)
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = _default_text(f.default_factory())  # type: ignore[misc]
        else:
            default = "required"
        meta = f.metadata
        text = setting_help(f.name, meta) if "help" in meta else ""
        out.append(FlagInfo(f.name, _type_name(hints.get(f.name, Any)), default, source or source_of(cls), text,
                            meta.get("choices", ()), declared="help" in meta))
    return out


def miner_flags() -> List[FlagInfo]:
    """The triplet miner's flags: per slot (``easy_positives_k_max``, ...) and the strategy options, from the
    fields of :class:`scincl.triples.miner.MinerConfig` (one per flag)."""
    from scincl.triples import config, miner

    rows = dataclass_flags(miner.MinerConfig, source="scincl/triples/miner.py:MinerConfig")
    for row in rows:
        if row.name.endswith("_strategy"):
            row.help = f"strategies: {', '.join(config.STRATEGIES)}"
    return rows


def loss_flags() -> List[FlagInfo]:
    """The options the losses declare (:func:`scincl.model.losses.loss_options`): type and each loss's default."""
    from scincl.model.losses import loss_options

    return [FlagInfo(option.flag, _type_name(option.type), " / ".join(f"{loss} {default!r}" for loss, default
                                                                      in option.defaults.items()),
                     "scincl/model/losses/", f"an option of --loss {', '.join(option.losses)}")
            for option in loss_options().values()]


def training_flags(exclude: Iterable[str] = (), defaults: Optional[Dict[str, Any]] = None,
                   defaults_source: str = "scincl/model/train.py:PAPER_TRAINING_DEFAULTS") -> List[FlagInfo]:
    """``transformers.TrainingArguments`` fields with the defaults a command applies over transformers'
    (``train``'s SPECTER set-up unless ``defaults``/``defaults_source`` name another, e.g. ``pretrain``'s)."""
    from transformers import TrainingArguments

    if defaults is None:
        from scincl.model.train import PAPER_TRAINING_DEFAULTS as defaults

    exclude = set(exclude)
    out = []
    for f in dataclasses.fields(TrainingArguments):
        if not f.init or f.name in exclude:
            continue
        if f.name in defaults:
            default, source = _default_text(defaults[f.name]), defaults_source
        else:
            value = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else inspect.Parameter.empty)  # type: ignore[misc]
            default, source = _default_text(value), "transformers.TrainingArguments"
        out.append(FlagInfo(f.name, _type_name(f.type), default, source))
    return out


def command_flags_info(function: Callable) -> List[FlagInfo]:
    """Every flag a command takes: its signature, then what :func:`scincl.cli.accepts_flags` registered.

    A SciNCL setting's help text (what it is, the paper's default and its source) comes from
    :mod:`scincl.settings.schema`, unless its row was declared with its own source (:func:`setting_help`); the
    default shown is the command's own.
    """
    from scincl.settings.schema import FIELDS, help_of

    rows = signature_flags(function)
    describe = getattr(function, "_describe_flags", None)
    if describe is not None:
        seen = {r.name for r in rows}
        for row in describe():
            if row.name not in seen:
                rows.append(row)
                seen.add(row.name)
    old_names = {new: old for old, new in getattr(function, "_flag_aliases", {}).items()}
    for row in rows:
        row.help = row.help if row.declared else help_of(row.name) or row.help
        row.choices = row.choices or (FIELDS[row.name].metadata["choices"] if row.name in FIELDS else ())
        if row.name in old_names:  # scincl.cli.flag_aliases
            row.help = (row.help + " " if row.help else "") + f"(also --{old_names[row.name]}, its old name)"
    return rows


def _range(row: FlagInfo) -> str:
    """``; range >= 0`` (the flag's rule in :data:`scincl.cli.flags.RANGES`) or ``; choices a | b``."""
    from scincl.settings.values import RANGES

    rule = RANGES.get(row.name)
    if row.choices:
        return f"; choices {' | '.join(map(str, row.choices))}"
    return f"; range {rule.describe()}" if rule is not None and rule.describe() else ""


def format_flag(row: FlagInfo) -> str:
    """``  --name TYPE  default: X  [source: ...]`` (positional arguments without the dashes)."""
    lead = row.name if row.default.startswith("positional") or row.default == "required" else f"--{row.name}"
    text = f"  {lead} {row.type}  default: {row.default}{_range(row)}  [{row.source}]"
    return text + (f"\n      {row.help}" if row.help else "")


def format_command_help(prog: str, name: str, function: Callable) -> str:
    """The help of one subcommand: usage, docstring, then every flag with type, default and source."""
    rows = command_flags_info(function)
    positional = [r.name.upper() for r in rows if r.default == "required" or r.default.startswith("positional")]
    places, optional = [], []
    for param in inspect.signature(function).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            places.append(f"{param.name.upper()} ...")
        elif param.kind is param.POSITIONAL_OR_KEYWORD:
            (places if param.default is param.empty else optional).append(param.name.upper())
    # flags with a default may also be given by position, in signature order (fire); shown when few
    places += [f"[{o}]" for o in optional] if len(optional) <= 2 else []
    usage = f"usage: {prog} {name} {' '.join(places)} [--flag value ...]"
    from scincl.cli.flags import filled_doc

    doc = filled_doc(function)
    flags = [r for r in rows if r.default != "required" and not r.default.startswith("positional")]
    lines = [usage, "", doc, ""]
    if positional:
        lines += ["Positional arguments:"] + [format_flag(r) for r in rows if r.name.upper() in positional] + [""]
    lines += [f"Flags ({len(flags)}; --name value or --name=value, booleans also --name / --noname):"]
    lines += [format_flag(r) for r in flags]
    return "\n".join(lines) + "\n"


def format_command_list(prog: str, commands: Dict[str, Callable]) -> str:
    """``prog --help``: every subcommand with the first line of its docstring."""
    from scincl.cli.flags import filled_doc

    width = max((len(n) for n in commands), default=0)
    lines = [f"usage: {prog} COMMAND [--flag value ...]   ({prog} COMMAND --help: its flags)", "", "Commands:"]
    for name, function in commands.items():
        first = (filled_doc(function).splitlines() or [""])[0]
        lines.append(f"  {name.ljust(width)}  {first}")
    return "\n".join(lines) + "\n"


def help_requested(argv: Sequence[str]) -> bool:
    """``--help`` / ``-h`` among the arguments (before a bare ``--``, after which they are fire's)."""
    for token in argv:
        if token == "--":
            return False
        if token in HELP_TOKENS:
            return True
    return False
