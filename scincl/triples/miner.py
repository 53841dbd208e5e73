"""The SciNCL triple miner over plain arrays: one kNN search per query, strategies fill the slots of its settings
(:class:`~scincl.settings.spec.MinerSpec`, built from flags by :func:`make_config`).

A triple ``(query, positive, negative)`` draws its positive and its negative from one of three
*slots* each (easy / medium / hard), as in the original ``run_specter`` flags
(``--easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 ...``).
The counts of the positive slots and of the negative slots each sum to ``triples_per_query``;
the i-th positive is paired with the i-th negative (positives in slot order easy, medium, hard;
negatives likewise). :class:`~scincl.settings.spec.MinerSpec` holds one field per flag, under the flag's name,
and is checked when built, before any work.

:func:`mine_knn_triples` takes corpus rows of the queries and a search function and returns
``(query, positive, negative)`` corpus rows. It knows nothing of files or paper ids
(:mod:`scincl.triples.knn_miner` does the I/O), so tests drive it with hand-built arrays and a
numpy brute-force search.

Reproducibility: queries are processed in fixed blocks of :data:`BLOCK_SIZE` (a constant, not a
function of ``workers``), and block ``b`` draws from its own random stream
``numpy.random.default_rng([seed, b])``. The output therefore depends only on the inputs and the
seed. ``workers`` sets faiss' threads; sampling of block ``b`` runs in a background thread while
block ``b + 1`` is searched.
"""
from __future__ import annotations

import logging
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, Optional, Set, Tuple

import attrs
import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.triples import strategies as st
from scincl.settings.spec import MinerSpec, Slot
from scincl.triples.config import KMEANS, KNN, RANDOM, RANDOM_SORTED, RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED, RANGE

logger = logging.getLogger(__name__)

def miner_option_names() -> Set[str]:
    """Every miner flag beyond the output/input paths: the slot flags and the strategy options."""
    return {a.name for a in attrs.fields(MinerSpec)}


def make_config(**options: Any) -> MinerSpec:
    """The miner's settings (:class:`~scincl.settings.spec.MinerSpec`) from flat flags (``easy_positives_count=5,
    ...``): the one place flags become the typed object, checked as it is built.

    Unset flags (absent or ``None``) take SciNCL's defaults. Unknown flags, values out of range, unknown strategy
    names, counts that do not add up to ``triples_per_query`` and bands narrower than their count are
    :class:`InputError`.
    """
    unknown = sorted(set(options) - miner_option_names())
    if unknown:
        raise InputError(f"unknown option(s) {', '.join('--' + u for u in unknown)}")
    return MinerSpec(**{k: v for k, v in options.items() if v is not None})


# Queries per block: one faiss call and one random stream each. Changing it changes the sample.
BLOCK_SIZE = 1024

# search_fn(query_rows [n], k) -> raw neighbour rows [n, k] (nearest first, may contain the query)
SearchFn = Callable[[np.ndarray, int], np.ndarray]
# range_search_fn(query_rows [n], threshold) -> faiss CSR (lims [n+1], scores, rows)
RangeSearchFn = Callable[[np.ndarray, float], Tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass
class Clusters:
    """k-means view of the corpus for the ``kmeans`` strategy (see :func:`strategies.kmeans_band`)."""

    assignment: np.ndarray  # [N] cluster of every corpus row
    cluster_order: np.ndarray  # [C, C'] non-empty clusters nearest-first from each cluster
    member_rows: np.ndarray  # corpus rows sorted by cluster
    member_offsets: np.ndarray  # [C + 1]


@dataclass
class Corpus:
    """What strategies may need to know about the corpus besides the kNN matrix."""

    size: int
    metric: str = "inner_product"  # "inner_product" (higher = nearer) or "l2"
    vectors: Optional[np.ndarray] = None  # [N, d], for random_sorted / range queries / kmeans
    clusters: Optional[Clusters] = None


@dataclass
class MinedTriples:
    """Corpus rows of the mined triples (``triples_per_query`` consecutive rows per query)."""

    query_rows: np.ndarray
    positive_rows: np.ndarray
    negative_rows: np.ndarray
    stats: Dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.query_rows)


@dataclass
class _Block:
    index: int
    query_rows: np.ndarray
    neighbours: Optional[np.ndarray]  # self-free [n, K]


def check_k_against_corpus(config: MinerSpec, corpus_size: int) -> None:
    """k beyond the index size, or more distinct random draws than a random slot's pool holds, is an
    :class:`InputError` naming the slot (called before the index is built: issue 41)."""
    for slot in config.active():
        if slot.strategy in (KNN, RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED) and slot.k_max > corpus_size - 1:
            raise InputError(f"--{slot.name}_k_max={slot.k_max} is beyond the index: it holds {corpus_size} papers, "
                             f"so a query has at most {corpus_size - 1} neighbours")
    for slot in config.active():
        excluded = config.search_k() if slot.strategy in (RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED) else 0
        pool = corpus_size - 1 - excluded  # the query and, for *_without_knn*, its n_1 .. n_K
        draws = {RANDOM: slot.count, RANDOM_WITHOUT_KNN: slot.count, RANDOM_SORTED: config.random_sorted_sample_n,
                 RANDOM_WITHOUT_KNN_SORTED: config.random_sorted_sample_n}.get(slot.strategy, 0)
        if draws > pool:
            raise InputError(f"--{slot.name}_strategy {slot.strategy}: only {pool} papers to draw {draws} distinct "
                             f"random ones from (the index holds {corpus_size}); give a smaller count or "
                             "--random_sorted_sample_n, or for a corpus this small smaller --*_k_min/--*_k_max "
                             "flags, or --k_scale corpus to size the bands for it")


def mine_knn_triples(
    query_rows: np.ndarray,
    corpus: Corpus,
    config: MinerSpec,
    search_fn: Optional[SearchFn],
    seed: int = 0,
    range_search_fn: Optional[RangeSearchFn] = None,
    show_progress: bool = True,
) -> MinedTriples:
    """Mine ``triples_per_query`` triples for every query row (paper §3.2).

    Each query is searched once for ``config.search_k() + 1`` neighbours (the extra one for the
    query itself, which never counts); the slots' strategies then pick positives and negatives
    from that matrix (or from the corpus at random). Raises :class:`InputError` when some queries
    lack enough candidates (saying how many), so the triple count is always exact.
    """
    query_rows = np.asarray(query_rows, dtype=np.int64)
    if query_rows.size == 0:
        raise InputError("no query papers: the query set is empty")
    if seed < 0:
        raise InputError(f"--seed must be non-negative, got {seed}")
    check_k_against_corpus(config, corpus.size)
    k = config.search_k()
    if k > 0 and search_fn is None:
        raise ValueError("a search function is needed for kNN-based strategies")
    blocks = range(0, len(query_rows), BLOCK_SIZE)
    results: Dict[int, Tuple[np.ndarray, np.ndarray, Counter]] = {}
    pending: Deque[Tuple[int, Future]] = deque()
    with ThreadPoolExecutor(max_workers=1) as sampler:
        for b, start in enumerate(tqdm(blocks, desc=f"kNN triples (k={k:,}, {BLOCK_SIZE} queries/block)",
                                       unit="block", disable=not show_progress or len(blocks) < 2)):
            rows = query_rows[start:start + BLOCK_SIZE]
            neighbours = st.drop_self(rows, search_fn(rows, k + 1)) if k > 0 else None
            block = _Block(index=b, query_rows=rows, neighbours=neighbours)
            pending.append((b, sampler.submit(_sample_block, block, corpus, config, seed, range_search_fn)))
            while len(pending) > 1:  # at most one block waiting: bounded memory
                done_b, fut = pending.popleft()
                results[done_b] = fut.result()
        while pending:
            done_b, fut = pending.popleft()
            results[done_b] = fut.result()
    positives = np.concatenate([results[b][0] for b in range(len(blocks))])
    negatives = np.concatenate([results[b][1] for b in range(len(blocks))])
    stats: Counter = Counter()
    for b in range(len(blocks)):
        stats.update(results[b][2])
    incomplete = (positives < 0).any(axis=1) | (negatives < 0).any(axis=1)
    if incomplete.any():
        raise InputError(
            f"{int(incomplete.sum())} of {len(query_rows)} queries lacked enough candidates (the kNN search "
            f"returned fewer than k results, e.g. an IVF index with a small nprobe, or a cluster/range was empty); "
            f"no triples written")
    tpq = config.triples_per_query
    mined = MinedTriples(query_rows=np.repeat(query_rows, tpq), positive_rows=positives.reshape(-1),
                         negative_rows=negatives.reshape(-1),
                         stats={"queries": int(len(query_rows)), "triples": int(len(query_rows) * tpq),
                                **{k_: int(v) for k_, v in stats.items()}})
    logger.info("mined %d triples for %d queries (%s)", len(mined), len(query_rows),
                ", ".join(f"{k_}={v}" for k_, v in sorted(stats.items())) or "no fallbacks")
    return mined


def _sample_block(block: _Block, corpus: Corpus, config: MinerSpec, seed: int,
                  range_search_fn: Optional[RangeSearchFn]) -> Tuple[np.ndarray, np.ndarray, Counter]:
    """Fill every active slot for one block of queries with the block's own random stream."""
    rng = np.random.default_rng([seed, block.index])
    stats: Counter = Counter()
    parts = {"positives": [], "negatives": []}
    for slot in config.active():
        parts[slot.role].append(_fill_slot(slot, block, corpus, config, rng, range_search_fn, stats))
    return np.hstack(parts["positives"]), np.hstack(parts["negatives"]), stats


def _fill_slot(slot: Slot, block: _Block, corpus: Corpus, config: MinerSpec, rng: np.random.Generator,
               range_search_fn: Optional[RangeSearchFn], stats: Counter) -> np.ndarray:
    """Candidate rows ``[n, slot.count]`` for one slot (dispatch on the strategy name)."""
    rows, nn, count = block.query_rows, block.neighbours, slot.count
    try:
        # the band (<slot>_k_min, <slot>_k_max] of MinerSpec.slots, e.g. hard_negatives_k_min, hard_negatives_k_max
        if slot.strategy == KNN:
            return st.knn_band(nn, slot.k_min, slot.k_max, count, rng)
        if slot.strategy == RANDOM:
            return st.random_rows(rows, corpus.size, count, rng)
        if slot.strategy == RANDOM_WITHOUT_KNN:
            return st.random_rows(rows, corpus.size, count, rng, exclude=nn)
        if slot.strategy in (RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED):
            _need_vectors(corpus, slot)
            exclude = nn if slot.strategy == RANDOM_WITHOUT_KNN_SORTED else None
            return st.sorted_random(rows, corpus.vectors[rows], corpus.vectors, count, config.random_sorted_sample_n,
                                    rng, metric=corpus.metric, most_similar=slot.role == "positives",
                                    exclude=exclude)
        if slot.strategy == RANGE:
            if range_search_fn is None:
                raise InputError(f"--{slot.name}_strategy range needs an index that supports range search")
            lims, scores, found = range_search_fn(rows, float(slot.range))
            out = st.range_band(rows, lims, scores, found, count, higher_is_closer=corpus.metric != "l2",
                                min_results=config.min_range_results_count)
            short = (out < 0).any(axis=1)
            if short.any():
                if not config.range_fallback_to_random:
                    raise InputError(f"{int(short.sum())} queries got fewer than {count} + "
                                     f"{config.min_range_results_count} range results for --{slot.name}_range "
                                     f"{slot.range} (set --range_fallback_to_random to fall back)")
                stats[f"{slot.name}_range_fallbacks"] += int(short.sum())
                out[short] = st.random_rows(rows[short], corpus.size, count, rng,
                                            exclude=None if nn is None else nn[short])
            return out
        if slot.strategy == KMEANS:
            if corpus.clusters is None:
                raise InputError(f"--{slot.name}_strategy kmeans needs the corpus clustered (k-means)")
            c = corpus.clusters
            return st.kmeans_band(rows, c.assignment[rows], c.cluster_order, c.member_rows, c.member_offsets,
                                  slot.k_min, slot.k_max, count, rng)
    except st.NotEnoughCandidates as exc:
        raise InputError(f"--{slot.name}_strategy {slot.strategy}: {exc}; for a corpus this small give smaller "
                         "--*_k_min/--*_k_max flags, or --k_scale corpus to size the bands for it") from None
    raise InputError(f"unknown strategy {slot.strategy!r}")


def _need_vectors(corpus: Corpus, slot: Slot) -> None:
    if corpus.vectors is None:
        raise InputError(f"--{slot.name}_strategy {slot.strategy} needs the corpus embeddings")


def cluster_corpus(vectors: np.ndarray, n_clusters: int, metric: str = "inner_product", seed: int = 0,
                   niter: int = 20) -> Clusters:
    """k-means over the corpus (faiss) for the ``kmeans`` strategy; centroids are ranked by
    similarity (inner product, or minus L2 distance) to each cluster's own centroid."""
    import faiss

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n_clusters = int(min(max(1, n_clusters), len(x)))
    kmeans = faiss.Kmeans(x.shape[1], n_clusters, niter=niter, seed=int(seed), verbose=False,
                          spherical=False)
    kmeans.train(x)
    if metric == "l2":
        _, assign = kmeans.index.search(x, 1)
    else:
        ip = faiss.IndexFlatIP(x.shape[1])
        ip.add(kmeans.centroids)
        _, assign = ip.search(x, 1)
    assignment = assign[:, 0].astype(np.int64)
    sizes = np.bincount(assignment, minlength=n_clusters)
    nonempty = np.flatnonzero(sizes > 0)
    cents = kmeans.centroids[nonempty]
    if metric == "l2":
        sim = -((cents[:, None, :] - cents[None, :, :]) ** 2).sum(-1)
    else:
        sim = cents @ cents.T
    np.fill_diagonal(sim, np.inf)  # a cluster is always its own nearest
    order_local = np.argsort(-sim, axis=1, kind="stable")
    cluster_order = np.zeros((n_clusters, len(nonempty)), dtype=np.int64)
    cluster_order[nonempty] = nonempty[order_local]
    member_rows = np.argsort(assignment, kind="stable").astype(np.int64)
    member_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return Clusters(assignment=assignment, cluster_order=cluster_order, member_rows=member_rows,
                    member_offsets=member_offsets)
