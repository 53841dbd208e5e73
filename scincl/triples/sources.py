"""Triplets from one ``triples_source``: the names of the sources, and the mining call of the real-corpus arms.

An arm is a setting, not a code path: the experiments' arms (``pipeline/real_corpus.ARM_SETTINGS``) call
:func:`mine_triples`, which hands the arm's flags to the sampler of that source. ``run_specter``'s plan
(``pipeline/scincl_plan.py``: ``triples_miner``) calls the source's sampler itself, the kNN miner with the
config it built.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from scincl.errors import InputError
from scincl.io import PathLike
from scincl.settings.choices import TRIPLES_SOURCES
from scincl.triples.queries import QueryPapers

# --triples_source values (scincl/settings/choices.py): KNN, SciNCL: kNN of the query in the graph embeddings
# (paper §3.2); SPECTER_LIKE, SPECTER: cited papers, citations of citations (Cohan et al. 2020)
KNN, SPECTER_LIKE = TRIPLES_SOURCES
# the flags both samplers take; the SPECTER-like sampler ignores the kNN miner's other flags
SPECTER_LIKE_FLAGS = ("triples_per_query", "easy_positives_count", "easy_negatives_count", "hard_negatives_count")


def mine_triples(triples_source: str, output_path: PathLike, query_papers: QueryPapers, *,
                 citations_path: Optional[PathLike] = None, graph_paper_ids_path: Optional[PathLike] = None,
                 graph_embeddings_path: Optional[PathLike] = None, triples_count: Optional[int] = None,
                 bidirectional: bool = False, seed: int = 0, gzip: bool = False, override: bool = False,
                 **miner_flags: Any) -> Path:
    """Write the triplets of ``triples_source`` for ``query_papers``; returns the written path.

    ``knn`` needs the graph's ids and embeddings and takes every flag of
    :func:`scincl.triples.knn_miner.get_knn_triples` (bands, strategies, ANN); ``specter_like`` needs
    ``citations_path`` (``citing<TAB>cited``), takes the count flags of ``SPECTER_LIKE_FLAGS``,
    ``bidirectional`` and ``triples_count`` (exactly that many triplets; queries lacking candidates
    are skipped) and ignores the kNN-only flags.
    """
    if triples_source == SPECTER_LIKE:
        from scincl.triples.specter_like import get_specter_like_triples

        if citations_path is None:
            raise InputError("--triples_source specter_like needs the citations file")
        counts = {k: v for k, v in miner_flags.items() if k in SPECTER_LIKE_FLAGS}
        return get_specter_like_triples(citations_path, output_path, query_papers=query_papers,
                                        triples_count=triples_count, bidirectional=bidirectional, seed=seed,
                                        gzip=gzip, override=override, **counts)
    if triples_source == KNN:
        from scincl.triples.knn_miner import get_knn_triples

        if graph_paper_ids_path is None or graph_embeddings_path is None:
            raise InputError("--triples_source knn needs the graph's paper ids and embeddings")
        return get_knn_triples(output_path, graph_paper_ids_path, graph_embeddings_path, query_papers=query_papers,
                               seed=seed, gzip=gzip, override=override, **miner_flags)
    raise InputError(f"--triples_source {triples_source!r}: choose one of {', '.join(TRIPLES_SOURCES)}")
