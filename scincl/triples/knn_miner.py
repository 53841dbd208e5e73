"""SciNCL kNN triples from files: BigGraph export + FAISS index -> ``train_triples.csv(.gz)``.

The I/O around :func:`scincl.triples.miner.mine_knn_triples`: read the graph embeddings and their
ids (``entity_names_paper_id_0.json`` + ``embeddings.h5``), build or reuse the faiss index at
``--ann_index_path`` (:mod:`scincl.knn.ann`), choose the query papers, mine, write the triples CSV and
``<output>.args.json`` (settings + counts, so a result says how it was made).
"""
from __future__ import annotations

import dataclasses
import inspect
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import attrs
import numpy as np

from scincl.knn import ann
from scincl.errors import InputError
from scincl.ids import canonical_ids
from scincl.graph.id_table import IdTable
from scincl.io import PathLike, read_id_list, write_json, write_triples_csv
from scincl.provenance import OutputRecord, fingerprint, recorded_maker, split_path_values
from scincl.settings.choices import ANN_BACKENDS
from scincl.settings.schema import SCINCL, check_settings
from scincl.triples.config import KMEANS, KNN, RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED, RANGE
from scincl.triples.k_scale import check_k_scale, corpus_k
from scincl.settings.spec import MinerSpec
from scincl.settings.values import check_types
from scincl.triples.miner import (Clusters, Corpus, MinedTriples, check_k_against_corpus, cluster_corpus, make_config,
                                  mine_knn_triples, miner_option_names)
from scincl.triples.queries import QueryPapers, select_query_rows
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

BAND_FLAGS = ("easy_positives_k_min", "easy_positives_k_max", "hard_negatives_k_min", "hard_negatives_k_max")


def output_with_gzip(output_path: PathLike, gzip: bool) -> Path:
    """``output_path`` with ``.gz`` appended when ``gzip`` is set (and not already there)."""
    out = Path(output_path)
    return out.with_name(out.name + ".gz") if gzip and not out.name.endswith(".gz") else out


def args_path(output_path: PathLike) -> Path:
    """Settings + counts record written next to an output: ``<output>.args.json``."""
    return Path(str(output_path) + ".args.json")


@dataclass(frozen=True)
class KnnSearch:
    """How the miner finds each query's neighbours: the kNN index it searches (metric, normalisation, faiss factory
    and ``nprobe``, build batch size and device), the backend (``faiss`` searches that index; ``exact``:
    :mod:`scincl.knn.exact`, any k) and the k scale (``paper``: the flags' k as given; ``corpus``: the paper's k/N
    shares for this corpus). :func:`get_knn_triples`' search flags under their names, checked when built."""

    ann_metric: str = SCINCL.ann_metric
    ann_backend: str = "faiss"
    ann_normalize_embeddings: bool = SCINCL.ann_normalize_embeddings
    ann_batch_size: int = 512
    ann_device: int = -1  # a CUDA device, or -1 for the CPU
    faiss_string_factory: str = SCINCL.faiss_string_factory
    faiss_nprobe: Optional[int] = None
    k_scale: str = "paper"

    def __post_init__(self) -> None:
        check_types(self)  # each field by its type, then its range and the metric by its choices (as the CLI)
        check_settings(dataclasses.asdict(self))
        check_k_scale(self.k_scale)
        if self.ann_backend not in ANN_BACKENDS:
            raise InputError(f"--ann_backend {self.ann_backend!r} is not supported; use one of {', '.join(ANN_BACKENDS)}")


NORMALIZE_BLOCK_ROWS = 1 << 16  # rows normalised at once (the norms' temporary is one block, not the pool)


@dataclass
class GraphCorpus:
    """The corpus a kNN miner works on: index rows, their ids, and the vectors behind them.

    With ``normalize`` the rows are L2-normalised once, in place, when the corpus is made (a block
    of rows at a time), so the pool is held once beside the index, not raw plus a normalised copy
    (issue 45); the vectors are the bytes a row-by-row normalisation gives (a row's norm does not
    depend on the other rows of its block).
    """

    index: Any
    paper_ids: List[str]  # row -> paper id of the index (= the training corpus)
    embeddings: np.ndarray  # graph embeddings of the index rows only, in index row order [n_index, d]
    normalize: bool
    metric: str

    def __post_init__(self) -> None:
        if self.normalize:
            for start in range(0, len(self.embeddings), NORMALIZE_BLOCK_ROWS):
                block = self.embeddings[start:start + NORMALIZE_BLOCK_ROWS]
                block /= np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        """Query vectors (as the index sees them) of index rows (a copy)."""
        return np.array(self.embeddings[rows], dtype=np.float32, order="C", copy=True)

    def all_vectors(self) -> np.ndarray:
        """Vectors of every index row (for random_sorted / kmeans / the exact backend): the held rows
        themselves, not a copy; the callers only read them."""
        return self.embeddings


def check_exact_device(search: KnnSearch) -> None:
    """``--ann_backend exact --ann_device N`` needs CUDA device N (issue 41: an AssertionError traceback after the
    index was built); faiss falls back to the CPU with a warning (:func:`scincl.knn.ann.index_to_device`)."""
    if search.ann_backend != "exact" or search.ann_device is None or int(search.ann_device) < 0:
        return
    import torch

    found = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if int(search.ann_device) >= found:
        raise InputError(f"--ann_device {search.ann_device}: --ann_backend exact needs that CUDA device and torch sees "
                         f"{found}; pass --ann_device -1 for the CPU")


def corpus_paper_ids(graph_paper_ids_path: PathLike, graph_embeddings_path: PathLike,
                     include_paper_ids: Optional[Union[PathLike, Sequence[str]]] = None) -> Tuple[IdTable, List[str]]:
    """``(graph ids, corpus ids)``: the graph's papers (an :class:`IdTable`: no Python object per graph paper,
    issue 45) and those the index holds (``include_paper_ids`` of them, in graph order); cheap (the id list and
    the embeddings' row count), so flags are checked against it before the index is built."""
    graph_ids = IdTable.read(graph_paper_ids_path)
    n_graph_rows = ann.embedding_row_count(graph_embeddings_path)
    if n_graph_rows != len(graph_ids):
        raise InputError(f"{len(graph_ids)} paper ids in {graph_paper_ids_path} but {n_graph_rows} embedding rows",
                         path=graph_embeddings_path)
    if include_paper_ids is None:
        return graph_ids, graph_ids.ids.to_list()
    wanted = (read_id_list(include_paper_ids) if isinstance(include_paper_ids, (str, Path))
              else canonical_ids(list(include_paper_ids), field="include_paper_ids"))
    wanted = list(dict.fromkeys(wanted))
    rows = np.unique(graph_ids.find(wanted))  # graph order
    rows = rows[rows >= 0]
    corpus_ids = graph_ids.ids.gather(rows).to_list()
    unknown = len(wanted) - len(corpus_ids)
    if unknown:
        logger.warning("include_paper_ids: %d of %d ids have no graph embedding (not in %s); ignored",
                       unknown, len(wanted), graph_paper_ids_path)
    if not corpus_ids:
        raise InputError("none of the --include_paper_ids is in the graph", path=graph_paper_ids_path)
    logger.info("corpus limited to %d of %d graph papers", len(corpus_ids), len(graph_ids))
    return graph_ids, corpus_ids


def load_graph_corpus(
    graph_paper_ids_path: PathLike,
    graph_embeddings_path: PathLike,
    ann_index_path: PathLike,
    search: KnnSearch = KnnSearch(),
    workers: Optional[int] = None,
    seed: int = 0,
    override: bool = False,
    include_paper_ids: Optional[Union[PathLike, Sequence[str]]] = None,
    paper_ids: Optional[Tuple[IdTable, List[str]]] = None,
) -> GraphCorpus:
    """Read the BigGraph export and build (or reuse) the faiss index over it, as ``search`` builds it (metric,
    normalisation, factory, ``nprobe``, batch size, device).

    ``include_paper_ids`` (a JSON id list or a list) limits the index, and so the training corpus
    (queries and candidates), to those papers, e.g. to the papers that have texts; ids without a
    graph embedding are counted and reported. An existing index is reused only when it holds exactly
    the corpus' papers and was built with the same metric, normalisation, factory and embeddings
    file; otherwise it is rebuilt with ``override``, else an :class:`InputError` names the difference.
    ``paper_ids``: :func:`corpus_paper_ids` when the caller has read them already.

    Only the rows of the corpus (the index's papers) are read from the embeddings file, block by
    block: at S2ORC scale the whole file (52.6M x 768 float32 = 161 GB) does not fit in memory.
    """
    graph_ids, corpus_ids = paper_ids or corpus_paper_ids(graph_paper_ids_path, graph_embeddings_path,
                                                          include_paper_ids)
    metric_type, force_normalize = ann.resolve_metric(search.ann_metric)
    normalize = bool(search.ann_normalize_embeddings or force_normalize)
    metric = "l2" if search.ann_metric in ("l2", "euclidean") else "inner_product"
    index_path = Path(ann_index_path)
    existing = None
    if index_path.exists():
        index, index_ids = ann.read_index(index_path, device=-1)
        made_by = (recorded_maker(index_path) or (None, None))[1]  # build_faiss' record, or the ann stage's marker
        why = _index_difference({"made_by": made_by, **ann.read_index_config(index_path)}, index_ids, corpus_ids,
                                metric, normalize, search.faiss_string_factory, graph_embeddings_path)
        if why is None:
            existing = index, index_ids
        elif not override:
            raise InputError(f"the existing index was made differently: {why}; pass --override to rebuild it "
                             "(or use another --ann_index_path)", path=index_path)
        else:
            logger.info("%s: %s; --override given, rebuilding the index", index_path, why)
    if existing is not None:
        index, index_ids = existing
        rows = graph_ids.rows_of(index_ids, "index paper ids")
        embeddings = ann.read_embedding_rows(graph_embeddings_path, rows)
        if index.d != embeddings.shape[1]:
            raise InputError(f"index dimension {index.d} differs from the embeddings' {embeddings.shape[1]}",
                             path=index_path)
        logger.info("reusing faiss index %s (%d rows; same papers, embeddings and settings)", index_path, index.ntotal)
    else:
        started = time.perf_counter()
        rows = graph_ids.rows_of(corpus_ids, "corpus ids")
        embeddings = ann.read_embedding_rows(graph_embeddings_path, rows)
        index = ann.build_index(embeddings, string_factory=search.faiss_string_factory, metric=search.ann_metric,
                                do_normalize=normalize, device=search.ann_device, batch_size=search.ann_batch_size,
                                workers=workers, seed=seed)
        ann.write_index(index, index_path, corpus_ids,
                        build_info={"string_factory": str(search.faiss_string_factory), "do_normalize": normalize,
                                    "source_embeddings": str(graph_embeddings_path), "seed": seed,
                                    "embeddings_fingerprint": fingerprint(graph_embeddings_path)})
        index = ann.index_to_cpu(index)
        index_ids = corpus_ids
        logger.info("built faiss index in %.1f s", time.perf_counter() - started)
    if search.faiss_nprobe:
        import faiss

        if faiss.try_extract_index_ivf(index) is not None:
            faiss.ParameterSpace().set_index_parameter(index, "nprobe", int(search.faiss_nprobe))
    return GraphCorpus(index=index, paper_ids=index_ids, embeddings=embeddings, normalize=normalize, metric=metric)


def bands_of(config: MinerSpec) -> List[Tuple[int, int]]:
    """The ``[k_min, k_max)`` rank intervals of a miner config's ``knn`` slots (the exact backend's bands)."""
    return [(slot.k_min, slot.k_max) for slot in config.active() if slot.strategy == KNN]


def _index_difference(stored: Dict[str, Any], index_ids: Sequence[str], corpus_ids: Sequence[str], metric: str,
                      normalize: bool, string_factory: str, embeddings_path: PathLike) -> Optional[str]:
    """How an existing index differs from the one this call needs (``None``: it is the same).

    Compared: the papers it holds, the metric, normalisation, factory string and the embeddings
    file it was built from (its fingerprint, recorded by ``build_faiss`` and by this module).
    """
    if set(index_ids) != set(corpus_ids):
        return (f"it holds {len(index_ids)} papers, not the {len(corpus_ids)} of this corpus "
                "(built for another --include_paper_ids or graph?)")
    if stored.get("metric") and stored["metric"] != metric:
        return f"metric {stored['metric']}, not {metric}"
    if "do_normalize" in stored and bool(stored["do_normalize"]) != normalize:
        return f"do_normalize {bool(stored['do_normalize'])}, not {normalize}"
    factory = ",".join(map(str, string_factory)) if isinstance(string_factory, (list, tuple)) else str(string_factory)
    if stored.get("string_factory") and stored["string_factory"] != factory:
        return f"string_factory {stored['string_factory']}, not {factory}"
    made = stored.get("embeddings_fingerprint") or ((stored.get("made_by") or {}).get("inputs") or [None])[0]
    if made is None:
        return "it records no fingerprint of the embeddings it was built from"
    now = fingerprint(embeddings_path)
    if {k: v for k, v in made.items() if k != "name"} != {k: v for k, v in now.items() if k != "name"}:
        return f"it was built from other embeddings than {embeddings_path}"
    return None


def mine_from_graph_corpus(
    graph: GraphCorpus,
    query_rows: np.ndarray,
    config: MinerSpec,
    search: KnnSearch = KnnSearch(),
    seed: int = 0,
    show_progress: bool = True,
) -> MinedTriples:
    """Run the array miner with a kNN search over ``graph`` (and k-means when a slot needs it).

    ``search.ann_backend``: ``faiss`` searches ``graph.index``; ``exact`` uses :class:`scincl.knn.exact.ExactKnn`
    over the index rows' vectors on ``search.ann_device`` (-1 = CPU), any k.
    """
    n = len(graph.paper_ids)
    vectors = graph.all_vectors() if config.uses(RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED, KMEANS) else None
    clusters: Optional[Clusters] = None
    if config.uses(KMEANS):
        n_clusters = config.k_means_clusters or max(1, int(round(np.sqrt(n))))
        clusters = cluster_corpus(vectors, n_clusters, metric=graph.metric, seed=seed)
        available = clusters.cluster_order.shape[1]
        for slot in config.active():
            if slot.strategy == KMEANS and slot.k_max > available:
                raise InputError(f"--{slot.name}_k_max={slot.k_max} is beyond the {available} non-empty k-means "
                                 f"clusters (--k_means_clusters {n_clusters})")

    def faiss_search(rows: np.ndarray, k: int) -> np.ndarray:
        return ann.knn_search(graph.index, graph.vectors_of(rows), k, batch_size=max(search.ann_batch_size, len(rows)),
                              show_progress=False)[1]

    search_fn = faiss_search
    if search.ann_backend == "exact":
        from scincl.knn.exact import ExactKnn

        search_fn = ExactKnn(graph.all_vectors() if vectors is None else vectors, metric=graph.metric,
                             bands=bands_of(config), device=search.ann_device).search

    def range_search(rows: np.ndarray, threshold: float):
        lims, scores, found = graph.index.range_search(graph.vectors_of(rows), float(threshold))
        return lims, scores, found

    corpus = Corpus(size=n, metric=graph.metric, vectors=vectors, clusters=clusters)
    return mine_knn_triples(query_rows, corpus, config, search_fn, seed=seed,
                            range_search_fn=range_search if config.uses(RANGE) else None,
                            show_progress=show_progress)


def write_mined_triples(output_path: PathLike, mined: MinedTriples, paper_ids: Sequence[str]) -> int:
    """Write mined rows as ``query_paper_id,positive_id,negative_id`` (atomic, gzip by suffix)."""
    ids = np.asarray(paper_ids, dtype=object)
    return write_triples_csv(output_path, zip(ids[mined.query_rows], ids[mined.positive_rows],
                                              ids[mined.negative_rows]))


@writes("output_path", "ann_index_path")
def get_knn_triples(
    output_path: PathLike,
    graph_paper_ids_path: PathLike,
    graph_embeddings_path: PathLike,
    query_papers: QueryPapers = None,
    triples_per_query: int = SCINCL.triples_per_query,
    easy_positives_count: int = SCINCL.easy_positives_count,
    easy_positives_strategy: str = SCINCL.easy_positives_strategy,
    easy_positives_k_min: Optional[int] = None,
    easy_positives_k_max: int = SCINCL.easy_positives_k_max,
    easy_negatives_count: int = SCINCL.easy_negatives_count,
    easy_negatives_strategy: str = SCINCL.easy_negatives_strategy,
    hard_negatives_count: int = SCINCL.hard_negatives_count,
    hard_negatives_strategy: str = SCINCL.hard_negatives_strategy,
    hard_negatives_k_min: Optional[int] = None,
    hard_negatives_k_max: int = SCINCL.hard_negatives_k_max,
    ann_metric: str = KnnSearch.ann_metric,
    ann_backend: str = KnnSearch.ann_backend,
    ann_index_path: Optional[PathLike] = None,
    ann_normalize_embeddings: bool = KnnSearch.ann_normalize_embeddings,
    ann_batch_size: int = KnnSearch.ann_batch_size,
    ann_device: int = KnnSearch.ann_device,
    faiss_string_factory: str = KnnSearch.faiss_string_factory,
    faiss_nprobe: Optional[int] = KnnSearch.faiss_nprobe,
    include_paper_ids: Optional[Union[PathLike, Sequence[str]]] = None,
    seed: int = 0,
    workers: Optional[int] = None,
    gzip: bool = False,
    override: bool = False,
    show_progress: bool = True,
    k_scale: str = KnnSearch.k_scale,
    **strategy_options: Any,
) -> Path:
    """SciNCL triples (paper §3.2): positives and hard negatives from each query's graph-embedding kNN.

    ``../shared/papers/000_a9b5f58ad3ba2ccb.txt`` §3.3 (I): "we run KNN(f_c(d^Q), C) and take c' samples
    from a range of the (k - c', k] nearest neighbors around the query paper"; positives
    ``(k+ - c+; k+]``, hard negatives ``(k-_hard - c-_hard; k-_hard]``.

    Defaults are the paper's best setting: 5 positives n_21..n_25 (k+ = 25, c+ = 5), 3 easy
    negatives random outside the kNN set, 2 hard negatives n_3999..n_4000 (k- = 4000, c- = 2); a band's
    ``*_k_min`` not given is its ``*_k_max`` minus its count.
    ``strategy_options`` takes the remaining slot flags (``medium_positives_*``,
    ``hard_positives_*``, ``medium_negatives_*``, ``*_range``, ``easy_*_k_min/k_max`` of random
    strategies) and ``random_sorted_sample_n``, ``min_range_results_count``,
    ``range_fallback_to_random``, ``k_means_clusters``. ``include_paper_ids`` limits the training
    corpus (index, queries, candidates) to those papers, e.g. the ones with texts. Returns the
    written path; an existing output is reused only when its ``.args.json`` records the same
    settings and input fingerprints (:mod:`scincl.provenance`), an existing index only when it
    matches (see :func:`load_graph_corpus`); a mismatch is an error naming it unless ``override``
    (which rebuilds). ``k_scale="corpus"`` replaces the four k flags by the paper's k/N
    ratios for this corpus (:func:`scincl.triples.k_scale.corpus_k`). ``ann_backend``: ``faiss``
    (the index; any factory) or ``exact`` (:mod:`scincl.knn.exact`: torch matrix products over the
    index rows' vectors, any k, on ``ann_device`` = a CUDA device or -1 for the CPU; ties ranked by
    ascending row).
    """
    search = KnnSearch(ann_metric=ann_metric, ann_backend=ann_backend, ann_normalize_embeddings=ann_normalize_embeddings,
                       ann_batch_size=ann_batch_size, ann_device=ann_device, faiss_string_factory=faiss_string_factory,
                       faiss_nprobe=faiss_nprobe, k_scale=k_scale)  # checked before the index is loaded
    config = make_config(  # validated before the index is loaded; k_min derived
        triples_per_query=triples_per_query, easy_positives_count=easy_positives_count,
        easy_positives_strategy=easy_positives_strategy, easy_positives_k_min=easy_positives_k_min,
        easy_positives_k_max=easy_positives_k_max, easy_negatives_count=easy_negatives_count,
        easy_negatives_strategy=easy_negatives_strategy, hard_negatives_count=hard_negatives_count,
        hard_negatives_strategy=hard_negatives_strategy, hard_negatives_k_min=hard_negatives_k_min,
        hard_negatives_k_max=hard_negatives_k_max, **strategy_options)
    return write_knn_triples(
        output_path, graph_paper_ids_path, graph_embeddings_path, config, search, query_papers=query_papers,
        strategy_options=strategy_options, ann_index_path=ann_index_path, include_paper_ids=include_paper_ids,
        seed=seed, workers=workers, gzip=gzip, override=override, show_progress=show_progress)


# the MinerSpec fields get_knn_triples names in its signature (the --help rows), in signature order
NAMED_FLAGS = tuple(name for name in inspect.signature(get_knn_triples).parameters if name in miner_option_names())


def write_knn_triples(
    output_path: PathLike,
    graph_paper_ids_path: PathLike,
    graph_embeddings_path: PathLike,
    config: MinerSpec,
    search: KnnSearch = KnnSearch(),
    query_papers: QueryPapers = None,
    strategy_options: Optional[Mapping[str, Any]] = None,
    ann_index_path: Optional[PathLike] = None,
    include_paper_ids: Optional[Union[PathLike, Sequence[str]]] = None,
    seed: int = 0,
    workers: Optional[int] = None,
    gzip: bool = False,
    override: bool = False,
    show_progress: bool = True,
) -> Path:
    """:func:`get_knn_triples` with the miner's settings already built: ``config`` (:func:`~scincl.triples.miner.make_config`,
    validated by whoever built it: the planner, or :func:`get_knn_triples` from its flags) and ``search`` (the index
    and the search, :class:`KnnSearch`, checked when built). ``strategy_options``: the miner options the caller was
    given beyond the named slot flags, recorded as given in the output's ``made_by`` (their values are already in
    ``config``). Every other argument is :func:`get_knn_triples`'s."""
    s = search
    strategy_options = dict(strategy_options or {})
    out = output_with_gzip(output_path, gzip)
    bands = {name: getattr(config, name) for name in BAND_FLAGS}
    id_settings, id_inputs = split_path_values(query_papers=query_papers, include_paper_ids=include_paper_ids)
    record = OutputRecord(out, command="get_knn_triples", record_file=args_path(out), key="made_by", settings={
        **{name: getattr(config, name) for name in NAMED_FLAGS if name not in BAND_FLAGS}, **bands, "ann_metric": s.ann_metric,
        "ann_backend": s.ann_backend, "ann_normalize_embeddings": bool(s.ann_normalize_embeddings),
        "faiss_string_factory": str(s.faiss_string_factory), "faiss_nprobe": s.faiss_nprobe, "seed": seed,
        "k_scale": s.k_scale, "strategy_options": strategy_options,
        **id_settings}, inputs=[graph_paper_ids_path, graph_embeddings_path, *id_inputs])
    if record.reusable(override):
        return out

    index_path = Path(ann_index_path) if ann_index_path else Path(str(out) + ".faiss")
    started = time.perf_counter()
    # every flag checked against the corpus before the index is built (issue 41: a refused flag left a whole index)
    paper_ids = corpus_paper_ids(graph_paper_ids_path, graph_embeddings_path, include_paper_ids)
    if s.k_scale == "corpus":
        bands = corpus_k(len(paper_ids[1]), config.easy_positives_count, config.hard_negatives_count)
        logger.info("--k_scale corpus: %d papers -> %s", len(paper_ids[1]), bands)
        config = attrs.evolve(config, **bands)
    check_k_against_corpus(config, len(paper_ids[1]))
    query_rows = select_query_rows(query_papers, paper_ids[1], seed=seed)
    check_exact_device(s)
    with ann.faiss_threads(workers):  # restores the OpenMP thread count that torch shares
        graph = load_graph_corpus(graph_paper_ids_path, graph_embeddings_path, index_path, s, workers=workers,
                                  seed=seed, include_paper_ids=include_paper_ids, override=override,
                                  paper_ids=paper_ids)
        mined = mine_from_graph_corpus(graph, query_rows, config, s, seed=seed, show_progress=show_progress)
    written = write_mined_triples(out, mined, graph.paper_ids)
    logger.info("wrote %d triples for %d queries to %s", written, len(query_rows), out)
    settings: Dict[str, Any] = {
        "command": "get_knn_triples", "output_path": str(out),
        "graph_paper_ids_path": str(graph_paper_ids_path), "graph_embeddings_path": str(graph_embeddings_path),
        "ann_index_path": str(index_path), "ann_backend": s.ann_backend, "query_papers": query_papers if not isinstance(query_papers, list)
        else f"{len(query_papers)} ids", "ann_metric": s.ann_metric, "ann_normalize_embeddings": s.ann_normalize_embeddings,
        "faiss_string_factory": str(s.faiss_string_factory), "faiss_nprobe": s.faiss_nprobe, "seed": seed,
        "include_paper_ids": include_paper_ids if not isinstance(include_paper_ids, (list, tuple))
        else f"{len(include_paper_ids)} ids", "corpus_papers": len(graph.paper_ids),
        "triples_per_query": config.triples_per_query, "k_scale": s.k_scale,
        "slots": [vars(s) for s in config.active()],
        "options": {k: getattr(config, k) for k in ("random_sorted_sample_n", "min_range_results_count",
                                                      "range_fallback_to_random", "k_means_clusters")},
        "stats": mined.stats,
    }
    logger.info("get_knn_triples took %.1f s", time.perf_counter() - started)
    write_json(args_path(out), settings)
    record.write()  # last, into the same file: the triplets are complete
    return out
