"""Shared plumbing of the ``cli_*.py`` fire front ends: logging set-up and error reporting."""
from __future__ import annotations

import errno
import logging
import os
import sys
from typing import Any

from scincl.errors import InputError

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str | int | None = None) -> None:
    """Configure root logging once (level from ``SCINCL_LOG_LEVEL``, default INFO)."""
    level = level or os.environ.get("SCINCL_LOG_LEVEL", "INFO")
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)


def os_error_message(exc: OSError) -> str:
    """A one-line explanation of an OS error that a user can act on (disk full, permissions)."""
    target = exc.filename or ""
    if exc.errno == errno.ENOSPC:
        return f"no space left on device while writing {target}".strip()
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied: {target}"
    if exc.errno == errno.ENOENT:
        return f"no such file or directory: {target}"
    if exc.errno == errno.EROFS:
        return f"read-only file system: {target}"
    return f"{exc.strerror or exc}: {target}".strip()


def run_cli(component: Any, name: str | None = None) -> None:
    """Run a fire component; user errors become one line on stderr and exit code 2.

    ``component`` is what ``fire.Fire`` takes: a dict of subcommand functions, a module or an object.
    """
    import fire

    setup_logging()
    prog = name or os.path.basename(sys.argv[0])
    try:
        fire.Fire(component, name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError,)):
            sys.exit(1)
        print(f"{prog}: error: {os_error_message(exc)}", file=sys.stderr)
        sys.exit(2)


def commands_of(namespace: dict) -> dict:
    """The public functions defined in a ``cli_*.py`` module, as fire subcommands (name -> function).

    Imported helpers are excluded (their ``__module__`` differs), so a front end only has to define
    its subcommand functions.
    """
    module_name = namespace.get("__name__")
    return {
        name: obj
        for name, obj in namespace.items()
        if callable(obj) and not name.startswith("_") and getattr(obj, "__module__", None) == module_name
        and not isinstance(obj, type)
    }
