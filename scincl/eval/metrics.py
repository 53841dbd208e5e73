"""Ranking and classification metrics (plain numpy; trec_eval semantics where SciDocs needs them).

Ranking metrics take ``ranked_relevance``: the relevance grades of the retrieved documents in
rank order (best first, 0 = not relevant) plus, where the metric needs it, the number of relevant
documents / the ideal gains from *all* judged documents, so that relevant documents missing from
the ranking count as misses (trec_eval: "relevant documents not retrieved").
Values are fractions in [0, 1]; callers multiply by 100 for the paper's tables.

Tie handling follows trec_eval (docs/scidocs_protocol.md): scores compared as float32, higher first,
equal scores ordered by document id descending. :func:`trec_order` gives that order.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np


def trec_order(doc_ids: Sequence[str], scores: Sequence[float]) -> np.ndarray:
    """Indices that sort documents as trec_eval does: float32 score descending, then doc id descending."""
    scores32 = np.asarray(scores, dtype=np.float32)
    # argsort of the negated key is stable: sort by id descending first, then stably by score
    by_id_desc = np.array(sorted(range(len(doc_ids)), key=lambda i: doc_ids[i], reverse=True), dtype=np.int64)
    order = np.argsort(-scores32[by_id_desc], kind="stable")
    return by_id_desc[order]


def _binary(ranked_relevance: Iterable[float], relevance_level: int = 1) -> np.ndarray:
    return (np.asarray(list(ranked_relevance), dtype=np.float64) >= relevance_level).astype(np.float64)


def average_precision(ranked_relevance: Iterable[float], n_relevant: int, k: Optional[int] = None) -> float:
    """Average precision (trec_eval ``map``): mean of precision@rank over the relevant documents.

    ``n_relevant`` is the number of relevant judged documents (rel >= 1), retrieved or not.
    With ``k``, only the top ``k`` ranks count and the denominator is ``min(n_relevant, k)``
    (the usual MAP@k of recommendation papers). Returns 0 when there is nothing relevant.
    """
    hits = _binary(ranked_relevance)
    denominator = n_relevant if k is None else min(n_relevant, k)
    if k is not None:
        hits = hits[:k]
    if denominator <= 0:
        return 0.0
    precisions = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(np.sum(precisions * hits) / denominator)


def dcg(gains: Iterable[float], k: Optional[int] = None) -> float:
    """Discounted cumulative gain: sum of gain / log2(rank + 1) (trec_eval ``ndcg``)."""
    g = np.asarray(list(gains), dtype=np.float64)
    if k is not None:
        g = g[:k]
    return float(np.sum(g / np.log2(np.arange(2, len(g) + 2))))


def ndcg(ranked_relevance: Iterable[float], judged_relevance: Iterable[float], k: Optional[int] = None) -> float:
    """nDCG with gain = relevance grade (trec_eval ``ndcg`` / ``ndcg_cut.k``).

    The ideal ranking is built from ``judged_relevance``, the grades of *all* judged documents
    (retrieved or not), so a relevant document absent from the ranking lowers the score.
    ``k=None`` is full depth. Returns 0 when no judged document is relevant.
    """
    ideal = dcg(sorted((g for g in judged_relevance if g > 0), reverse=True), k)
    if ideal == 0:
        return 0.0
    return dcg([max(g, 0.0) for g in ranked_relevance], k) / ideal


def precision_at_k(ranked_relevance: Iterable[float], k: int) -> float:
    """Fraction of the top ``k`` ranks that are relevant (missing ranks count as not relevant)."""
    return float(np.sum(_binary(ranked_relevance)[:k]) / k)


def recall_at_k(ranked_relevance: Iterable[float], n_relevant: int, k: int) -> float:
    """Relevant documents in the top ``k`` over all relevant documents (0 when none is relevant)."""
    if n_relevant <= 0:
        return 0.0
    return float(np.sum(_binary(ranked_relevance)[:k]) / n_relevant)


def reciprocal_rank(ranked_relevance: Iterable[float], k: Optional[int] = None) -> float:
    """1 / rank of the first relevant document (0 when none is ranked, or none in the top ``k``)."""
    hits = _binary(ranked_relevance)
    if k is not None:
        hits = hits[:k]
    first = np.flatnonzero(hits)
    return float(1.0 / (first[0] + 1)) if len(first) else 0.0


def hits_at_k(ranked_relevance: Iterable[float], k: int) -> float:
    """1 when at least one relevant document is in the top ``k``, else 0 (Hits@k)."""
    return float(np.any(_binary(ranked_relevance)[:k]))


def f1(y_true: Sequence[int], y_pred: Sequence[int], average: str = "macro") -> float:
    """F1 score via scikit-learn (``average='macro'`` as SciDocs MAG/MeSH, ``'binary'`` for 2 classes)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, average=average))


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b rank correlation via scipy (handles ties); NaN when a side is constant."""
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def percent(value: float) -> float:
    """A fraction as the paper's tables print it: ×100, rounded to 2 decimals (official scidocs)."""
    return float(np.round(100.0 * value, 2))
