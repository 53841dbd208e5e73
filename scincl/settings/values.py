"""A flag's value as its type and range say (:func:`check_value`), the same for every command and for
``run_specter``'s settings: one rule per flag name (:data:`RANGES`).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

from scincl.errors import InputError
from scincl.settings.rules import Rule, check_rule
from scincl.settings.schema import ranges as schema_ranges

RANGES: Dict[str, Rule] = schema_ranges()

BOOLEAN_WORDS = {"true": True, "false": False}


def simple_type(hint: Any) -> Optional[type]:
    """``int``/``float``/``bool``/``str`` for a hint of that type (or ``Optional`` of it), else ``None``."""
    if hint in (bool, int, float, str):
        return hint
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    if getattr(hint, "__origin__", None) is Union and len(args) == 1:
        return simple_type(args[0])
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
    if kind is None and rule is not None and isinstance(value, str) and value in rule.words:
        return value  # a named value of a number-or-name flag (Union[int, str]): --sample_n_nodes specter
    name_or_number = kind is None
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
            words = "".join(f" or {word}" for word in (rule.words if rule and name_or_number else ()))
            raise InputError(f"--{name}: expected an integer{words}, got {value!r}")
        if not numeric:
            raise InputError(f"--{name}: expected a number, got {value!r}")
        value = int(value) if kind is int else value
    if check_range:
        check_rule(name, value, rule)
    return value
