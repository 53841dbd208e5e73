"""``cli_pipeline.py evaluate_scirepeval``: a model on the SciRepEval benchmark, with the official protocol.

For each task asked for (:mod:`~scincl.eval.scirepeval.tasks`), in the order of ``scirepeval_tasks.jsonl``: the
documents of its metadata config are embedded once (tasks sharing a config share the file, as the official
``"embeddings": {"save"/"load"}`` entries do) as ``title [SEP] abstract`` (:func:`~scincl.eval.scirepeval.data.
document_texts`) with the model's own pooling, then scored against the labelled examples
(:mod:`~scincl.eval.scirepeval.metrics`). A task whose data cannot be had (a missing label file, no documents, no
labelled row, no hub access) is reported absent with its reason, one warning line, never as 0; a labelled id
without an embedding is left out as the official evaluator leaves it out, counted in ``results.json`` and named in
one warning line.

Outputs in ``OUTPUT_DIR``: ``results.json`` (per task its type, metrics ×100, score, the embeddings file and the
counts; ``absent``; the group averages), ``results.md`` (the paper-style table, :mod:`~scincl.eval.scirepeval.
report`) and ``embeddings/<meta config>.jsonl`` (``{"paper_id", "embedding"}``, the ``embed`` format: every score
can be recomputed from them). The scores are computed from the embeddings as read back from those files, as
float32. One deviation: the official evaluator reads the embeddings files it saved back as float16
(``EmbeddingsGenerator.load_embeddings_from_jsonl``), so there the tasks that load a file another task saved
(Max hIndex, SciDocs MeSH, CoView, CoCite, CoRead) score float16-rounded vectors, the others float32 ones.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.eval.scirepeval import data as task_data
from scincl.eval.scirepeval import metrics
from scincl.eval.scirepeval.report import averages, results_markdown, task_score
from scincl.eval.scirepeval.tasks import (CLASSIFICATION, GROUPS, REVIEWER_MATCHING, TASKS, TEST_REPO, Task,
                                         select_tasks)
from scincl.io import atomic_open, read_embeddings_jsonl, write_embeddings_jsonl, write_json
from scincl.provenance import OutputRecord, local_path
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

BATCH_SIZE = 32  # scirepeval.py --batch-size default
MAX_SEQUENCE_LENGTH = 512  # encoders.py Model(max_len=512)
EXAMPLES = 3  # ids named in a warning line


class _Encoder:
    """The model, loaded when the first embeddings file has to be made."""

    def __init__(self, model_dir_or_name: str, pooling_strategy: Optional[str], max_sequence_length: int,
                 batch_size: int, device: Optional[str]) -> None:
        self.name, self.pooling, self.max_length = model_dir_or_name, pooling_strategy, max_sequence_length
        self.requested_max_length = max_sequence_length  # max_length is cut to the model's positions when it loads
        self.batch_size, self.device = batch_size, device
        self._loaded: Optional[Tuple[Any, Any]] = None

    @property
    def pooling_strategy(self) -> str:
        from scincl.model.encoder import saved_pooling_strategy

        return self.pooling or saved_pooling_strategy(self.name)

    def load(self) -> Tuple[Any, Any]:
        if self._loaded is None:
            from scincl.model.encoder import DocumentEncoder, load_backbone

            backbone, tokenizer = load_backbone(self.name)
            positions = getattr(backbone.config, "max_position_embeddings", None)
            if positions and self.max_length > positions:
                self.max_length = int(positions)
            self._loaded = (DocumentEncoder(backbone, self.pooling_strategy), tokenizer)
        return self._loaded

    @property
    def sep_token(self) -> str:
        """The tokenizer's separator (``evaluator.py``: the eos token for a tokenizer without one)."""
        tokenizer = self.load()[1]
        return tokenizer.sep_token or tokenizer.eos_token

    def embed(self, texts: List[str]) -> np.ndarray:
        import torch

        from scincl.model.embed import encode_texts
        from scincl.model.encoder import default_device

        encoder, tokenizer = self.load()
        return encode_texts(encoder, tokenizer, texts, batch_size=self.batch_size, max_sequence_length=self.max_length,
                            device=torch.device(self.device) if self.device else default_device())


def _embeddings(task: Task, source: Any, encoder: _Encoder, folder: Path, override: bool
                ) -> Tuple[Path, Dict[str, np.ndarray]]:
    """The embeddings of ``task``'s documents: made (or reused when made from the same model, documents and
    settings) in ``folder/<meta config>.jsonl``, and read back from it."""
    path = folder / f"{task.meta_config}.jsonl"
    local = isinstance(source, task_data.LocalData)
    documents = source.root / "scirepeval" / task.meta_config / task_data.META_FILE if local else None
    record = OutputRecord(path, command="evaluate_scirepeval", settings={
        "model": None if local_path(encoder.name) else encoder.name, "pooling": encoder.pooling_strategy,
        "max_sequence_length": encoder.requested_max_length, "fields": list(task.fields),
        "documents": None if local else f"{task_data.META_REPO} {task.meta_config}"},
        inputs=[local_path(encoder.name), documents])
    if not record.reusable(override):
        texts = task_data.document_texts(task, source.documents(task), encoder.sep_token)
        if not texts:
            raise task_data.TaskAbsent(f"no documents with a doc_id in {source.where(task)}")
        logger.info("SciRepEval %s: embedding %d documents of %s", task.name, len(texts), task.meta_config)
        vectors = encoder.embed(list(texts.values()))
        if not np.isfinite(vectors).all():
            raise InputError("the model gives NaN or infinite embeddings; a diverged training?", path=encoder.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_embeddings_jsonl(path, list(texts), vectors)
        record.write()
    return path, read_embeddings_jsonl(path)


def _without_embedding(task: Task, what: str, ids: List[str], total: int) -> None:
    if ids:
        logger.warning("SciRepEval %s: %d of %d %s have no embedding (e.g. %s); left out, as the official evaluator "
                       "leaves them out", task.name, len(ids), total, what, ", ".join(ids[:EXAMPLES]))


def score_supervised(task: Task, labelled: Mapping[str, List[Mapping[str, Any]]], embeddings: Mapping[str, np.ndarray],
                     n_jobs: int = 1, few_shot_runs: bool = True) -> Tuple[Dict[str, float], Dict[str, Any]]:
    """A classification or regression task's metrics (``SupervisedEvaluator.read_dataset`` + ``classify`` /
    ``regression`` + ``calc_metrics``) and its counts (with the few-shot settings' results under ``few_shot``)."""
    arrays, counts = {}, {}
    for split in ("train", "test"):
        rows = labelled[split]
        kept = [row for row in rows if str(row["paper_id"]) in embeddings]
        _without_embedding(task, f"{split} papers", [str(r["paper_id"]) for r in rows
                                                     if str(r["paper_id"]) not in embeddings], len(rows))
        if not kept:
            raise task_data.TaskAbsent(f"no {split} paper has an embedding ({len(rows)} labelled)")
        x = np.stack([embeddings[str(row["paper_id"])] for row in kept])
        y = np.array([row["label"] for row in kept], dtype=float if task.type != CLASSIFICATION else None)
        arrays[split] = (x, y)
        counts[split] = {"labelled": len(rows), "without_embedding": len(rows) - len(kept)}
    (x_train, y_train), (x_test, y_test) = arrays["train"], arrays["test"]
    if task.type == CLASSIFICATION:
        predictions = metrics.classify(x_train, y_train, x_test, multi_label=task.multi_label, n_jobs=n_jobs)
        if few_shot_runs:
            counts["few_shot"] = [few_shot_scores(task, arrays, size, runs, n_jobs) for size, runs in task.few_shot]
        return metrics.classification_scores(y_test, predictions, task.metrics), counts
    predictions = metrics.regress(x_train, y_train, x_test, n_jobs=n_jobs)
    return metrics.regression_scores(y_test, predictions, task.metrics), counts


def few_shot_scores(task: Task, arrays: Mapping[str, Tuple[np.ndarray, np.ndarray]], sample_size: int, iterations: int,
             n_jobs: int = 1) -> Dict[str, Any]:
    """One few-shot setting of a classification task: the mean of each metric over the runs, or why it cannot run."""
    (x_train, y_train), (x_test, y_test) = arrays["train"], arrays["test"]
    entry: Dict[str, Any] = {"sample_size": sample_size, "iterations": iterations}
    try:
        runs = metrics.few_shot_predictions(x_train, y_train, x_test, sample_size, iterations,
                                            multi_label=task.multi_label, n_jobs=n_jobs)
    except ValueError as exc:
        logger.warning("SciRepEval %s: %d-shot not run: %s", task.name, sample_size, exc)
        return {**entry, "absent": str(exc)}
    scores = [metrics.classification_scores(y_test, predictions, task.metrics) for predictions in runs]
    return {**entry, "runs": len(runs), "metrics": {m: float(np.mean([s[m] for s in scores])) for m in task.metrics}}


def _qrels(rows: List[Mapping[str, Any]]) -> Dict[str, Dict[str, int]]:
    """``IREvaluator.get_qc_pairs``: query -> candidate -> relevance (the first row of a pair counts)."""
    qrels: Dict[str, Dict[str, int]] = {}
    for query, candidate, relevance in task_data.iter_qrels(rows):
        qrels.setdefault(query, {}).setdefault(candidate, relevance)
    return qrels


def score_ranking(task: Task, labelled: Mapping[str, List[Mapping[str, Any]]], embeddings: Mapping[str, np.ndarray],
                  reviewers: Optional[List[Mapping[str, Any]]] = None) -> Tuple[Dict[str, float], Dict[str, Any]]:
    """A proximity or search task's metrics (``IREvaluator`` / ``ReviewerMatchingEvaluator``) and its counts."""
    first = next(iter(labelled))
    qrels = _qrels(labelled[first])
    queries_without = [q for q in qrels if q not in embeddings]
    candidates = {c for cands in qrels.values() for c in cands}
    _without_embedding(task, "queries", queries_without, len(qrels))
    if task.name == REVIEWER_MATCHING:
        papers = {str(r["r_id"]): [str(p) for p in r["papers"]] for r in reviewers or []}
        run = metrics.reviewer_run(embeddings, qrels, papers)
        scores = {f"{split.split('_')[-1]}_{metric}": value for split in labelled
                  for metric, value in metrics.ranking_scores(_qrels(labelled[split]), run, task.metrics).items()}
    else:
        _without_embedding(task, "candidates", sorted(c for c in candidates if c not in embeddings), len(candidates))
        run = metrics.distance_run(embeddings, qrels)
        scores = metrics.ranking_scores(qrels, run, task.metrics)
    if not run:
        raise task_data.TaskAbsent(f"no query of the {len(qrels)} has an embedding and a candidate with one")
    return scores, {"queries": len(qrels), "queries_scored": len(run), "queries_without_embedding":
                    len(queries_without), "candidates": len(candidates)}


def _evaluate_task(task: Task, source: Any, encoder: _Encoder, folder: Path, n_jobs: int, override: bool,
                   few_shot_runs: bool) -> Dict[str, Any]:
    labelled = source.labelled(task)
    empty = [split for split, rows in labelled.items() if not rows]
    if empty:
        raise task_data.TaskAbsent(f"no labelled rows in the {', '.join(empty)} split of {source.where(task)}")
    reviewers = source.reviewers() if task.name == REVIEWER_MATCHING else None
    path, embeddings = _embeddings(task, source, encoder, folder, override)
    if task.supervised:
        scores, counts = score_supervised(task, labelled, embeddings, n_jobs=n_jobs, few_shot_runs=few_shot_runs)
    else:
        scores, counts = score_ranking(task, labelled, embeddings, reviewers)
    few = counts.pop("few_shot", None)
    return {"type": task.type + (" (multi-label)" if task.multi_label else ""), "dataset": TEST_REPO,
            "config": task.test_config, "group": task.group, "metrics": scores, "score": task_score(scores),
            **({"few_shot": few} if few else {}), "embeddings": str(path), "counts": counts}


@writes("output_dir")
def evaluate_scirepeval(model_dir: str, output_dir: str, tasks: Any = "all", data_dir: Optional[str] = None,
                        batch_size: int = BATCH_SIZE, max_sequence_length: int = MAX_SEQUENCE_LENGTH,
                        pooling_strategy: Optional[str] = None, device: Optional[str] = None, n_jobs: int = 1,
                        few_shot: bool = True, override: bool = False) -> Dict[str, Any]:
    """Evaluate a model on SciRepEval (the official protocol); writes OUTPUT_DIR/results.json, results.md, embeddings/.

    The tasks, their types, metrics and groups are those of the ``allenai/scirepeval`` repository's
    ``scirepeval_tasks.jsonl``; documents are embedded as ``title [SEP] abstract`` with the model's own pooling;
    classification is a LinearSVC over C in logspace(-2, 2, 5) chosen by 3-fold CV (one-vs-rest for multi-label),
    regression a LinearSVR over C in logspace(-4, 2, 7) scored by Kendall's tau, proximity and search rank by
    negative Euclidean distance scored by pytrec_eval; scores x100, two decimals; RANDOM_STATE 42. A task whose data
    is missing is reported absent, never 0. When MODEL_DIR is a trained folder with a model card, the card's
    model-index gets the scores. The few-shot settings of Biomimicry, DRSM and Fields of study run too (their means
    are in results.json; the groups average the complete runs).

    Args:
        model_dir: a ``train`` output folder or any Hugging Face encoder.
        output_dir: gets ``results.json``, ``results.md`` and ``embeddings/<config>.jsonl`` (``embed`` format).
        tasks: ``all`` or task names, comma-separated (``"Biomimicry,SciDocs Cite"``; case-insensitive).
        data_dir: the tasks' data in the official evaluator's local layout (README "Evaluate on SciRepEval");
            without it, ``datasets`` loads ``allenai/scirepeval`` and ``allenai/scirepeval_test`` from the hub
            (or its local cache).
        batch_size, max_sequence_length: embedding batches and tokens per document (the official 32 and 512).
        pooling_strategy: ``cls`` or ``mean``; default the model's own (``1_Pooling/config.json``), else ``cls``.
        device: ``cuda``, ``cpu``, ... (default: CUDA when present).
        n_jobs: parallel fits of the grid search.
        few_shot: run the few-shot settings of Biomimicry, DRSM and Fields of study (the official evaluator does;
            Fields of study's 100 runs of a one-vs-rest grid search are most of the classification time).
        override: recompute existing embeddings. Without it an embeddings file is reused when its record says it
            was made from the same model, documents and settings, else refused; the scores are always recomputed.

    Example: ``python cli_pipeline.py evaluate_scirepeval model/ scirepeval_results --data_dir scirepeval_data``
    """
    try:
        selected = select_tasks(tasks)
    except ValueError as exc:
        raise InputError(f"--tasks: {exc}") from None
    if data_dir is not None and not Path(data_dir).is_dir():
        raise InputError("--data_dir is not a folder", path=data_dir)
    if batch_size < 1 or max_sequence_length < 1:
        raise InputError(f"--batch_size and --max_sequence_length must be >= 1, got {batch_size}, {max_sequence_length}")
    out = Path(output_dir)
    source = task_data.LocalData(Path(data_dir)) if data_dir is not None else task_data.HubData()
    encoder = _Encoder(str(model_dir), pooling_strategy, int(max_sequence_length), int(batch_size), device)
    results: Dict[str, Any] = {"benchmark": "scirepeval", "model": Path(str(model_dir)).name or str(model_dir),
                               "model_dir": str(model_dir), "data": str(data_dir) if data_dir else "hub",
                               "protocol": protocol(), "tasks": {}, "absent": {}}
    for task in selected:
        try:
            results["tasks"][task.name] = _evaluate_task(task, source, encoder, out / "embeddings", n_jobs, override,
                                                         few_shot)
            logger.info("SciRepEval %s: %s", task.name, results["tasks"][task.name]["metrics"])
        except task_data.TaskAbsent as exc:
            results["absent"][task.name] = str(exc)
            logger.warning("SciRepEval %s: absent: %s", task.name, exc)
    results["not_asked"] = [t.name for t in TASKS if t not in selected]
    results["averages"] = averages(results["tasks"])
    if not results["tasks"]:
        reasons = "; ".join(f"{name}: {why}" for name, why in list(results["absent"].items())[:2])
        raise InputError(f"no SciRepEval task could be evaluated ({len(results['absent'])} absent: {reasons})")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", results)
    with atomic_open(out / "results.md") as fh:
        fh.write(results_markdown(results))
    from scincl.model.card import update_model_card

    update_model_card(model_dir, out / "results.json")
    logger.info("wrote %s and %s (%d tasks, %d absent)", out / "results.json", out / "results.md",
                len(results["tasks"]), len(results["absent"]))
    return results


def protocol() -> Dict[str, Any]:
    """The protocol's settings, recorded in ``results.json``."""
    return {"source": "allenai/scirepeval evaluation/evaluator.py, scirepeval_tasks.jsonl (commit e04594e)",
            "text": "fields joined by ' <sep_token> '", "random_state": metrics.RANDOM_STATE,
            "cv_folds": metrics.CV_FOLDS, "classification_C": metrics.CLASSIFICATION_C_GRID.tolist(),
            "regression_C": metrics.REGRESSION_C_GRID.tolist(), "ranking": "negative Euclidean distance, pytrec_eval",
            "scale": "x100, 2 decimals", "few_shot": "few_shot_evaluator.py: mean over the runs", "groups": list(GROUPS)}
