"""Commands of `cli_triples.py`: triplet mining (SciNCL kNN, SPECTER-like, co-citation, pairs, oracle SciDocs), the
triplets' metadata and dataset, and MP-BERT4CR's citation-context sampling (:mod:`scincl.citrec.samples`)."""
from __future__ import annotations

import functools

from scincl.citrec.samples import sample_citation_contexts
from scincl.cli import Command, flag_rows
from scincl.model.triplet_dataset import export_dataset
from scincl.settings.run import MINER_FLAGS
from scincl.settings.spec import MinerSpec
from scincl.triples.margins import collision_margin_report
from scincl.triples.cocitation import get_cocitation_triples
from scincl.triples.collisions import count_collisions, format_collision_report
from scincl.triples.continuous_cocitation import get_continuous_cocitation_triples
from scincl.triples.knn_miner import get_knn_triples
from scincl.triples.metadata import extract_ids_from_triples, get_metadata
from scincl.triples.pairs import get_pairs
from scincl.triples.scidocs_oracle import get_scidocs_triples
from scincl.triples.specter_like import get_specter_like_triples

MINER = "the triplet miner's other flags (medium_*, *_range, k_means_clusters, ...)"
miner_flags = functools.partial(flag_rows, MinerSpec)  # the miner's flags: MinerSpec's fields

COMMANDS = {
    # the miner's flags are checked when get_knn_triples builds its MinerSpec, before the index is loaded
    "get_knn_triples": Command(get_knn_triples, flags=miner_flags, passes=MINER, library_checks=MINER_FLAGS),
    # continuous co-citation takes every flag get_knn_triples takes (its own and the miner's)
    "get_continuous_cocitation_triples": Command(
        get_continuous_cocitation_triples, flags=lambda: flag_rows(get_knn_triples) + miner_flags(),
        passes="every flag of get_knn_triples", library_checks=MINER_FLAGS),
    "count_collisions": Command(count_collisions, show=format_collision_report),
    "sweep_collision_margins": Command(collision_margin_report, flags=miner_flags, passes=MINER),
    **{command.__name__: command for command in (
        get_specter_like_triples, get_cocitation_triples, get_pairs, get_scidocs_triples, get_metadata,
        extract_ids_from_triples, export_dataset, sample_citation_contexts)}}
