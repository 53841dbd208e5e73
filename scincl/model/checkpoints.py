"""Trainer checkpoints that can be resumed from (a SIGKILL can leave a half-written one)."""
from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Optional

logger = logging.getLogger(__name__)


# Trainer arguments that change logs, never the model's bytes (left out of a run's fingerprint)
LOGGING_ONLY_ARGS = ("report_to", "run_name", "logging_dir", "logging_steps", "disable_tqdm", "resume_from_checkpoint")


def last_complete_checkpoint(model_dir: Path, remove_incomplete: bool = True) -> Optional[Path]:
    """The newest ``checkpoint-N`` the Trainer finished writing.

    The Trainer writes ``trainer_state.json`` last when saving a checkpoint, so a checkpoint
    without it was interrupted (SIGKILL, node failure) and cannot be resumed from. It is removed
    when ``remove_incomplete`` (pass it on one rank only: in a multi-process job every rank looks
    at the same directory) and skipped otherwise.
    """
    if not model_dir.is_dir():
        return None
    checkpoints = []
    for path in model_dir.glob("checkpoint-*"):
        step = path.name.rsplit("-", 1)[-1]
        if not path.is_dir() or not step.isdigit():
            continue
        if (path / "trainer_state.json").exists():
            checkpoints.append((int(step), path))
        elif remove_incomplete:
            logger.warning("train: removing the interrupted checkpoint %s (no trainer_state.json)", path)
            shutil.rmtree(path)
        else:
            logger.info("train: skipping the interrupted checkpoint %s (the main process removes it)", path)
    return max(checkpoints)[1] if checkpoints else None
