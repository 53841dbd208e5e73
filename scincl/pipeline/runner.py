"""The stage runner: every pipeline and experiment runs its steps through :func:`run_stages`.

``run_specter`` (its plan in :mod:`scincl.pipeline.scincl_plan`), its ``--seeds`` and ``sweep``
loops and the real-corpus experiments (:mod:`scincl.pipeline.real_corpus`) all hand
:class:`Stage` objects to this module: the decision to skip, reuse or rebuild a stage and the
record of what happened live here and nowhere else (:func:`outputs_complete` is the one reuse check).

A :class:`Stage` is a name, the files or directories it produces, the inputs it reads and a
function that writes the outputs (each stage's function writes atomically, see ``scincl.io``).
:func:`run_stages` runs a list of stages the way the original SciNCL ``run_specter`` did:

- ``skip``: stage names the user skipped (``--skip_<stage>``) are not run (logged);
- a stage whose outputs all exist is reused (logged) - unless its name is in ``override``
  (``--override_<stage>``), in which case its old outputs are removed and it runs again;
- a directory output (a model dir, a BigGraph checkpoint dir) counts as finished only when the
  manifest records that the stage completed: a directory may be half-written when a run is
  killed, while single files are renamed into place only once complete;
- every stage's status, wall time, inputs (sizes + hashes) and outputs are written to the
  ``manifest.json`` of the run directory and of each stage's own output directory after each
  stage, so an interrupted run still says how far it got.
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
    """

    name: str
    outputs: Sequence[Path]
    run: Callable[[], Any]
    inputs: Sequence[Path] = ()
    output_dir: Optional[Path] = None
    description: str = ""
    reusable: Optional[Callable[[], bool]] = None

    def __post_init__(self) -> None:
        self.outputs = [Path(p) for p in self.outputs]
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


def outputs_complete(stage: Stage, manifest: Manifest) -> bool:
    """True when every output exists and directory outputs were recorded as complete."""
    for out in stage.outputs:
        if not out.exists():
            return False
        if out.is_dir() and not manifest.stage_completed(stage.name):
            logger.warning("stage %s: directory %s exists but the manifest does not record the stage as "
                           "complete (interrupted run?) - rebuilding", stage.name, out)
            return False
    return stage.reusable is None or bool(stage.reusable())


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
        if stage.name not in override and outputs_complete(stage, manifest):
            logger.info("%s: output exists, reused (%s); pass --override_%s to rebuild", prefix,
                        ", ".join(str(o) for o in stage.outputs), stage.name)
            results[stage.name] = StageResult(stage.name, STATUS_REUSED)
            manifest.record_stage(stage, STATUS_REUSED, 0.0, reused=True)
            manifest.write_all()
            continue
        if stage.name in override:
            remove_outputs(stage)
        logger.info("%s: running%s", prefix, f" - {stage.description}" if stage.description else "")
        manifest.record_stage(stage, "running", 0.0)
        manifest.write_all()
        kill_point(f"{stage.name}:before")
        start = time.perf_counter()
        try:
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
        results[stage.name] = StageResult(stage.name, STATUS_RAN, seconds, value)
        manifest.record_stage(stage, STATUS_RAN, seconds, result=value)
        manifest.write_all()
        logger.info("%s: done in %.1f s", prefix, seconds)
    return results


def describe_outputs(stage: Stage) -> List[Dict[str, Any]]:
    """Fingerprints of a stage's outputs (files: size + sha256; directories: their files)."""
    return fingerprint_paths(stage.outputs)
