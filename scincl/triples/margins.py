"""Collisions vs the margin between k+ and k-hard (paper Fig. 5), from ONE kNN search.

For every ``(k+, k-)`` of a grid the SciNCL triples are mined with positives
``n_{k+ - c+ + 1} .. n_{k+}`` and hard negatives ``n_{k- - c- + 1} .. n_{k-}`` (other slots as
configured) and their collisions counted (:mod:`scincl.triples.collisions`). The neighbours are
searched once, up to the largest k of the grid, and sliced for each setting.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from scincl.knn import ann
from scincl.errors import InputError
from scincl.io import PathLike, write_json
from scincl.settings.spec import band_flags
from scincl.triples.collisions import collision_counts
from scincl.triples.config import (DEFAULT_ANN_NORMALIZE_EMBEDDINGS, HARD_NEGATIVES_BAND, HARD_NEGATIVES_K,
                                   POSITIVES_BAND, POSITIVES_K)
from scincl.triples.knn_miner import KnnSearch, load_graph_corpus
from scincl.triples.miner import Corpus, make_config, mine_knn_triples
from scincl.triples.queries import QueryPapers, select_query_rows
from scincl.triples.strategies import drop_self
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

# paper Fig. 5 explores k- from just above k+ up to the paper's k-hard, at the paper's k+
DEFAULT_POSITIVES_K = (POSITIVES_K,)
DEFAULT_HARD_NEGATIVES_K = (30, 50, 100, 250, 500, 1000, 2000, HARD_NEGATIVES_K)


def collision_sweep(
    query_rows: np.ndarray,
    neighbours: np.ndarray,
    corpus_size: int,
    positives_k: Sequence[int],
    hard_negatives_k: Sequence[int],
    seed: int = 0,
    **config_options: Any,
) -> List[Dict[str, int]]:
    """Collision counts for each ``(k+, k-)`` from a precomputed self-free kNN matrix
    (``neighbours[i]`` = neighbours of ``query_rows[i]``, at least ``max(k)`` columns)."""
    position = np.full(corpus_size, -1, dtype=np.int64)
    position[query_rows] = np.arange(len(query_rows))

    def search(rows: np.ndarray, k: int) -> np.ndarray:
        # the query first, then its stored neighbours: drop_self removes column 0 again
        return np.hstack([rows[:, None], neighbours[position[rows], :k - 1]])

    c_pos, c_neg = band_counts(config_options)
    config_options = {k: v for k, v in config_options.items()
                      if k not in ("easy_positives_count", "hard_negatives_count")}
    results = []
    for kp in positives_k:
        for kn in hard_negatives_k:
            if kn - c_neg < kp:  # bands would overlap: not a margin
                continue
            config = make_config(easy_positives_count=c_pos, hard_negatives_count=c_neg, **config_options,
                                 **band_flags(easy_positives=(kp - c_pos, kp), hard_negatives=(kn - c_neg, kn)))
            mined = mine_knn_triples(query_rows, Corpus(size=corpus_size), config, search, seed=seed,
                                     show_progress=False)
            counts = collision_counts(mined.query_rows, mined.positive_rows, mined.negative_rows)
            results.append({"k_positives": kp, "k_hard_negatives": kn, "margin": kn - kp, **counts})
            logger.info("k+=%d k-=%d: %d collisions, %d symmetric", kp, kn, counts["collisions"],
                        counts["symmetric_collisions"])
    return results


def band_counts(miner_options: Mapping[str, Any]) -> Tuple[int, int]:
    """``(c+, c-)``: the positives' and the hard negatives' counts of the miner flags ``miner_options``, the miner's
    defaults (:class:`~scincl.settings.spec.MinerSpec`: ``POSITIVES_BAND``, ``HARD_NEGATIVES_BAND``) where unset."""
    c_pos, c_neg = miner_options.get("easy_positives_count"), miner_options.get("hard_negatives_count")
    return (POSITIVES_BAND if c_pos is None else int(c_pos), HARD_NEGATIVES_BAND if c_neg is None else int(c_neg))


def format_sweep(rows: List[Dict[str, int]]) -> str:
    """Markdown table of a collision sweep."""
    cols = ["k_positives", "k_hard_negatives", "margin", "triples", "collisions", "symmetric_collisions",
            "symmetric_collision_triples"]
    lines = ["| " + " | ".join(cols) + " | symmetric % of triples |", "|---" * (len(cols) + 1) + "|"]
    for r in rows:
        pct = 100.0 * r["symmetric_collision_triples"] / max(r["triples"], 1)
        lines.append("| " + " | ".join(f"{r[c]:,}" for c in cols) + f" | {pct:.2f} |")
    return "\n".join(lines)


def row_collisions(row: Dict[str, int]) -> int:
    """Every collision a sweep row shows: same-query (``collisions``) plus ``symmetric_collisions``."""
    return int(row.get("collisions", 0)) + int(row.get("symmetric_collisions", 0))


def recommended_rows(rows: List[Dict[str, int]]) -> Dict[int, Dict[str, int]]:
    """Per k+, the row of the smallest margin with no collision of either kind (:func:`row_collisions`),
    else the row with the fewest (then the smallest margin)."""
    out = {}
    for kp in sorted({r["k_positives"] for r in rows}):
        mine = sorted((r for r in rows if r["k_positives"] == kp), key=lambda r: r["margin"])
        out[kp] = min(mine, key=lambda r: (row_collisions(r), r["margin"]))
    return out


def recommend_margin(rows: List[Dict[str, int]], positives_count: int = POSITIVES_BAND,
                     hard_negatives_count: int = HARD_NEGATIVES_BAND) -> str:
    """The smallest margin without collisions (paper Fig. 5) per k+, as run_specter flags to paste.

    A collision is any the table shows: same-query and symmetric (:func:`row_collisions`). Without a
    collision-free setting in the sweep, says so and names the setting with the fewest.
    """
    lines = []
    for kp, best in recommended_rows(rows).items():
        kn = best["k_hard_negatives"]
        bands = band_flags(easy_positives=(kp - positives_count, kp), hard_negatives=(kn - hard_negatives_count, kn))
        flags = " ".join(f"--{name} {k}" for name, k in bands.items())
        counts = (f"{best.get('collisions', 0):,} same-query + {best.get('symmetric_collisions', 0):,} symmetric "
                  "collisions")
        if row_collisions(best) == 0:
            lines.append(f"Recommended (smallest margin without collisions, k+ = {kp}: margin {best['margin']}, "
                         f"{counts}): {flags}")
        else:
            lines.append(f"No margin in the sweep is collision-free for k+ = {kp}; fewest collisions "
                         f"({counts}) at margin {best['margin']}: {flags} (try larger --hard_negatives_k)")
    return "\n".join(lines)


@writes("output_path")
def sweep_collision_margins(
    graph_paper_ids_path: PathLike,
    graph_embeddings_path: PathLike,
    ann_index_path: PathLike,
    query_papers: QueryPapers = None,
    positives_k: Sequence[int] = DEFAULT_POSITIVES_K,
    hard_negatives_k: Sequence[int] = DEFAULT_HARD_NEGATIVES_K,
    output_path: Optional[PathLike] = None,
    ann_metric: str = "inner_product",
    ann_normalize_embeddings: bool = DEFAULT_ANN_NORMALIZE_EMBEDDINGS,  # as get_knn_triples
    seed: int = 0,
    workers: Optional[int] = None,
    include_paper_ids: Optional[PathLike] = None,
    **config_options: Any,
) -> List[Dict[str, int]]:
    """File-level sweep: load the graph corpus, search once, count collisions per margin.

    Grid values beyond the corpus are dropped (with a log line). Writes ``output_path`` (json)
    when given and returns the rows.
    """
    positives_k = [int(k) for k in (positives_k if isinstance(positives_k, (list, tuple)) else [positives_k])]
    hard_negatives_k = [int(k) for k in (hard_negatives_k if isinstance(hard_negatives_k, (list, tuple))
                                         else [hard_negatives_k])]
    with ann.faiss_threads(workers):
        search = KnnSearch(ann_metric=ann_metric, ann_normalize_embeddings=ann_normalize_embeddings)
        graph = load_graph_corpus(graph_paper_ids_path, graph_embeddings_path, ann_index_path, search, workers=workers,
                                  seed=seed, include_paper_ids=include_paper_ids)
    n = len(graph.paper_ids)
    kept = [k for k in hard_negatives_k if k <= n - 1]
    if len(kept) < len(hard_negatives_k):
        logger.info("dropping k- beyond the corpus of %d papers: %s", n, sorted(set(hard_negatives_k) - set(kept)))
    if not kept:
        raise InputError(f"no --hard_negatives_k value fits the corpus of {n} papers")
    k_max = max(kept + positives_k)
    query_rows = select_query_rows(query_papers, graph.paper_ids, seed=seed)
    with ann.faiss_threads(workers):
        raw = ann.knn_search(graph.index, graph.vectors_of(query_rows), k_max + 1)[1]
    neighbours = drop_self(query_rows, raw)
    rows = collision_sweep(query_rows, neighbours, n, positives_k, kept, seed=seed, **config_options)
    if output_path is not None:
        write_json(Path(output_path), rows)
    return rows


@functools.wraps(sweep_collision_margins)
def collision_margin_report(*args: Any, **kwargs: Any) -> str:
    """:func:`sweep_collision_margins`, then its table (:func:`format_sweep`) and the recommended margin as
    run_specter flags (:func:`recommend_margin`): what ``cli_triples.py sweep_collision_margins`` prints."""
    rows = sweep_collision_margins(*args, **kwargs)
    return format_sweep(rows) + "\n" + recommend_margin(rows, *band_counts(kwargs))
