"""Discrete co-citation noise-distribution sampling (MP-BERT4CR; the co-citation thesis).

For a query paper q with co-cited papers C(q):

- positives: ``positives_count`` distinct papers of C(q), drawn with probability proportional to
  ``cocitation_count(q, p) ** power`` (Efraimidis-Spirakis without replacement);
- negatives: ``negatives_count`` distinct papers outside C(q) and q, drawn with probability
  proportional to ``citation_count ** power`` (word2vec's unigram^0.75 noise distribution; papers
  never cited have weight 0 and are never drawn).

Emits multi-positive groups (jsonl ``{"query", "positives", "negatives"}``, the format the
multi-positive losses read) and/or plain triples (i-th positive with i-th negative).
The *continuous* co-citation variant is :func:`scincl.triples.knn_miner.get_knn_triples` run on
co-citation-graph embeddings (``biggraph_configs/cocitations_768d_dot.py``).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.io import PathLike, write_json, write_jsonl, write_triples_csv
from scincl.triples.citation_graph import CitationGraph, Csr, build_citation_graph, padded, sample_segments
from scincl.triples.knn_miner import args_path
from scincl.triples.queries import QueryPapers
from scincl.triples.specter_like import candidate_query_codes
from scincl.triples.strategies import NotEnoughCandidates, random_rows

logger = logging.getLogger(__name__)

BLOCK_SIZE = 1024
DEFAULT_POWER = 0.75  # word2vec noise distribution exponent (Mikolov et al. 2013), MP-BERT4CR


def cocitation_csr(graph: CitationGraph, pairs: Iterable[Tuple[str, str, int]], min_count: int = 1) -> Csr:
    """Symmetric co-citation CSR over the graph's vocabulary with counts in ``data``."""
    a_ids, b_ids, counts = [], [], []
    for a, b, c in pairs:
        if c >= min_count and a != b:
            a_ids.append(a)
            b_ids.append(b)
            counts.append(c)
    if not a_ids:
        raise InputError(f"no co-citation pairs with count >= {min_count}")
    a = graph.codes(a_ids, "co-cited papers")
    b = graph.codes(b_ids, "co-cited papers")
    n = graph.size
    src, dst = np.concatenate([a, b]), np.concatenate([b, a])
    data = np.concatenate([counts, counts]).astype(np.float64)
    keys, first = np.unique(src * n + dst, return_index=True)  # the TSV lists both directions already
    return Csr.from_edges(keys // n, keys % n, n, data=data[first])


def cocitation_pairs_from_graph(graph: CitationGraph) -> Iterable[Tuple[str, str, int]]:
    """Co-citation counts computed from the graph's reference lists (scincl.graph.cocitations)."""
    from scincl.graph.cocitations import count_cocitations

    ids = graph.ids
    _, refs = graph.outbound.gather(np.arange(graph.size))
    bounds = np.concatenate(([0], np.cumsum(graph.outbound.degree())))
    lists = (ids[refs[bounds[i]:bounds[i + 1]]].tolist() for i in range(graph.size) if bounds[i + 1] - bounds[i] > 1)
    return ((a, b, c) for (a, b), c in count_cocitations(lists).items())


def noise_sample_block(
    queries: np.ndarray,
    cocitations: Csr,
    negative_weights: np.ndarray,
    positives_count: int,
    negatives_count: int,
    power: float,
    rng: np.random.Generator,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positives ``[n, c+]``, negatives ``[n, c-]`` and the mask of queries with enough co-cited papers."""
    n = len(queries)
    seg, pos = cocitations.positions(queries)
    candidates = cocitations.indices[pos]
    weights = cocitations.data[pos] ** power
    positives = sample_segments(seg, candidates, n, positives_count, rng, weights=weights)
    ok = (positives >= 0).all(axis=1)
    negatives = np.full((n, negatives_count), -1, dtype=np.int64)
    if ok.any() and negatives_count:
        rows = np.flatnonzero(ok)
        exclude = padded(seg, candidates, n)[rows]
        negatives[rows] = random_rows(queries[rows], len(negative_weights), negatives_count, rng,
                                      exclude=exclude, weights=negative_weights)
    return positives, negatives, ok


def get_cocitation_triples(
    citations_input_path: PathLike,
    output_path: Optional[PathLike] = None,
    groups_output_path: Optional[PathLike] = None,
    cocitations_input_path: Optional[PathLike] = None,
    query_papers: QueryPapers = None,
    positives_count: int = 5,
    negatives_count: int = 5,
    power: float = DEFAULT_POWER,
    min_cocitation_count: int = 1,
    seed: int = 0,
    override: bool = False,
) -> Dict[str, int]:
    """Co-citation noise-distribution samples -> triples CSV (``output_path``) and/or groups jsonl.

    Citation counts (negative weights) come from ``citations.tsv``; co-citation counts from
    ``cocitations_input_path`` (``a<TAB>b<TAB>count``, cli_s2orc get_cocitations) or, when absent,
    are computed from the citations. Queries with fewer than ``positives_count`` co-cited papers
    are skipped and counted. Returns the counts.
    """
    from scincl.graph.citations import read_citations_tsv
    from scincl.graph.cocitations import read_cocitations_tsv

    if output_path is None and groups_output_path is None:
        raise InputError("give --output_path (triples CSV) and/or --groups_output_path (jsonl groups)")
    if output_path is not None and positives_count != negatives_count:
        raise InputError(f"triples pair the i-th positive with the i-th negative: --positives_count "
                         f"({positives_count}) must equal --negatives_count ({negatives_count})")
    if positives_count < 1 or negatives_count < 0 or power < 0:
        raise InputError("--positives_count must be >= 1, --negatives_count >= 0 and --power >= 0")
    outputs = [Path(p) for p in (output_path, groups_output_path) if p is not None]
    if all(p.exists() for p in outputs) and not override:
        logger.info("%s exist; reusing (pass --override to rebuild)", ", ".join(map(str, outputs)))
        return {}
    graph = build_citation_graph(read_citations_tsv(citations_input_path))
    pairs = (read_cocitations_tsv(cocitations_input_path) if cocitations_input_path
             else cocitation_pairs_from_graph(graph))
    cocitations = cocitation_csr(graph, pairs, min_count=min_cocitation_count)
    negative_weights = graph.inbound.degree().astype(np.float64) ** power
    candidates, wanted = candidate_query_codes(graph, query_papers, seed)
    q_all, p_all, n_all = [], [], []
    stats = {"queries_without_enough_cocitations": 0}
    done = 0
    for b, start in enumerate(tqdm(range(0, len(candidates), BLOCK_SIZE), desc="co-citation sampling",
                                   unit="block", disable=len(candidates) <= BLOCK_SIZE)):
        queries = candidates[start:start + BLOCK_SIZE]
        try:
            pos, neg, ok = noise_sample_block(queries, cocitations, negative_weights, positives_count,
                                              negatives_count, power, np.random.default_rng([seed, 2, b]))
        except NotEnoughCandidates as exc:
            raise InputError(f"negatives: {exc}") from None
        stats["queries_without_enough_cocitations"] += int((~ok).sum())
        rows = np.flatnonzero(ok)
        if wanted is not None:
            rows = rows[:wanted - done]
        done += len(rows)
        q_all.append(queries[rows])
        p_all.append(pos[rows])
        n_all.append(neg[rows])
        if wanted is not None and done >= wanted:
            break
    q = np.concatenate(q_all)
    p = np.concatenate(p_all)
    n = np.concatenate(n_all)
    if len(q) == 0:
        raise InputError(f"no query has {positives_count} co-cited papers: nothing sampled")
    ids = graph.ids.astype(object)
    stats["queries"] = int(len(q))
    if groups_output_path is not None:
        stats["groups"] = write_jsonl(groups_output_path, (
            {"query": qid, "positives": ids[pp].tolist(), "negatives": ids[nn].tolist()}
            for qid, pp, nn in zip(ids[q], p, n)))
    if output_path is not None:
        stats["triples"] = write_triples_csv(output_path, zip(np.repeat(ids[q], positives_count),
                                                              ids[p.reshape(-1)], ids[n.reshape(-1)]))
    logger.info("co-citation sampling: %s", stats)
    settings = {"command": "get_cocitation_triples", "citations_input_path": str(citations_input_path),
                "cocitations_input_path": None if cocitations_input_path is None else str(cocitations_input_path),
                "positives_count": positives_count, "negatives_count": negatives_count, "power": power,
                "min_cocitation_count": min_cocitation_count, "seed": seed, "stats": stats}
    write_json(args_path(outputs[0]), settings)
    return stats
