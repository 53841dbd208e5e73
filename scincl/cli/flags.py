"""A command's flags, checked before it starts: names (:func:`check_flags`), types from the signature, ranges
from one table; and the marks a commands table puts on a library function (extra flags, aliases, outputs).

The names: a flag the chosen command does not take is an error naming the closest valid one. The values:
every ``cli_*.py`` subcommand goes through :func:`checked_command` (see :func:`scincl.cli.run.run_cli`):
before the library function runs, each flag's value is checked against the function's type hint
(``int``, ``float``, ``bool``, ``str``, ``Optional[...]`` of those) and then, once, by flag name against
:data:`scincl.settings.values.RANGES` (:func:`scincl.settings.schema.check_settings`: rules, choices, bands); the names are the same in every command (a ``--batch_size`` is a batch size
everywhere), so one table serves them all, including flags that reach a command through
``**kwargs`` (``train``'s ``TrainingArguments``, ``run_specter``'s miner and training flags).
A bad value is one :class:`~scincl.errors.InputError` line naming the flag, the value and the rule.
"""
from __future__ import annotations

import functools
import inspect
import os
import re
import typing
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from scincl.errors import InputError, unknown_flag_error
from scincl.settings.schema import check_settings
from scincl.settings.values import check_value, simple_type as _simple_type



# flags naming where a command writes: output_dir, output_path, output_fp, paper_ids_output_path, ...
OUTPUT_FLAG = re.compile(r"(^|_)output(_(dir|path|fp))?$|_output_(dir|path)$")
# outputs whose flag name does not say so, by command
OUTPUT_FLAGS_OF = {"build_faiss": {"index_path"}, "get_knn_triples": {"ann_index_path"},
                   "get_continuous_cocitation_triples": {"ann_index_path"}}


def check_writable(name: str, value: Any) -> None:
    """An output flag's path can be created: its nearest existing ancestor is a writable directory."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        return
    target = Path(value)
    ancestor = target if target.is_dir() else target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"--{name} {value}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        read_only = bool(os.statvfs(ancestor).f_flag & os.ST_RDONLY)
        reason = "read-only file system" if read_only else "permission denied"
        raise InputError(f"--{name} {value}: cannot write in {ancestor} ({reason})")


def flag_type(function: Callable, name: str) -> Optional[type]:
    """The type ``function``'s flag ``--name`` is checked as: its type hint's (:func:`_simple_type`), ``None`` for
    a hint of several kinds (``Union[int, str]``: the rule's kind and words decide) or no hint."""
    return _simple_type(_hints(function).get(name))


def check_training_length(values: Dict[str, Any]) -> None:
    """``--num_train_epochs 0`` without ``--max_steps``: no step would run and the base model would be saved."""
    epochs, max_steps = values.get("num_train_epochs"), values.get("max_steps")
    if epochs == 0 and not (isinstance(max_steps, int) and max_steps > 0):
        raise InputError("--num_train_epochs 0: no training step would run (give epochs > 0 or --max_steps N)")


def _hints(function: Callable) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(inspect.unwrap(function))
    except Exception:  # an annotation that does not resolve: check by RANGES only
        return {}


def check_call(function: Callable, args: tuple, kwargs: dict) -> Tuple[tuple, dict]:
    """The arguments of one call of ``function``, converted to their types (see :func:`check_value`) and
    range-checked once by :func:`scincl.settings.schema.check_settings` (a command that converts and checks its
    ``**kwargs`` settings itself, :func:`settings_checked_by_library`: its signature's arguments only).

    Arguments ``function`` cannot take are left for the call itself to reject.
    """
    signature = inspect.signature(function)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    hints = _hints(function)
    seen: Dict[str, Any] = {}
    for name, value in list(bound.arguments.items()):
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD and getattr(function, "_checks_settings", False):
            seen.update(value)  # converted and checked once, by the library (settings_checked_by_library)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            checked = {key: check_value(key, item, None, check_range=False) for key, item in value.items()}
            bound.arguments[name] = checked
            seen.update(checked)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            bound.arguments[name] = seen[name] = check_value(name, value, _simple_type(hints.get(name)),
                                                             check_range=False)
            if OUTPUT_FLAG.search(name) or name in OUTPUT_FLAGS_OF.get(function.__name__, ()):
                check_writable(name, seen[name])
    defaults = {n: p.default for n, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
    if not getattr(function, "_checks_settings", False):
        check_settings(seen, bands={**defaults, **seen})
    check_training_length(seen)
    return bound.args, bound.kwargs


def output_flag_values(function: Callable, args: tuple, kwargs: dict) -> Tuple[list, Any]:
    """``([paths of the output flags given or defaulted], the --rank value)`` of one call of ``function``."""
    signature = inspect.signature(function)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return [], None
    bound.apply_defaults()
    values = dict(bound.arguments)
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            values.update(values.pop(name, {}) or {})
    for name, default in getattr(function, "_default_outputs", {}).items():  # see default_outputs()
        if values.get(name) is None:
            values[name] = default
    outputs = [Path(str(value)) for name, value in values.items()
               if (OUTPUT_FLAG.search(name) or name in OUTPUT_FLAGS_OF.get(function.__name__, ()))
               and isinstance(value, (str, os.PathLike)) and str(value)]
    return outputs, values.get("rank")



def _mark(**attributes: Any) -> Callable[[Callable], Callable]:
    """A decorator that stores ``attributes`` on a command and returns it (the marks below; private names:
    fire lists public attributes as sub-commands)."""
    def mark(function: Callable) -> Callable:
        for name, value in attributes.items():
            setattr(function, name, value)
        return function

    return mark


def settings_checked_by_library(function: Callable) -> Callable:
    """Mark a command whose library converts and checks its ``**kwargs`` settings before any work (``run_specter``:
    :func:`scincl.pipeline.run_checks.check_types`, then with the paper's or the demo's presets
    :func:`scincl.pipeline.run_checks.check_run`): the CLI leaves them to it, so each value is converted and
    checked once."""
    return _mark(_checks_settings=True)(function)


def default_outputs(**outputs: str) -> Callable:
    """Mark a command whose output flags default to ``None`` but which then writes these paths (``run_specter``
    without ``--output_dir`` writes ``demo_output``), so its lock covers the output it really writes."""
    return _mark(_default_outputs=dict(outputs))


def shows(text: Callable[[Any], Optional[str]]) -> Callable:
    """Mark a command whose result the command line prints as ``text(result)`` (``None``: nothing), not as fire
    renders it (``run_specter``'s result dict: its summary; ``evaluate``'s: nothing, the library writes the
    results files). A Python caller of the function gets the result itself."""
    return _mark(_shows=text)


def fills_doc(**fills: Callable[[], str]) -> Callable:
    """Mark a command whose docstring names ``{name}`` places that ``--help`` fills with ``fills[name]()``, taken
    from where the values are defined (``reproduce``'s experiment kinds: the registry
    :data:`scincl.pipeline.experiment_kinds.KINDS`), when asked: the registry is not imported to run a command."""
    return _mark(_doc_fills=dict(fills))


def filled_doc(function: Callable) -> str:
    """``function``'s docstring with its :func:`fills_doc` places filled."""
    doc = inspect.cleandoc(function.__doc__ or "")
    for name, fill in getattr(function, "_doc_fills", {}).items():
        doc = doc.replace("{" + name + "}", fill())
    return doc


def checked_command(function: Callable, wait: bool = False) -> Callable:
    """``function`` with its flags checked (:func:`check_call`) before it runs, holding the lock of each of
    its outputs (:func:`scincl.output_lock.output_lock`; ``wait``: wait for a holder) while it runs;
    same signature and help; its result as :func:`shows` says."""
    from scincl.output_lock import is_secondary_rank, output_lock

    show = getattr(function, "_shows", lambda result: result)

    @functools.wraps(function)
    def run(*args, **kwargs):
        args, kwargs = check_call(function, args, kwargs)
        outputs, rank = output_flag_values(function, args, kwargs)
        if not outputs or is_secondary_rank(rank):
            return show(function(*args, **kwargs))
        with output_lock(outputs, wait=wait):
            return show(function(*args, **kwargs))

    return run


def repeatable_flags(*names: str) -> Callable[[Callable], Callable]:
    """Mark a command whose flags ``names`` may be given several times (``--corpus_dir A --corpus_dir B``)."""
    return _mark(_repeatable_flags=tuple(names))


def gather_repeated_flags(commands: Dict[str, Callable], argv: List[str]) -> List[str]:
    """The repeatable flags of the chosen command gathered into one list value each (fire keeps only the last).

    ``--corpus_dir A --corpus_dir=B`` becomes ``--corpus_dir=['A', 'B']`` (a Python literal fire reads as a
    list); a flag given once is left as it is.
    """
    if not argv or argv[0] not in commands:
        return argv
    names = getattr(commands[argv[0]], "_repeatable_flags", ())
    if not names:
        return argv
    values: Dict[str, List[str]] = {}
    rest: List[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        flag, eq, inline = token.partition("=")
        name = flag[2:].replace("-", "_") if flag.startswith("--") else None
        if name in names:
            if eq:
                values.setdefault(name, []).append(inline)
            elif i + 1 < len(argv):
                i += 1
                values.setdefault(name, []).append(argv[i])
            else:
                rest.append(token)
        else:
            rest.append(token)
        i += 1
    for name, given in values.items():
        rest.append(f"--{name}={given[0]}" if len(given) == 1 else f"--{name}={given!r}")
    return rest


def flag_aliases(**aliases: str):
    """Mark a command that also takes older spellings of flags, ``flag_aliases(model_dir="model_dirs")``: the
    library's parameter name is the flag's name, the alias keeps documented command lines working."""
    return _mark(_flag_aliases=dict(aliases))


def rename_aliases(commands: Dict[str, Callable], argv: List[str]) -> List[str]:
    """The chosen command's aliased flags (``--model_dir X``, ``--model_dir=X``) under their names
    (``--model_dirs``); giving a flag under both spellings is an :class:`InputError`. Tokens after a bare
    ``--`` are fire's."""
    aliases = getattr(commands.get(argv[0]), "_flag_aliases", {}) if argv else {}
    end = argv.index("--") if "--" in argv else len(argv)
    out = list(argv)
    names = []
    for i in range(1, end if aliases else 0):
        flag, eq, value = argv[i].partition("=")
        name = flag[2:].replace("-", "_") if flag.startswith("--") else None
        names.append(name)
        if name in aliases:
            out[i] = f"--{aliases[name]}{eq}{value}"
    for old, new in aliases.items():
        if old in names and new in names:
            raise InputError(f"--{old} is the old name of --{new}: give one")
    return out


def accepts_flags(describe: Callable[[], list]) -> Callable[[Callable], Callable]:
    """Mark a ``**kwargs`` command with the extra flags it takes: ``describe()`` returns their
    :class:`scincl.cli.help.FlagInfo` rows (type, default, source) for ``--help``; their names are the flags
    checked before it runs."""
    return _mark(_extra_flags=lambda: {row.name for row in describe()}, _describe_flags=describe)


def command_flags(function: Callable) -> Optional[Set[str]]:
    """Every flag ``function`` takes as a command, or ``None`` when its ``**kwargs`` are open."""
    params = inspect.signature(function).parameters
    names = {n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        extra = getattr(function, "_extra_flags", None)
        if extra is None:
            return None
        names |= set(extra())
    return names


def check_flags(commands: Dict[str, Callable], argv: Sequence[str]) -> None:
    """Reject a flag the chosen subcommand does not take, before it runs (fire would only say so after).

    The error names the closest valid flag. Tokens after a bare ``--`` belong to fire itself.
    """
    if not argv or argv[0].startswith("-") or argv[0] not in commands:
        return
    check_positionals(argv[0], commands[argv[0]], argv[1:])
    valid = command_flags(commands[argv[0]])
    if valid is None:
        return
    for token in argv[1:]:
        if token == "--":
            break
        if not token.startswith("--") or len(token) == 2:
            continue
        name = token[2:].split("=", 1)[0].replace("-", "_")
        if name in valid or name == "help" or (name.startswith("no") and name[2:] in valid):
            continue
        raise unknown_flag_error(name, argv[0], valid)


def _is_flag(token: str) -> bool:
    """A flag token as fire reads one (``--name``, ``-x``); ``-1`` is a value."""
    return token.startswith("--") or (len(token) == 2 and token[0] == "-" and token[1].isalpha())


def split_arguments(tokens: Sequence[str]) -> tuple:
    """``(positional values, flag names)`` of a command's arguments, read as fire reads them: a
    ``--name`` without ``=`` takes the next token as its value unless that is a flag too."""
    positional: List[str] = []
    names: List[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            break
        if _is_flag(token):
            names.append(token.lstrip("-").split("=", 1)[0].replace("-", "_"))
            if "=" not in token and i + 1 < len(tokens) and not _is_flag(tokens[i + 1]):
                i += 1
        else:
            positional.append(token)
        i += 1
    return positional, names


def check_positionals(name: str, function: Callable, tokens: Sequence[str]) -> None:
    """More positional arguments than the command has places for is an error before it runs.

    fire would run the command with the first ones and then read the rest as attributes of its
    result, failing only after the work is done (``run_specter OUT extra`` ran a whole pipeline first).
    """
    params = inspect.signature(function).parameters
    if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return
    positional, names = split_arguments(tokens)
    places = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and n not in names]
    if len(positional) > len(places):
        stray = positional[len(places):]
        raise InputError(f"{name}: unexpected argument {stray[0]!r}: it takes "
                         + (f"at most {len(places)} positional argument(s) ({', '.join(p.upper() for p in places)})"
                            if places else "no positional argument")
                         + f"; flags are --name value (`{name} --help` lists them)")
