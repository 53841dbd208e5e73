"""Run every SciDocs task present in an official SciDocs directory on ready embeddings.

The official suite takes three embedding files (classification, user-activity/citation, recomm);
:class:`EmbeddingFiles` holds them, the last two defaulting to the main one. Tasks whose files are
absent are listed with the reason and never scored as 0.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.eval.classification import evaluate_classification_task
from scincl.eval.lexical import is_sparse
from scincl.eval.qrel_tasks import evaluate_qrel_task
from scincl.eval.recomm import evaluate_recommendation
from scincl.scidocs_io import (CLASSIFICATION_TASKS, QREL_TASKS, ScidocsPaths, read_propensity_scores,
                                    read_qrels, read_recomm_clicks, read_scidocs_metadata, scidocs_paths)
from scincl.io import PathLike, read_embeddings_jsonl

logger = logging.getLogger(__name__)

SPLIT_CHOICES = {"val": ("val",), "test": ("test",), "both": ("val", "test")}
TASK_METRICS: Dict[str, Tuple[str, ...]] = {
    "mag": ("f1",), "mesh": ("f1",),
    "co-view": ("map", "ndcg"), "co-read": ("map", "ndcg"), "cite": ("map", "ndcg"), "co-cite": ("map", "ndcg"),
    "recomm": ("adj-NDCG", "adj-P@1"),
}


@dataclass(frozen=True)
class EmbeddingFiles:
    """SciDocs embedding jsonl files: ``main`` for the qrel tasks, optional ones for the other groups."""

    main: Path
    classification: Optional[Path] = None
    recomm: Optional[Path] = None

    def for_group(self, group: str) -> Path:
        """The file used by a task group: ``classification``, ``qrel`` or ``recomm``."""
        chosen = {"classification": self.classification, "recomm": self.recomm}.get(group)
        return chosen or self.main


class _EmbeddingCache:
    """Load each embedding file once, as float64 (the official loader keeps JSON floats exactly)."""

    def __init__(self) -> None:
        self._loaded: Dict[Path, Dict[str, np.ndarray]] = {}

    def __call__(self, path: Path) -> Dict[str, np.ndarray]:
        if path not in self._loaded:
            self._loaded[path] = read_embeddings_jsonl(path, dtype=np.float64)
            logger.info("loaded %d embeddings from %s", len(self._loaded[path]), path)
        return self._loaded[path]


def parse_splits(val_or_test: str) -> Tuple[str, ...]:
    """``val`` | ``test`` | ``both`` -> the splits to evaluate."""
    if val_or_test not in SPLIT_CHOICES:
        raise InputError(f"--val_or_test must be one of {', '.join(SPLIT_CHOICES)}, got {val_or_test!r}")
    return SPLIT_CHOICES[val_or_test]


def _classification(paths: ScidocsPaths, split: str, load, files: EmbeddingFiles, backend: str,
                     n_jobs: Optional[int], scores: dict, info: dict, absent: dict) -> None:
    for task in CLASSIFICATION_TASKS:
        if not paths.has_classification_task(task) or not paths.classification(task, split).exists():
            absent[task] = f"no {task}/train.csv and {task}/{split}.csv in {paths.root}"
            continue
        result = evaluate_classification_task(paths.classification(task, "train"), paths.classification(task, split),
                                              load(files.for_group("classification")), backend=backend, n_jobs=n_jobs)
        scores[task] = {"f1": result.pop("f1")}
        info[task] = result


def _qrel_tasks(paths: ScidocsPaths, split: str, load, files: EmbeddingFiles, scores: dict, info: dict,
                absent: dict, per_query: dict) -> None:
    for task, folder in QREL_TASKS.items():
        if not paths.has_qrel_task(task, split):
            absent[task] = f"no {folder}/{split}.qrel in {paths.root}"
            continue
        result = evaluate_qrel_task(read_qrels(paths.qrel(task, split)), load(files.for_group("qrel")))
        if result["queries"] == 0:
            absent[task] = f"no query of {folder}/{split}.qrel has an embedding"
            continue
        scores[task] = {"map": result.pop("map"), "ndcg": result.pop("ndcg")}
        per_query[task] = result.pop("per_query")
        info[task] = result


def _recommendation(paths: ScidocsPaths, split: str, load, files: EmbeddingFiles, device: Optional[str],
                    scores: dict, info: dict, absent: dict) -> None:
    if not paths.has_recomm():
        absent["recomm"] = (f"recommendation not available: needs recomm/train.csv, recomm/test.csv, "
                            f"recomm/propensity_scores.json and paper_metadata_recomm.json in {paths.root}")
        return
    val_path = paths.recomm("val.csv")
    if split == "val" and not val_path.exists():
        absent["recomm"] = f"no recomm/val.csv in {paths.root}"
        return
    # official: on test, val.csv selects the epoch; on val, no model selection (VALID_PATH="")
    if is_sparse(next(iter(load(files.for_group("recomm")).values()))):
        absent["recomm"] = "the recommendation ranker takes dense embeddings (a lexical encoder's are sparse)"
        return
    val_clicks = read_recomm_clicks(val_path) if split == "test" and val_path.exists() else None
    result = evaluate_recommendation(
        read_recomm_clicks(paths.recomm("train.csv")), val_clicks, read_recomm_clicks(paths.recomm(f"{split}.csv")),
        read_scidocs_metadata(paths.metadata("recomm")), load(files.for_group("recomm")),
        read_propensity_scores(paths.recomm("propensity_scores.json")), device=device)
    scores["recomm"] = {"adj-NDCG": result.pop("adj-NDCG"), "adj-P@1": result.pop("adj-P@1")}
    info["recomm"] = result


def evaluate_scidocs(
    scidocs_dir: PathLike,
    embeddings: EmbeddingFiles,
    val_or_test: str = "test",
    classifier_backend: str = "auto",
    n_jobs: Optional[int] = -1,
    device: Optional[str] = None,
) -> Dict[str, Any]:
    """All SciDocs tasks present in ``scidocs_dir`` for the requested split(s).

    Returns ``{"scores": {split: {task: {metric: value}}}, "absent": {split: {task: reason}},
    "details": {split: {task: {...counts, backend, C...}}}, "per_query": {split: {task: {metric: {query id:
    value}}}}}``; scores ×100, 2 decimals; ``per_query``: the qrel tasks' trec_eval values per query, in [0, 1].
    """
    paths = scidocs_paths(scidocs_dir)
    splits = parse_splits(val_or_test)
    load = _EmbeddingCache()
    out: Dict[str, Any] = {"scores": {}, "absent": {}, "details": {}, "per_query": {}}
    for split in splits:
        scores: Dict[str, Dict[str, float]] = {}
        info: Dict[str, Dict[str, Any]] = {}
        absent: Dict[str, str] = {}
        _classification(paths, split, load, embeddings, classifier_backend, n_jobs, scores, info, absent)
        out["per_query"][split] = {}
        _qrel_tasks(paths, split, load, embeddings, scores, info, absent, out["per_query"][split])
        _recommendation(paths, split, load, embeddings, device, scores, info, absent)
        if not scores:
            raise InputError(f"no SciDocs task files for split {split!r} (expected e.g. cite/{split}.qrel, "
                             f"mag/{split}.csv)", path=paths.root)
        ordered = {task: scores[task] for task in TASK_METRICS if task in scores}
        out["scores"][split], out["details"][split], out["absent"][split] = ordered, info, absent
        logger.info("SciDocs %s: %d tasks evaluated, %d absent (%s)", split, len(ordered), len(absent),
                    ", ".join(absent) or "none")
    return out

