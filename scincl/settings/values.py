"""A flag's value as its type and range say (:func:`check_value`), the same for every command and for
``run_specter``'s settings: one rule per flag name (:data:`RANGES`).
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, Optional

from scincl.errors import InputError
from scincl.settings.rules import Rule, check_rule, simple_type
from scincl.settings.schema import ranges as schema_ranges

RANGES: Dict[str, Rule] = schema_ranges()

BOOLEAN_WORDS = {"true": True, "false": False}


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


def check_types(instance: Any) -> None:
    """Each field of the dataclass ``instance`` by its type hint, as :func:`check_value` checks a flag (no range, no
    conversion kept): a settings object built in Python is refused the wrong types the command line refuses."""
    hints = typing.get_type_hints(type(instance))
    for field in dataclasses.fields(instance):
        check_value(field.name, getattr(instance, field.name), simple_type(hints[field.name]), check_range=False)
