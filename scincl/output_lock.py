"""One process per output: a command holds a lock on each of its outputs while it runs (issue 29).

Two commands writing one output directory (two ``run_specter`` with other settings on one
``--output_dir``) overwrote each other's files and both exited 0. Every ``cli_*.py`` command now
takes, before its first stage, an exclusive lock per output flag (``--output_dir``,
``--output_path``, ...; the names :data:`scincl.cli.flags.OUTPUT_FLAG` recognises) with
`filelock <https://py-filelock.readthedocs.io>`_ (``fcntl``/``flock`` locks: the OS releases them
when the process dies, even by SIGKILL, so a crash never leaves a stale lock). The lock file is
``.<name>.lock`` beside the output (not inside it: a refused command leaves no output behind), and
``.<name>.lock.json`` beside it says who holds it (pid, host, command, since), so the second
command's one-line error names the holder. ``--wait`` waits for the holder to finish instead.

Ranks other than 0 of one distributed job (torchrun's ``RANK``, Slurm's ``SLURM_PROCID``,
``train_biggraph --rank N``) share their rank 0's outputs and take no lock.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Iterable, Iterator, List, Optional

from filelock import FileLock, Timeout

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
    try:
        for output in sorted({Path(os.path.abspath(p)) for p in outputs}):
            lock_file, record = lock_paths(output)
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
            held.append((lock, record))
            record.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                          "command": " ".join(str(c) for c in command),
                                          "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
        yield
    finally:
        for lock, record in reversed(held):
            with contextlib.suppress(OSError):
                record.unlink()
            lock.release()
