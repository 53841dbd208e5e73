"""The wall seconds of each step of a real-corpus experiment, saved as ``timings.json`` next to its tables.

Used by the grid runner (``grid``) and the studies' steps (``study_steps``); the docs render the file
(``scincl/docs_tables.py``).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict

from scincl.io import read_json, write_json
from scincl.provenance import is_marker

RECORDS = ("manifest.json", "recipe.json")  # rewritten by every call of a run, reused or not


class Timings:
    """Wall seconds of each step of an experiment, saved as ``timings.json`` next to its tables."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: Dict[str, float] = read_json(path) if path.exists() else {}

    def run(self, name: str, fn, *args, **kwargs):
        """Call ``fn``; record its wall time, unless an earlier time is recorded and this call only reused
        finished outputs (under 1 s, or a run dir in which it wrote nothing: :func:`wrote_since`)."""
        start = time.time()
        result = fn(*args, **kwargs)
        seconds = time.time() - start
        if name not in self.data or (seconds >= 1.0 and wrote_since(result, start)):
            self.data[name] = round(seconds, 1)
            write_json(self.path, self.data)
        return result


def wrote_since(result: Any, start: float) -> bool:
    """Whether the step that returned ``result`` made something: for a run dir, a file other than its
    records (manifests, recipe.json, stage markers) written since ``start``; any other result counts as
    work. A cached rerun on a loaded machine can take over a second without replacing the time it took."""
    if not isinstance(result, Path) or not result.is_dir():
        return True
    return any(p.stat().st_mtime >= start for p in result.rglob("*")
               if p.is_file() and p.name not in RECORDS and not is_marker(p))
