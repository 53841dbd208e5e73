"""Full-pool retrieval evaluations: every query ranks the whole paper pool.

* :func:`full_pool_retrieval` — OpenMSD-style evaluation of held-out pairs (direct citations,
  co-citations, bibliographic coupling): MAP over the full ranking and nDCG@10 (plus MAP@k,
  Recall@k, P@k, MRR, Hits@k).
* :func:`citation_recommendation_buckets` — MP-BERT4CR-style citation recommendation: Recall@10
  and MAP@10 for queries with exactly 1, at least 1 and at least 2 positives.

Ranking: similarity descending (``cosine``, ``dot`` or ``l2`` = minus the Euclidean distance);
equal scores are ordered by position in ``paper_ids`` (deterministic). The query itself is
removed from its pool when ``exclude_self``. A relevant paper missing from the pool counts as a
miss; a query missing from the pool is dropped (as SciDocs drops queries without embedding) and
the count is logged.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional, Sequence

import numpy as np
from tqdm import tqdm

from scincl.eval.metrics import percent

logger = logging.getLogger(__name__)

METRICS = ("cosine", "dot", "l2")
SCORE_BLOCK_ELEMENTS = 1 << 25  # ~128 MiB of float32 scores per query block


@dataclass(frozen=True)
class QueryRanks:
    """Where the relevant papers of one query landed: 1-based ranks (sorted) and how many there are."""

    query_id: str
    ranks: np.ndarray  # ranks of the relevant papers found in the pool, ascending
    n_relevant: int  # all relevant papers, including those missing from the pool


def _prepare(embeddings: np.ndarray, metric: str) -> np.ndarray:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    x = np.asarray(embeddings, dtype=np.float32)
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        x = x / np.where(norms == 0, 1.0, norms)
    return np.ascontiguousarray(x)


def _score_block(queries: np.ndarray, pool: np.ndarray, pool_sq_norms: np.ndarray, metric: str) -> np.ndarray:
    scores = queries @ pool.T
    if metric == "l2":  # -||q - x||^2 ranks like -||q - x||; drop the per-query constant ||q||^2
        scores = 2.0 * scores - pool_sq_norms[None, :]
    return scores


def _gpu_scorer(pool: np.ndarray, pool_sq_norms: np.ndarray, metric: str, device: Optional[str]):
    """A torch scorer on ``device`` (the pool stays on the GPU), or None for numpy (CPU, the default)."""
    if device is None or device == "cpu":
        return None
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        logger.warning("full-pool retrieval: %s requested but CUDA is not available; scoring on CPU", device)
        return None
    pool_t = torch.from_numpy(pool).to(device)
    norms_t = torch.from_numpy(pool_sq_norms).to(device)

    def score(queries: np.ndarray) -> np.ndarray:
        s = torch.from_numpy(queries).to(device) @ pool_t.T
        if metric == "l2":
            s = 2.0 * s - norms_t[None, :]
        return s.cpu().numpy()

    return score


def relevant_ranks(
    query_ids: Sequence[str],
    relevant: Mapping[str, "set[str]"],
    paper_ids: Sequence[str],
    embeddings: np.ndarray,
    metric: str = "cosine",
    exclude_self: bool = True,
    show_progress: bool = True,
    device: Optional[str] = None,
) -> Iterator[QueryRanks]:
    """Rank the whole pool for each query and yield the ranks of its relevant papers.

    Queries without embedding or without any relevant paper (after removing the query itself)
    are skipped and counted in the log. ``device="cuda"`` computes the similarity blocks with
    torch on the GPU (falls back to numpy on CPU when CUDA is absent).
    """
    if len(paper_ids) != len(embeddings):
        raise ValueError(f"{len(paper_ids)} paper ids but {len(embeddings)} embeddings")
    row_of = {pid: i for i, pid in enumerate(paper_ids)}
    if len(row_of) != len(paper_ids):
        raise ValueError("paper_ids contains duplicates")
    pool = _prepare(embeddings, metric)
    pool_sq_norms = np.einsum("ij,ij->i", pool, pool) if metric == "l2" else np.zeros(0, np.float32)
    gpu_score = _gpu_scorer(pool, pool_sq_norms, metric, device)

    usable: List[str] = []
    missing_query, no_relevant = 0, 0
    for qid in query_ids:
        rel = set(relevant.get(qid, ())) - ({qid} if exclude_self else set())
        if qid not in row_of:
            missing_query += 1
        elif not rel:
            no_relevant += 1
        else:
            usable.append(qid)
    if missing_query or no_relevant:
        logger.info("full-pool retrieval: %d queries without embedding and %d without relevant papers skipped",
                    missing_query, no_relevant)

    block = max(1, SCORE_BLOCK_ELEMENTS // max(1, len(paper_ids)))
    positions = np.arange(len(paper_ids))
    missing_relevant = 0
    for start in tqdm(range(0, len(usable), block), desc="full-pool retrieval", unit="block",
                      disable=not show_progress or len(usable) <= block):
        qids = usable[start:start + block]
        queries = pool[[row_of[q] for q in qids]]
        scores = gpu_score(queries) if gpu_score else _score_block(queries, pool, pool_sq_norms, metric)
        for qid, row in zip(qids, scores):
            if exclude_self:
                row[row_of[qid]] = -np.inf
            rel = set(relevant[qid]) - ({qid} if exclude_self else set())
            rel_rows = np.array(sorted(row_of[p] for p in rel if p in row_of), dtype=np.int64)
            missing_relevant += len(rel) - len(rel_rows)
            if len(rel_rows) == 0:
                yield QueryRanks(qid, np.zeros(0, dtype=np.int64), len(rel))
                continue
            rel_scores = row[rel_rows]
            better = (row[None, :] > rel_scores[:, None]).sum(axis=1)
            tied_before = ((row[None, :] == rel_scores[:, None]) & (positions[None, :] < rel_rows[:, None])).sum(axis=1)
            yield QueryRanks(qid, np.sort(better + tied_before + 1), len(rel))
    if missing_relevant:
        logger.info("full-pool retrieval: %d relevant papers are not in the pool (counted as misses)", missing_relevant)


def _per_query_metrics(q: QueryRanks, k: int) -> Dict[str, float]:
    ranks = q.ranks.astype(np.float64)
    found = np.arange(1, len(ranks) + 1)
    top = ranks <= k
    ideal = np.sum(1.0 / np.log2(np.arange(2, min(q.n_relevant, k) + 2)))
    return {
        "map": float(np.sum(found / ranks) / q.n_relevant) if len(ranks) else 0.0,
        f"map@{k}": float(np.sum((found / ranks)[top]) / min(q.n_relevant, k)),
        f"ndcg@{k}": float(np.sum(1.0 / np.log2(ranks[top] + 1)) / ideal),
        f"recall@{k}": float(top.sum() / q.n_relevant),
        f"precision@{k}": float(top.sum() / k),
        "mrr": float(1.0 / ranks[0]) if len(ranks) else 0.0,
        f"hits@{k}": float(top.any()),
    }


def _average(per_query: List[Dict[str, float]]) -> Dict[str, float]:
    if not per_query:
        return {"queries": 0.0}
    out = {name: percent(float(np.mean([m[name] for m in per_query]))) for name in per_query[0]}
    out["queries"] = float(len(per_query))
    return out


def full_pool_retrieval(
    query_ids: Sequence[str],
    relevant: Mapping[str, "set[str]"],
    paper_ids: Sequence[str],
    embeddings: np.ndarray,
    metric: str = "cosine",
    k: int = 10,
    exclude_self: bool = True,
    device: Optional[str] = None,
) -> Dict[str, float]:
    """Rank the whole pool ``paper_ids`` (rows of ``embeddings``) for each query (OpenMSD protocol).

    Returns ``{"map", "map@k", "ndcg@k", "recall@k", "precision@k", "mrr", "hits@k"}`` as
    percentages (×100, rounded to 2 decimals), averaged over the evaluated queries, plus
    ``"queries"``: how many queries were evaluated (a count, not scaled). ``map`` and ``mrr`` are
    over the full ranking; ``map@k`` divides by ``min(#relevant, k)``. ``device="cuda"`` scores
    on the GPU (CPU numpy by default).
    """
    per_query = [_per_query_metrics(q, k) for q in relevant_ranks(query_ids, relevant, paper_ids, embeddings,
                                                                  metric=metric, exclude_self=exclude_self,
                                                                  device=device)]
    return _average(per_query)


def citation_recommendation_buckets(
    query_ids: Sequence[str],
    relevant: Mapping[str, "set[str]"],
    paper_ids: Sequence[str],
    embeddings: np.ndarray,
    metric: str = "cosine",
    k: int = 10,
    exclude_self: bool = True,
    device: Optional[str] = None,
) -> Dict[str, Dict[str, float]]:
    """Recall@k and MAP@k by number of positives (MP-BERT4CR): buckets ``"1"``, ``">=1"``, ``">=2"``.

    The bucket of a query is decided by its number of relevant papers (missing ones included).
    Each bucket holds ``recall@k``, ``map@k`` (percentages) and ``queries`` (a count).
    """
    per_query = [(q.n_relevant, _per_query_metrics(q, k))
                 for q in relevant_ranks(query_ids, relevant, paper_ids, embeddings, metric=metric,
                                         exclude_self=exclude_self, device=device)]
    buckets = {"1": lambda n: n == 1, ">=1": lambda n: n >= 1, ">=2": lambda n: n >= 2}
    out: Dict[str, Dict[str, float]] = {}
    for name, accept in buckets.items():
        chosen = [{key: m[key] for key in (f"recall@{k}", f"map@{k}")} for n, m in per_query if accept(n)]
        out[name] = _average(chosen)
    return out
