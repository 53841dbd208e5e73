"""SciDocs co-view, co-read, cite and co-cite: rank each query's qrel candidates, score MAP and nDCG.

Exactly the official protocol (docs/scidocs_protocol.md, allenai/scidocs ``user_activity_and_citations``):

* candidates of a query = its qrel lines; score = minus the Euclidean distance between query and
  candidate embeddings, written as ``str(np.round(score, 5))`` and parsed by trec_eval as float32;
* ranking by score descending, ties by paper id descending (trec_eval);
* a query without embedding (or with no candidate embedded) is dropped from the average; a
  candidate without embedding is absent from the ranking but still counts as relevant (a miss);
* trec_eval ``map`` and full-depth ``ndcg`` (gain = rel, ideal from all qrel entries), averaged
  arithmetically over queries, ×100, rounded to 2 decimals.

The computation is vectorised over queries (one padded ``queries × candidates`` array per
chunk) instead of writing and parsing a trec run file. Embeddings may be dense arrays or
``scipy.sparse`` rows (lexical encoders, :mod:`scincl.eval.lexical`): sparse ones are stacked
sparse and densified one chunk of queries at a time, so the arithmetic is the same.
"""
from __future__ import annotations

import logging
from typing import Dict, Mapping

import numpy as np

from scincl.eval.metrics import percent

logger = logging.getLogger(__name__)

CHUNK_ELEMENTS = 1 << 22  # query chunk size: padded candidate vector elements held at once (float64)


def candidate_scores(
    query_vectors: np.ndarray, candidate_vectors: np.ndarray, candidate_valid: np.ndarray
) -> np.ndarray:
    """Official run scores: ``float32(round(-||q - c||_2, 5))``; ``-inf`` where a candidate has no embedding.

    Shapes: ``(Q, d)``, ``(Q, C, d)``, ``(Q, C)`` -> ``(Q, C)`` float32.
    """
    diff = query_vectors[:, None, :] - candidate_vectors
    distances = np.sqrt(np.einsum("qcd,qcd->qc", diff, diff))
    scores = np.round(-distances, 5).astype(np.float32)
    scores[~candidate_valid] = -np.inf
    return scores


def trec_map_ndcg(scores: np.ndarray, id_order: np.ndarray, relevance: np.ndarray,
                  valid: np.ndarray) -> Dict[str, np.ndarray]:
    """Per-query trec_eval ``map`` and ``ndcg`` of padded score rows.

    ``scores`` (float32), ``id_order`` (ints, larger = larger paper id: ties rank larger ids first),
    ``relevance`` (grades of every judged candidate, 0 for padding) and ``valid`` (candidate was
    retrieved) are ``(Q, C)`` arrays. Unretrieved candidates must score ``-inf``.
    """
    order = np.lexsort((-id_order, -scores), axis=-1)
    ranked_valid = np.take_along_axis(valid, order, axis=1)
    ranked_rel = np.take_along_axis(relevance, order, axis=1) * ranked_valid
    positions = np.arange(1, scores.shape[1] + 1, dtype=np.float64)

    hits = (ranked_rel >= 1).astype(np.float64)
    n_relevant = (relevance >= 1).sum(axis=1)
    precision_at_hit = np.cumsum(hits, axis=1) / positions * hits
    ap = np.divide(precision_at_hit.sum(axis=1), n_relevant, out=np.zeros(len(scores)), where=n_relevant > 0)

    discounts = 1.0 / np.log2(positions + 1)
    dcg = (ranked_rel * discounts).sum(axis=1)
    ideal_gains = -np.sort(-np.where(relevance > 0, relevance, 0), axis=1)
    idcg = (ideal_gains * discounts).sum(axis=1)
    ndcg = np.divide(dcg, idcg, out=np.zeros(len(scores)), where=idcg > 0)
    return {"map": ap, "ndcg": ndcg}


def embedding_dim(vector) -> int:
    """Dimension of one embedding: a dense vector or a ``1 x dim`` sparse row."""
    return int(vector.shape[-1]) if hasattr(vector, "shape") else len(vector)


def stack_embeddings(vectors):
    """Rows of one matrix: float64 ndarray, or CSR when the vectors are sparse rows."""
    import scipy.sparse as sp

    if vectors and sp.issparse(vectors[0]):
        return sp.vstack(vectors, format="csr", dtype=np.float64)
    return np.stack([np.asarray(v, dtype=np.float64) for v in vectors])


def dense_rows(matrix, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]`` as a dense float64 array of shape ``rows.shape + (dim,)``."""
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        return matrix[rows]
    flat = matrix[rows.ravel()].toarray()
    return flat.reshape(*rows.shape, matrix.shape[1])


def evaluate_qrel_task(qrels: Mapping[str, Mapping[str, int]],
                       embeddings: Mapping[str, np.ndarray]) -> Dict[str, float]:
    """MAP and nDCG (×100, 2 decimals) of one qrel task, plus counts of what was dropped/missing.

    Returns ``{"map", "ndcg", "queries", "dropped_queries", "missing_candidates", "per_query"}``; ``per_query`` is
    ``{"map": {query id: AP}, "ndcg": {query id: nDCG}}``, trec_eval's per-query values in [0, 1] (the task's
    figure is 100 × their mean, rounded to 2 decimals) of the queries scored.
    """
    dim = embedding_dim(next(iter(embeddings.values())))
    queries = [q for q in qrels if q in embeddings and any(p in embeddings for p in qrels[q])]
    dropped = len(qrels) - len(queries)
    n_candidates = max(len(c) for c in qrels.values())
    all_ids = sorted({p for c in qrels.values() for p in c})
    id_order_of = {pid: i for i, pid in enumerate(all_ids)}
    missing = sum(1 for q in queries for p in qrels[q] if p not in embeddings)
    if not queries:
        logger.info("qrel task: none of the %d queries has an embedding", len(qrels))
        return {"map": float("nan"), "ndcg": float("nan"), "queries": 0, "dropped_queries": dropped,
                "missing_candidates": missing, "per_query": {"map": {}, "ndcg": {}}}

    # one matrix of the embedded papers of this task; -1 marks padding / no embedding
    embedded = [pid for pid in dict.fromkeys([*queries, *(p for q in queries for p in qrels[q])]) if pid in embeddings]
    row_of = {pid: i for i, pid in enumerate(embedded)}
    matrix = stack_embeddings([embeddings[pid] for pid in embedded])
    rows = np.full((len(queries), n_candidates), -1, dtype=np.int64)
    relevance = np.zeros((len(queries), n_candidates), dtype=np.int64)
    id_order = np.full((len(queries), n_candidates), -1, dtype=np.int64)
    for r, q in enumerate(queries):
        for c, (pid, rel) in enumerate(qrels[q].items()):
            rows[r, c] = row_of.get(pid, -1)
            relevance[r, c] = rel
            id_order[r, c] = id_order_of[pid]
    query_rows = np.array([row_of[q] for q in queries], dtype=np.int64)

    per_query = {"map": [], "ndcg": []}
    chunk = max(1, CHUNK_ELEMENTS // max(1, n_candidates * dim))
    for start in range(0, len(queries), chunk):
        block = slice(start, start + chunk)
        valid = rows[block] >= 0
        scores = candidate_scores(dense_rows(matrix, query_rows[block]), dense_rows(matrix, np.maximum(rows[block], 0)),
                                  valid)
        for name, values in trec_map_ndcg(scores, id_order[block], relevance[block], valid).items():
            per_query[name].append(values)

    if dropped or missing:
        logger.info("qrel task: %d of %d queries dropped (no embedding), %d candidates without embedding",
                    dropped, len(qrels), missing)
    values = {name: np.concatenate(chunks) for name, chunks in per_query.items()}
    return {
        "map": percent(float(np.mean(values["map"]))),
        "ndcg": percent(float(np.mean(values["ndcg"]))),
        "queries": len(queries),
        "dropped_queries": dropped,
        "missing_candidates": missing,
        "per_query": {name: dict(zip(queries, map(float, array))) for name, array in values.items()},
    }
