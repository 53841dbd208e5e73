"""Triplets from one ``triples_source``: the names of the sources and the sampler that writes each.

An arm is a setting, not a code path: both planners (``run_specter``'s, ``pipeline/scincl_plan.py``, and the
real-corpus experiments', ``pipeline/real_corpus.py``) ask :func:`sampler` for the call of their source and pass it
their settings: the kNN miner a built :class:`~scincl.settings.spec.MinerSpec` and
:class:`~scincl.triples.knn_miner.KnnSearch`, the SPECTER-like sampler its counts.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from scincl.errors import InputError
from scincl.settings.choices import TRIPLES_SOURCES

# --triples_source values (scincl/settings/choices.py): KNN, SciNCL: kNN of the query in the graph embeddings
# (paper §3.2); SPECTER_LIKE, SPECTER: cited papers, citations of citations (Cohan et al. 2020)
KNN, SPECTER_LIKE = TRIPLES_SOURCES
METHOD_NAMES = {KNN: "SciNCL", SPECTER_LIKE: "SPECTER-like"}  # a table's name for what a source's triplets train


def sampler(triples_source: str) -> Callable[..., Path]:
    """The library call that writes the triplets of ``triples_source``: ``knn``,
    :func:`scincl.triples.knn_miner.write_knn_triples` (SciNCL, paper §3.2); ``specter_like``,
    :func:`scincl.triples.specter_like.get_specter_like_triples` (SPECTER's citation sampling). Imported when asked:
    the kNN miner loads faiss."""
    if triples_source == KNN:
        from scincl.triples.knn_miner import write_knn_triples

        return write_knn_triples
    if triples_source == SPECTER_LIKE:
        from scincl.triples.specter_like import get_specter_like_triples

        return get_specter_like_triples
    raise InputError(f"--triples_source {triples_source!r}: choose one of {', '.join(TRIPLES_SOURCES)}")
