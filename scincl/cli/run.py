"""Running a ``cli_*.py`` fire front end: logging, ``--help``, the flag checks (:mod:`scincl.cli.flags`)
before the command, and user errors as one line on stderr.

A front end is a table of library commands (``scincl/commands/<name>.py``) handed to
:func:`run_cli`; the library never imports a front end.
"""
from __future__ import annotations

import errno
import inspect
import logging
import os
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

from scincl.cli.flags import check_flags, checked_command, gather_repeated_flags, rename_aliases
from scincl.cli.help import help_requested
from scincl.errors import InputError
from scincl.provenance import discard_pending

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
    if exc.errno == errno.EDQUOT:
        return f"disk quota exceeded while writing {target}".strip()
    return f"{exc.strerror or exc}" + (f": {target}" if target else "")


class Terminated(BaseException):
    """SIGTERM (Slurm's time limit, ``kill``): raised in the main thread so ``finally`` blocks remove
    temporary files and locks are released before the process exits (rc 143)."""


_MAIN_PID = [0]  # the process that installed the handler (forked workers inherit it and just die)


def _raise_terminated(signum, frame):  # noqa: ARG001 - signal handler signature
    if os.getpid() != _MAIN_PID[0]:  # a forked worker: die as by default, its parent cleans up
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated()


def _catch_sigterm() -> Any:
    """Install :func:`_raise_terminated` for SIGTERM (main thread only); returns the previous handler."""
    _MAIN_PID[0] = os.getpid()
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        return None


def os_error_behind(exc: BaseException) -> Optional[OSError]:
    """The OS error that caused ``exc`` (itself, or one in its ``__cause__``/``__context__`` chain); a
    library error that only says so in words (torch.save's ``basic_ios::clear: iostream error`` and
    ``inline_container.cc`` errors, h5py's ``Can't write data``) counts as a failed write, ``None``
    otherwise."""
    chain = []
    current: Optional[BaseException] = exc
    while current is not None and all(current is not c for c in chain):
        chain.append(current)
        if isinstance(current, OSError) and current.errno is not None:
            return current
        current = current.__cause__ or current.__context__
    text = " ".join(str(c) for c in chain)
    for phrase, code in (("No space left on device", errno.ENOSPC), ("Disk quota exceeded", errno.EDQUOT),
                         ("File too large", errno.EFBIG), ("file write failed", errno.EIO),
                         ("Can't write data", errno.EIO), ("iostream error", errno.EIO),
                         ("inline_container.cc", errno.EIO)):  # torch.save's zip writer after a short write
        if phrase in text:
            failed = OSError(code, os.strerror(code) if code != errno.EIO else "a write failed (disk full?)")
            failed.filename = ""
            return failed
    return None


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


WAIT_FLAG = "--wait"  # every command: wait for the run holding an output's lock (scincl/output_lock.py)


def take_wait_flag(argv: List[str]) -> bool:
    """Remove ``--wait`` (``--wait=true|false``) from ``argv`` in place; True when it asks to wait.

    ``--wait``: a command whose output another run is writing waits for it instead of stopping with
    the holder's name (:mod:`scincl.output_lock`). Tokens after a bare ``--`` are fire's.
    """
    wait = False
    end = argv.index("--") if "--" in argv else len(argv)
    for i in reversed(range(1, end)):
        flag, eq, value = argv[i].partition("=")
        if flag == WAIT_FLAG:
            if eq and value.strip().lower() not in ("true", "1", "yes", "false", "0", "no"):
                raise InputError(f"--wait={value}: expected true or false")
            wait = wait or not eq or value.strip().lower() in ("true", "1", "yes")
            del argv[i]
    return wait


def run_cli(component: Any, name: str | None = None) -> None:
    """Run a fire component; user errors become one line on stderr and exit code 2.

    ``component`` is what ``fire.Fire`` takes: a dict of subcommand functions (flag names checked with
    :func:`scincl.cli.flags.check_flags` first, flag values with :func:`scincl.cli.flags.checked_command`
    before the command runs), a module or an object.
    """
    import fire

    setup_logging()
    prog = name or os.path.basename(sys.argv[0])
    previous_sigterm = _catch_sigterm()
    try:
        if isinstance(component, dict) and (help_requested(sys.argv[1:]) or not sys.argv[1:]):
            print_help(component, sys.argv[1:], prog)
            return
        wait = take_wait_flag(sys.argv)
        if isinstance(component, dict):
            sys.argv[1:] = gather_repeated_flags(component, rename_aliases(component, sys.argv[1:]))
            check_flags(component, sys.argv[1:])
            component = {command: checked_command(function, wait=wait) for command, function in component.items()}
        fire.Fire(component, name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError,)):
            sys.exit(1)
        print(f"{prog}: error: {os_error_message(exc)}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted (Ctrl-C); temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(130)
    except Terminated:
        print(f"{prog}: terminated (SIGTERM); temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(143)
    except Exception as exc:  # a write that failed inside a library (torch.save, h5py) on a full disk
        failed = os_error_behind(exc)
        if failed is None:
            raise
        print(f"{prog}: error: {os_error_message(failed)} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
              file=sys.stderr)
        sys.exit(2)
    finally:
        discard_pending()  # a failed command's begun records (kept where it wrote outputs: a rerun resumes)
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)


def print_help(commands: Dict[str, Callable], argv: Sequence[str], prog: str) -> None:
    """``prog --help`` (the commands) or ``prog COMMAND --help`` (its flags) on stdout; exit code 0."""
    from scincl.cli.help import format_command_help, format_command_list

    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]]))
    elif argv and not argv[0].startswith("-"):
        raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
    else:
        sys.stdout.write(format_command_list(prog, commands))


def commands_of(source: Any) -> Dict[str, Callable]:
    """The subcommands (name -> function) of a commands module or a ``cli_*.py`` namespace: its ``COMMANDS``
    table."""
    namespace = vars(source) if inspect.ismodule(source) else source
    return dict(namespace["COMMANDS"])
