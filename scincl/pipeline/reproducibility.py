"""Reruns that end where an uninterrupted run ends: Trainer checkpoints and torch threads."""
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


def torch_threads() -> int:
    """torch's intra-op thread count at start-up (before any stage changed it)."""
    import torch

    return torch.get_num_threads()


def reset_torch_threads(threads: int) -> None:
    """Give torch back its start-up thread count before training/embedding.

    faiss' ``omp_set_num_threads`` (the ``ann`` stage, ``--workers``) also sets torch's OpenMP
    pool; float sums then run in another order and a rerun that reuses the index (so never calls
    faiss) would train a slightly different model. With a fixed count, a resumed or repeated run
    gives the same weights.
    """
    import torch

    if torch.get_num_threads() != threads:
        logger.info("torch threads: %d -> %d (start-up value, for reproducible training)",
                    torch.get_num_threads(), threads)
        torch.set_num_threads(threads)
