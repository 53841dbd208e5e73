"""Flag values checked before a command starts: types from the signature, ranges from one table.

Every ``cli_*.py`` subcommand goes through :func:`checked_command` (see :func:`scincl.cli.run_cli`):
before the library function runs, each flag's value is checked against the function's type hint
(``int``, ``float``, ``bool``, ``str``, ``Optional[...]`` of those) and then, once, by flag name against
:data:`RANGES` (:func:`scincl.settings.schema.check_settings`: rules, choices, bands); the names are the same in every command (a ``--batch_size`` is a batch size
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
from typing import Any, Callable, Dict, Optional, Tuple, Union

from scincl.errors import InputError
from scincl.settings.rules import Rule, check_rule
from scincl.settings.schema import check_settings, ranges as schema_ranges


# One rule per flag name, whichever command takes it: the SciNCL settings' from their schema
# (scincl/settings/schema.py), the other flags' from scincl/settings/rules.py:FLAG_RULES.
RANGES: Dict[str, Rule] = schema_ranges()

BOOLEAN_WORDS = {"true": True, "false": False}

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


def _simple_type(hint: Any) -> Optional[type]:
    """``int``/``float``/``bool``/``str`` for a hint of that type (or ``Optional`` of it), else ``None``."""
    if hint in (bool, int, float, str):
        return hint
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    if getattr(hint, "__origin__", None) is Union and len(args) == 1:
        return _simple_type(args[0])
    if getattr(hint, "__origin__", None) is Union and str in args and not {int, float, bool} & set(args):
        return str  # a path (Union[str, PathLike]) or a comma-separated list given as text
    return None


def check_value(name: str, value: Any, kind: Optional[type], check_range: bool = True) -> Any:
    """``value`` of flag ``--name`` checked as ``kind`` and (``check_range``) against :data:`RANGES`; returns it
    (converted).

    Conversions: a number given for a string flag (``--output_dir 2024``) becomes that string,
    ``true``/``false`` for a boolean flag become booleans, an integer for a float flag a float.
    """
    if value is None:
        return None
    rule = RANGES.get(name)
    kind = kind or (rule.kind if rule else None)
    if kind is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in BOOLEAN_WORDS:
            return BOOLEAN_WORDS[value.strip().lower()]
        if not isinstance(value, bool):
            raise InputError(f"--{name}: expected true or false, got {value!r}")
        return value
    if kind in (int, float):
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind is int and not (numeric and float(value).is_integer()):
            raise InputError(f"--{name}: expected an integer, got {value!r}")
        if not numeric:
            raise InputError(f"--{name}: expected a number, got {value!r}")
        value = int(value) if kind is int else value
    if check_range:
        check_rule(name, value, rule)
    return value


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
    range-checked once by :func:`scincl.settings.schema.check_settings` (not when ``function`` checks its
    resolved settings itself: :func:`settings_checked_by_library`).

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
        if kind is inspect.Parameter.VAR_KEYWORD:
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



def settings_checked_by_library(function: Callable) -> Callable:
    """Mark a command whose library checks its resolved settings before any work (``run_specter``: the flags
    with the paper's or the demo's presets, :func:`scincl.pipeline.settings.check_ranges`): the CLI converts
    the flags' types and leaves the range check to it, so each value is checked once."""
    function._checks_settings = True
    return function


def default_outputs(**outputs: str) -> Callable:
    """Mark a command whose output flags default to ``None`` but which then writes these paths (``run_specter``
    without ``--output_dir`` writes ``demo_output``), so its lock covers the output it really writes."""
    def mark(function: Callable) -> Callable:
        function._default_outputs = dict(outputs)
        return function

    return mark


def shows(text: Callable[[Any], Optional[str]]) -> Callable:
    """Mark a command whose result the command line prints as ``text(result)`` (``None``: nothing), not as fire
    renders it (``run_specter``'s result dict: its summary; ``evaluate``'s: nothing, the library writes the
    results files). A Python caller of the function gets the result itself."""
    def mark(function: Callable) -> Callable:
        function._shows = text
        return function

    return mark


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
