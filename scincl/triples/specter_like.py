"""SPECTER-like triples from the citation graph (Cohan et al. 2020; SciNCL's SPECTER baseline).

SciNCL (``../shared/papers/000_a9b5f58ad3ba2ccb.txt`` §2) describes the rule: "positive samples are
papers cited in the query. Easy negatives are random papers not cited by the query. Hard negatives
are citations of citations – papers referenced in positive citations of the query, but are not cited
directly by it"; its appendix reproduction: "five positives (cited by the query), two hard negatives
(citation of citation), and three random nodes".

For a query paper q: positives = papers q cites; hard negatives = papers cited by q's citations
("citations of citations") that q does not cite; easy negatives = random papers q does not cite.
``bidirectional`` (SciNCL Appendix A.7.10) also treats papers citing q as positives, and takes
hard negatives from the 2-hop neighbourhood of the undirected graph.

Queries are handled in blocks of :data:`BLOCK_SIZE` with per-block random streams
``default_rng([seed, block])``; every step inside a block is vectorised over CSR arrays.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.io import PathLike, write_json, write_triples_csv
from scincl.triples.citation_graph import (CitationGraph, Csr, build_citation_graph, padded, remove_pairs,
                                           sample_segments, unique_pairs)
from scincl.provenance import OutputRecord, split_path_values
from scincl.triples.knn_miner import args_path, output_with_gzip
from scincl.triples.queries import QueryPapers, parse_query_papers
from scincl.triples.strategies import NotEnoughCandidates, random_rows
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

BLOCK_SIZE = 1024


def candidate_query_codes(graph: CitationGraph, query_papers: QueryPapers, seed: int) -> Tuple[np.ndarray, Optional[int]]:
    """Query candidates in the order they are tried, and how many queries are wanted (None = all).

    A JSON id file / list keeps its order and all of them are wanted; a count or ratio tries all
    papers in a seeded random order until that many queries had enough candidates.
    """
    n = graph.size
    spec = parse_query_papers(query_papers)
    if spec.kind == "all":
        return np.arange(n), None
    if spec.kind == "ids":
        return graph.codes(list(spec.ids), "query papers", source=spec.source), None
    return np.random.default_rng([seed, 0]).permutation(n), spec.wanted(n, "the {n} papers of the graph")


def specter_like_block(
    adjacency: Csr,
    queries: np.ndarray,
    positives_count: int,
    hard_negatives_count: int,
    easy_negatives_count: int,
    rng: np.random.Generator,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positives ``[n, c+]`` and negatives ``[n, easy + hard]`` for a block of query codes, and the
    mask of queries that had enough positives and hard negatives (other rows are ``-1``).

    ``adjacency``: who each paper cites (or its undirected neighbours for ``--bidirectional``).
    """
    n_graph = len(adjacency.indptr) - 1
    n = len(queries)
    pos_seg, pos = adjacency.gather(queries)
    # hard negatives: neighbours of the positives, minus the positives and the query itself
    two_seg_idx, two = adjacency.gather(pos)
    hard_seg, hard = unique_pairs(pos_seg[two_seg_idx], two, n_graph)
    hard_seg, hard = remove_pairs(hard_seg, hard, pos_seg, pos, n_graph)
    not_self = hard != queries[hard_seg]
    hard_seg, hard = hard_seg[not_self], hard[not_self]

    positives = sample_segments(pos_seg, pos, n, positives_count, rng)
    hard_negatives = sample_segments(hard_seg, hard, n, hard_negatives_count, rng)
    ok = (positives >= 0).all(axis=1) & (hard_negatives >= 0).all(axis=1)
    easy = np.full((n, easy_negatives_count), -1, dtype=np.int64)
    if ok.any() and easy_negatives_count:
        rows = np.flatnonzero(ok)
        # easy negatives: random, never cited by the query, never one of its chosen hard negatives
        exclude = np.hstack([padded(pos_seg, pos, n)[rows], hard_negatives[rows]])
        easy[rows] = random_rows(queries[rows], n_graph, easy_negatives_count, rng, exclude=exclude)
    return positives, np.hstack([easy, hard_negatives]), ok


def iter_specter_like_triples(
    graph: CitationGraph,
    candidates: np.ndarray,
    wanted_queries: Optional[int],
    triples_per_query: int,
    hard_negatives_count: int,
    easy_negatives_count: int,
    seed: int,
    bidirectional: bool,
    stats: Dict[str, int],
) -> Iterator[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield blocks of ``(query, positive, negative)`` codes until ``wanted_queries`` are done."""
    done = 0
    adjacency = graph.neighbours(bidirectional)
    for b, start in enumerate(tqdm(range(0, len(candidates), BLOCK_SIZE), desc="SPECTER-like triples",
                                   unit="block", disable=len(candidates) <= BLOCK_SIZE)):
        queries = candidates[start:start + BLOCK_SIZE]
        rng = np.random.default_rng([seed, 1, b])
        try:
            pos, neg, ok = specter_like_block(adjacency, queries, triples_per_query, hard_negatives_count,
                                              easy_negatives_count, rng)
        except NotEnoughCandidates as exc:
            raise InputError(f"easy negatives: {exc}") from None
        stats["queries_without_enough_candidates"] += int((~ok).sum())
        rows = np.flatnonzero(ok)
        if wanted_queries is not None:
            rows = rows[:wanted_queries - done]
        done += len(rows)
        yield (np.repeat(queries[rows], triples_per_query), pos[rows].reshape(-1), neg[rows].reshape(-1))
        if wanted_queries is not None and done >= wanted_queries:
            break


@writes("output_path")
def get_specter_like_triples(
    citations_input_path: PathLike,
    output_path: PathLike,
    query_papers: QueryPapers = None,
    triples_count: Optional[int] = None,
    triples_per_query: int = 5,
    easy_positives_count: int = 5,
    easy_negatives_count: int = 3,
    hard_negatives_count: int = 2,
    bidirectional: bool = False,
    seed: int = 0,
    gzip: bool = False,
    override: bool = False,
) -> Path:
    """SPECTER-like triples from ``citations.tsv`` (``citing<TAB>cited``) -> triples CSV.

    SPECTER: 5 positives (cited papers), 2 hard negatives (citations of citations not cited), 3 easy
    negatives (random not cited) per query. Queries lacking 5 positives or 2 hard negatives are
    skipped and counted. ``triples_count`` truncates to exactly that many triples (an
    :class:`InputError` when fewer can be made).
    """
    from scincl.graph.citations import read_citations_tsv

    out = output_with_gzip(output_path, gzip)
    id_settings, id_inputs = split_path_values(query_papers=query_papers)
    record = OutputRecord(out, command="get_specter_like_triples", record_file=args_path(out), key="made_by", settings={
        "triples_count": triples_count, "triples_per_query": triples_per_query,
        "easy_positives_count": easy_positives_count, "easy_negatives_count": easy_negatives_count,
        "hard_negatives_count": hard_negatives_count, "bidirectional": bool(bidirectional), "seed": seed,
        **id_settings}, inputs=[citations_input_path, *id_inputs])
    if record.reusable(override):
        return out
    if easy_positives_count != triples_per_query:
        raise InputError(f"--easy_positives_count ({easy_positives_count}) must equal --triples_per_query "
                         f"({triples_per_query}): every triple has one positive")
    if easy_negatives_count + hard_negatives_count != triples_per_query:
        raise InputError(f"--easy_negatives_count + --hard_negatives_count = "
                         f"{easy_negatives_count + hard_negatives_count} must equal --triples_per_query "
                         f"({triples_per_query})")
    graph = build_citation_graph(read_citations_tsv(citations_input_path))
    logger.info("citation graph: %d papers, %d citations", graph.size, len(graph.outbound.indices))
    candidates, wanted = candidate_query_codes(graph, query_papers, seed)
    if triples_count is not None:
        wanted_from_count = -(-int(triples_count) // triples_per_query)
        wanted = wanted_from_count if wanted is None else min(wanted, wanted_from_count)
    stats: Dict[str, int] = {"queries_without_enough_candidates": 0}
    blocks = list(iter_specter_like_triples(graph, candidates, wanted, triples_per_query, hard_negatives_count,
                                            easy_negatives_count, seed, bidirectional, stats))
    q, p, n = (np.concatenate([blk[i] for blk in blocks]) if blocks else np.zeros(0, np.int64) for i in range(3))
    if triples_count is not None:
        if len(q) < triples_count:
            raise InputError(f"only {len(q)} SPECTER-like triples can be made ({len(q) // triples_per_query} queries "
                             f"with enough candidates, {stats['queries_without_enough_candidates']} without), "
                             f"fewer than --triples_count {triples_count}")
        q, p, n = q[:triples_count], p[:triples_count], n[:triples_count]
    if len(q) == 0:
        raise InputError("no query had enough positives and hard negatives: no triples")
    ids = graph.ids.astype(object)
    written = write_triples_csv(out, zip(ids[q], ids[p], ids[n]))
    stats.update(triples=written, queries=int(len(np.unique(q))))
    logger.info("wrote %d SPECTER-like triples (%d queries; %d candidates skipped) to %s", written,
                stats["queries"], stats["queries_without_enough_candidates"], out)
    write_json(args_path(out), {"command": "get_specter_like_triples", "citations_input_path": str(citations_input_path),
                                "query_papers": query_papers if not isinstance(query_papers, list) else len(query_papers),
                                "triples_count": triples_count, "triples_per_query": triples_per_query,
                                "easy_negatives_count": easy_negatives_count,
                                "hard_negatives_count": hard_negatives_count, "bidirectional": bidirectional,
                                "seed": seed, "stats": stats})
    record.write()  # last: the triplets are complete
    return out
