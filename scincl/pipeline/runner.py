"""The stage runner: :func:`run_stages` skips, reuses or rebuilds each :class:`Stage` as :func:`reuse_decision` says
and records each in the run's record, ``manifest.json`` (:class:`Manifest`: how an output was made, its arguments,
inputs, versions, git commit and timings; in the run directory for all stages and in each stage's output directory
for that stage only, so a copied model dir still says what made it)."""
from __future__ import annotations

import logging
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

from scincl.errors import InputError
from scincl.faults import kill_point
from scincl.io import write_json
from scincl.provenance import (MANIFEST_NAME, decided_by_runner, environment_info, git_info, made_by, marker_difference,
                               marker_path, now_iso, outputs_record, plain, read_record, settled, write_record)

logger = logging.getLogger(__name__)

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


@dataclass
class Stage:
    """One step of a plan: ``run()`` writes ``outputs`` (all needed for a reuse) from ``inputs`` (fingerprinted) with
    ``settings`` (recorded in its marker); ``output_dir`` gets its manifest (default: :attr:`manifest_dir`'s rule);
    ``reusable``: a further condition for a reuse; ``writes``: what else it writes (an evaluation's embeddings)."""

    name: str
    outputs: Sequence[Path]
    run: Callable[[], Any]
    inputs: Sequence[Path] = ()
    output_dir: Optional[Path] = None
    description: str = ""
    reusable: Optional[Callable[[], bool]] = None
    settings: Dict[str, Any] = field(default_factory=dict)
    writes: Sequence[Path] = ()
    adopts: bool = False  # its settings are its call's (CorpusPlan.add): a marker that has none is adopted once

    def __post_init__(self) -> None:
        self.outputs = [Path(p) for p in self.outputs]
        self.inputs = [Path(p) for p in self.inputs if p is not None]
        if not self.outputs:
            raise ValueError(f"stage {self.name!r} declares no outputs")

    @property
    def manifest_dir(self) -> Path:
        """Where this stage's ``manifest.json`` goes: ``output_dir``, else the first output when it is a directory or
        has no extension, else its folder."""
        if self.output_dir is not None:
            return Path(self.output_dir)
        first = self.outputs[0]
        return first if first.is_dir() or "." not in first.name else first.parent

    @property
    def marker(self) -> Path:
        """The completion marker: written last, after every output exists."""
        return marker_path(self.manifest_dir, self.name)

    def made_by(self) -> Dict[str, Any]:
        """The record of these settings and the current inputs' fingerprints."""
        return {"stage": self.name, **made_by(self.settings, self.inputs)}


@dataclass
class StageResult:
    """What happened to one stage: its status, seconds and what its ``run()`` returned."""

    status: str
    seconds: float = 0.0
    result: Any = None


def reuse_decision(stage: Stage, wanted: Optional[dict] = None, stored: Optional[dict] = None) -> Optional[str]:
    """``None`` when ``stage``'s outputs exist and its completion marker ``stage_<name>.done.json`` (``stored``: read)
    records the same settings, input fingerprints (``wanted``: ``stage.made_by()``) and outputs; else why to run."""
    if missing := [str(o) for o in stage.outputs if not o.exists()]:
        return f"output {missing[0]} missing"
    if (stored := stored or read_record(stage.marker)) is None:
        return f"no completion marker {stage.marker.name} (interrupted run?)"
    why = marker_difference(stored, wanted or stage.made_by(), stage.outputs, stage.adopts)
    if why is None and stage.reusable is not None and not stage.reusable():
        why = "the existing output does not hold what is asked for"
    return why


def waiting_stages(stages: Sequence[Stage]) -> List[tuple]:
    """``(name, why)`` of each of ``stages`` that would run now, nothing written: what a dry run reports."""
    return [(stage.name, why) for stage in stages if (why := reuse_decision(stage)) is not None]


def run_stages(stages: Sequence[Stage], manifest: Manifest, skip: Iterable[str] = (), override: Iterable[str] = (),
               only: Sequence[str] = (), known: Iterable[str] = ()) -> Dict[str, StageResult]:
    """Run ``stages`` in order (``only``: those, once the stages before them are done), each skipped, reused or
    (re)built, recorded in ``manifest`` as it goes; returns name -> result. A name in ``skip``/``override``/``only``
    not planned is an :class:`InputError` (a typo must not rebuild nothing), a note when ``known`` (another plan's)."""
    names = [s.name for s in stages]
    skip, override = set(skip), set(override)
    for flag, chosen in (("skip_", skip), ("override_", override), ("stages ", only)):
        for name in sorted(set(chosen) - set(names)):
            if name not in known:
                raise InputError(f"--{flag}{name}: unknown stage (stages: {', '.join(names)})")
            logger.info("--%s%s: stage %s does not run in this configuration", flag, name, name)
    if only:  # --stages: the stages before the last one selected must be done (an earlier job of the same plan)
        last = max((names.index(name) for name in only if name in names), default=-1)
        if waiting := waiting_stages([stage for stage in stages[:last] if stage.name not in only]):
            name, why = waiting[0]
            raise InputError(f"--stages {','.join(only)}: stage {name} comes first and is not done ({why}); "
                             f"run it first (--stages {name})")
        skip.update(name for name in names if name not in only)
    results: Dict[str, StageResult] = {}
    for position, stage in enumerate(stages, start=1):
        prefix = f"[{position}/{len(stages)}] {stage.name}"
        if stage.name in skip:
            logger.info("%s: skipped (--skip_%s)", prefix, stage.name)
            results[stage.name] = StageResult(STATUS_SKIPPED)
            manifest.record_stage(stage, STATUS_SKIPPED)
            continue
        wanted = stage.made_by()  # once: a stage's inputs are earlier stages' outputs or user files, unchanged by it
        stored = read_record(stage.marker)  # once: the decision's and the manifest's
        why = f"--override_{stage.name}" if stage.name in override else reuse_decision(stage, wanted, stored)
        if why is None:
            logger.info("%s: output exists, reused (%s); pass --override_%s to rebuild", prefix,
                        ", ".join(str(o) for o in stage.outputs), stage.name)
            result, record = StageResult(STATUS_REUSED), settled(stored, wanted, stage.name) if stage.adopts else stored
        else:
            made = stage.marker.exists()
            stage.marker.unlink(missing_ok=True)  # from here until the marker is rewritten the stage is not complete
            if made or any(o.exists() for o in stage.outputs):
                logger.info("%s: rebuilding: %s", prefix, why)
            if made or stage.name in override:  # outputs made with other settings or inputs go first
                for out in (o for o in stage.outputs if o.exists()):
                    shutil.rmtree(out) if out.is_dir() else out.unlink()
                    logger.info("stage %s: removed old output %s", stage.name, out)
            logger.info("%s: running%s", prefix, f" - {stage.description}" if stage.description else "")
            manifest.record_stage(stage, "running")
            kill_point(f"{stage.name}:before")
            start = time.perf_counter()
            try:
                with decided_by_runner([*stage.outputs, *stage.writes]):  # the one reuse decision: this one
                    value = stage.run()
                if missing := [str(o) for o in stage.outputs if not o.exists()]:
                    raise RuntimeError(f"stage {stage.name} finished without writing {', '.join(missing)}")
            except BaseException as exc:
                if isinstance(exc, OSError) and not exc.filename:  # e.g. ENOSPC from a write(): say where
                    exc.filename = f"{stage.manifest_dir} (stage {stage.name})"
                try:
                    manifest.record_stage(stage, STATUS_FAILED, time.perf_counter() - start)
                except OSError as manifest_error:  # a full disk also fails the manifest: keep the first error
                    logger.warning("could not record the failure in the manifest: %s", manifest_error)
                raise
            result, record = StageResult(STATUS_RAN, time.perf_counter() - start, value), wanted
            kill_point(f"{stage.name}:after")
            logger.info("%s: done in %.1f s", prefix, result.seconds)
        if record is not stored or "outputs" not in record:  # built, adopted, or a marker from before issue 29
            write_record(stage.marker, record := {**record, "outputs": outputs_record(stage.outputs)})
        results[stage.name] = result
        manifest.record_stage(stage, result.status, result.seconds, result.result, made=record)
    return results
