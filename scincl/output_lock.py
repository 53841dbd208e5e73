"""One process per output: a command holds a lock on each of its outputs while it runs (issue 29).

Two commands writing one output directory (two ``run_specter`` with other settings on one
``--output_dir``) overwrote each other's files and both exited 0. Every ``cli_*.py`` command now
takes, before its first stage, an exclusive lock per output: the library function that writes it says which of
its parameters name outputs (:func:`writes`, e.g. ``@writes("output_dir")``) and takes their locks when called, with
`filelock <https://py-filelock.readthedocs.io>`_ (``fcntl``/``flock`` locks: the OS releases them
when the process dies, even by SIGKILL, so a crash never leaves a stale lock). The lock file is
``.<name>.lock`` beside the output (not inside it: a refused command leaves no output behind), and
``.<name>.lock.json`` beside it says who holds it (pid, host, command, since), so the second
command's one-line error names the holder. Both are removed on release (:func:`_unlink_held`), and so are the
folders made for them that stay empty: a finished or refused command leaves nothing beside its outputs (only a
SIGKILL leaves an empty, unlocked ``.<name>.lock``). ``--wait`` waits for the holder to finish instead
(:func:`waiting`).
A function called while its caller holds an output's lock (a pipeline's stage writing inside the pipeline's
output) takes no second lock for a path under it.

Ranks other than 0 of one distributed job (torchrun's ``RANK``, Slurm's ``SLURM_PROCID``,
``train_biggraph --rank N``) share their rank 0's outputs and take no lock.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

from filelock import FileLock, SoftFileLock, Timeout

from scincl.errors import InputError

logger = logging.getLogger(__name__)

RANK_ENV = ("RANK", "SLURM_PROCID")  # a distributed job's rank: only rank 0 locks its outputs


class OutputLocked(InputError):
    """Another process holds the lock of an output this command would write."""


def lock_paths(output: Path) -> tuple:
    """``(lock file, holder record)`` of ``output``: ``.<name>.lock`` and ``.<name>.lock.json`` beside it."""
    output = Path(os.path.abspath(output))
    return output.parent / f".{output.name}.lock", output.parent / f".{output.name}.lock.json"


def is_secondary_rank(rank: Optional[object] = None) -> bool:
    """True in a distributed job's ranks other than 0 (they share rank 0's outputs and lock)."""
    values = [rank] + [os.environ.get(name) for name in RANK_ENV]
    return any(str(v).strip() not in ("", "0", "None") for v in values if v is not None)


def holder_of(output: Path) -> str:
    """Who holds ``output``'s lock, as a phrase (pid, host, command, since), from its holder record."""
    record = lock_paths(output)[1]
    try:
        data = json.loads(record.read_text())
        return (f"pid {data['pid']} on {data['host']} since {data['since']}: {data['command']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it has not said which yet)"


@contextlib.contextmanager
def output_lock(outputs: Iterable[Path], wait: bool = False, command: Optional[List[str]] = None,
                poll_seconds: float = 0.5) -> Iterator[None]:
    """Hold an exclusive lock on every path of ``outputs`` for the body of the ``with``.

    Without ``wait`` a locked output is an :class:`OutputLocked` error naming its holder; with
    ``wait`` the call blocks until the holder releases it (logged once). Locks are taken in sorted
    order (two commands sharing two outputs cannot deadlock) and released in reverse.
    """
    command = command if command is not None else sys.argv
    held: List[tuple] = []
    created: List[Path] = []  # the folders made for the lock files, deepest first
    try:
        for output in sorted({Path(os.path.abspath(p)) for p in outputs}):
            lock_file, record = lock_paths(output)
            created = [*_missing_folders(lock_file.parent), *created]
            lock_file.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(lock_file))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                if not wait:
                    raise OutputLocked(f"another run is writing it ({holder_of(output)}); wait for it to finish, "
                                       "pass --wait to wait for it, or choose another output", path=output) from None
                logger.info("%s: waiting for %s to finish (--wait)", output, holder_of(output))
                lock.acquire(timeout=-1, poll_interval=poll_seconds)
            held.append((lock, record, _stat(lock_file)))  # the file it locked (only a holder unlinks one)
            record.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                          "command": " ".join(str(c) for c in command),
                                          "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
        yield
    finally:
        for lock, record, held_file in reversed(held):
            with contextlib.suppress(OSError):
                record.unlink()
            if not isinstance(lock, SoftFileLock):  # a file system without flock: filelock's own marker
                _unlink_held(Path(lock.lock_file), held_file)
            lock.release()
        for folder in created:  # left empty (a refused command): as before the command
            with contextlib.suppress(OSError):
                folder.rmdir()


def _missing_folders(folder: Path) -> List[Path]:
    """``folder`` and its ancestors that do not exist yet, deepest first."""
    return [p for p in (folder, *folder.parents) if not p.exists()]


def _stat(path: Path) -> Optional[os.stat_result]:
    with contextlib.suppress(OSError):
        return os.stat(path)
    return None


def _unlink_held(lock_file: Path, held_file: Optional[os.stat_result]) -> None:
    """Remove ``lock_file`` while its lock is still held, if the path still names the file this process locked.

    Removing it before the release keeps one holder at a time: a process that opened the old file and locks it once
    it is released finds it unlinked and starts over on the path (filelock checks ``st_nlink`` after each lock)."""
    with contextlib.suppress(OSError):
        if held_file is not None and os.path.samestat(os.lstat(lock_file), held_file):
            lock_file.unlink()


_WAIT: contextvars.ContextVar[bool] = contextvars.ContextVar("scincl_output_lock_wait", default=False)
_HELD: contextvars.ContextVar[Tuple[Path, ...]] = contextvars.ContextVar("scincl_output_lock_held", default=())


@contextlib.contextmanager
def waiting(wait: bool = True) -> Iterator[None]:
    """In the block, a function whose output another process holds waits for it (``--wait``) instead of stopping."""
    token = _WAIT.set(wait)
    try:
        yield
    finally:
        _WAIT.reset(token)


def check_writable(name: str, value: Any) -> None:
    """Output ``--name value`` can be created: its nearest existing ancestor is a writable directory."""
    target = Path(value)
    ancestor = target if target.is_dir() else target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"--{name} {value}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        read_only = bool(os.statvfs(ancestor).f_flag & os.ST_RDONLY)
        raise InputError(f"--{name} {value}: cannot write in {ancestor} "
                         f"({'read-only file system' if read_only else 'permission denied'})")


def writes(*outputs: str, **defaults: str) -> Callable[[Callable], Callable]:
    """Mark the parameters of a library function that name what it writes (``@writes("output_dir")``); ``defaults``:
    the path it writes when such a parameter is ``None`` (``run_specter``: ``demo_output``). Each call checks that
    every output can be created and holds its lock (:func:`output_lock`) while the function runs; ranks other than
    0 (``rank`` parameter or environment), outputs under one this process already holds and a ``dry_run=True`` call
    (it writes nothing: a running experiment's plan can be read) take none."""
    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def locked(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return function(*args, **kwargs)  # the call's own error
            bound.apply_defaults()
            values = {**bound.arguments, **bound.arguments.get(_var_keyword(signature) or "", {})}
            paths = {}
            for name in outputs:
                value = values.get(name) if values.get(name) is not None else defaults.get(name)
                if isinstance(value, (str, os.PathLike)) and str(value):
                    check_writable(name, value)
                    paths[name] = Path(os.path.abspath(value))
            held = _HELD.get()
            new = [p for p in paths.values() if not any(p == h or h in p.parents for h in held)]
            dry_run = str(values.get("dry_run")).lower() in ("true", "1")  # a dry run writes nothing
            if not new or is_secondary_rank(values.get("rank")) or dry_run:
                return function(*args, **kwargs)
            with output_lock(new, wait=_WAIT.get()):
                token = _HELD.set(held + tuple(new))
                try:
                    return function(*args, **kwargs)
                finally:
                    _HELD.reset(token)

        locked.writes = outputs  # type: ignore[attr-defined]  # what it writes, for --help and tests
        return locked

    return decorate


def _var_keyword(signature: inspect.Signature) -> Optional[str]:
    return next((n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD), None)
