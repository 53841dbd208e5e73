"""``COMMAND --help`` (the flags a user sets) and ``--help_all`` (every flag with type, default, range and the source
of the default): one :class:`FlagInfo` row per parameter of a function or field of a settings class, read where it
is declared (a field's metadata: its help, choices and the source of its default).
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
import typing
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import attrs

from scincl.errors import InputError

EMPTY = inspect.Parameter.empty


@dataclasses.dataclass
class FlagInfo:
    """One flag of a command as ``--help`` lists it."""

    name: str
    type: str
    default: str
    source: str
    help: str = ""
    choices: Sequence[str] = ()


def type_name(annotation: Any, default: Any = EMPTY) -> str:
    """A readable type: ``Optional[int]`` -> ``int``, ``Union[int, str, Sequence[int]]`` -> ``int|str|list``, a path
    -> ``str``; no hint: the default's type (``any`` without one)."""
    if isinstance(annotation, str):  # a hint left as text
        return re.sub(r"^Optional\[(.*)\]$", r"\1", annotation.replace("typing.", ""))
    if annotation is EMPTY or annotation is Any:
        return "any" if default is EMPTY or default is None else type(default).__name__
    origin, args = typing.get_origin(annotation), [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Union:
        return "|".join(dict.fromkeys("str" if a is os.PathLike else type_name(a) for a in args))
    if origin in (list, tuple, set, frozenset) or getattr(origin, "__module__", "") == "collections.abc":
        return "list"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def default_text(value: Any) -> str:
    """A default as ``--help`` shows it: ``required`` when there is none, ``none`` for an empty list."""
    if value is EMPTY or value is dataclasses.MISSING or value is attrs.NOTHING:
        return "required"
    if isinstance(value, (list, tuple)) and not value:
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


def source_of(obj: Any) -> str:
    """``path/in/repo.py:Name`` of a function or class of scincl, ``package.Name`` of another package's."""
    if not obj.__module__.startswith("scincl"):
        return f"{obj.__module__.split('.')[0]}.{obj.__qualname__}"
    from scincl.settings.run import REPO_ROOT

    return f"{Path(inspect.getsourcefile(obj)).resolve().relative_to(REPO_ROOT)}:{obj.__qualname__}"


def documented(function: Any) -> Dict[str, str]:
    """``{parameter: its help}`` from the docstring's ``:param x:`` or ``Args:`` entries (deeper lines joined)."""
    names = set(inspect.signature(function).parameters)
    out: Dict[str, str] = {}
    current, indent = None, 0
    for line in inspect.cleandoc(function.__doc__ or "").splitlines():
        depth = len(line) - len(line.lstrip())
        if current and line.strip() and depth > indent:
            out[current] += " " + line.strip()
            continue
        match = re.match(r"^\s*(?::param\s+(\w+):|(\w+):)\s*(.*)$", line)
        current = match and (match.group(1) or match.group(2))
        if current in names and current not in out and match.group(3).strip():
            out[current], indent = match.group(3).strip(), depth
        else:
            current = None
    return out


def setting_help(name: str, meta: Mapping[str, Any]) -> str:
    """A declared field's help and the source of its default; a SciNCL setting's with the paper's default too."""
    from scincl.settings.schema import FIELDS, SCINCL, help_of

    if name in FIELDS and meta["source"] == FIELDS[name].metadata["source"]:
        return help_of(name)
    paper = f"; SciNCL default {getattr(SCINCL, name)!r}: {FIELDS[name].metadata['source']}" if name in FIELDS else ""
    return f"{meta['help']} (default from: {meta['source']}{paper})"


def flag_rows(owner: Any, defaults: Optional[Mapping[str, Any]] = None, defaults_source: str = "") -> List[FlagInfo]:
    """A row per parameter of a function or ``__init__`` field of a settings class (dataclass, attrs): type, default
    and source; a field declared with metadata (``source``, ``help``, ``choices``) with its help and choices, a
    function's parameter with its docstring's help. ``defaults``: values that replace the declared ones, from
    ``defaults_source``."""
    owner = inspect.unwrap(owner)
    fields: Dict[str, Any] = {}
    if isinstance(owner, type):
        fields = attrs.fields_dict(owner) if attrs.has(owner) else {f.name: f for f in dataclasses.fields(owner)}
    hints, helps = typing.get_type_hints(owner), ({} if fields else documented(owner))
    rows = []
    for name, param in inspect.signature(owner).parameters.items():
        field, many = fields.get(name), param.kind is param.VAR_POSITIONAL
        if param.kind is param.VAR_KEYWORD:
            continue
        meta = field.metadata if field is not None else {}
        default = param.default if field is None else _field_default(field)
        row = FlagInfo(name, type_name(hints.get(name, param.annotation), default) + " ..." * many,
                       "positional, any number" if many else default_text(default), source_of(owner),
                       setting_help(name, meta) if "source" in meta else helps.get(name, ""), meta.get("choices", ()))
        if name in (defaults or {}):
            row.default, row.source = default_text(defaults[name]), defaults_source
        rows.append(row)
    return rows


def _field_default(field: Any) -> Any:
    """A field's default (a mutable default: its factory's value)."""
    if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
        return field.default.factory()
    factory = getattr(field, "default_factory", dataclasses.MISSING)
    return field.default if factory is dataclasses.MISSING else factory()


def loss_flags() -> List[FlagInfo]:
    """The options the losses declare (:func:`scincl.model.losses.loss_options`): type and each loss's default."""
    from scincl.model.losses import loss_options

    return [FlagInfo(option.flag, type_name(option.type),
                     " / ".join(f"{loss} {default!r}" for loss, default in option.defaults.items()),
                     "scincl/model/losses/", f"an option of --loss {', '.join(option.losses)}")
            for option in loss_options().values()]


def training_flags(defaults: Optional[Mapping[str, Any]] = None,
                   source: str = "scincl/model/train.py:PAPER_TRAINING_DEFAULTS") -> List[FlagInfo]:
    """``transformers.TrainingArguments`` fields, with the defaults a command sets over transformers' (``train``'s
    SPECTER set-up unless ``defaults`` names another)."""
    from transformers import TrainingArguments

    from scincl.model.train import PAPER_TRAINING_DEFAULTS

    return flag_rows(TrainingArguments, PAPER_TRAINING_DEFAULTS if defaults is None else defaults, source)


def run_specter_flag_info() -> List[FlagInfo]:
    """``run_specter`` / ``run_specter_like`` / ``sweep``: a row per flag of
    :func:`scincl.pipeline.run_command.run_specter_flag_groups` beyond OUTPUT_DIR, in its order; a setting with
    each preset's value, a training flag with the demo preset's."""
    from scincl.model.train import train
    from scincl.pipeline.run_command import ACCEPTED_WITHOUT_EFFECT, run_specter_flag_groups
    from scincl.settings.presets import preset_defaults_text, preset_values
    from scincl.settings.run import RunSettings
    from scincl.settings.spec import MinerSpec, TrainingSpec

    groups = run_specter_flag_groups()
    settings = [row for row in flag_rows(RunSettings) if row.name in groups["settings"]]
    for row in settings:
        row.default = preset_defaults_text(row.name) or row.default
    demo = preset_values("demo").get("training_options", {})
    training = [*flag_rows(TrainingSpec), *loss_flags(), *flag_rows(train), *training_flags()]
    for row in training:
        row.default += f" (demo {demo[row.name]!r}: experiments/presets/demo.py)" if row.name in demo else ""
    seeds = FlagInfo("seeds", "str", "None", "scincl/settings/run.py:parse_seeds",
                     "e.g. 0..9 or 0,1,2: one run per seed on the same corpus")
    stages = [FlagInfo(name, "bool", "False", "scincl/pipeline/scincl_plan.py:ALL_STAGE_NAMES",
                       f"{'skip' if name.startswith('skip_') else 'rebuild'} the {name.split('_', 1)[1]} stage")
              for name in groups["stages"]]
    ignored = [FlagInfo(name, "any", "None", "scincl/pipeline/run_command.py:ACCEPTED_WITHOUT_EFFECT",
                        f"accepted for the original command, no effect: {why}")
               for name, why in ACCEPTED_WITHOUT_EFFECT.items()]
    rows: Dict[str, FlagInfo] = {}
    for row in [*settings, *training, *flag_rows(MinerSpec), seeds, *stages, *ignored]:  # the first row of a name
        rows.setdefault(row.name, row)
    return [rows[name] for names in groups.values() for name in names]


def reproduce_flag_info() -> List[FlagInfo]:
    """``reproduce`` / ``run_experiment`` / ``collect_runs``: the experiment's and the recipe's fields, then the
    recipe's former names."""
    from scincl.settings.experiment import Experiment
    from scincl.settings.recipe import RECIPE_ALIASES, Recipe

    recipe = {row.name: row for row in flag_rows(Recipe)}
    return [row for row in flag_rows(Experiment) if row.name not in ("kind", "recipe")] + [*recipe.values()] + [
        dataclasses.replace(recipe[name], name=alias, source="scincl/settings/recipe.py:RECIPE_ALIASES",
                            help=f"the former name of --{name}") for alias, name in RECIPE_ALIASES.items()]


def command_flags_info(command: Any, every: bool = True) -> List[FlagInfo]:
    """A command's rows: its function's, then (``every``, or the ones its ``main`` names) its ``flags``' rows; a
    SciNCL setting without help gets the paper's where the command's default is the paper's; old names noted."""
    from scincl.settings.schema import FIELDS, SCINCL, help_of

    rows = {row.name: row for row in flag_rows(command.function)}
    for row in command.flags() if command.flags and (every or set(command.main) - set(rows)) else ():
        own = rows.setdefault(row.name, row)
        own.help = own.help or row.help  # e.g. run_specter's --seeds: its help is where it is parsed
    old_names = {new: old for old, new in command.aliases.items()}
    for row in rows.values():
        if row.name in FIELDS:
            paper = default_text(getattr(SCINCL, row.name))
            row.help = row.help or (help_of(row.name) if (row.default + " ").startswith(paper + " ") else "")
            row.choices = row.choices or FIELDS[row.name].metadata["choices"]
        if row.name in old_names:
            row.help = f"(also --{old_names[row.name]}, its old name) {row.help}".strip()
    return list(rows.values())


# ---------------------------------------------------------------- --help text
def format_flag(row: FlagInfo, brief: bool = False, positional: bool = False) -> str:
    """``  --name TYPE  default: X; range R  [source]`` and the help below; ``brief`` (``--help``): no source, the
    help's first sentence; a positional argument as ``NAME`` (``positional``: also ``--name``)."""
    from scincl.settings.values import RANGES

    place = row.default == "required" or row.default.startswith("positional")
    lead = f"--{row.name}" if not (place or positional) else row.name.upper() if brief else row.name
    lead += f" (or --{row.name})" if positional and brief else ""
    rule = RANGES.get(row.name)
    limits = (f"; choices {' | '.join(map(str, row.choices))}" if row.choices else
              f"; range {rule.describe()}" if rule is not None and rule.describe() else "")
    default = "" if brief and row.default == "required" else f"  default: {row.default}"
    words = re.split(r" \((?:default from|SciNCL default)", row.help)[0] if brief else row.help
    if brief and len(words) > 110:  # the first sentence (a break outside parentheses)
        ends = [m.start() for m in re.finditer(r"[.;](?=\s)", words)
                if words[:m.start()].count("(") == words[:m.start()].count(")")]
        words = words[:ends[0]] if ends else words
    return f"  {lead} {row.type}{default}{limits}" + ("" if brief else f"  [{row.source}]") + (
        f"\n      {words}" if words else "")


def format_command_help(prog: str, name: str, command: Any, every: bool = False) -> str:
    """One subcommand's help: usage, docstring, positional arguments, then the flags a user sets (``every``: every
    flag with type, default, range and source)."""
    params = [p for p in inspect.signature(command.function).parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    optional = params[0].name if params and params[0].name == "output_dir" and params[0].default is not EMPTY else None
    places = [p.name.upper() + " ..." * (p.kind is p.VAR_POSITIONAL) for p in params
              if p.kind is p.VAR_POSITIONAL or p.default is EMPTY] + ([f"[{optional.upper()}]"] if optional else [])
    lines = [f"usage: {prog} {name} {' '.join(places)} [--flag value ...]".replace("  ", " "), "", command.doc(), ""]
    rows = command_flags_info(command, every=every)
    shown = None if every else optional
    positional = [r for r in rows if r.default == "required" or r.default.startswith("positional") or r.name == shown]
    flags = [r for r in rows if r not in positional]
    if positional:
        lines += ["Positional arguments:", *(format_flag(r, not every, r.name == shown) for r in positional), ""]
    if every:
        lines += [f"Flags ({len(flags)}; --name value or --name=value, booleans also --name / --noname):"]
        return "\n".join(lines + [format_flag(r) for r in flags]) + "\n"
    by_name = {r.name: r for r in flags}
    flags = [by_name[n] for n in command.main if n in by_name] if command.main else flags
    more = "; ".join(filter(None, [command.passes, "--wait: wait for a run writing the same output"]))
    return "\n".join(lines + ["Flags (--name value or --name=value; booleans also --name / --noname):"] + [
        format_flag(r, brief=True) for r in flags] + [
        "", f"Also: {more}.", f"`{prog} {name} --help_all` lists every flag with its type, default, range and the "
        "source of the default."]) + "\n"


def print_help(commands: Mapping[str, Any], argv: Sequence[str], prog: str, every: bool) -> None:
    """``prog --help`` (each subcommand with its docstring's first line) or ``prog COMMAND --help`` / ``--help_all``."""
    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]], every=every))
    elif argv and not argv[0].startswith("-"):
        raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
    else:
        width = max((len(n) for n in commands), default=0)
        sys.stdout.write("\n".join([f"usage: {prog} COMMAND [--flag value ...]   ({prog} COMMAND --help: its flags)",
                                    "", "Commands:", *(f"  {n.ljust(width)}  {(c.doc().splitlines() or [''])[0]}"
                                                      for n, c in commands.items())]) + "\n")
