"""Continuous co-citation triples (the co-citation thesis, ``../shared/papers/004_c0e997bd26e55c12.txt``).

The thesis (§5.2, §6.3) trains BigGraph embeddings on the co-citation graph (768-d, dot comparator:
``biggraph_configs/cocitations_768d_dot.py``) and samples SciNCL-style triples from each query's
nearest neighbours in them — "a *continuous* co-citation signal". §5.2.3: "an ``IndexFlatL2`` index is
created, which implements an exhaustive search. From this index, the nearest k = 5000 neighbors are
identified"; §6.3 / Table 6.7: of k+ ∈ {25, 200, 500} and k− ∈ {1000, 3000, 5000}, "CoCite 25-5000"
is best. :func:`get_continuous_cocitation_triples` is :func:`scincl.triples.knn_miner.get_knn_triples`
with those defaults: an exact (``Flat``) L2 search on the unnormalised embeddings, positives
``n_21 … n_25`` (k+ = 25), hard negatives ``n_4999, n_5000`` (k− = 5000).

The other reading — SciNCL's own search (inner product on L2-normalised vectors = cosine, k− = 4000) —
is ``get_knn_triples`` on the same co-citation embeddings; the real-corpus ``cocite`` arm
(:mod:`scincl.pipeline.real_corpus`) uses it so that the two kNN arms differ only in the graph.

Remaining deviations (the thesis does not state them): the band widths and counts are SciNCL's
(c+ = 5 positives, c− = 2 hard negatives, 3 easy negatives random outside the kNN set, 5 triples per
query; the thesis reports about three triplets per query from its data, §7.3).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from scincl.errors import InputError
from scincl.io import PathLike
from scincl.triples.config import (
    CONTINUOUS_COCITATION_ANN_METRIC, CONTINUOUS_COCITATION_ANN_NORMALIZE, CONTINUOUS_COCITATION_HARD_NEGATIVES_K,
    CONTINUOUS_COCITATION_POSITIVES_K, HARD_NEGATIVES_BAND, POSITIVES_BAND,
)
from scincl.triples.knn_miner import get_knn_triples
from scincl.triples.queries import QueryPapers
from scincl.output_lock import writes


@writes("output_path", "ann_index_path")
def get_continuous_cocitation_triples(
    output_path: PathLike,
    graph_paper_ids_path: PathLike,
    graph_embeddings_path: PathLike,
    query_papers: QueryPapers = None,
    easy_positives_k_min: int = CONTINUOUS_COCITATION_POSITIVES_K - POSITIVES_BAND,
    easy_positives_k_max: int = CONTINUOUS_COCITATION_POSITIVES_K,
    hard_negatives_k_min: int = CONTINUOUS_COCITATION_HARD_NEGATIVES_K - HARD_NEGATIVES_BAND,
    hard_negatives_k_max: int = CONTINUOUS_COCITATION_HARD_NEGATIVES_K,
    ann_metric: str = CONTINUOUS_COCITATION_ANN_METRIC,
    ann_normalize_embeddings: bool = CONTINUOUS_COCITATION_ANN_NORMALIZE,
    faiss_string_factory: str = "Flat",
    k_scale: str = "paper",
    **knn_flags: Any,
) -> Path:
    """Continuous co-citation triples with the co-citation thesis' search (004 §5.2.3, §6.3).

    SciNCL's kNN triples on co-citation-graph embeddings, with the thesis' defaults: exhaustive L2
    search (``IndexFlatL2``: ``--ann_metric l2 --faiss_string_factory Flat``) on the unnormalised
    embeddings (``--noann_normalize_embeddings``), positives n_21..n_25 (k+ = 25) and hard negatives
    n_4999..n_5000 (k- = 5000). Every other flag is :func:`~scincl.triples.knn_miner.get_knn_triples`'s
    (counts, strategies, ``--ann_backend exact``, ``--include_paper_ids``, ``--seed``...). k must stay
    below the number of papers in the index: pass the four k flags for a smaller corpus.
    ``--k_scale corpus`` is refused: it scales SciNCL's k/N shares (paper §4.3), not the thesis'.
    """
    if k_scale != "paper":
        raise InputError("--k_scale corpus scales SciNCL's k/N shares, not the co-citation thesis' "
                         "(k- = 5000 of 31.5M papers); pass --easy_positives_k_* and --hard_negatives_k_* "
                         "for your corpus instead")
    return get_knn_triples(
        output_path, graph_paper_ids_path, graph_embeddings_path, query_papers=query_papers,
        easy_positives_k_min=easy_positives_k_min, easy_positives_k_max=easy_positives_k_max,
        hard_negatives_k_min=hard_negatives_k_min, hard_negatives_k_max=hard_negatives_k_max,
        ann_metric=ann_metric, ann_normalize_embeddings=ann_normalize_embeddings,
        faiss_string_factory=faiss_string_factory, **knn_flags)
