"""The SciNCL triple miner over plain arrays: its settings (:class:`MinerConfig`), one kNN search per query,
strategies fill the slots.

A triple ``(query, positive, negative)`` draws its positive and its negative from one of three
*slots* each (easy / medium / hard), as in the original ``run_specter`` flags
(``--easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 ...``).
The counts of the positive slots and of the negative slots each sum to ``triples_per_query``;
the i-th positive is paired with the i-th negative (positives in slot order easy, medium, hard;
negatives likewise). :class:`MinerConfig` holds one field per flag, under the flag's name, and is
validated when built, before any work.

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

import dataclasses
import logging
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Optional, Set, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.triples import strategies as st
from scincl.settings.schema import SCINCL, derive_bands, scincl_setting, setting
from scincl.triples.config import (BAND_STRATEGIES, KMEANS, KNN, RANDOM, RANDOM_SORTED, RANDOM_WITHOUT_KNN,
                                   RANDOM_WITHOUT_KNN_SORTED, RANGE, ROLES, STRATEGIES)

logger = logging.getLogger(__name__)

# a band start left None (the flag not given): its end minus its count, paper §3.2
DERIVED_BAND_START = "None: k_max - count (scincl/settings/schema.py:derive_bands)"


@dataclass(frozen=True)
class Slot:
    """One slot, e.g. the easy positives: how many per query and how they are drawn."""

    role: str  # "positives" | "negatives"
    difficulty: str  # "easy" | "medium" | "hard"
    count: int = 0
    strategy: str = KNN
    k_min: int = 0
    k_max: int = 0
    range: Optional[float] = None  # threshold passed to faiss range_search (strategy "range")

    @property
    def name(self) -> str:
        """Flag prefix, e.g. ``easy_positives``."""
        return f"{self.difficulty}_{self.role}"


@dataclass(frozen=True)
class MinerConfig:
    """The miner's flags, one field per flag under its own name (the schema's: ``hard_negatives_k_max``), with
    SciNCL's values by default (paper Table 3, README run_specter; scincl/settings/schema.py). A band's start
    left ``None`` is derived from its end and count (``k_max - count``, :func:`~scincl.settings.schema.derive_bands`);
    :attr:`slots` says which flags fill which slot. Built from flat flags by :func:`make_config`."""

    triples_per_query: int = SCINCL.triples_per_query
    easy_positives_count: int = SCINCL.easy_positives_count
    easy_positives_strategy: str = SCINCL.easy_positives_strategy
    easy_positives_k_min: Optional[int] = scincl_setting("easy_positives_k_min", None, source=DERIVED_BAND_START)
    easy_positives_k_max: int = SCINCL.easy_positives_k_max
    easy_positives_range: Optional[float] = None
    medium_positives_count: int = 0
    medium_positives_strategy: str = KNN
    medium_positives_k_min: int = 0
    medium_positives_k_max: int = 0
    medium_positives_range: Optional[float] = None
    hard_positives_count: int = 0
    hard_positives_strategy: str = KNN
    hard_positives_k_min: int = 0
    hard_positives_k_max: int = 0
    hard_positives_range: Optional[float] = None
    easy_negatives_count: int = SCINCL.easy_negatives_count
    easy_negatives_strategy: str = SCINCL.easy_negatives_strategy
    easy_negatives_k_min: int = 0
    easy_negatives_k_max: int = 0
    easy_negatives_range: Optional[float] = None
    medium_negatives_count: int = 0
    medium_negatives_strategy: str = KNN
    medium_negatives_k_min: int = 0
    medium_negatives_k_max: int = 0
    medium_negatives_range: Optional[float] = None
    hard_negatives_count: int = SCINCL.hard_negatives_count
    hard_negatives_strategy: str = SCINCL.hard_negatives_strategy
    hard_negatives_k_min: Optional[int] = scincl_setting("hard_negatives_k_min", None, source=DERIVED_BAND_START)
    hard_negatives_k_max: int = SCINCL.hard_negatives_k_max
    hard_negatives_range: Optional[float] = None
    random_sorted_sample_n: int = setting(100, "the original SciNCL code", "candidates drawn per query by random_sorted")
    min_range_results_count: int = setting(10, "the original SciNCL code", "range results required beyond the count")
    range_fallback_to_random: bool = setting(True, "the original SciNCL code",
                                             "too few range results: fall back to random_without_knn")
    k_means_clusters: Optional[int] = setting(None, "None: about sqrt(corpus size) (mine_from_graph_corpus)",
                                              "k-means clusters of the kmeans strategy")

    def __post_init__(self) -> None:
        values = {**vars(self), **derive_bands(vars(self))}
        for name, value in values.items():  # flags as their kinds (a numpy int, a float from a sweep)
            if name.endswith(("_count", "_k_min", "_k_max")) or name == "triples_per_query":
                value = int(value)
            elif name.endswith("_range") and value is not None:
                value = float(value)
            elif name.endswith("_strategy"):
                value = str(value)
            object.__setattr__(self, name, value)
        validate_config(self)

    @property
    def slots(self) -> Tuple[Slot, ...]:
        """The six slots, positives then negatives, each easy, medium, hard, with the flags that fill them."""
        return (
            Slot("positives", "easy", self.easy_positives_count, self.easy_positives_strategy,
                 self.easy_positives_k_min, self.easy_positives_k_max, self.easy_positives_range),
            Slot("positives", "medium", self.medium_positives_count, self.medium_positives_strategy,
                 self.medium_positives_k_min, self.medium_positives_k_max, self.medium_positives_range),
            Slot("positives", "hard", self.hard_positives_count, self.hard_positives_strategy,
                 self.hard_positives_k_min, self.hard_positives_k_max, self.hard_positives_range),
            Slot("negatives", "easy", self.easy_negatives_count, self.easy_negatives_strategy,
                 self.easy_negatives_k_min, self.easy_negatives_k_max, self.easy_negatives_range),
            Slot("negatives", "medium", self.medium_negatives_count, self.medium_negatives_strategy,
                 self.medium_negatives_k_min, self.medium_negatives_k_max, self.medium_negatives_range),
            Slot("negatives", "hard", self.hard_negatives_count, self.hard_negatives_strategy,
                 self.hard_negatives_k_min, self.hard_negatives_k_max, self.hard_negatives_range),
        )

    def active(self, role: Optional[str] = None) -> List[Slot]:
        """Slots with a positive count (of one role when given), in easy, medium, hard order."""
        return [s for s in self.slots if s.count > 0 and (role is None or s.role == role)]

    def uses(self, *strategies: str) -> bool:
        """True when an active slot uses one of ``strategies``."""
        return any(s.strategy in strategies for s in self.active())

    def search_k(self) -> int:
        """Neighbours to search per query besides the query itself: the largest ``k_max`` of the
        slots that use the kNN matrix (``knn`` bands; ``random_without_knn*`` and ``range``'s
        fallback exclude ``n_1 .. n_K``, and their own ``k_max`` can widen ``K``)."""
        uses_matrix = (KNN, RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED, RANGE)
        return max([s.k_max for s in self.active() if s.strategy in uses_matrix], default=0)


def miner_option_names() -> Set[str]:
    """Every miner flag beyond the output/input paths: the slot flags and the strategy options."""
    return {f.name for f in dataclasses.fields(MinerConfig)}


def make_config(**options: Any) -> MinerConfig:
    """A :class:`MinerConfig` from flat flags (``easy_positives_count=5, ...``), validated.

    Unset flags (absent or ``None``) take SciNCL's defaults. Unknown flags, unknown strategy names, counts
    that do not add up to ``triples_per_query`` and intervals narrower than their count are :class:`InputError`.
    """
    unknown = sorted(set(options) - miner_option_names())
    if unknown:
        raise InputError(f"unknown option(s) {', '.join('--' + u for u in unknown)}")
    return MinerConfig(**{k: v for k, v in options.items() if v is not None})


def validate_config(config: MinerConfig) -> None:
    """Raise :class:`InputError` for settings that cannot produce ``triples_per_query`` triples: how the slots
    fit together (strategies, counts, bands against counts). The flags' ranges are checked once before, by
    the entry point (the CLI, run_specter's settings: :func:`scincl.settings.schema.check_settings`)."""
    for slot in config.slots:
        if slot.count <= 0:
            continue
        if slot.strategy not in STRATEGIES:
            raise InputError(f"--{slot.name}_strategy {slot.strategy!r} is unknown; choose one of "
                             f"{', '.join(STRATEGIES)}")
        if slot.strategy in BAND_STRATEGIES:
            if slot.k_max - slot.k_min < slot.count:
                raise InputError(f"--{slot.name}: the interval ({slot.k_min}, {slot.k_max}] holds "
                                 f"{slot.k_max - slot.k_min} neighbours, fewer than the count {slot.count}")
        if slot.strategy == RANGE and slot.range is None:
            raise InputError(f"--{slot.name}_strategy range needs --{slot.name}_range (the faiss threshold)")
    for role in ROLES:
        total = sum(s.count for s in config.active(role))
        if total != config.triples_per_query:
            parts = " + ".join(f"{s.name}_count={s.count}" for s in config.slots if s.role == role)
            raise InputError(f"{role} counts must add up to --triples_per_query={config.triples_per_query}, "
                             f"got {parts} = {total}")
    if config.random_sorted_sample_n < 1:
        raise InputError(f"--random_sorted_sample_n must be positive, got {config.random_sorted_sample_n}")


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


def check_k_against_corpus(config: MinerConfig, corpus_size: int) -> None:
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
    config: MinerConfig,
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


def _sample_block(block: _Block, corpus: Corpus, config: MinerConfig, seed: int,
                  range_search_fn: Optional[RangeSearchFn]) -> Tuple[np.ndarray, np.ndarray, Counter]:
    """Fill every active slot for one block of queries with the block's own random stream."""
    rng = np.random.default_rng([seed, block.index])
    stats: Counter = Counter()
    parts = {"positives": [], "negatives": []}
    for slot in config.active():
        parts[slot.role].append(_fill_slot(slot, block, corpus, config, rng, range_search_fn, stats))
    return np.hstack(parts["positives"]), np.hstack(parts["negatives"]), stats


def _fill_slot(slot: Slot, block: _Block, corpus: Corpus, config: MinerConfig, rng: np.random.Generator,
               range_search_fn: Optional[RangeSearchFn], stats: Counter) -> np.ndarray:
    """Candidate rows ``[n, slot.count]`` for one slot (dispatch on the strategy name)."""
    rows, nn, count = block.query_rows, block.neighbours, slot.count
    try:
        # the band (<slot>_k_min, <slot>_k_max] of MinerConfig.slots, e.g. hard_negatives_k_min, hard_negatives_k_max
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
