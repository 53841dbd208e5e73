"""``manifest.json``: how an output was made (arguments, inputs, versions, git commit, timings), in the run directory
(all stages) and in each stage's output directory (that stage only, so a copied model dir still says what made it)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from scincl.io import write_json
from scincl.provenance import MANIFEST_NAME, environment_info, git_info, now_iso, plain, read_record

STATUS_RAN, STATUS_REUSED, STATUS_SKIPPED, STATUS_FAILED = "ran", "reused", "skipped", "failed"


class Manifest:
    """The record of one pipeline run, ``manifest.json``; an earlier run's records in the same directory are read, so a
    reused stage keeps what it returned and how long it took when it was built."""

    def __init__(self, run_dir: Path, arguments: Mapping[str, Any]) -> None:
        self.run_dir = Path(run_dir)
        self.previous_stages: Dict[str, Any] = (read_record(self.run_dir / MANIFEST_NAME) or {}).get("stages", {})
        self.data: Dict[str, Any] = {"command": list(sys.argv),
                                     "arguments": plain(dict(arguments)), "started_at": now_iso(), "git": git_info(),
                                     "environment": environment_info(), "stages": {}}
        self.stage_dirs: Dict[str, Path] = {}

    def record_stage(self, stage: Any, status: str, seconds: float = 0.0, result: Any = None,
                     made: Optional[Mapping[str, Any]] = None) -> None:
        """Record a :class:`~scincl.pipeline.runner.Stage`'s status, time, inputs, outputs (``made``: with the
        fingerprints of its completion marker, once completed) and dict result; write."""
        previous = self.previous_stages.get(stage.name, {}) if status == STATUS_REUSED else {}
        entry: Dict[str, Any] = {"status": status, "seconds": round(seconds, 3), "updated_at": now_iso(),
                                 "inputs": [str(p) for p in stage.inputs], "outputs": [str(p) for p in stage.outputs]}
        if stage.description:
            entry["description"] = stage.description
        if made is not None:
            entry["completed"] = True
            for key in ("inputs", "outputs"):
                entry[key] = [{"path": path, **fp} for path, fp in zip(entry[key], made[key])]
        result = previous.get("result", result)
        if isinstance(result, dict):
            entry["result"] = plain(result)
        if previous.get("seconds") is not None:
            entry["seconds_when_built"] = previous.get("seconds_when_built", previous["seconds"])
        self.data["stages"][stage.name] = entry
        self.stage_dirs[stage.name] = stage.manifest_dir
        self.write_all()

    def update(self, **entries: Any) -> None:
        """Add top-level entries (e.g. ``paths``)."""
        self.data.update(plain(entries))

    def write_all(self) -> None:
        """Write the run manifest, and each completed stage's manifest into its output directory."""
        self.data.update(updated_at=now_iso(), stage_order=list(self.data["stages"]),  # JSON keys are sorted
                         total_seconds=round(sum(s.get("seconds", 0.0) for s in self.data["stages"].values()), 3))
        header = {**{k: v for k, v in self.data.items() if k != "stages"}, "run_dir": str(self.run_dir)}
        files = {self.run_dir: self.data}
        for name, directory in self.stage_dirs.items():
            record = self.data["stages"][name]
            if directory.resolve() != self.run_dir.resolve() and record.get("completed") and directory.is_dir():
                files.setdefault(directory, {**header, "stages": {}})["stages"][name] = record
        for directory, data in files.items():
            write_json(directory / MANIFEST_NAME, data)
