"""Reruns that end where an uninterrupted run ends: torch threads (checkpoints: scincl.model.checkpoints)."""
from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


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
