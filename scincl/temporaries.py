"""Temporary folders beside an output that a killed run cannot leave behind for good (issue 29).

A command removes its temporary folder in ``finally`` (Ctrl-C and SIGTERM reach it, see
:func:`scincl.cli.run_cli`), but SIGKILL or a node failure skip ``finally``. The folder's name
says which process made it (``.<kind>.<host>-<pid>.<random>``), so the next run of any command
making that kind of folder in the same directory removes the folders of processes of its host
that no longer exist (``get_papers --workers 2`` killed by SIGTERM left ``.papers.parts.*`` that
reruns never removed).
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale(directory: Path, kind: str) -> int:
    """Remove ``.<kind>.<this host>-<pid>.*`` folders (and files: the temp files of :func:`temporary_file_prefix`) in
    ``directory`` whose process is gone; returns how many."""
    host = socket.gethostname()
    removed = 0
    for path in Path(directory).glob(f".{kind}.{host}-*.*"):
        pid = path.name[len(f".{kind}.{host}-"):].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            logger.info("removed %s, left by an interrupted run (process %s is gone)", path, pid)
            removed += 1
    return removed


def temporary_file_prefix(target: Path) -> str:
    """The prefix of a temp file written beside ``target`` (``.<name>.<host>-<pid>.``); the stale temp files of
    ``target`` (their process gone: ``kill -9`` mid-write, issue 41) are removed first."""
    remove_stale(target.parent, target.name)
    return f".{target.name}.{socket.gethostname()}-{os.getpid()}."


def make_temporary_dir(directory: Path, kind: str) -> Path:
    """A new temporary folder ``.<kind>.<host>-<pid>.<random>`` in ``directory`` (stale ones removed first)."""
    directory = Path(directory)
    remove_stale(directory, kind)
    return Path(tempfile.mkdtemp(prefix=f".{kind}.{socket.gethostname()}-{os.getpid()}.", dir=directory))
