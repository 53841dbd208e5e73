"""User-facing errors.

Every mistake a user can make (a bad path, a malformed line, an id that is not in the index) is
raised as :class:`InputError`. The CLI front ends turn it, and an OS error a user can act on (disk full,
permissions: :func:`os_error_line`), into one clear line on stderr and a non-zero exit code instead of a traceback
(see :func:`scincl.cli.run_cli`).
"""
from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import List, Optional, Union

MESSAGE_LIMIT = 600  # characters of an error line's message; a longer one (a huge value quoted) keeps its two ends


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
        self.message = message if len(message) <= MESSAGE_LIMIT else \
            f"{message[:MESSAGE_LIMIT * 2 // 3]} ... {message[-MESSAGE_LIMIT // 4:]}"
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {self.message}" if prefix else self.message)


def closest_flag_hint(name: str, valid) -> str:
    """``" (did you mean --x?)"`` for the valid flag nearest to ``name``, or ``""`` when none is close."""
    import difflib

    match = difflib.get_close_matches(name, sorted(valid), n=1, cutoff=0.6)
    return f" (did you mean --{match[0]}?)" if match else ""


def unknown_flag_error(name: str, command: str, valid) -> InputError:
    """The one-line error for a flag ``command`` does not take, naming the closest valid flag."""
    return InputError(f"--{name}: unknown flag for {command}{closest_flag_hint(name, valid)}")


def os_error_message(exc: OSError) -> str:
    """A one-line explanation of an OS error that a user can act on (disk full, permissions)."""
    target = exc.filename or ""
    words = {errno.ENOSPC: f"no space left on device while writing {target}".strip(),
             errno.EACCES: f"permission denied: {target}", errno.EPERM: f"permission denied: {target}",
             errno.ENOENT: f"no such file or directory: {target}", errno.EROFS: f"read-only file system: {target}",
             errno.EDQUOT: f"disk quota exceeded while writing {target}".strip()}
    return words.get(exc.errno, f"{exc.strerror or exc}" + (f": {target}" if target else ""))


# a library error that says in words that a write failed (torch.save's zip writer, h5py) counts as an OSError
WRITE_FAILURES = (("No space left on device", errno.ENOSPC), ("Disk quota exceeded", errno.EDQUOT),
                  ("File too large", errno.EFBIG), ("file write failed", errno.EIO), ("Can't write data", errno.EIO),
                  ("iostream error", errno.EIO), ("inline_container.cc", errno.EIO))


def os_error_behind(exc: BaseException) -> Optional[OSError]:
    """The OS error that caused ``exc`` (itself, or one in its ``__cause__``/``__context__`` chain, or one a library
    names in words: :data:`WRITE_FAILURES`); ``None`` otherwise."""
    chain: List[BaseException] = []
    current: Optional[BaseException] = exc
    while current is not None and all(current is not c for c in chain):
        chain.append(current)
        if isinstance(current, OSError) and current.errno is not None:
            return current
        current = current.__cause__ or current.__context__
    code = next((code for phrase, code in WRITE_FAILURES if phrase in " ".join(str(c) for c in chain)), None)
    if code is None:
        return None
    return OSError(code, os.strerror(code) if code != errno.EIO else "a write failed (disk full?)", "")


def os_error_line(exc: Exception) -> Optional[str]:
    """The one error line for an OS error (``exc`` itself, or the one behind a library's error, with that error's
    first line); ``None`` when no OS error is behind ``exc``."""
    failed = exc if isinstance(exc, OSError) else os_error_behind(exc)
    if failed is None:
        return None
    said = (str(exc).splitlines() or [""])[0][:200]
    return os_error_message(failed) + ("" if failed is exc else f" ({type(exc).__name__}: {said})")
