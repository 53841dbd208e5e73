"""Trainer checkpoints that can be resumed from (a SIGKILL can leave a half-written one)."""
from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Optional

logger = logging.getLogger(__name__)


def last_complete_checkpoint(model_dir: Path) -> Optional[Path]:
    """The newest ``checkpoint-N`` the Trainer finished writing; half-written ones are removed.

    The Trainer writes ``trainer_state.json`` last when saving a checkpoint, so a checkpoint
    without it was interrupted (SIGKILL, node failure) and cannot be resumed from.
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
        else:
            logger.warning("train: removing the interrupted checkpoint %s (no trainer_state.json)", path)
            shutil.rmtree(path)
    return max(checkpoints)[1] if checkpoints else None
