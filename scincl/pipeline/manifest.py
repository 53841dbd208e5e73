"""``manifest.json``: how an output was made (arguments, inputs, versions, git commit, timings).

One manifest is written in the run directory (all stages) and one in each stage's own output
directory (that stage only), so a model dir or a graph dir copied elsewhere still says what made
it. Files are fingerprinted by size + sha256 (of the first :data:`HASH_BYTES_LIMIT` bytes for
very large files such as S2ORC-scale embeddings, which is recorded); directories by the
fingerprints of their files. The code, machine and package versions it records are
:mod:`scincl.provenance`'s.
"""
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
    """The record of one pipeline run, written as ``manifest.json`` (see module docstring).

    Records of stages completed by an earlier run in the same directory are kept, so a rerun
    knows that a directory output (model, graph checkpoint) was finished, not interrupted.
    """

    def __init__(self, run_dir: Path, arguments: Mapping[str, Any], command: Optional[List[str]] = None) -> None:
        self.run_dir = Path(run_dir)
        previous = self._load_previous(self.run_dir / MANIFEST_NAME)
        self.previous_stages: Dict[str, Any] = previous.get("stages", {}) if previous else {}
        self.data: Dict[str, Any] = {
            "command": list(command if command is not None else sys.argv),
            "arguments": _jsonable(dict(arguments)),
            "started_at": now_iso(),
            "git": git_info(),
            "environment": environment_info(),
            "stages": {},
        }
        self.stage_dirs: Dict[str, Path] = {}

    @staticmethod
    def _load_previous(path: Path) -> Dict[str, Any]:
        if not path.exists():
            return {}
        try:
            data = read_json(path)
        except InputError:
            logger.warning("ignoring unreadable previous manifest %s", path)
            return {}
        return data if isinstance(data, dict) else {}

    def record_stage(self, stage: Any, status: str, seconds: float, reused: bool = False,
                     result: Any = None) -> None:
        """Store the status, timing, inputs and outputs of ``stage`` (a :class:`Stage`), and what
        its function returned when that is a dict (counts, metrics)."""
        previous = self.previous_stages.get(stage.name, {})
        entry: Dict[str, Any] = {"status": status, "seconds": round(seconds, 3), "updated_at": now_iso()}
        if stage.description:
            entry["description"] = stage.description
        if isinstance(result, dict):
            entry["result"] = _jsonable(result)
        if status == "ran":
            entry["completed"] = True
            entry["inputs"] = fingerprint_paths(stage.inputs)
            entry["outputs"] = fingerprint_paths(stage.outputs)
        elif reused:
            entry["completed"] = True
            # how the reused output was made, when an earlier run here recorded it
            for key in ("inputs", "outputs"):
                entry[key] = previous.get(key) or fingerprint_paths(getattr(stage, key))
            if previous.get("result") is not None:
                entry["result"] = previous["result"]
            if previous.get("seconds") is not None:
                entry["seconds_when_built"] = previous.get("seconds_when_built", previous["seconds"])
        else:
            entry["inputs"] = [str(p) for p in stage.inputs]
            entry["outputs"] = [str(p) for p in stage.outputs]
        self.data["stages"][stage.name] = entry
        order = self.data.setdefault("stage_order", [])  # JSON keys are sorted; this keeps the run order
        if stage.name not in order:
            order.append(stage.name)
        self.stage_dirs[stage.name] = stage.manifest_dir

    def set(self, key: str, value: Any) -> None:
        """Add a top-level entry (e.g. ``results``)."""
        self.data[key] = _jsonable(value)

    def write_all(self) -> None:
        """Write the run manifest, and each completed stage's manifest into its output directory."""
        self.data["updated_at"] = now_iso()
        self.data["total_seconds"] = round(sum(s.get("seconds", 0.0) for s in self.data["stages"].values()), 3)
        _write_manifest(self.run_dir / MANIFEST_NAME, self.data)
        by_dir: Dict[Path, Dict[str, Any]] = {}
        for name, directory in self.stage_dirs.items():
            record = self.data["stages"][name]
            if directory.resolve() == self.run_dir.resolve() or not record.get("completed") or not directory.is_dir():
                continue
            by_dir.setdefault(directory, {})[name] = record
        for directory, stages in by_dir.items():
            header = {k: v for k, v in self.data.items() if k != "stages"}
            _write_manifest(directory / MANIFEST_NAME, {**header, "run_dir": str(self.run_dir), "stages": stages})


def _write_manifest(path: Path, data: Dict[str, Any]) -> None:
    """write_json, with the manifest's path on OS errors (a full disk's write() error names no file)."""
    try:
        write_json(path, data)
    except OSError as exc:
        if not exc.filename:
            exc.filename = str(path)
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
