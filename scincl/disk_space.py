"""Room for an output before writing it: a full disk as one line, not a crashed writer (issue 29).

HDF5 reports a failed write late (while freeing objects, "Exception ignored in ...") and a
PyTorch-BigGraph edge import on a full disk then crashed (segfault). Writers whose size is known
in advance ask :func:`check_room` first: the free space of the file system and the process's
file size limit (``RLIMIT_FSIZE``, e.g. ``ulimit -f`` in a batch job) must hold it.
"""
from __future__ import annotations

import errno
import os
import resource
import shutil
from pathlib import Path

HEADROOM = 1.05  # a writer's bytes on disk beyond the payload it was asked for (HDF5 headers, chunk index)


def check_room(path: Path, payload_bytes: int, largest_file_bytes: int = 0) -> None:
    """An ``OSError`` (ENOSPC or EFBIG, naming ``path``) when ``payload_bytes`` will not fit under ``path``'s
    folder, or a file of ``largest_file_bytes`` exceeds the process's file size limit."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    needed = int(payload_bytes * HEADROOM)
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise OSError(errno.ENOSPC, f"{needed} bytes needed, {free} free", str(path))
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    largest = int((largest_file_bytes or payload_bytes) * HEADROOM)
    if soft != resource.RLIM_INFINITY and largest > soft:
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), f"{path} ({largest} bytes; the file size limit is {soft})")
