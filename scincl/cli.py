"""Shared plumbing of the ``cli_*.py`` fire front ends: logging, flag checks, error reporting.

A front end is a table of library commands (``scincl/commands/<name>.py``) handed to
:func:`run_cli`; the library never imports a front end.
"""
from __future__ import annotations

import errno
import inspect
import logging
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set

from scincl.errors import InputError, unknown_flag_error

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str | int | None = None) -> None:
    """Configure root logging once (level from ``SCINCL_LOG_LEVEL``, default INFO)."""
    level = level or os.environ.get("SCINCL_LOG_LEVEL", "INFO")
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    # faiss's loader logs each instruction set it tries at INFO, e.g. "Could not load library with AVX512
    # support due to: ModuleNotFoundError(...swigfaiss_avx512)" before it loads the AVX2 build: not a failure
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)


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


PBG_OVERRIDE_FLAGS = ("-p", "--p", "--param", "--overrides")


def gather_pbg_overrides(argv: List[str]) -> List[str]:
    """Gather every ``-p key=value [key=value ...]`` (PBG's repeatable flag) into one ``--overrides``."""
    out: List[str] = []
    collected: List[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        flag, eq, inline = token.partition("=")
        if flag in PBG_OVERRIDE_FLAGS and eq:
            collected.append(inline)
        elif token in PBG_OVERRIDE_FLAGS:
            while i + 1 < len(argv) and "=" in argv[i + 1] and not argv[i + 1].startswith("-"):
                i += 1
                collected.append(argv[i])
        else:
            out.append(token)
        i += 1
    return out + (["--overrides", " ".join(collected)] if collected else [])


def repeatable_flags(*names: str):
    """Mark a command whose flags ``names`` may be given several times (``--corpus_dir A --corpus_dir B``)."""
    def mark(function):
        function.repeatable_flags = tuple(names)
        return function

    return mark


def gather_repeated_flags(commands: Dict[str, Callable], argv: List[str]) -> List[str]:
    """The repeatable flags of the chosen command gathered into one list value each (fire keeps only the last).

    ``--corpus_dir A --corpus_dir=B`` becomes ``--corpus_dir=['A', 'B']`` (a Python literal fire reads as a
    list); a flag given once is left as it is.
    """
    if not argv or argv[0] not in commands:
        return argv
    names = getattr(commands[argv[0]], "repeatable_flags", ())
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


def accepts_flags(names: Callable[[], Iterable[str]]):
    """Mark a ``**kwargs`` command with the extra flag names it takes (checked before it runs)."""
    def mark(function):
        function.extra_flags = names
        return function

    return mark


def command_flags(function: Callable) -> Optional[Set[str]]:
    """Every flag ``function`` takes as a command, or ``None`` when its ``**kwargs`` are open."""
    params = inspect.signature(function).parameters
    names = {n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        extra = getattr(function, "extra_flags", None)
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


def run_cli(component: Any, name: str | None = None) -> None:
    """Run a fire component; user errors become one line on stderr and exit code 2.

    ``component`` is what ``fire.Fire`` takes: a dict of subcommand functions (flag names checked with
    :func:`check_flags` first, flag values with :func:`scincl.flag_checks.checked_command` before the
    command runs), a module or an object.
    """
    import fire

    from scincl.flag_checks import checked_command

    setup_logging()
    prog = name or os.path.basename(sys.argv[0])
    try:
        if isinstance(component, dict):
            sys.argv[1:] = gather_repeated_flags(component, sys.argv[1:])
            check_flags(component, sys.argv[1:])
            component = {command: checked_command(function) for command, function in component.items()}
        fire.Fire(component, name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError,)):
            sys.exit(1)
        print(f"{prog}: error: {os_error_message(exc)}", file=sys.stderr)
        sys.exit(2)


def commands_of(source: Any) -> Dict[str, Callable]:
    """The subcommands (name -> function) of a commands module or a ``cli_*.py`` namespace.

    A module (``scincl.commands.graph``): its public functions defined in it (imported helpers
    are excluded). A namespace dict: its ``COMMANDS`` table when it has one, else the public
    functions defined in it.
    """
    namespace = vars(source) if inspect.ismodule(source) else source
    if "COMMANDS" in namespace:
        return dict(namespace["COMMANDS"])
    module_name = namespace.get("__name__")
    return {
        name: obj
        for name, obj in namespace.items()
        if callable(obj) and not name.startswith("_") and getattr(obj, "__module__", None) == module_name
        and not isinstance(obj, type)
    }
