"""The command line of the ``cli_*.py`` fire front ends: tables of :class:`Command` rows with full signatures
(``scincl/commands/<name>.py``), checked before fire runs them (:func:`run_cli`), and their ``--help`` rows, read
where each flag is declared. The library never imports it."""
from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import logging
import os
import re
import signal
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import attrs
import fire

from scincl.errors import InputError, os_error_line, unknown_flag_error
from scincl.output_lock import waiting
from scincl.provenance import discard_pending
from scincl.settings.experiment import Experiment
from scincl.settings.presets import preset_defaults_text, preset_values
from scincl.settings.recipe import RECIPE_ALIASES, Recipe
from scincl.settings.run import REPO_ROOT, RunSettings
from scincl.settings.schema import FIELDS, SCINCL, check_settings, help_of
from scincl.settings.spec import MinerSpec, TrainingSpec
from scincl.settings.values import RANGES, check_value, simple_type

EMPTY = inspect.Parameter.empty
HELP_ALL = "--help_all"
PBG_OVERRIDE_FLAGS = ("-p", "--p", "--param", "--overrides")
WAIT = "wait"  # every command: wait for the run holding an output's lock (scincl/output_lock.py)


# ---------------------------------------------------------------- --help rows, read where each flag is declared
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
    """A readable type: ``Optional[int]`` -> ``int``, ``Union[int, str, Sequence[int]]`` -> ``int|str|list``."""
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
    if value is EMPTY or isinstance(value, (list, tuple)) and not value:
        return "required" if value is EMPTY else "none"
    return repr(value) if isinstance(value, str) else str(value)


def source_of(obj: Any) -> str:
    """``path/in/repo.py:Name`` of a function or class of scincl, ``package.Name`` of another package's."""
    if not obj.__module__.startswith("scincl"):
        return f"{obj.__module__.split('.')[0]}.{obj.__qualname__}"
    return f"{Path(inspect.getsourcefile(obj)).resolve().relative_to(REPO_ROOT)}:{obj.__qualname__}"


def documented(function: Any, doc: Optional[str] = None) -> Dict[str, str]:
    """``{parameter: its help}`` from the ``:param x:`` or ``Args:`` entries of ``doc`` (else the docstring): an entry
    is ``x: text`` and the lines below it indented deeper; the first entry of a name counts."""
    names = "|".join(inspect.signature(function).parameters)
    entries = re.findall(rf"^( *)(?::param\s+)?\b({names}):[ \t]*(\S.*(?:\n\1 +\S.*)*)",
                         inspect.cleandoc(doc or function.__doc__ or ""), re.M)
    return {name: " ".join(line.strip() for line in text.splitlines()) for _, name, text in reversed(entries)}


def flag_rows(owner: Any, defaults: Optional[Mapping[str, Any]] = None, source: str = "",
              doc: Optional[str] = None) -> List[FlagInfo]:
    """A row per parameter of a function or field of a settings class (dataclass, attrs), a default in ``defaults``
    from ``source``; help: a field's own (with the paper's default), the docstring's, or the SciNCL setting's."""
    owner, defaults = inspect.unwrap(owner), defaults or {}
    fields: Dict[str, Any] = ((attrs.fields_dict(owner) if attrs.has(owner) else
                               {f.name: f for f in dataclasses.fields(owner)}) if isinstance(owner, type) else {})
    hints, helps = typing.get_type_hints(owner), ({} if fields else documented(owner, doc))
    rows = []
    for name, param in inspect.signature(owner).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            continue
        field, many, setting = fields.get(name), param.kind is param.VAR_POSITIONAL, FIELDS.get(name)
        meta, paper = getattr(field, "metadata", {}), setting and getattr(SCINCL, name)
        # a mutable default: its factory's value (attrs.Factory, dataclasses' default_factory)
        factory = getattr(getattr(field, "default", None), "factory", None) or getattr(field, "default_factory", None)
        default = defaults[name] if name in defaults else factory() if callable(factory) else param.default
        if "source" in meta and not (setting and meta["source"] == setting.metadata["source"]):  # its own default
            paper_note = f"; SciNCL default {paper!r}: {setting.metadata['source']}" if setting else ""
            help = f"{meta['help']} (default from: {meta['source']}{paper_note})"
        else:  # a SciNCL setting's help where the default is the paper's
            paper_default = "source" in meta or default_text(default) == default_text(paper)
            help = helps.get(name) or (help_of(name) if setting and paper_default else "")
        rows.append(FlagInfo(name, type_name(hints.get(name, param.annotation), default) + " ..." * many,
                             "positional, any number" if many else default_text(default),
                             source if name in defaults else source_of(owner), help,
                             meta.get("choices") or (setting.metadata["choices"] if setting else ())))
    return rows


def loss_flags() -> List[FlagInfo]:
    """The options the losses declare (:func:`scincl.model.losses.loss_options`): type and each loss's default."""
    from scincl.model.losses import loss_options

    return [FlagInfo(option.flag, type_name(option.type),
                     " / ".join(f"{loss} {default!r}" for loss, default in option.defaults.items()),
                     "scincl/model/losses/", f"an option of --loss {', '.join(option.losses)}")
            for option in loss_options().values()]


def training_flags(module: str = "scincl.model.train", name: str = "PAPER_TRAINING_DEFAULTS") -> List[FlagInfo]:
    """``transformers.TrainingArguments``' rows with the defaults a command sets (``module.name``; ``train``'s)."""
    from transformers import TrainingArguments

    values = getattr(importlib.import_module(module), name)
    return flag_rows(TrainingArguments, values, f"{module.replace('.', '/')}.py:{name}")


def run_specter_flag_info() -> List[FlagInfo]:
    """``run_specter``'s rows in ``run_specter_flag_groups``' order, a setting with each preset's default."""
    from scincl.model.train import train
    from scincl.pipeline.scincl_plan import ACCEPTED_WITHOUT_EFFECT, run_specter, run_specter_flag_groups

    group = run_specter_flag_groups()
    settings = [dataclasses.replace(row, default=preset_defaults_text(row.name) or row.default)
                for spec in RunSettings.sections for row in flag_rows(spec) if group.get(row.name) == "settings"]
    stages = [FlagInfo(name, "bool", "False", "scincl/pipeline/scincl_plan.py:ALL_STAGE_NAMES",
                       f"{name.split('_')[0].replace('override', 'rebuild')} the {name.split('_', 1)[1]} stage")
              for name, kind in group.items() if kind == "stages"]
    ignored = [FlagInfo(name, "any", "None", "scincl/pipeline/scincl_plan.py:ACCEPTED_WITHOUT_EFFECT",
                        f"accepted for the original command, no effect: {why}")
               for name, why in ACCEPTED_WITHOUT_EFFECT.items()]
    rows: Dict[str, FlagInfo] = {}
    for row in [*settings, *flag_rows(run_specter), *stages, *flag_rows(MinerSpec), *flag_rows(TrainingSpec),
                *training_flags(), *flag_rows(train), *loss_flags(), *ignored]:
        rows.setdefault(row.name, row)  # the first row of a name
    for name, value in preset_values("demo").get("training_options", {}).items():
        rows[name].default += f" (demo {value!r}: experiments/presets/demo.py)"
    return [rows[name] for name in group]


def reproduce_flag_info() -> List[FlagInfo]:
    """``reproduce``'s rows: the experiment's and the recipe's fields, then the recipe's former names."""
    recipe = {row.name: row for row in flag_rows(Recipe)}
    return [row for row in flag_rows(Experiment) if row.name not in ("kind", "recipe")] + [*recipe.values()] + [
        dataclasses.replace(recipe[name], name=alias, source="scincl/settings/recipe.py:RECIPE_ALIASES",
                            help=f"the former name of --{name}") for alias, name in RECIPE_ALIASES.items()]


def command_flags_info(command: Command, every: bool = True) -> List[FlagInfo]:
    """A command's rows: its function's, then (``every``, or the ones its ``main`` names) its ``flags``' rows."""
    rows = {row.name: row for row in flag_rows(command.function, doc=command.doc)}
    for row in command.flags() if every or command.main else ():
        own = rows.setdefault(row.name, row)
        own.help = own.help or row.help  # e.g. get_knn_triples' bands: MinerSpec's help
    for old, new in command.aliases.items():
        rows[new].help = f"(also --{old}, its old name) {rows[new].help}".strip()
    return list(rows.values())


# ---------------------------------------------------------------- the commands
@attrs.define(eq=False, slots=False)
class Command:
    """One subcommand (a row of a commands table): a library function and what the command line adds to it."""

    function: Callable
    flags: Callable[[], List[FlagInfo]] = list  # the rows of its **kwargs
    main: Tuple[str, ...] = ()  # the flags --help shows (empty: the function's own)
    passes: str = ""  # --help: a phrase naming the other flags
    aliases: Mapping[str, str] = attrs.field(factory=dict)  # {old name: flag}
    repeatable: Tuple[str, ...] = ()  # flags whose repeats make one list
    library_checks: Union[bool, Collection[str]] = ()  # flags the library range-checks (True: converts all **kwargs)
    show: Optional[Callable[[Any], Any]] = None  # what is printed of the result
    doc: str = ""  # the help text (the function's docstring unless given)

    def __attrs_post_init__(self) -> None:
        self.doc = self.__doc__ = inspect.cleandoc(self.doc or self.function.__doc__ or "")  # inspect.getdoc reads it
        self.own = {n: p for n, p in inspect.signature(self.function).parameters.items() if p.kind is not p.VAR_KEYWORD}
        self.hints = {**typing.get_type_hints(self.function), WAIT: bool}  # read once

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        """The function's parameters, its ``**kwargs`` replaced by its flags, then its old names and ``--wait``."""
        keyword = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False if n == WAIT else None)
                   for n in dict.fromkeys([*(row.name for row in self.flags()), *self.aliases, WAIT])]
        return inspect.Signature([*self.own.values(), *(p for p in keyword if p.name not in self.own)])

    def flag_type(self, name: str) -> Optional[type]:
        """The type ``--name`` is converted to (its parameter's type hint); ``None``: its rule's kind."""
        return simple_type(self.hints.get(self.aliases.get(name, name)))

    def renamed(self, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``kwargs`` with old flag names under their flag's name; both given is an :class:`InputError`."""
        both = [old for old, new in self.aliases.items() if old in kwargs and new in kwargs]
        if both:
            raise InputError(f"--{both[0]} is the old name of --{self.aliases[both[0]]}: give one")
        return {self.aliases.get(name, name): value for name, value in kwargs.items()}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """One call from fire: values converted and checked where the library does not, with ``--wait``, shown."""
        kwargs = self.renamed(kwargs)
        wait = check_value(WAIT, kwargs.pop(WAIT, False), bool)
        named = [n for n, p in self.own.items() if p.kind is p.POSITIONAL_OR_KEYWORD][:len(args)]
        given = {**dict(zip(named, args)), **kwargs}  # an old name of a positional parameter: its place
        given = {n: check_value(n, v, self.flag_type(n), check_range=False)
                 if n in self.own or self.library_checks is not True else v for n, v in given.items()}
        if self.library_checks is not True:
            defaults = {n: p.default for n, p in self.own.items() if p.default is not p.empty}
            bands = {n: v for n, v in {**defaults, **given}.items() if n not in self.library_checks}
            check_settings({n: v for n, v in bands.items() if n in given}, bands=bands)
        positional = [given.pop(n) for n in named] + list(args[len(named):])  # then *args as given
        with waiting(bool(wait)):
            result = self.function(*positional, **given)
        return self.show(result) if self.show else result


def commands_of(module: Any) -> Dict[str, Command]:
    """The ``COMMANDS`` of a module as rows (a bare function is a row of its own)."""
    return {name: row if isinstance(row, Command) else Command(row) for name, row in module.COMMANDS.items()}


def front_end(namespace: Dict[str, Any], table: Any) -> Dict[str, Command]:
    """``table``'s commands for a ``cli_*.py`` module, their functions put in its ``namespace``; run as a script."""
    commands = commands_of(table)
    namespace.update({name: row.function for name, row in commands.items()})
    if namespace["__name__"] == "__main__":
        run_cli(commands)
    return commands


# ---------------------------------------------------------------- the command line, read before fire runs it
def _is_flag(token: str) -> bool:
    """A flag token as fire reads one (``--name``, ``-x``); ``-1`` is a value."""
    return token.startswith("--") or (len(token) == 2 and token[0] == "-" and token[1].isalpha())


def read_argv(command: Command, tokens: Sequence[str]) -> Tuple[List[str], List[str], List[str]]:
    """``(tokens for fire, positional values, --flag names)``, read as fire reads them, with PBG's ``-p key=value
    [key=value ...]`` gathered into one ``--overrides`` and a repeatable flag's values into one list."""
    end = list(tokens).index("--") if "--" in tokens else len(tokens)
    rest, out, positional, overrides, repeated = list(tokens[:end]), [], [], [], {}  # repeated: {flag: [value, ...]}
    while rest:
        token = rest.pop(0)
        flag, eq, value = token.partition("=")
        if flag in PBG_OVERRIDE_FLAGS and "overrides" in command.own:
            overrides += [value] if eq else []
            while not eq and rest and "=" in rest[0] and not rest[0].startswith("-"):
                overrides.append(rest.pop(0))
        elif flag[2:].replace("-", "_") in command.repeatable and flag.startswith("--") and (eq or rest):
            repeated.setdefault(flag[2:].replace("-", "_"), []).append(value if eq else rest.pop(0))
        else:
            out.append(token)
            if not _is_flag(token):
                positional.append(token)
            elif not eq and rest and not _is_flag(rest[0]):
                out.append(rest.pop(0))
    out += [f"--{n}={given[0]}" if len(given) == 1 else f"--{n}={given!r}" for n, given in repeated.items()]
    out += ["--overrides", " ".join(overrides)] if overrides else []
    names = [token.partition("=")[0].lstrip("-").replace("-", "_") for token in out if token.startswith("--")]
    return out + list(tokens[end:]), positional, names


def check_argv(name: str, command: Command, positional: Sequence[str], names: Sequence[str]) -> None:
    """Refuse, before anything runs, a stray positional value, an unknown flag and a flag under its old and new name."""
    places = [n for n, p in command.own.items() if p.kind is p.POSITIONAL_OR_KEYWORD and n not in names]
    if not any(p.kind is p.VAR_POSITIONAL for p in command.own.values()) and len(positional) > len(places):
        takes = (f"at most {len(places)} positional argument(s) ({', '.join(map(str.upper, places))})" if places
                 else "no positional argument")
        raise InputError(f"{name}: unexpected argument {positional[len(places)]!r}: it takes {takes}; flags are "
                         f"--name value (`{name} --help` lists them)")
    params = command.__signature__.parameters  # every command's is full: no **kwargs
    unknown = [n for n in names if n not in params and not (n[:2] == "no" and n[2:] in params)]
    if unknown:
        raise unknown_flag_error(unknown[0], name, params)
    command.renamed(dict.fromkeys([*names, *places[:len(positional)]]))


# ---------------------------------------------------------------- --help text
def format_flag(row: FlagInfo, brief: bool = False, lead: str = "") -> str:
    """``  --name TYPE  default: X; range R  [source]`` and the help below (a positional argument: ``lead``);
    ``brief`` (``--help``): no source, the help's first sentence."""
    rule = RANGES.get(row.name)
    limits = (f"; choices {' | '.join(map(str, row.choices))}" if row.choices else
              f"; range {rule.describe()}" if rule is not None and rule.describe() else "")
    default = "" if brief and row.default == "required" else f"  default: {row.default}"
    words = re.split(r" \((?:default from|SciNCL default)", row.help)[0] if brief else row.help
    if brief and len(words) > 110:  # the first sentence (a break outside parentheses)
        words = words[:next((m.start() for m in re.finditer(r"[.;](?=\s)", words)
                             if words[:m.start()].count("(") == words[:m.start()].count(")")), None)]
    return f"  {lead or '--' + row.name} {row.type}{default}{limits}" + ("" if brief else f"  [{row.source}]") + (
        f"\n      {words}" if words else "")


def format_command_help(prog: str, name: str, command: Command, every: bool = False) -> str:
    """One subcommand's help: usage, docstring, positional arguments and the flags a user sets (``every``: all)."""
    first = next(iter(command.own.values()), None)  # run_specter's OUTPUT_DIR: optional, given by place or flag
    optional = first.name if first and first.name == "output_dir" and first.default is not EMPTY else None
    rows, shown = command_flags_info(command, every=every), None if every else optional
    positional = [r for r in rows if r.default == "required" or r.default.startswith("positional") or r.name == shown]
    flags = [r for r in rows if r not in positional]
    places = [r.name.upper() + " ..." * r.default.startswith("positional") for r in positional if r.name != shown]
    places += [f"[{optional.upper()}]"] if optional else []
    lines = [f"usage: {prog} {name} {' '.join(places)} [--flag value ...]".replace("  ", " "), "", command.doc, ""]
    if positional:
        lines += ["Positional arguments:", *(format_flag(r, not every, r.name if every else r.name.upper() + (
            f" (or --{r.name})" if r.name == shown else "")) for r in positional), ""]
    if every:
        lines += [f"Flags ({len(flags)}; --name value or --name=value, booleans also --name / --noname):"]
        return "\n".join(lines + [format_flag(r) for r in flags]) + "\n"
    shown = [*(n for n in command.own if n not in command.main), *command.main]  # its own parameters, then main's
    flags = sorted((r for r in flags if r.name in shown), key=lambda r: shown.index(r.name)) if command.main else flags
    more = "; ".join(filter(None, [command.passes, "--wait: wait for a run writing the same output"]))
    return "\n".join(lines + ["Flags (--name value or --name=value; booleans also --name / --noname):"] + [
        format_flag(r, brief=True) for r in flags] + [
        "", f"Also: {more}.", f"`{prog} {name} --help_all` lists every flag with its type, default, range and the "
        "source of the default."]) + "\n"


def print_help(commands: Mapping[str, Command], argv: Sequence[str], prog: str, every: bool) -> None:
    """``prog --help`` (each subcommand with its docstring's first line) or ``prog COMMAND --help`` / ``--help_all``."""
    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]], every))
        return
    width = max(map(len, commands), default=0)
    summaries = [f"  {name.ljust(width)}  {(row.doc.splitlines() or [''])[0]}" for name, row in commands.items()]
    sys.stdout.write("\n".join([f"usage: {prog} COMMAND [--flag value ...]   ({prog} COMMAND --help: its flags)", "",
                                "Commands:", *summaries]) + "\n")


# ---------------------------------------------------------------- SIGTERM and the one error line
class Terminated(BaseException):
    """SIGTERM (Slurm's time limit, ``kill``), raised so ``finally`` blocks clean up before the exit (rc 143)."""


def _raise_terminated(main_pid: int, signum, frame):  # noqa: ARG001 - signal handler signature
    if os.getpid() == main_pid:
        raise Terminated()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker: die as by default, its parent cleans up
    os.kill(os.getpid(), signal.SIGTERM)


def run_cli(commands: Mapping[str, Command]) -> None:
    """Run ``sys.argv``: ``--help``, or the command checked and called through fire; a user or OS error is one line."""
    logging.basicConfig(level=os.environ.get("SCINCL_LOG_LEVEL", "INFO"), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # its INFO lines name instruction sets it tried
    prog = os.path.basename(sys.argv[0])
    try:  # forked workers inherit the handler and just die
        previous_sigterm = signal.signal(signal.SIGTERM, functools.partial(_raise_terminated, os.getpid()))
    except ValueError:  # not the main thread
        previous_sigterm = None
    try:
        argv = sys.argv[1:]
        asked = next((t for t in argv[:argv.index("--") if "--" in argv else len(argv)]
                      if t in ("--help", "-h", HELP_ALL)), None)
        if argv and argv[0] not in commands and not (asked and argv[0].startswith("-")):
            raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
        if asked or not argv:
            return print_help(commands, argv, prog, every=asked == HELP_ALL)
        command = commands[argv[0]]
        tokens, positional, names = read_argv(command, argv[1:])
        check_argv(argv[0], command, positional, names)

        # a function: fire would read a word of argv as an attribute of a callable object
        call = functools.update_wrapper(lambda *a, **k: command(*a, **k), command, ("__doc__", "__signature__"), ())
        fire.Fire({argv[0]: call}, command=[argv[0], *tokens], name=prog)
    except (KeyboardInterrupt, Terminated) as exc:
        stop = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        print(f"{prog}: {stop}; temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 143)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # a user error, an OS error, or a write that failed inside a library (torch.save, h5py)
        line = str(exc) if isinstance(exc, InputError) else os_error_line(exc)
        if line is None:
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        sys.exit(2)
    finally:
        discard_pending()  # a failed command's begun records (kept where it wrote outputs: a rerun resumes)
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
