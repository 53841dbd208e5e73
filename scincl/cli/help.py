"""``COMMAND --help`` for people and ``COMMAND --help_all`` for every flag, each row read from where the flag is
declared: the function's signature and docstring, and for a ``**kwargs`` command its
:attr:`scincl.cli.Command.flags` rows (settings dataclass fields, the miner's, the trainer's, the losses',
``run_specter``'s and ``reproduce``'s).
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import attrs

from scincl.errors import InputError


@dataclasses.dataclass
class FlagInfo:
    """One flag of a command as ``--help`` lists it."""

    name: str
    type: str
    default: str
    source: str
    help: str = ""
    choices: Sequence[str] = ()  # the values it takes (a settings field's ``choices`` metadata)
    declared: bool = False  # help from the field's setting() metadata (:func:`setting_help`): shown as it is


def type_name(annotation: Any, default: Any = inspect.Parameter.empty) -> str:
    """A readable type: ``Optional[int]`` -> ``int``, ``Union[None, int, str, Sequence[int]]`` -> ``int|str|list``,
    a path -> ``str``; no hint -> the default's type (``any`` without one)."""
    if isinstance(annotation, str):
        match = re.fullmatch(r"Optional\[(.*)\]", annotation.replace("typing.", ""))
        return match.group(1) if match else annotation.replace("typing.", "")
    if annotation is inspect.Parameter.empty or annotation is Any:
        return "any" if default is inspect.Parameter.empty or default is None else type(default).__name__
    origin, args = typing.get_origin(annotation), [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Union:
        return "str" if set(args) == {str, os.PathLike} else "|".join(
            dict.fromkeys(type_name(a) for a in args if a is not os.PathLike))
    if origin in (list, tuple, set, frozenset) or (origin is not None and str(origin).startswith("<class 'collections")):
        return "list"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def default_text(value: Any) -> str:
    if value is inspect.Parameter.empty or value is dataclasses.MISSING:
        return "required"
    if isinstance(value, (list, tuple)) and not value:
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


def source_of(obj: Any) -> str:
    """``path/in/repo.py:Name`` of a function or class (the module name outside the repository)."""
    from scincl.settings.run import REPO_ROOT

    try:
        where = str(Path(inspect.getsourcefile(obj)).resolve().relative_to(REPO_ROOT))
    except (TypeError, ValueError, OSError):
        where = getattr(obj, "__module__", "?")
    return f"{where}:{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def documented(function: Callable) -> Dict[str, str]:
    """``{parameter: its help}`` from the docstring's ``:param x:`` or ``Args:`` entries (continuation lines, indented
    deeper, joined)."""
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


def signature_flags(function: Callable) -> List[FlagInfo]:
    """The flags (and positional arguments) of a function's signature, each with its docstring's help line."""
    function = inspect.unwrap(function)
    hints = typing.get_type_hints(function) if not isinstance(function, type) else {}
    helps = documented(function)
    out = []
    for name, param in inspect.signature(function).parameters.items():
        if param.kind is not param.VAR_KEYWORD:
            many = param.kind is param.VAR_POSITIONAL
            kind = type_name(hints.get(name, param.annotation), param.default)
            out.append(FlagInfo(name, f"{kind} ..." if many else kind,
                                "positional, any number" if many else default_text(param.default),
                                source_of(function), helps.get(name, "")))
    return out


def setting_help(name: str, meta: Mapping[str, Any]) -> str:
    """The help of a field declared with :func:`scincl.settings.schema.setting`: ``help (default from: source)``;
    for a SciNCL setting whose default comes from elsewhere also the paper's default and its source."""
    from scincl.settings.schema import FIELDS, SCINCL, help_of

    schema = FIELDS.get(name)
    if schema is None:
        return f"{meta['help']} (default from: {meta['source']})"
    if meta["source"] == schema.metadata["source"]:
        return help_of(name)
    return (f"{meta['help']} (default from: {meta['source']}; SciNCL default {getattr(SCINCL, name)!r}: "
            f"{schema.metadata['source']})")


def dataclass_flags(cls: type, exclude: Iterable[str] = (), defaults: Optional[Mapping[str, Any]] = None,
                    source: Optional[str] = None, defaults_source: Optional[str] = None) -> List[FlagInfo]:
    """The ``__init__`` fields of a settings dataclass as flags; ``defaults`` overrides a field's shown default
    (the text a preset gives it, or a value: from ``defaults_source`` when named); a field declared with
    :func:`scincl.settings.schema.setting` with its help and the source of its default."""
    hints, defaults = typing.get_type_hints(cls), defaults or {}
    out = []
    for f in attrs.fields(cls) if attrs.has(cls) else dataclasses.fields(cls):  # attrs: the spec's sections
        if not f.init or f.name in exclude:
            continue
        declared, where = "source" in f.metadata, source or source_of(cls)
        if f.name in defaults:  # a text (a preset's), or a value from defaults_source
            text = default_text(defaults[f.name]) if defaults_source else defaults[f.name]
            where = defaults_source or where
        else:
            factory = getattr(f, "default_factory", dataclasses.MISSING)
            text = default_text(factory() if factory is not dataclasses.MISSING else f.default)
        out.append(FlagInfo(f.name, type_name(hints.get(f.name, Any)), text, where,
                            setting_help(f.name, f.metadata) if declared else "",
                            f.metadata.get("choices", ()) if declared else (), declared=declared))
    return out


def miner_flags() -> List[FlagInfo]:
    """The triplet miner's flags: the fields of :class:`scincl.settings.spec.MinerSpec`."""
    from scincl.settings.spec import MinerSpec
    from scincl.triples import config

    rows = dataclass_flags(MinerSpec, source="scincl/settings/spec.py:MinerSpec")
    for row in rows:
        if row.name.endswith("_strategy"):
            row.help = f"strategies: {', '.join(config.STRATEGIES)}"
    return rows


def loss_flags() -> List[FlagInfo]:
    """The options the losses declare (:func:`scincl.model.losses.loss_options`): type and each loss's default."""
    from scincl.model.losses import loss_options

    return [FlagInfo(option.flag, type_name(option.type),
                     " / ".join(f"{loss} {default!r}" for loss, default in option.defaults.items()),
                     "scincl/model/losses/", f"an option of --loss {', '.join(option.losses)}")
            for option in loss_options().values()]


def training_flags(exclude: Iterable[str] = ("output_dir",), defaults: Optional[Dict[str, Any]] = None,
                   defaults_source: str = "scincl/model/train.py:PAPER_TRAINING_DEFAULTS") -> List[FlagInfo]:
    """``transformers.TrainingArguments`` fields with the defaults a command applies over transformers' (``train``'s
    SPECTER set-up unless ``defaults`` names another, e.g. ``pretrain``'s)."""
    from transformers import TrainingArguments

    if defaults is None:
        from scincl.model.train import PAPER_TRAINING_DEFAULTS as defaults
    return dataclass_flags(TrainingArguments, exclude, defaults, "transformers.TrainingArguments", defaults_source)


def run_specter_flag_info(every: bool = True) -> List[FlagInfo]:
    """``run_specter`` / ``run_specter_like`` / ``sweep``: the rows of the flags beyond OUTPUT_DIR that
    :func:`scincl.pipeline.run_command.run_specter_flag_groups` names: the :class:`~scincl.settings.run.RunSettings`
    fields with each preset's default, the spec's training leaves, ``--seeds``, then (``every``) stage control, the
    miner's and the trainer's other flags and those accepted without effect."""
    from scincl.model.train import train
    from scincl.pipeline.run_command import ACCEPTED_WITHOUT_EFFECT, run_specter_flag_groups
    from scincl.settings.presets import preset_defaults_text, preset_fields, preset_values
    from scincl.settings.run import RunSettings
    from scincl.settings.schema import FIELDS
    from scincl.settings.spec import section_leaves

    groups = run_specter_flag_groups()
    rows = dataclass_flags(RunSettings, exclude={f.name for f in dataclasses.fields(RunSettings)} - set(groups["settings"]),
                           defaults={name: preset_defaults_text(name) for name in preset_fields()})
    demo_training = preset_values("demo").get("training_options", {})

    def demo(name: str) -> str:
        return f" (demo {demo_training[name]!r}: experiments/presets/demo.py)" if name in demo_training else ""

    leaves = [name for name in section_leaves("recipe", "training") if name in groups["training"]]
    rows += [FlagInfo(name, type_name(FIELDS[name].type), default_text(FIELDS[name].default) + demo(name),
                      "scincl/settings/spec.py:TrainingSpec") for name in leaves]
    rows.append(FlagInfo("seeds", "str", "None", "scincl/settings/run.py:parse_seeds",
                         "e.g. 0..9 or 0,1,2: one run per seed on the same corpus"))
    if not every:
        return rows
    rows += [FlagInfo(name, "bool", "False", "scincl/pipeline/scincl_plan.py:ALL_STAGE_NAMES",
                      f"{'skip' if name.startswith('skip_') else 'rebuild'} the {name.split('_', 1)[1]} stage")
             for name in groups["stages"]]
    rows += [row for row in miner_flags() if row.name in groups["miner"]]
    trainer = {row.name: row for row in [*loss_flags(), *signature_flags(train), *training_flags(exclude=())]}
    rows += [dataclasses.replace(trainer[name], default=trainer[name].default + demo(name))
             for name in groups["training"] if name not in leaves]
    return rows + [FlagInfo(name, "any", "None", "scincl/pipeline/run_command.py:ACCEPTED_WITHOUT_EFFECT",
                            f"accepted for the original command, no effect: {why}")
                   for name, why in ACCEPTED_WITHOUT_EFFECT.items()]


def reproduce_flag_info() -> List[FlagInfo]:
    """``reproduce`` / ``run_experiment`` / ``collect_runs``: the experiment's and the recipe's fields, with the
    defaults defined there, and the recipe's former names."""
    from scincl.settings.experiment import Experiment
    from scincl.settings.recipe import RECIPE_ALIASES, Recipe

    recipe = {row.name: row for row in dataclass_flags(Recipe)}
    return dataclass_flags(Experiment, exclude={"kind", "recipe"}) + [
        *recipe.values(), *(FlagInfo(alias, recipe[name].type, recipe[name].default,
                                     "scincl/settings/recipe.py:RECIPE_ALIASES", f"the former name of --{name}")
                            for alias, name in RECIPE_ALIASES.items())]


def command_flags_info(command: Any, every: bool = True) -> List[FlagInfo]:
    """A command's flags: its signature's, then (``every``, or the ones its ``main`` names) its ``**kwargs`` rows;
    old names noted; a SciNCL setting without its own help gets the spec's where the command's default is the
    paper's (``pretrain``'s batch size is not "triplets per device")."""
    from scincl.settings.schema import FIELDS, SCINCL, help_of

    rows = {r.name: r for r in signature_flags(command.function)}
    if command.flags is not None and (every or set(command.main) - set(rows)):
        takes_every, own = "every" in inspect.signature(command.flags).parameters, set(rows)
        for row in (command.flags(every=every) if takes_every else command.flags()):
            if row.name in own and not rows[row.name].help:  # e.g. run_specter's --seeds: said where it is parsed
                rows[row.name].help = row.help
            rows.setdefault(row.name, row)
    old_names = {new: old for old, new in command.aliases.items()}
    for row in rows.values():
        paper = default_text(getattr(SCINCL, row.name)) if row.name in FIELDS else None
        if not row.help and not row.declared and paper and (row.default + " ").startswith(paper + " "):
            row.help = help_of(row.name)
        row.choices = row.choices or (FIELDS[row.name].metadata["choices"] if row.name in FIELDS else ())
        if row.name in old_names:
            row.help = f"(also --{old_names[row.name]}, its old name) {row.help}".strip()
    return list(rows.values())


# ---------------------------------------------------------------- --help text
def format_flag(row: FlagInfo, brief: bool = False, positional: bool = False) -> str:
    """``  --name TYPE  default: X; range R  [source]`` and the help below; ``brief``: no source, the help's first
    sentence (``--help``)."""
    from scincl.settings.values import RANGES

    place = row.default == "required" or row.default.startswith("positional")
    lead = (row.name.upper() if place else f"{row.name.upper()} (or --{row.name})" if positional else
            f"--{row.name}") if brief else row.name if place else f"--{row.name}"
    rule = RANGES.get(row.name)
    limits = (f"; choices {' | '.join(map(str, row.choices))}" if row.choices else
              f"; range {rule.describe()}" if rule is not None and rule.describe() else "")
    default = "" if brief and row.default == "required" else f"  default: {row.default}"
    text = f"  {lead} {row.type}{default}{limits}" + ("" if brief else f"  [{row.source}]")
    words = row.help.split(" (default from:")[0].split(" (SciNCL default")[0] if brief else row.help
    if brief and len(words) > 110:  # one line: the first sentence (a break outside parentheses)
        ends = [m.start() for m in re.finditer(r"[.;](?=\s)", words)
                if words[:m.start()].count("(") == words[:m.start()].count(")")]
        words = words[:ends[0]] if ends else words
    return text + (f"\n      {words}" if words else "")


def format_command_help(prog: str, name: str, command: Any, every: bool = False) -> str:
    """The help of one subcommand: usage (required positionals, the optional OUTPUT_DIR of a run that requires
    nothing, every other argument as a flag), docstring, positional arguments, then the flags a user sets
    (``every``: every flag with type, default, range and source)."""
    params = [p for p in command.own_parameters() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    optional = "output_dir" if params and params[0].name == "output_dir" and params[0].default is not params[0].empty \
        else None
    places = [p.name.upper() + (" ..." if p.kind is p.VAR_POSITIONAL else "") for p in params
              if p.kind is p.VAR_POSITIONAL or p.default is p.empty] + ([f"[{optional.upper()}]"] if optional else [])
    lines = [f"usage: {prog} {name} {' '.join(places)} [--flag value ...]".replace("  ", " "), "", command.doc(), ""]
    rows = command_flags_info(command, every=every)
    place = None if every else optional
    positional = [r for r in rows if r.default == "required" or r.default.startswith("positional") or r.name == place]
    flags = [r for r in rows if r not in positional]
    if positional:
        lines += ["Positional arguments:", *(format_flag(r, not every, r.name == place) for r in positional), ""]
    if every:
        lines += [f"Flags ({len(flags)}; --name value or --name=value, booleans also --name / --noname):"]
        return "\n".join(lines + [format_flag(r) for r in flags]) + "\n"
    if command.main:
        by_name = {r.name: r for r in flags}
        flags = [by_name[n] for n in command.main if n in by_name]
    lines += ["Flags (--name value or --name=value; booleans also --name / --noname):"]
    more = "; ".join(filter(None, [command.passes, "--wait: wait for a run writing the same output"]))
    return "\n".join(lines + [format_flag(r, brief=True) for r in flags] + [
        "", f"Also: {more}.", f"`{prog} {name} --help_all` lists every flag with its type, default, range and the "
        "source of the default."]) + "\n"


def print_help(commands: Mapping[str, Any], argv: Sequence[str], prog: str, every: bool) -> None:
    """``prog --help`` (every subcommand with its docstring's first line) or ``prog COMMAND --help`` /
    ``--help_all`` (its flags) on stdout."""
    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]], every=every))
    elif argv and not argv[0].startswith("-"):
        raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
    else:
        width = max((len(n) for n in commands), default=0)
        sys.stdout.write("\n".join([f"usage: {prog} COMMAND [--flag value ...]   ({prog} COMMAND --help: its flags)",
                                    "", "Commands:", *(f"  {n.ljust(width)}  {(c.doc().splitlines() or [''])[0]}"
                                                      for n, c in commands.items())]) + "\n")
