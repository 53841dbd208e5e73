#!/usr/bin/env python
"""Benchmark: full SciDocs-format evaluation, our evaluator vs a naive one, in the same process.

Data: the demo corpus's SciDocs dir (``scincl.demo.make_demo``, 3000 papers by default), or any
SciDocs dir, with 768-d embeddings (the width of a BERT encoder) of every SciDocs paper made here
without a model: TF-IDF + SVD of title and abstract (realistic, learnable geometry; random vectors
would make the SVM grid search run to its iteration limit and time the solver, not the evaluator).

* ours  — ``scincl.eval.scidocs.evaluate_scidocs``: qrel tasks vectorised over queries, the
  protocol's LinearSVC (sklearn-contrib-lightning when installed) with a parallel grid search;
* naive — what a first implementation does: per-query Python loops (one ``np.linalg.norm`` per
  candidate, ``sorted`` with the trec_eval key, per-query AP/nDCG), and scikit-learn's
  ``GridSearchCV(LinearSVC())`` with default settings.

Both must give the same qrel-task numbers (checked and printed); the ratio naive/ours is what
matters. Absolute times are context only (and noisy on a shared machine).

Usage: ``python benchmarks/bench_eval.py [--papers 3000] [--repeats 3] [--scidocs_dir DIR]``
"""
from __future__ import annotations

import argparse
import logging
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scincl.eval.classification import evaluate_classification_task  # noqa: E402
from scincl.eval.metrics import average_precision, ndcg, percent  # noqa: E402
from scincl.eval.qrel_tasks import evaluate_qrel_task  # noqa: E402
from scincl.eval.scidocs import EmbeddingFiles, evaluate_scidocs  # noqa: E402
from scincl.scidocs_io import (CLASSIFICATION_TASKS, QREL_TASKS, read_class_labels, read_qrels,  # noqa: E402
                                    read_scidocs_metadata, scidocs_paths)
from scincl.io import read_embeddings_jsonl, write_embeddings_jsonl  # noqa: E402

EMBEDDING_DIM = 768


def naive_qrel_task(qrels, embeddings):
    """Per-query loops, as the official run-file pipeline computes it (no vectorisation)."""
    maps, ndcgs = [], []
    for qid, candidates in qrels.items():
        if qid not in embeddings:
            continue
        scored = []
        for pid in candidates:
            if pid in embeddings:
                distance = float(np.linalg.norm(embeddings[qid] - embeddings[pid]))
                scored.append((float(np.float32(np.round(-distance, 5))), pid))
        if not scored:
            continue
        ranking = sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)
        rels = [candidates[pid] for _, pid in ranking]
        maps.append(average_precision(rels, sum(1 for r in candidates.values() if r >= 1)))
        ndcgs.append(ndcg(rels, list(candidates.values())))
    return {"map": percent(float(np.mean(maps))), "ndcg": percent(float(np.mean(ndcgs)))}


def naive_classification(train_csv, test_csv, embeddings):
    """scikit-learn defaults: ``GridSearchCV(LinearSVC(), C grid, cv=3)`` (intercept, tol 1e-4, 1 job)."""
    import warnings

    from sklearn.metrics import f1_score
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    dim = len(next(iter(embeddings.values())))

    def matrix(labels):
        return (np.array([embeddings.get(p, np.zeros(dim)) for p in labels]), np.array(list(labels.values())))

    x_train, y_train = matrix(read_class_labels(train_csv))
    x_test, y_test = matrix(read_class_labels(test_csv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(LinearSVC(), param_grid={"C": np.logspace(-4, 2, 7)}, cv=3).fit(x_train, y_train)
    return round(100 * f1_score(y_test, search.predict(x_test), average="macro"), 2)


def naive_qrel_tasks(paths, embeddings):
    return {t: naive_qrel_task(read_qrels(paths.qrel(t, "test")), embeddings) for t in QREL_TASKS
            if paths.has_qrel_task(t, "test")}


def naive_classification_tasks(paths, embeddings):
    return {t: {"f1": naive_classification(paths.classification(t, "train"), paths.classification(t, "test"),
                                           embeddings)}
            for t in CLASSIFICATION_TASKS if paths.has_classification_task(t)}


def ours_qrel_tasks(paths, embeddings):
    return {t: evaluate_qrel_task(read_qrels(paths.qrel(t, "test")), embeddings) for t in QREL_TASKS
            if paths.has_qrel_task(t, "test")}


def ours_classification_tasks(paths, embeddings):
    return {t: evaluate_classification_task(paths.classification(t, "train"), paths.classification(t, "test"),
                                            embeddings)
            for t in CLASSIFICATION_TASKS if paths.has_classification_task(t)}


def naive_evaluation(scidocs_dir, embeddings_path):
    """The whole naive evaluation, embeddings loading included."""
    paths = scidocs_paths(scidocs_dir)
    embeddings = read_embeddings_jsonl(embeddings_path, dtype=np.float64)
    return {**naive_classification_tasks(paths, embeddings), **naive_qrel_tasks(paths, embeddings)}


def timed(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def text_embeddings(scidocs_dir: Path, out: Path) -> Path:
    """TF-IDF + truncated SVD (768-d, seed 0) of every paper in the dir's paper_metadata_*.json."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    papers = {}
    for f in sorted(scidocs_dir.glob("paper_metadata_*.json")):
        papers.update(read_scidocs_metadata(f))
    ids = sorted(papers)
    texts = [f"{papers[p].get('title') or ''} {papers[p].get('abstract') or ''}" for p in ids]
    tfidf = TfidfVectorizer(sublinear_tf=True).fit_transform(texts)
    dim = min(EMBEDDING_DIM, tfidf.shape[1] - 1, len(ids) - 1)
    vectors = TruncatedSVD(dim, random_state=0).fit_transform(tfidf).astype(np.float32)
    write_embeddings_jsonl(out, ids, vectors)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=3000, help="demo corpus size")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions (median reported)")
    parser.add_argument("--scidocs_dir", default=None, help="use this SciDocs dir instead of the demo's")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    with tempfile.TemporaryDirectory() as tmp:
        if args.scidocs_dir:
            scidocs_dir = Path(args.scidocs_dir)
        else:
            from scincl.demo import make_demo

            scidocs_dir = make_demo(Path(tmp) / "demo", papers=args.papers, seed=0).scidocs_dir
        emb_path = text_embeddings(scidocs_dir, Path(tmp) / "emb.jsonl")
        files = EmbeddingFiles(emb_path)
        ours_s, ours = timed(lambda: evaluate_scidocs(scidocs_dir, files)["scores"]["test"], args.repeats)
        naive_s, naive = timed(lambda: naive_evaluation(scidocs_dir, emb_path), args.repeats)
        # the two parts separately, embeddings loaded once
        paths, embeddings = scidocs_paths(scidocs_dir), read_embeddings_jsonl(emb_path, dtype=np.float64)
        parts = {}
        if any(paths.has_qrel_task(t, "test") for t in QREL_TASKS):
            parts["qrel tasks"] = (timed(lambda: ours_qrel_tasks(paths, embeddings), args.repeats)[0],
                                   timed(lambda: naive_qrel_tasks(paths, embeddings), args.repeats)[0])
        if any(paths.has_classification_task(t) for t in CLASSIFICATION_TASKS):
            parts["classification"] = (timed(lambda: ours_classification_tasks(paths, embeddings), args.repeats)[0],
                                       timed(lambda: naive_classification_tasks(paths, embeddings), args.repeats)[0])
        n_queries = {t: len(read_qrels(paths.qrel(t, "test"))) for t in QREL_TASKS if paths.has_qrel_task(t, "test")}

    qrel_tasks = [t for t in QREL_TASKS if t in ours]
    agree = all(ours[t] == naive[t] for t in qrel_tasks)
    backend = "lightning" if _lightning() else "sklearn"
    print(f"SciDocs evaluation benchmark ({scidocs_dir if args.scidocs_dir else f'demo, {args.papers} papers'}; "
          f"TF-IDF+SVD {EMBEDDING_DIM}-d embeddings; median of {args.repeats})")
    print(f"  tasks: {', '.join(ours)}; test queries per qrel task: {n_queries}")
    print(f"  ours  (vectorised qrel tasks, LinearSVC from {backend}, threaded grid search): {ours_s:8.3f} s")
    print(f"  naive (per-query loops, sklearn GridSearchCV(LinearSVC()) defaults):       {naive_s:8.3f} s")
    print(f"  speed-up naive/ours (full evaluation): {naive_s / ours_s:.2f}x")
    for part, (ours_part, naive_part) in parts.items():
        print(f"    {part:15s} ours {ours_part:7.3f} s  naive {naive_part:7.3f} s  speed-up {naive_part / ours_part:.2f}x")
    print(f"  qrel-task numbers identical to the naive per-query computation: {agree}")
    for task in ("mag", "mesh"):
        if task in ours:
            print(f"  {task} F1: ours {ours[task]['f1']:.2f}, naive sklearn defaults {naive[task]['f1']:.2f}")
    if not agree or math.isnan(ours_s):
        sys.exit(1)


def _lightning() -> bool:
    from scincl.eval.classification import lightning_available

    return lightning_available()


if __name__ == "__main__":
    main()
