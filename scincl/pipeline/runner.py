"""The stage runner: every pipeline and experiment runs its steps as :class:`Stage` objects through :func:`run_stages`,
the one place that decides to skip, reuse or rebuild a stage (:func:`reuse_decision`) and records what happened.

A stage is reused only when all its outputs exist and its completion marker (``stage_<name>.done.json``,
:mod:`scincl.provenance`: written last, removed before the stage runs) records the same settings, the same input
fingerprints and outputs unchanged since; a marker with other settings or inputs rebuilds the stage (old outputs
removed first), no marker (an interrupted run) runs it again over its partial outputs. Each stage's status, time,
inputs and outputs go to the ``manifest.json`` of the run directory and of the stage's own folder after each stage.
"""
from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from scincl.errors import InputError
from scincl.faults import kill_point
from scincl.pipeline.manifest import Manifest, fingerprint_paths
from scincl.provenance import (decided_by_runner, difference, made_by, marker_path, outputs_changed, outputs_record,
                               read_record, write_record)

logger = logging.getLogger(__name__)

STATUS_RAN = "ran"
STATUS_REUSED = "reused"
STATUS_SKIPPED = "skipped"
STATUS_FAILED = "failed"


@dataclass
class Stage:
    """One step of the pipeline.

    Attributes:
        name: short identifier, used in ``--skip_<name>`` / ``--override_<name>`` and the manifest.
        outputs: files/directories the stage creates; all must exist for the stage to be reused.
        run: writes ``outputs`` (called with no arguments; close over the settings).
        inputs: files/directories read by the stage (fingerprinted into the manifest).
        output_dir: directory that receives the stage's own ``manifest.json`` (default: the
            directory of the first output, or the output itself when it is a directory).
        description: one line for the log.
        reusable: a further condition for reusing existing outputs (e.g. a results file holds the
            split asked for); ``None``: existing outputs are enough.
        settings: every setting that changes the outputs' bytes (recorded in the completion marker
            with the inputs' fingerprints; outputs made with other settings are rebuilt).
        writes: what the stage's command writes besides ``outputs`` and the files named after them (an
            evaluation's embeddings): made on the runner's decision too, not needed for a reuse.
    """

    name: str
    outputs: Sequence[Path]
    run: Callable[[], Any]
    inputs: Sequence[Path] = ()
    output_dir: Optional[Path] = None
    description: str = ""
    reusable: Optional[Callable[[], bool]] = None
    settings: Dict[str, Any] = field(default_factory=dict)
    writes: Sequence[Path] = ()

    def __post_init__(self) -> None:
        self.outputs = [Path(p) for p in self.outputs]
        self.writes = [Path(p) for p in self.writes]
        self.inputs = [Path(p) for p in self.inputs if p is not None]
        if not self.outputs:
            raise ValueError(f"stage {self.name!r} declares no outputs")

    @property
    def manifest_dir(self) -> Path:
        """Where this stage's ``manifest.json`` goes."""
        if self.output_dir is not None:
            return Path(self.output_dir)
        first = self.outputs[0]
        return first if first.is_dir() or _looks_like_dir(first) else first.parent

    @property
    def marker(self) -> Path:
        """The completion marker: written last, after every output exists."""
        return marker_path(self.manifest_dir, self.name)

    def made_by(self) -> Dict[str, Any]:
        """The record of these settings and the current inputs' fingerprints."""
        return {"stage": self.name, **made_by(self.settings, self.inputs)}


def _looks_like_dir(path: Path) -> bool:
    """A path without a file extension is treated as a directory output (``model_x``, ``graph``)."""
    return "." not in path.name


@dataclass
class StageResult:
    """What happened to one stage (also stored in the manifest)."""

    name: str
    status: str
    seconds: float = 0.0
    result: Any = None
    outputs: List[Dict[str, Any]] = field(default_factory=list)


def _adopt_recorded_stage(stage: Stage, manifest: Manifest) -> bool:
    """Outputs made before completion markers existed: adopt them (write the marker) when the run's
    ``manifest.json`` records the stage as completed from the same input fingerprints and the stage
    has no settings of its own (its settings are in its output's name, as in the real-corpus
    experiments); True when adopted."""
    record = manifest.previous_stages.get(stage.name) or {}
    if stage.settings or not record.get("completed") or record.get("inputs") != fingerprint_paths(stage.inputs):
        return False
    write_record(stage.marker, stage.made_by())
    logger.info("stage %s: completed per %s with the same inputs; recorded as %s", stage.name,
                manifest.run_dir / "manifest.json", stage.marker.name)
    return True


def reuse_decision(stage: Stage, manifest: Optional[Manifest] = None) -> Optional[str]:
    """``None`` when ``stage``'s outputs can be reused, otherwise why it must run (one phrase).

    Reusable: every output exists, the completion marker exists (the stage finished) and it
    records the settings and input fingerprints of this run, and ``stage.reusable`` agrees.
    """
    missing = [str(o) for o in stage.outputs if not o.exists()]
    if missing:
        return f"output {missing[0]} missing"
    stored = read_record(stage.marker)
    if stored is None and manifest is not None and _adopt_recorded_stage(stage, manifest):
        stored = read_record(stage.marker)
    if stored is None:
        return f"no completion marker {stage.marker.name} (interrupted run?)"
    why = difference(stored, stage.made_by())
    if why is not None:
        return why
    if "outputs" not in stored:  # a marker from before issue 29: record what its outputs are now
        write_record(stage.marker, {**stored, "outputs": outputs_record(stage.outputs)})
        logger.info("stage %s: recorded the fingerprints of its outputs in %s", stage.name, stage.marker.name)
    else:
        why = outputs_changed(stored["outputs"], stage.outputs)
        if why is not None:
            return why
    if stage.reusable is not None and not stage.reusable():
        return "the existing output does not hold what is asked for"
    return None


def waiting_stages(stages: Sequence[Stage]) -> List[tuple]:
    """``(name, why)`` of each of ``stages`` that would run now (:func:`reuse_decision`, without a manifest: nothing is
    written), in order: what a dry run reports."""
    return [(stage.name, why) for stage in stages if (why := reuse_decision(stage)) is not None]


def remove_outputs(stage: Stage) -> None:
    """Delete a stage's old outputs before rebuilding it (``--override_<stage>``)."""
    for out in stage.outputs:
        if out.is_dir():
            shutil.rmtree(out)
            logger.info("stage %s: removed old output directory %s", stage.name, out)
        elif out.exists():
            out.unlink()
            logger.info("stage %s: removed old output %s", stage.name, out)


def run_stages(
    stages: Sequence[Stage],
    manifest: Manifest,
    skip: Iterable[str] = (),
    override: Iterable[str] = (),
) -> Dict[str, StageResult]:
    """Run ``stages`` in order with skip/reuse/override semantics; returns name -> result.

    ``manifest`` is updated and written after every stage (see module docstring).
    Unknown names in ``skip``/``override`` are an :class:`InputError` (a typo must not silently
    rebuild nothing).
    """
    names = [s.name for s in stages]
    skip, override = set(skip), set(override)
    for flag, chosen in (("skip", skip), ("override", override)):
        unknown = sorted(chosen - set(names))
        if unknown:
            raise InputError(f"--{flag}_{unknown[0]}: unknown stage (stages: {', '.join(names)})")
    results: Dict[str, StageResult] = {}
    total = len(stages)
    for position, stage in enumerate(stages, start=1):
        prefix = f"[{position}/{total}] {stage.name}"
        if stage.name in skip:
            logger.info("%s: skipped (--skip_%s)", prefix, stage.name)
            results[stage.name] = StageResult(stage.name, STATUS_SKIPPED)
            manifest.record_stage(stage, STATUS_SKIPPED, 0.0)
            manifest.write_all()
            continue
        why = "--override_" + stage.name if stage.name in override else reuse_decision(stage, manifest)
        if why is None:
            logger.info("%s: output exists, reused (%s); pass --override_%s to rebuild", prefix,
                        ", ".join(str(o) for o in stage.outputs), stage.name)
            results[stage.name] = StageResult(stage.name, STATUS_REUSED)
            manifest.record_stage(stage, STATUS_REUSED, 0.0, reused=True)
            manifest.write_all()
            continue
        made_differently = stage.marker.exists() and stage.name not in override
        if stage.marker.exists():
            stage.marker.unlink()  # from here until the marker is rewritten the stage is not complete
        if stage.name in override or made_differently:
            if made_differently:
                logger.info("%s: rebuilding: %s", prefix, why)
            remove_outputs(stage)
        elif any(o.exists() for o in stage.outputs):
            logger.info("%s: rebuilding: %s", prefix, why)
        logger.info("%s: running%s", prefix, f" - {stage.description}" if stage.description else "")
        manifest.record_stage(stage, "running", 0.0)
        manifest.write_all()
        kill_point(f"{stage.name}:before")
        start = time.perf_counter()
        try:
            with decided_by_runner([*stage.outputs, *stage.writes]):  # the one reuse decision: this one
                value = stage.run()
        except BaseException as exc:
            if isinstance(exc, OSError) and not exc.filename:
                # e.g. ENOSPC from a write(): say where it happened
                exc.filename = f"{stage.manifest_dir} (stage {stage.name})"
            manifest.record_stage(stage, STATUS_FAILED, time.perf_counter() - start)
            try:
                manifest.write_all()
            except OSError as manifest_error:  # a full disk also fails the manifest: keep the first error
                logger.warning("could not record the failure in the manifest: %s", manifest_error)
            raise
        seconds = time.perf_counter() - start
        missing = [str(o) for o in stage.outputs if not o.exists()]
        if missing:
            manifest.record_stage(stage, STATUS_FAILED, seconds)
            manifest.write_all()
            raise RuntimeError(f"stage {stage.name} finished without writing {', '.join(missing)}")
        kill_point(f"{stage.name}:after")
        write_record(stage.marker, {**stage.made_by(), "outputs": outputs_record(stage.outputs)})
        results[stage.name] = StageResult(stage.name, STATUS_RAN, seconds, value)
        manifest.record_stage(stage, STATUS_RAN, seconds, result=value)
        manifest.write_all()
        logger.info("%s: done in %.1f s", prefix, seconds)
    return results
