"""Collapsed embeddings (issue 41, class 3): every paper the same vector, or near it, is never a scored model.

A training that collapses (a loss driven to a constant, LayerNorm weights at zero) gives every document
the same vector; its SciDocs scores would be those of a random ranking, reported as a model. The check
measures the *relative spread* of the embeddings of papers with distinct texts: the mean distance of the
vectors to their centroid over their mean norm (0 when all are equal, ~0.8 for all-MiniLM-L6-v2 on the demo).

- below :data:`COLLAPSED_SPREAD` (equal up to float rounding): an error, after ``embed`` and after ``train``
  (before the run counts as finished, so nothing downstream scores it);
- below :data:`NEAR_COLLAPSED_SPREAD`: a loud warning, recorded (``embedding_check`` of the trained model's
  ``embedding_check.json`` and the run's manifest). Randomly initialised tiny test BERTs sit here (~1e-3 with
  CLS pooling), so it is a warning, not an error.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np

from scincl.errors import InputError

logger = logging.getLogger(__name__)

COLLAPSED_SPREAD = 1e-5  # relative spread at which the vectors are the same up to float rounding
NEAR_COLLAPSED_SPREAD = 1e-2  # a hundredth of the vectors' norm: documents are barely told apart
EMBEDDING_CHECK_NAME = "embedding_check.json"
CHECK_PAPERS = 256  # papers a trained model embeds for the check


def relative_spread(vectors: np.ndarray) -> float:
    """Mean distance of the rows to their centroid over the rows' mean norm (0: all rows equal)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norm = float(np.linalg.norm(vectors, axis=1).mean())
    if norm == 0.0:
        return 0.0
    return float(np.linalg.norm(vectors - vectors.mean(axis=0), axis=1).mean() / norm)


def embedding_check(vectors: np.ndarray, texts: Sequence[str]) -> Dict[str, Any]:
    """``{"papers", "spread", "status", "message"}`` over the rows of distinct texts (status ok / near_collapsed /
    collapsed; ``not_checked`` with fewer than two distinct texts)."""
    first: Dict[str, int] = {}
    for row, text in enumerate(texts):
        first.setdefault(text, row)
    rows = sorted(first.values())
    if len(rows) < 2:
        return {"papers": len(rows), "spread": None, "status": "not_checked",
                "message": "fewer than two papers with distinct texts"}
    spread = relative_spread(np.asarray(vectors)[rows])
    status = "collapsed" if spread < COLLAPSED_SPREAD else "near_collapsed" if spread < NEAR_COLLAPSED_SPREAD else "ok"
    message = None
    if status != "ok":
        message = (f"the model gives {'the same vector' if status == 'collapsed' else 'nearly the same vector'} "
                   f"for all {len(rows)} papers with distinct texts (relative spread {spread:.2e}, below "
                   f"{COLLAPSED_SPREAD if status == 'collapsed' else NEAR_COLLAPSED_SPREAD:g})")
    return {"papers": len(rows), "spread": spread, "status": status, "message": message}


def check_embeddings(vectors: np.ndarray, texts: Sequence[str], model: Any, hint: str = "") -> Dict[str, Any]:
    """:func:`embedding_check`; collapsed is an InputError naming ``model``, near-collapsed a loud warning."""
    report = embedding_check(vectors, texts)
    if report["status"] == "collapsed":
        raise InputError(f"{report['message']}: collapsed embeddings cannot be scored{hint}", path=model)
    if report["status"] == "near_collapsed":
        logger.warning("!!! %s: %s; its scores will be near chance%s", model, report["message"], hint)
    return report


def recorded_embedding_check(model_dir: Any) -> Optional[Dict[str, Any]]:
    """The check a training run wrote into ``model_dir`` (``None`` when absent)."""
    from scincl.io import read_json

    path = Path(model_dir) / EMBEDDING_CHECK_NAME
    return read_json(path) if path.exists() else None
