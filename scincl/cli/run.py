"""Shared plumbing of the ``cli_*.py`` fire front ends: logging, flag checks, error reporting.

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
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set

from scincl.cli_help import help_requested
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


def repeatable_flags(*names: str):
    """Mark a command whose flags ``names`` may be given several times (``--corpus_dir A --corpus_dir B``)."""
    def mark(function):
        function._repeatable_flags = tuple(names)
        return function

    return mark


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
    def mark(function):
        function._flag_aliases = dict(aliases)
        return function

    return mark


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


def accepts_flags(names: Callable[[], Iterable[str]], describe: Optional[Callable[[], list]] = None):
    """Mark a ``**kwargs`` command with the extra flag names it takes (checked before it runs) and,
    for ``--help``, a ``describe()`` returning their :class:`scincl.cli_help.FlagInfo` rows (type,
    default, source). Stored as private attributes: fire lists public ones as sub-commands."""
    def mark(function):
        function._extra_flags = names
        function._describe_flags = describe
        return function

    return mark


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
    :func:`check_flags` first, flag values with :func:`scincl.flag_checks.checked_command` before the
    command runs), a module or an object.
    """
    import fire

    from scincl.flag_checks import checked_command

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
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)


def print_help(commands: Dict[str, Callable], argv: Sequence[str], prog: str) -> None:
    """``prog --help`` (the commands) or ``prog COMMAND --help`` (its flags) on stdout; exit code 0."""
    from scincl.cli_help import format_command_help, format_command_list

    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]]))
    elif argv and not argv[0].startswith("-"):
        raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
    else:
        sys.stdout.write(format_command_list(prog, commands))


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
