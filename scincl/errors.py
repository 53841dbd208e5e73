"""User-facing errors.

Every mistake a user can make (a bad path, a malformed line, an id that is not in the index) is
raised as :class:`InputError`. The CLI front ends turn it into one clear line on stderr and a
non-zero exit code instead of a traceback (see :func:`scincl.cli.run_cli`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union


class InputError(Exception):
    """Bad user input: one line that names the file, the line number and the field when known."""

    def __init__(
        self,
        message: str,
        path: Optional[Union[str, Path]] = None,
        line: Optional[int] = None,
        field: Optional[str] = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.message = message
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


def closest_flag_hint(name: str, valid) -> str:
    """``" (did you mean --x?)"`` for the valid flag nearest to ``name``, or ``""`` when none is close."""
    import difflib

    match = difflib.get_close_matches(name, sorted(valid), n=1, cutoff=0.6)
    return f" (did you mean --{match[0]}?)" if match else ""


def unknown_flag_error(name: str, command: str, valid) -> InputError:
    """The one-line error for a flag ``command`` does not take, naming the closest valid flag."""
    return InputError(f"--{name}: unknown flag for {command}{closest_flag_hint(name, valid)}")
