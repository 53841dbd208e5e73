"""Sampling strategies: candidate corpus rows for a block of queries, from plain arrays.

A strategy knows nothing of files, paper ids or CSVs (STYLE.md, pytorch-metric-learning's
miners): it takes integer arrays (the queries' corpus rows, their k-nearest-neighbour matrix,
corpus size, vectors) and a ``numpy.random.Generator`` and returns an ``int64 [n_queries, count]``
matrix of corpus rows. ``-1`` marks "no candidate" (e.g. a faiss IVF search that returned fewer
than k results); :mod:`scincl.triples.knn_miner` turns such rows into a clear error.

Every strategy works on the whole block at once (numpy), so there is no per-query Python loop in
the hot path. All strategies exclude the query itself.

Neighbour matrices here are *self-free*: column ``j`` holds neighbour ``n_{j+1}`` (1-based, as in
the paper), nearest first. :func:`drop_self` makes one from a raw faiss result.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

# Rows compared at once in membership tests: bounds the [rows, candidates, excluded] boolean work array.
_MEMBERSHIP_BLOCK_ROWS = 256
# A random candidate is drawn at most this many rounds before giving up (each round draws enough
# candidates to fill every row with high probability, so 2-3 rounds are the norm).
MAX_RANDOM_ROUNDS = 200
# Most random candidates drawn per row per round (keeps the duplicate test [rows, m, m] small).
_MAX_CANDIDATES_PER_ROUND = 64


class NotEnoughCandidates(ValueError):
    """A strategy cannot produce the requested number of distinct candidates for some query."""


# ----------------------------------------------------------------------------------- kNN matrix

def drop_self(query_rows: np.ndarray, raw_neighbours: np.ndarray) -> np.ndarray:
    """Remove each query's own row from its raw kNN result (``[n, K+1]`` -> ``[n, K]``).

    The query never counts as its own neighbour (paper §3.2). Usually the query is its own
    nearest neighbour and column 0 is simply dropped (a view, no copy). Where it is not (ties, or
    un-normalised inner product where a long vector beats the query's own norm) the entries in
    front of it move one column right; where it is absent, the last, (K+1)-th, neighbour is dropped.
    Works in place on ``raw_neighbours``.
    """
    query_rows = np.asarray(query_rows, dtype=np.int64)
    n, m = raw_neighbours.shape
    if m < 1:
        raise ValueError("raw neighbour matrix has no columns")
    not_first = np.flatnonzero(raw_neighbours[:, 0] != query_rows)
    if not_first.size:
        sub = raw_neighbours[not_first]
        hits = sub == query_rows[not_first, None]
        self_col = np.where(hits.any(axis=1), hits.argmax(axis=1), m)  # m = absent
        ranks = np.arange(m - 1)[None, :]
        cols = ranks + (ranks >= self_col[:, None])
        raw_neighbours[not_first, 1:] = np.take_along_axis(sub, cols, axis=1)
    return raw_neighbours[:, 1:]


def choose_columns(n_rows: int, low: int, high: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """Column indices ``[n_rows, count]`` within ``[low, high)``: all of them when the interval
    holds exactly ``count``, else ``count`` distinct ones drawn uniformly per row (sorted)."""
    width = high - low
    if count > width:
        raise ValueError(f"cannot choose {count} columns from an interval of {width}")
    if width == count:
        return np.broadcast_to(np.arange(low, high, dtype=np.int64), (n_rows, count))
    keys = rng.random((n_rows, width))
    picked = np.argpartition(keys, count - 1, axis=1)[:, :count]
    picked.sort(axis=1)
    return picked + low


def knn_band(neighbours: np.ndarray, k_min: int, k_max: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """Neighbours ``n_{k_min+1} .. n_{k_max}`` of each query (paper §3.2, Eq. 2).

    SciNCL: positives ``n_{k+ - c+ + 1} .. n_{k+}`` = ``knn_band(nn, k+ - c+, k+, c+)`` and hard
    negatives likewise. When the interval is wider than ``count`` (Appendix A.7 "intervals wider
    than c") ``count`` of its members are drawn uniformly per query.
    """
    if k_max > neighbours.shape[1]:
        raise ValueError(f"k_max={k_max} exceeds the {neighbours.shape[1]} neighbours searched")
    cols = choose_columns(len(neighbours), k_min, k_max, count, rng)
    return np.take_along_axis(neighbours, np.ascontiguousarray(cols), axis=1)


# ---------------------------------------------------------------------------------- random rows

def rows_contain(candidates: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """``out[i, j] = candidates[i, j] in sets[i]`` (row-wise membership; ``-1`` padding ignored)."""
    out = np.zeros(candidates.shape, dtype=bool)
    if sets.shape[1] == 0:
        return out
    for start in range(0, len(candidates), _MEMBERSHIP_BLOCK_ROWS):
        block = slice(start, start + _MEMBERSHIP_BLOCK_ROWS)
        out[block] = (candidates[block, :, None] == sets[block, None, :]).any(axis=2)
    return out


def _earlier_duplicate(candidates: np.ndarray) -> np.ndarray:
    """``True`` where a candidate equals an earlier one in the same row."""
    m = candidates.shape[1]
    same = candidates[:, :, None] == candidates[:, None, :]
    return (same & np.tri(m, m, -1, dtype=bool)[None]).any(axis=2)


def random_rows(
    query_rows: np.ndarray,
    corpus_size: int,
    count: int,
    rng: np.random.Generator,
    exclude: Optional[np.ndarray] = None,
    weights: Optional[np.ndarray] = None,
) -> np.ndarray:
    """``count`` distinct random corpus rows per query, never the query, never in ``exclude[i]``.

    ``random`` (SPECTER's easy negatives) is ``exclude=None``; SciNCL's ``random_without_knn``
    passes the kNN matrix. ``weights`` ``[corpus_size]`` draws row ``r`` with probability
    proportional to ``weights[r]`` among the allowed rows (noise-distribution sampling).
    Vectorised rejection sampling: each round draws a block of candidates for all unfilled rows at
    once and keeps the first valid ones.
    """
    query_rows = np.asarray(query_rows, dtype=np.int64)
    n = len(query_rows)
    out = np.full((n, count), -1, dtype=np.int64)
    if count == 0 or n == 0:
        return out
    pool_size = corpus_size
    excluded_per_row = 1 + (0 if exclude is None else exclude.shape[1])
    if pool_size - 1 < count:
        raise NotEnoughCandidates(f"only {pool_size} papers to draw {count} distinct random ones from")
    cumulative = None
    if weights is not None:
        cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
        if len(cumulative) != corpus_size or not cumulative[-1] > 0:
            raise ValueError("weights must have one non-negative entry per corpus row and a positive sum")
        pool_size = int((np.asarray(weights) > 0).sum())
        if pool_size - 1 < count:
            raise NotEnoughCandidates(f"only {pool_size} papers have a positive weight; {count} needed")
    if exclude is not None and weights is None:
        # kNN rows are distinct, so this is exact: the query + its valid excluded rows are off limits
        available = corpus_size - 1 - (exclude >= 0).sum(axis=1)
        if (available < count).any():
            raise NotEnoughCandidates(
                f"{int((available < count).sum())} queries have fewer than {count} papers outside their "
                f"excluded set ({exclude.shape[1]} excluded per query, corpus of {corpus_size})")
    accept_rate = max((pool_size - min(excluded_per_row, pool_size)) / pool_size, 1e-3)
    per_round = min(_MAX_CANDIDATES_PER_ROUND, int(math.ceil(count / accept_rate * 1.25)) + 2)
    filled = np.zeros(n, dtype=np.int64)
    pending = np.arange(n)
    for _ in range(MAX_RANDOM_ROUNDS):
        if pending.size == 0:
            break
        if cumulative is not None:
            u = rng.random((pending.size, per_round)) * cumulative[-1]
            candidates = np.minimum(np.searchsorted(cumulative, u, side="right"), corpus_size - 1)
        else:
            candidates = rng.integers(0, corpus_size, size=(pending.size, per_round))
        bad = candidates == query_rows[pending, None]
        if exclude is not None:
            bad |= rows_contain(candidates, exclude[pending])
        bad |= rows_contain(candidates, out[pending])
        bad |= _earlier_duplicate(candidates)
        need = count - filled[pending]
        good = ~bad
        rank = np.cumsum(good, axis=1) - 1
        take = good & (rank < need[:, None])
        r, c = np.nonzero(take)
        out[pending[r], filled[pending[r]] + rank[r, c]] = candidates[r, c]
        filled[pending] += take.sum(axis=1)
        pending = pending[filled[pending] < count]
    if pending.size:
        raise NotEnoughCandidates(
            f"{pending.size} queries found fewer than {count} random candidates outside their excluded set "
            f"after {MAX_RANDOM_ROUNDS} rounds (corpus of {pool_size}, {excluded_per_row - 1} excluded per query)")
    return out


def similarity(query_vectors: np.ndarray, candidate_vectors: np.ndarray, metric: str) -> np.ndarray:
    """Similarity of each query ``[n, d]`` to its candidates ``[n, m, d]`` (higher = nearer):
    dot product for ``inner_product``, minus the squared distance for ``l2``."""
    if metric == "l2":
        diff = candidate_vectors - query_vectors[:, None, :]
        return -np.einsum("nmd,nmd->nm", diff, diff)
    return np.einsum("nd,nmd->nm", query_vectors, candidate_vectors)


def sorted_random(
    query_rows: np.ndarray,
    query_vectors: np.ndarray,
    corpus_vectors: np.ndarray,
    count: int,
    sample_n: int,
    rng: np.random.Generator,
    metric: str = "inner_product",
    most_similar: bool = False,
    exclude: Optional[np.ndarray] = None,
) -> np.ndarray:
    """``random_sorted`` (Appendix A.7): draw ``sample_n`` random papers per query and keep the
    ``count`` least similar to the query (``most_similar=True``: the most similar ones).

    With ``exclude`` = the kNN matrix this is ``random_without_knn_sorted``.
    """
    if sample_n < count:
        raise ValueError(f"random_sorted_sample_n={sample_n} is smaller than the count {count}")
    pool = random_rows(query_rows, len(corpus_vectors), sample_n, rng, exclude=exclude)
    sims = similarity(np.asarray(query_vectors, dtype=np.float32), corpus_vectors[pool], metric)
    order = np.argsort(-sims if most_similar else sims, axis=1, kind="stable")[:, :count]
    return np.take_along_axis(pool, order, axis=1)


# ------------------------------------------------------------------------------- range search

def range_band(
    query_rows: np.ndarray,
    lims: np.ndarray,
    scores: np.ndarray,
    rows: np.ndarray,
    count: int,
    higher_is_closer: bool = True,
    min_results: int = 0,
) -> np.ndarray:
    """Similarity-threshold strategy (``range``, Appendix A.7) from a faiss ``range_search`` result.

    ``lims, scores, rows`` are faiss' CSR result for the block (query ``i`` owns
    ``lims[i]:lims[i+1]``). The query itself is dropped; of the remaining papers within the
    threshold the ``count`` *farthest* (those nearest the threshold) are returned, farthest first.
    Queries with fewer than ``count + min_results`` results get a row of ``-1`` (the caller falls
    back to another strategy or reports them).
    """
    query_rows = np.asarray(query_rows, dtype=np.int64)
    n = len(query_rows)
    lims = np.asarray(lims, dtype=np.int64)
    segment = np.repeat(np.arange(n), np.diff(lims))
    keep = rows != query_rows[segment]
    segment, scores, rows = segment[keep], scores[keep], rows[keep]
    # sort within each query: farthest first (ascending similarity or descending distance)
    order = np.lexsort((scores if higher_is_closer else -scores, segment))
    segment, rows = segment[order], rows[order]
    sizes = np.bincount(segment, minlength=n)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.full((n, count), -1, dtype=np.int64)
    enough = sizes >= count + min_results
    if count and enough.any():
        take = starts[enough, None] + np.arange(count)[None, :]
        out[enough] = rows[take]
    return out


# ----------------------------------------------------------------------------------- k-means

def kmeans_band(
    query_rows: np.ndarray,
    query_clusters: np.ndarray,
    cluster_order: np.ndarray,
    member_rows: np.ndarray,
    member_offsets: np.ndarray,
    k_min: int,
    k_max: int,
    count: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``kmeans`` strategy (Appendix A.7): one random paper from each of ``count`` clusters whose
    rank, by centroid similarity to the query's own cluster, lies in ``(k_min, k_max]``.

    ``cluster_order[c]`` lists the non-empty clusters nearest-first from cluster ``c`` (``c``
    itself at rank 1, so ``k_min=0, k_max=1`` = the query's own cluster); cluster ``c``'s members
    are ``member_rows[member_offsets[c]:member_offsets[c+1]]``. A draw that hits the query is
    redrawn; a cluster that holds only the query yields ``-1``.
    """
    query_rows = np.asarray(query_rows, dtype=np.int64)
    n = len(query_rows)
    ordered = cluster_order[np.asarray(query_clusters)]
    clusters = knn_band(ordered, k_min, k_max, count, rng)
    starts = member_offsets[clusters]
    sizes = member_offsets[clusters + 1] - starts
    out = np.full((n, count), -1, dtype=np.int64)
    pending = np.ones((n, count), dtype=bool)
    only_query = (sizes == 1) & (member_rows[starts] == query_rows[:, None])
    pending &= ~only_query
    for _ in range(MAX_RANDOM_ROUNDS):
        if not pending.any():
            break
        r, c = np.nonzero(pending)
        picks = member_rows[starts[r, c] + (rng.random(r.size) * sizes[r, c]).astype(np.int64)]
        ok = picks != query_rows[r]
        out[r[ok], c[ok]] = picks[ok]
        pending[r[ok], c[ok]] = False
    return out
