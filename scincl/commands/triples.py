"""Commands of `cli_triples.py`: triplet mining (SciNCL kNN, SPECTER-like, co-citation, pairs, oracle
SciDocs) and the metadata of the triplets' papers.

The mining commands are the `scincl/triples/` functions themselves (same name, flags, defaults and
docstring); the two collision commands also print their table.
"""
from __future__ import annotations

import functools
from typing import Optional

from scincl.cli import accepts_flags, command_flags
from scincl.cli.help import command_flags_info, miner_flags
from scincl.errors import InputError
from scincl.triples import margins
from scincl.triples.cocitation import get_cocitation_triples
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND, miner_option_names
from scincl.triples.continuous_cocitation import get_continuous_cocitation_triples
from scincl.triples.knn_miner import get_knn_triples
from scincl.triples.metadata import extract_ids_from_triples, get_metadata
from scincl.triples.pairs import get_pairs
from scincl.triples.scidocs_oracle import get_scidocs_triples
from scincl.triples.specter_like import get_specter_like_triples


def count_collisions(*triples_paths: str, output_path: Optional[str] = None) -> None:
    """Count pairs that are both positive and negative (same query, and symmetric {a,b}) in triples files.

    One file: collisions within it. Several files (e.g. one per strategy): each file, then all together
    (a positive pair of one file that is a negative pair of another counts). Prints a markdown table;
    --output_path writes the report as json.
    """
    from scincl.io import write_json
    from scincl.triples.collisions import count_collisions_in_files, format_collision_report

    if not triples_paths:
        raise InputError("give at least one triples file")
    report = count_collisions_in_files(triples_paths)
    print(format_collision_report(report))
    if output_path:
        write_json(output_path, report)


@functools.wraps(margins.sweep_collision_margins)
def sweep_collision_margins(*args, **kwargs) -> None:
    """:func:`scincl.triples.margins.sweep_collision_margins` (flags, defaults, docstring), printing its
    table, then the recommended setting (the smallest margin without collisions) as flags to paste."""
    rows = margins.sweep_collision_margins(*args, **kwargs)
    print(margins.format_sweep(rows))
    print(margins.recommend_margin(rows, int(kwargs.get("easy_positives_count", POSITIVES_BAND)),
                                   int(kwargs.get("hard_negatives_count", HARD_NEGATIVES_BAND))))


accepts_flags(miner_flags, names=miner_option_names)(get_knn_triples)
accepts_flags(miner_flags, names=miner_option_names)(sweep_collision_margins)
# continuous co-citation takes every flag get_knn_triples takes (its own and the miner's)
accepts_flags(lambda: command_flags_info(get_knn_triples), names=lambda: command_flags(get_knn_triples))(
    get_continuous_cocitation_triples)

COMMANDS = {command.__name__: command for command in (
    get_knn_triples, get_continuous_cocitation_triples, count_collisions, sweep_collision_margins,
    get_specter_like_triples, get_cocitation_triples,
    get_pairs, get_scidocs_triples, get_metadata, extract_ids_from_triples)}
