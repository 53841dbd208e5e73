"""What made an output, and the one reuse rule: reuse only what was made from the same inputs and settings.

A *made-by record* is ``{"settings": {...}, "inputs": [{"name", "size", "sha256", ...}, ...]}``:
every setting that changes the output's bytes, and a fingerprint of every file or directory it
was made from. It is stored with the output (a stage's completion marker, a faiss index's
``faiss_config.json``, a model dir's ``run_fingerprint.json``) and compared with the record the
current call would write. Equal: the output is reused. Different: the caller decides - rebuild
(the pipeline's reuse-or-build, one log line naming the difference) or refuse (standalone
commands without ``--override``: one :class:`~scincl.errors.InputError` line naming it).

Fingerprints (why this is sound and cheap): a file of up to :data:`FULL_HASH_LIMIT` bytes is its
size + the sha256 of its content, so an identical file rebuilt by a rerun (or moved elsewhere)
still matches, and any changed byte does not. Larger files (S2ORC-scale embeddings, model weights)
are size + mtime + the sha256 of their first :data:`FULL_HASH_LIMIT` bytes: hashing 160 GB on every
run is not affordable, and a rewrite past the hashed head changes the mtime. A directory is the
sorted list of its files' relative paths and fingerprints (files inside directories are hashed in
full up to :data:`DIR_FILE_HASH_LIMIT` bytes, beyond that by size + mtime + head hash). Paths
are not part of a fingerprint: only the content decides.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence

from scincl.errors import InputError
from scincl.io import PathLike, read_json, write_json

logger = logging.getLogger(__name__)

FULL_HASH_LIMIT = 64 << 20  # files up to 64 MiB: content hash only (the manifest's HASH_BYTES_LIMIT)
DIR_FILE_HASH_LIMIT = 8 << 20  # per file inside an input directory (model dirs, corpus shards)
IGNORED_NAMES = ("manifest.json",)  # rewritten by every run (timings); never part of what an output is
MARKER_PREFIX = "stage_"  # a pipeline stage's completion marker: <output dir>/stage_<name>.done.json
MARKER_SUFFIX = ".done.json"


def _hash_file(path: Path, limit: int) -> Dict[str, Any]:
    size = path.stat().st_size
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        remaining = min(size, limit)
        while remaining > 0:
            chunk = fh.read(min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    entry: Dict[str, Any] = {"size": size, "sha256": digest.hexdigest()}
    if size > limit:
        entry["mtime_ns"] = path.stat().st_mtime_ns
        entry["sha256_of_first_bytes"] = limit
    return entry


def fingerprint(path: PathLike) -> Dict[str, Any]:
    """The content fingerprint of a file or directory (see the module docstring); ``missing`` when absent."""
    p = Path(path)
    if p.is_file():
        return {"name": p.name, **_hash_file(p, FULL_HASH_LIMIT)}
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and f.name not in IGNORED_NAMES and not is_marker(f))
        return {"name": p.name, "files": [{"path": str(f.relative_to(p)), **_hash_file(f, DIR_FILE_HASH_LIMIT)}
                                          for f in files]}
    return {"name": p.name, "missing": True}


def is_marker(path: PathLike) -> bool:
    """True for a pipeline stage's completion marker (not part of any output's content)."""
    name = Path(path).name
    return name.startswith(MARKER_PREFIX) and name.endswith(MARKER_SUFFIX)


def plain(value: Any) -> Any:
    """``value`` as plain JSON (paths -> str, tuples -> lists), so records compare equal after a round trip."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def made_by(settings: Mapping[str, Any], inputs: Sequence[Optional[PathLike]] = ()) -> Dict[str, Any]:
    """The record of an output made with ``settings`` from ``inputs`` (``None`` inputs are left out)."""
    return {"settings": plain(dict(settings)), "inputs": [fingerprint(p) for p in inputs if p is not None]}


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def difference(stored: Optional[Mapping[str, Any]], wanted: Mapping[str, Any]) -> Optional[str]:
    """The first way ``stored`` differs from ``wanted`` as a phrase, or ``None`` when they match."""
    if not stored or "settings" not in stored or "inputs" not in stored:
        return "no record of the inputs and settings that made it"
    old_settings, new_settings = stored["settings"], wanted["settings"]
    for key in sorted(set(old_settings) | set(new_settings)):
        if key not in old_settings or key not in new_settings or old_settings[key] != new_settings[key]:
            return (f"setting {key} differs (made with {_short(old_settings.get(key, '<unset>'))}, "
                    f"now {_short(new_settings.get(key, '<unset>'))})")
    old_inputs, new_inputs = stored["inputs"], wanted["inputs"]
    if len(old_inputs) != len(new_inputs):
        return (f"inputs differ (made from {', '.join(str(i.get('name')) for i in old_inputs) or 'nothing'}; "
                f"now {', '.join(str(i.get('name')) for i in new_inputs) or 'nothing'})")
    for old, new in zip(old_inputs, new_inputs):
        if {k: v for k, v in old.items() if k != "name"} != {k: v for k, v in new.items() if k != "name"}:
            return f"input {new.get('name')} differs from the one it was made from"
    return None


def read_record(path: PathLike, key: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The record in ``path`` (under ``key`` when given); ``None`` when the file is absent or unreadable."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        data = read_json(p)
    except InputError:
        logger.warning("ignoring unreadable record %s", p)
        return None
    if key is not None:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def write_record(path: PathLike, record: Mapping[str, Any]) -> None:
    """Write ``record`` atomically (a completion marker: write it after every output exists)."""
    write_json(path, dict(record))


def check_reuse(output: PathLike, stored: Optional[Mapping[str, Any]], wanted: Mapping[str, Any],
                override: bool) -> bool:
    """The reuse rule of a standalone command whose ``output`` exists.

    True: same inputs and settings, reuse it. False: ``override`` was given, rebuild it (logged).
    Otherwise an :class:`InputError` naming the differing input or setting.
    """
    why = difference(stored, wanted)
    if why is None:
        if override:
            logger.info("%s: --override given, rebuilding", output)
            return False
        return True
    if override:
        logger.info("%s: %s; --override given, rebuilding", output, why)
        return False
    raise InputError(f"exists but was made differently: {why}; pass --override to rebuild it", path=output)


def record_path(output: PathLike) -> Path:
    """Where a standalone command keeps the made-by record of ``output``: ``<output>.made_by.json``."""
    return Path(str(output) + ".made_by.json")


def local_path(name_or_path: Optional[PathLike]) -> Optional[Path]:
    """``name_or_path`` as an input to fingerprint when it is a local file or directory (a hub name is a setting)."""
    return Path(name_or_path) if name_or_path and Path(name_or_path).exists() else None


def marker_path(directory: PathLike, stage: str) -> Path:
    """Where the completion marker of pipeline stage ``stage`` lives (beside its outputs)."""
    return Path(directory) / f"{MARKER_PREFIX}{stage}{MARKER_SUFFIX}"

