"""``manifest.json``: how an output was made (arguments, inputs, versions, git commit, timings), in the run directory
(all stages) and in each stage's output directory (that stage only, so a copied model dir still says what made it).
Files are fingerprinted by size + sha256 (of their first :data:`HASH_BYTES_LIMIT` bytes when larger), directories by
their files'."""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional

from scincl.io import file_fingerprint, read_json, write_json
from scincl.errors import InputError
from scincl.provenance import environment_info, git_info, is_marker, now_iso

logger = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
HASH_BYTES_LIMIT = 64 << 20  # files above 64 MiB are hashed on their first 64 MiB (size still exact)
DIR_FILE_HASH_BYTES_LIMIT = 1 << 20  # per file inside an input directory (S2ORC: 100 x ~1 GB shards)
DIR_MAX_LISTED_FILES = 2000

def fingerprint_path(path: Path) -> Dict[str, Any]:
    """Fingerprint a file (size + sha256) or a directory (its files, sorted), or mark it missing."""
    path = Path(path)
    if path.is_file():
        limit = HASH_BYTES_LIMIT if path.stat().st_size > HASH_BYTES_LIMIT else None
        return file_fingerprint(path, hash_bytes_limit=limit)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != MANIFEST_NAME and not is_marker(p))
        entry: Dict[str, Any] = {"path": str(path), "files": len(files), "size": sum(p.stat().st_size for p in files)}
        if len(files) <= DIR_MAX_LISTED_FILES:
            entry["contents"] = [
                {**file_fingerprint(p, hash_bytes_limit=DIR_FILE_HASH_BYTES_LIMIT), "path": str(p.relative_to(path))}
                for p in files
            ]
        return entry
    return {"path": str(path), "missing": True}


def fingerprint_paths(paths: Iterable[Path]) -> List[Dict[str, Any]]:
    """:func:`fingerprint_path` of each path."""
    return [fingerprint_path(Path(p)) for p in paths]


class Manifest:
    """The record of one pipeline run, ``manifest.json``; the records of an earlier run in the same directory are
    kept, so a rerun knows that a directory output (model, graph checkpoint) was finished, not interrupted."""

    def __init__(self, run_dir: Path, arguments: Mapping[str, Any], command: Optional[List[str]] = None) -> None:
        self.run_dir = Path(run_dir)
        try:
            previous = read_json(self.run_dir / MANIFEST_NAME) if (self.run_dir / MANIFEST_NAME).exists() else {}
        except InputError:
            logger.warning("ignoring unreadable previous manifest %s", self.run_dir / MANIFEST_NAME)
            previous = {}
        self.previous_stages: Dict[str, Any] = previous.get("stages", {}) if isinstance(previous, dict) else {}
        self.data: Dict[str, Any] = {
            "command": list(command if command is not None else sys.argv),
            "arguments": _jsonable(dict(arguments)),
            "started_at": now_iso(),
            "git": git_info(),
            "environment": environment_info(),
            "stages": {},
        }
        self.stage_dirs: Dict[str, Path] = {}

    def record_stage(self, stage: Any, status: str, seconds: float = 0.0, result: Any = None) -> None:
        """Record ``stage``'s (a :class:`Stage`) status, time, inputs and outputs (fingerprinted once completed; a
        reused stage keeps how an earlier run here made them) and its dict result, then write the manifests."""
        previous = self.previous_stages.get(stage.name, {}) if status == "reused" else {}
        entry: Dict[str, Any] = {"status": status, "seconds": round(seconds, 3), "updated_at": now_iso()}
        if stage.description:
            entry["description"] = stage.description
        if status in ("ran", "reused"):
            entry["completed"] = True
            for key in ("inputs", "outputs"):
                entry[key] = previous.get(key) or fingerprint_paths(getattr(stage, key))
        else:
            entry.update(inputs=[str(p) for p in stage.inputs], outputs=[str(p) for p in stage.outputs])
        result = previous.get("result", result)
        if isinstance(result, dict):
            entry["result"] = _jsonable(result)
        if previous.get("seconds") is not None:
            entry["seconds_when_built"] = previous.get("seconds_when_built", previous["seconds"])
        self.data["stages"][stage.name] = entry
        order = self.data.setdefault("stage_order", [])  # JSON keys are sorted; this keeps the run order
        if stage.name not in order:
            order.append(stage.name)
        self.stage_dirs[stage.name] = stage.manifest_dir
        self.write_all()

    def set(self, key: str, value: Any) -> None:
        """Add a top-level entry (e.g. ``results``)."""
        self.data[key] = _jsonable(value)

    def write_all(self) -> None:
        """Write the run manifest, and each completed stage's manifest into its output directory."""
        self.data["updated_at"] = now_iso()
        self.data["total_seconds"] = round(sum(s.get("seconds", 0.0) for s in self.data["stages"].values()), 3)
        header = {**{k: v for k, v in self.data.items() if k != "stages"}, "run_dir": str(self.run_dir)}
        files = {self.run_dir: self.data}
        for name, directory in self.stage_dirs.items():
            record = self.data["stages"][name]
            if directory.resolve() != self.run_dir.resolve() and record.get("completed") and directory.is_dir():
                files.setdefault(directory, {**header, "stages": {}})["stages"][name] = record
        for directory, data in files.items():
            try:
                write_json(directory / MANIFEST_NAME, data)
            except OSError as exc:  # a full disk's write() error names no file
                exc.filename = exc.filename or str(directory / MANIFEST_NAME)
                raise


def _jsonable(value: Any) -> Any:
    """Make arguments JSON-serialisable (paths -> str, tuples -> lists, other objects -> repr)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set) else items
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)
