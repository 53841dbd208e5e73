"""Settings of the citation-graph embedders: one frozen dataclass per method, each field with its
default, the source of that default, its help text and its allowed range (checked on creation).

The shape is the one issue 27's settings schema can absorb: ``field(default, metadata={"help",
"range", "source"})``. :func:`parse_settings` turns the CLI's ``"key=value key=value"`` string into
a typed instance; :func:`settings_help` lists the fields for ``--help``.
"""
from __future__ import annotations

import dataclasses
import shlex
from typing import Any, Dict, Optional, Tuple, Type, TypeVar

from scincl.errors import InputError

S = TypeVar("S")


def setting(default: Any, help: str, source: str, range: Optional[Tuple[Any, Any]] = None) -> Any:
    """One setting: its default, the paper/section it comes from, its help and its closed range."""
    return dataclasses.field(default=default, metadata={"help": help, "source": source, "range": range})


def check_ranges(settings: Any) -> None:
    """Raise an :class:`InputError` naming the first field outside its range."""
    for f in dataclasses.fields(settings):
        value, bounds = getattr(settings, f.name), f.metadata.get("range")
        if bounds is None:
            continue
        values = value if isinstance(value, tuple) else (value,)
        low, high = bounds
        for v in values:
            if (low is not None and v < low) or (high is not None and v > high):
                raise InputError(f"{type(settings).__name__}.{f.name}={value!r} is outside [{low}, {high}]: "
                                 f"{f.metadata['help']}")


def _typed(f: dataclasses.Field, text: str) -> Any:
    kind = type(f.default)
    try:
        if kind is tuple:
            item = type(f.default[0]) if f.default else float
            return tuple(item(x) for x in text.strip("()[] ").split(",") if x.strip())
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        return kind(text)
    except ValueError:
        raise InputError(f"setting {f.name}: cannot read {text!r} as {kind.__name__}") from None


def parse_settings(cls: Type[S], text: Optional[Any] = None) -> S:
    """``cls`` with the ``key=value`` pairs of ``text`` (a string, a dict or None) applied, range-checked."""
    if text is None or text == "":
        return cls()
    fields = {f.name: f for f in dataclasses.fields(cls)}
    pairs: Dict[str, Any] = {}
    items = text.items() if isinstance(text, dict) else (p.split("=", 1) for p in shlex.split(str(text)))
    for item in items:
        if len(item) != 2:
            raise InputError(f"method settings are key=value pairs, got {item[0]!r}")
        key, value = item
        if key not in fields:
            raise InputError(f"{cls.__name__} has no setting {key!r}; it has {', '.join(fields)}")
        pairs[key] = _typed(fields[key], value) if isinstance(value, str) else value
    return cls(**pairs)


def settings_help(cls: Type[Any]) -> str:
    """One line per setting: name, default, help and source."""
    return "\n".join(f"  {f.name}={f.default!r}: {f.metadata['help']} ({f.metadata['source']})"
                     for f in dataclasses.fields(cls))
