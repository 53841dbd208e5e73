"""Resident memory of a process tree, for benchmarks that sample a running CLI."""
from __future__ import annotations


def tree_rss(process) -> int:
    """RSS bytes of a ``psutil.Process`` and all its children (0 when it is gone)."""
    import psutil

    try:
        return process.memory_info().rss + sum(c.memory_info().rss for c in process.children(recursive=True))
    except psutil.Error:
        return 0
