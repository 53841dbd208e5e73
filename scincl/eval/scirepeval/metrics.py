"""SciRepEval's scoring of embeddings, as ``evaluation/evaluator.py`` and ``reviewer_matching.py`` do it.

* Classification (``SupervisedEvaluator.classify``): ``LinearSVC(loss="squared_hinge", random_state=RANDOM_STATE)``
  in ``GridSearchCV(cv=3, param_grid={"C": np.logspace(-2, 2, 5)})``, fitted on the train split, predicting the
  test split. Multi-label: ``OneVsRestClassifier(GridSearchCV(LinearSVC(max_iter=10000, loss="hinge"), cv=3,
  param_grid={"C": np.logspace(-2, 2, 5)}))`` on multi-hot labels. Metrics: ``f1`` (binary) or ``f1_macro``
  (``f1_score(average="macro")``).
* Regression (``SupervisedEvaluator.regression``): ``LinearSVR(random_state=RANDOM_STATE)`` in
  ``GridSearchCV(cv=3, param_grid={"C": np.logspace(-4, 2, 7)})``; metric Kendall's τ
  (``scipy.stats.kendalltau(test, preds)[0]``).
* Proximity and ad-hoc search (``IREvaluator.retrieval``): each query's candidates that have an embedding, scored by
  the negative Euclidean distance to the query (``-sklearn.metrics.pairwise.euclidean_distances``); queries without
  an embedding are left out of the run; ``pytrec_eval.RelevanceEvaluator(qrels, metrics)`` and
  ``pytrec_eval.compute_aggregated_measure`` (the mean over the evaluated queries).
* Paper-reviewer matching (``ReviewerMatchingEvaluator.retrieval``): a reviewer's score is the mean of the three
  highest cosine similarities between the query and the reviewer's papers; the same run is scored against the hard
  and the soft qrels (``hard_P_5``, ``soft_P_5``, ...).
* Every score ×100, rounded to two decimals (``np.round(100 * result, 2)``).

* Few-shot classification (``few_shot_evaluator.py FewShotEvaluator``; Biomimicry, DRSM, Fields of study): each
  of ``iterations`` runs trains on a small sample and predicts the whole test split; the metric is the mean over
  the runs of each run's ×100, two-decimal value. Single-label: the runs are the folds of
  ``StratifiedKFold(n_splits=ceil(train size / sample_size))`` (unshuffled; a fold is the training sample) and the
  classifier is ``LinearSVC(loss="squared_hinge", random_state=RANDOM_STATE)`` without the grid search
  (``cv=0``). Multi-label: run ``k`` seeds numpy's global generator with ``RANDOM_STATE + k`` and draws
  ``sample_size`` positives of every label without replacement (``np.random.choice``), then fits the multi-label
  grid search above; numpy's global seed is set back to ``RANDOM_STATE`` afterwards, as the official code does
  (scikit-learn's unseeded multi-label ``LinearSVC`` draws from that generator).

The official evaluator prefers sklearn-contrib-lightning's ``LinearSVC``/``LinearSVR`` and falls back to
scikit-learn's of the same names when lightning is not installed; this module uses scikit-learn's, the fallback.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

RANDOM_STATE = 42  # evaluator.py RANDOM_STATE
CV_FOLDS = 3  # evaluator.py classify/regression: cv=3
CLASSIFICATION_C_GRID = np.logspace(-2, 2, 5)  # evaluator.py SupervisedEvaluator.classify: Cs
REGRESSION_C_GRID = np.logspace(-4, 2, 7)  # evaluator.py SupervisedEvaluator.regression: Cs
MULTILABEL_MAX_ITER = 10000  # evaluator.py classify: LinearSVC(max_iter=10000, loss="hinge") for multi-label
REVIEWER_TOP_PAPERS = 3  # reviewer_matching.py: np.mean(sorted_scores[cid][:3])


def percent(value: float) -> float:
    """The protocol's rounding: ×100, two decimals."""
    return float(np.round(100 * value, 2))


def classify(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, multi_label: bool = False,
             n_jobs: int = 1) -> np.ndarray:
    """Predictions for ``x_test`` of the protocol's LinearSVC chosen by 3-fold CV over C (module docstring)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    grid = {"C": CLASSIFICATION_C_GRID}
    if multi_label:
        search = GridSearchCV(LinearSVC(max_iter=MULTILABEL_MAX_ITER, loss="hinge"), cv=CV_FOLDS, param_grid=grid,
                              n_jobs=n_jobs)
        model: Any = OneVsRestClassifier(search, n_jobs=1)
    else:
        model = GridSearchCV(LinearSVC(loss="squared_hinge", random_state=RANDOM_STATE), cv=CV_FOLDS,
                             param_grid=grid, n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    return model.predict(x_test)


def few_shot_predictions(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, sample_size: int,
                         iterations: int, multi_label: bool = False, n_jobs: int = 1) -> List[np.ndarray]:
    """The test predictions of each few-shot run (module docstring); ValueError when the training split is too
    small for the sample size (too few papers or positives of a label, as the official code fails)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    runs: List[np.ndarray] = []
    if multi_label:
        try:
            for k in range(iterations):
                np.random.seed(RANDOM_STATE + k)
                chosen: set = set()
                for label in range(y_train.shape[1]):
                    positives = np.where(y_train[:, label] == 1)[0]
                    if len(positives) < sample_size:
                        raise ValueError(f"label {label} has {len(positives)} positive training papers, fewer than the "
                                         f"sample size {sample_size}")
                    chosen.update(np.random.choice(positives, sample_size, replace=False).tolist())
                rows = list(chosen)
                runs.append(classify(x_train[rows], y_train[rows], x_test, multi_label=True, n_jobs=n_jobs))
        finally:
            np.random.seed(RANDOM_STATE)
        return runs
    if x_train.shape[0] <= sample_size:
        raise ValueError(f"the train split has {x_train.shape[0]} papers, not more than the sample size {sample_size}")
    folds = StratifiedKFold(n_splits=math.ceil(x_train.shape[0] / sample_size))
    for _, rows in folds.split(x_train, y_train):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = LinearSVC(loss="squared_hinge", random_state=RANDOM_STATE).fit(x_train[rows], y_train[rows])
        runs.append(model.predict(x_test))
        if len(runs) == iterations:
            break
    return runs


def regress(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """Predictions for ``x_test`` of the protocol's LinearSVR chosen by 3-fold CV over C (module docstring)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVR

    model = GridSearchCV(LinearSVR(random_state=RANDOM_STATE), cv=CV_FOLDS, param_grid={"C": REGRESSION_C_GRID},
                         n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    return model.predict(x_test)


def classification_scores(y_test: np.ndarray, predictions: np.ndarray, metrics: Sequence[str]) -> Dict[str, float]:
    """``f1`` / ``f1_macro`` (``<sklearn metric>_<average>``, as ``calc_metrics`` splits the name) ×100."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    functions = {"f1": f1_score, "accuracy": accuracy_score, "precision": precision_score, "recall": recall_score}
    out = {}
    for metric in metrics:
        name, _, average = metric.partition("_")
        value = functions[name](y_test, predictions, **({"average": average} if average else {}))
        out[metric] = percent(value)
    return out


def regression_scores(y_test: np.ndarray, predictions: np.ndarray, metrics: Sequence[str]) -> Dict[str, float]:
    """``kendalltau`` (and ``pearsonr``) ×100: the statistic of ``scipy.stats``."""
    from scipy.stats import kendalltau, pearsonr

    functions = {"kendalltau": kendalltau, "pearsonr": pearsonr}
    return {metric: percent(tuple(functions[metric](y_test, predictions))[0]) for metric in metrics}


def distance_run(embeddings: Mapping[str, np.ndarray], qrels: Mapping[str, Mapping[str, int]]
                 ) -> Dict[str, Dict[str, float]]:
    """query -> candidate -> negative Euclidean distance, for the queries and candidates that have an embedding (a
    query none of whose candidates has one is left out)."""
    from sklearn.metrics.pairwise import euclidean_distances

    run: Dict[str, Dict[str, float]] = {}
    for query, candidates in qrels.items():
        if query not in embeddings:
            continue
        ids = [c for c in candidates if c in embeddings]
        if not ids:  # the official evaluator cannot score such a query either (an empty distance matrix)
            continue
        distances = euclidean_distances(np.stack([embeddings[c] for c in ids]), embeddings[query][None, :]).ravel()
        run[query] = {c: float(-d) for c, d in zip(ids, distances)}
    return run


def reviewer_run(embeddings: Mapping[str, np.ndarray], qrels: Mapping[str, Mapping[str, int]],
                 reviewer_papers: Mapping[str, Sequence[str]]) -> Dict[str, Dict[str, float]]:
    """query -> reviewer -> mean of the reviewer's 3 highest cosine similarities to the query (papers with an
    embedding only; a reviewer without any is left out)."""
    from sklearn.metrics.pairwise import cosine_similarity

    run: Dict[str, Dict[str, float]] = {}
    for query, reviewers in qrels.items():
        if query not in embeddings:
            continue
        run[query] = {}
        for reviewer in reviewers:
            papers = [embeddings[p] for p in reviewer_papers.get(reviewer, ()) if p in embeddings]
            if papers:
                similarities = sorted(cosine_similarity(np.stack(papers), embeddings[query][None, :]).ravel(),
                                      reverse=True)
                run[query][reviewer] = float(np.mean(similarities[:REVIEWER_TOP_PAPERS]))
    return run


def ranking_scores(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
                   metrics: Sequence[str]) -> Dict[str, float]:
    """pytrec_eval's measures (``ndcg``, ``map``, ``P_5``, ...) aggregated over the evaluated queries, ×100."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator({q: dict(c) for q, c in qrels.items()}, set(metrics))
    per_query = evaluator.evaluate({q: dict(c) for q, c in run.items()})
    out = {}
    for metric in sorted(metrics):
        values: List[float] = [measures[metric] for measures in per_query.values()]
        out[metric] = percent(pytrec_eval.compute_aggregated_measure(metric, values)) if values else float("nan")
    return out
