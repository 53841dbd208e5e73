"""SciDocs MAG and MeSH classification: linear SVM on frozen embeddings, macro F1.

Protocol (docs/scidocs_protocol.md, allenai/scidocs ``classification.py``):

* papers without embedding get a zero vector (dimension of the embeddings);
* sklearn-contrib-lightning ``LinearSVC(loss="squared_hinge", random_state=42)`` — one-vs-rest,
  L2 penalty, no intercept, dual coordinate descent (tol 1e-3, max_iter 1000); where lightning is
  not installed, scikit-learn's ``LinearSVC(fit_intercept=False, dual=True, tol=1e-3)`` (close, but
  it may pick a different C; the result records which ``backend`` ran);
* C from ``np.logspace(-4, 2, 7)`` by ``GridSearchCV(cv=3)`` on the train split (3-fold
  stratified, unshuffled, accuracy, ties to the smaller C), refit on all of train;
* ``f1_score(average="macro") * 100`` on val or test, rounded to 2 decimals.
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.eval.metrics import f1, percent
from scincl.scidocs_io import read_class_labels

logger = logging.getLogger(__name__)

C_GRID = np.logspace(-4, 2, 7)  # official scidocs classification.py
CV_FOLDS = 3  # official scidocs classification.py
RANDOM_STATE = 42  # official scidocs classification.py
BACKENDS = ("auto", "lightning", "sklearn")


def lightning_available() -> bool:
    """True when sklearn-contrib-lightning imports (the official SciDocs classifier)."""
    try:
        from lightning.classification import LinearSVC  # noqa: F401
    except Exception:  # ImportError, or a binary built against another numpy
        return False
    return True


def make_linear_svc(backend: str = "auto") -> Tuple[Any, str]:
    """The protocol's linear SVM and the name of the backend that provides it."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "lightning" or (backend == "auto" and lightning_available()):
        from lightning.classification import LinearSVC

        return LinearSVC(loss="squared_hinge", random_state=RANDOM_STATE), "lightning"
    from sklearn.svm import LinearSVC

    return LinearSVC(loss="squared_hinge", fit_intercept=False, dual=True, tol=1e-3, max_iter=1000,
                     random_state=RANDOM_STATE), "sklearn"


@dataclass
class ClassificationData:
    """Design matrices and labels of one split, with the number of papers that had no embedding."""

    features: np.ndarray
    labels: np.ndarray
    missing_embeddings: int


def split_matrix(labels: Mapping[str, int], embeddings: Mapping[str, np.ndarray], dim: int) -> ClassificationData:
    """Stack embeddings in label-file order; a paper without embedding gets a zero vector (protocol)."""
    import scipy.sparse as sp

    rows: List[np.ndarray] = []
    missing = 0
    sparse = sp.issparse(next(iter(embeddings.values()), None))
    zeros = sp.csr_matrix((1, dim)) if sparse else np.zeros(dim)
    for pid in labels:
        vec = embeddings.get(pid)
        if vec is None:
            missing += 1
            vec = zeros
        rows.append(vec)
    # sparse rows (lexical encoders) stay sparse: both LinearSVC backends take CSR input
    features = sp.vstack(rows, format="csr", dtype=np.float64) if sparse else np.asarray(rows, dtype=np.float64)
    return ClassificationData(features, np.fromiter(labels.values(), dtype=np.int64), missing)


def fit_and_score(train: ClassificationData, test: ClassificationData, backend: str = "auto",
                  n_jobs: int | None = -1) -> Dict[str, Any]:
    """Grid-search C on train (3-fold CV), refit, return macro F1 ×100 on test and the chosen C.

    ``n_jobs`` threads run the 21 grid-search fits (-1: one per core); results do not depend on it.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    from joblib import parallel_backend

    estimator, backend_name = make_linear_svc(backend)
    search = GridSearchCV(estimator=estimator, cv=CV_FOLDS, param_grid={"C": C_GRID}, n_jobs=n_jobs)
    # threads, not processes: both solvers release the GIL, and nothing is copied to workers
    with warnings.catch_warnings(record=True) as caught, parallel_backend("threading"):
        warnings.simplefilter("always", ConvergenceWarning)
        search.fit(train.features, train.labels)
    not_converged = sum(1 for w in caught if issubclass(w.category, ConvergenceWarning))
    if not_converged:
        logger.info("classification: %d SVM fits did not converge (max_iter reached)", not_converged)
    predictions = search.predict(test.features)
    return {
        "f1": percent(f1(test.labels, predictions, average="macro")),
        "backend": backend_name,
        "C": float(search.best_params_["C"]),
    }


def evaluate_classification_task(
    train_csv: Path, eval_csv: Path, embeddings: Mapping[str, np.ndarray], backend: str = "auto",
    n_jobs: int | None = -1,
) -> Dict[str, Any]:
    """One SciDocs classification task (MAG or MeSH) from its split files.

    Returns ``{"f1", "backend", "C", "train", "eval", "missing_embeddings"}``. A label in the
    evaluated split that never occurs in train raises :class:`InputError` (it cannot be predicted).
    """
    train_labels = read_class_labels(train_csv)
    eval_labels = read_class_labels(eval_csv)
    known = set(train_labels.values())
    if len(known) < 2:
        raise InputError(f"need at least 2 classes in train, found {sorted(known)}", path=train_csv)
    for pid, label in eval_labels.items():
        if label not in known:
            raise InputError(f"unknown class label {label} of paper {pid!r}: not among the train labels "
                             f"{sorted(known)} of {train_csv}", path=eval_csv, field="class_label")
    dim = next(iter(embeddings.values())).shape[-1]
    train = split_matrix(train_labels, embeddings, dim)
    test = split_matrix(eval_labels, embeddings, dim)
    result = fit_and_score(train, test, backend=backend, n_jobs=n_jobs)
    result.update(train=len(train.labels), eval=len(test.labels),
                  missing_embeddings=train.missing_embeddings + test.missing_embeddings)
    if result["missing_embeddings"]:
        logger.info("classification: %d labelled papers without embedding (zero vectors)", result["missing_embeddings"])
    return result
