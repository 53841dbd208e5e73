"""Positive pairs from citation relations and their mixtures (OpenMSD), with SPECTER-style negatives.

Relations over the citation graph (pairs are unordered):

- ``dc`` direct citation: a cites b;
- ``cc`` co-citation: a and b are cited together by at least ``min_cocitation_count`` papers;
- ``bc`` bibliographic coupling: a and b share at least ``min_coupling_count`` references.

``relations`` is a comma-separated list of *expressions*; ``|`` is a union and ``&`` an
intersection (``"dc,cc,bc"``: three relations; ``"dc|cc"``: their union; ``"cc&bc"``: pairs in
both). Balancing follows OpenMSD (Gao et al. 2023, ``../shared/papers/002_574c1c34892dd9b2.txt``
§5, "Use the union of DC, CC, and BC pairs"): "we down-sample the over-represented relations so as
to have the same number of pairs from each relation type". Every *relation type* of a union and
every other expression is one *part*; each part is down-sampled (without replacement) to the same
number of pairs, the smallest part's size (or ``pairs_per_relation``). So ``"dc|cc"`` writes as many
direct citations as co-citations and equals ``"dc,cc"``; ``"dc|cc,cc&bc"`` has three equal parts.
Parts are drawn independently: a pair of two types (e.g. both DC and CC) can be drawn for each of
them and is then written once per draw (counted as ``pairs_in_several_relations``), as mixing the
down-sampled relation sets does. An intersection is one part (OpenMSD §5: "Use the intersection").
Each pair's direction (which paper is the query) is drawn at random. Negatives: ``hard`` =
SPECTER's citations of citations (2-hop in the undirected citation graph, not adjacent to the
query; random when a query has none, counted), ``random`` = a random paper not adjacent to the
query, ``none`` = write pairs only.
"""
from __future__ import annotations

import csv
import logging
import re
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike, atomic_open, write_json, write_triples_csv
from scincl.triples.citation_graph import CitationGraph, build_citation_graph, padded, remove_pairs, unique_pairs
from scincl.provenance import OutputRecord
from scincl.triples.knn_miner import args_path
from scincl.triples.strategies import NotEnoughCandidates, random_rows
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

RELATIONS = ("dc", "cc", "bc")
NEGATIVES = ("hard", "random", "none")
PAIRS_HEADER = ("query_paper_id", "positive_id")


def relation_keys(graph: CitationGraph, relation: str, min_cocitation_count: int = 1,
                  min_coupling_count: int = 1) -> np.ndarray:
    """Sorted unique keys ``a * N + b`` (``a < b``) of one base relation."""
    from scincl.graph.cocitations import count_bibliographic_coupling, count_cocitations

    n = graph.size
    if relation == "dc":
        seg, dst = graph.outbound.gather(np.arange(n))
        a, b = seg, dst
    else:
        ids, out = graph.ids, graph.outbound
        reference_lists = ((ids[i], ids[out.indices[out.indptr[i]:out.indptr[i + 1]]].tolist())
                           for i in range(n) if out.indptr[i + 1] > out.indptr[i])
        if relation == "cc":  # pairs within one reference list
            counts = count_cocitations((refs for _, refs in reference_lists), min_count=min_cocitation_count)
        else:  # pairs of citing papers sharing references
            counts = count_bibliographic_coupling(reference_lists, min_count=min_coupling_count)
        if not counts:
            return np.zeros(0, dtype=np.int64)
        a = graph.codes([p[0] for p in counts])
        b = graph.codes([p[1] for p in counts])
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    return np.unique(lo[keep] * n + hi[keep])


def parse_relations(relations: str) -> List[str]:
    """Split ``"dc,cc|bc"`` into expressions and check their tokens."""
    if isinstance(relations, (list, tuple)):
        relations = ",".join(relations)
    exprs = [e.strip().lower() for e in str(relations).split(",") if e.strip()]
    if not exprs:
        raise InputError("--relations is empty; use e.g. dc,cc,bc or dc|cc or cc&bc")
    for e in exprs:
        tokens = re.split(r"[|&]", e)
        bad = [t for t in tokens if t.strip() not in RELATIONS]
        if bad or ("|" in e and "&" in e):
            raise InputError(f"--relations: cannot read {e!r}; use dc, cc, bc joined by | (union) or & "
                             f"(intersection), not both in one expression")
    return exprs


def expression_keys(expr: str, base: Dict[str, np.ndarray]) -> np.ndarray:
    """Keys of one expression (``dc``, ``dc|cc``, ``cc&bc``): the set union or intersection."""
    names = [t.strip() for t in re.split(r"[|&]", expr)]
    keys = base[names[0]]
    for name in names[1:]:
        keys = np.union1d(keys, base[name]) if "|" in expr else np.intersect1d(keys, base[name])
    return keys


def balanced_parts(exprs: List[str]) -> List[str]:
    """The parts balanced against each other: each relation type of a union, each other expression.

    OpenMSD §5 (002): the union of relation types is down-sampled "so as to have the same number of
    pairs from each relation type"; an intersection is one set of pairs. Duplicates keep the first.

    >>> balanced_parts(["dc|cc", "cc&bc", "bc"])
    ['dc', 'cc', 'cc&bc', 'bc']
    """
    parts: List[str] = []
    for expr in exprs:
        for part in ([t.strip() for t in expr.split("|")] if "|" in expr else [expr]):
            if part not in parts:
                parts.append(part)
    return parts


def sample_negatives(graph: CitationGraph, queries: np.ndarray, positives: np.ndarray, mode: str,
                     rng: np.random.Generator, stats: Dict[str, int]) -> np.ndarray:
    """One negative per pair: 2-hop non-neighbour of the query (``hard``) or a random non-neighbour."""
    n = graph.size
    adjacency = graph.neighbours(bidirectional=True)
    uq, inverse = np.unique(queries, return_inverse=True)
    nb_seg, nb = adjacency.gather(uq)
    negatives = np.full(len(queries), -1, dtype=np.int64)
    if mode == "hard":
        two_idx, two = adjacency.gather(nb)
        h_seg, h = unique_pairs(nb_seg[two_idx], two, n)
        h_seg, h = remove_pairs(h_seg, h, nb_seg, nb, n)
        keep = h != uq[h_seg]
        h_seg, h = h_seg[keep], h[keep]
        sizes = np.bincount(h_seg, minlength=len(uq))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        has = sizes[inverse] > 0
        pick = starts[inverse[has]] + (rng.random(int(has.sum())) * sizes[inverse[has]]).astype(np.int64)
        negatives[has] = h[pick]
        negatives[negatives == positives] = -1  # a co-citation/coupling positive can be 2 hops away
    missing = np.flatnonzero(negatives < 0)
    if missing.size:
        if mode == "hard":
            stats["hard_negative_fallbacks_to_random"] = int(missing.size)
        exclude = np.hstack([padded(nb_seg, nb, len(uq))[inverse[missing]], positives[missing, None]])
        try:
            negatives[missing] = random_rows(queries[missing], n, 1, rng, exclude=exclude)[:, 0]
        except NotEnoughCandidates as exc:
            raise InputError(f"negatives: {exc}") from None
    return negatives


@writes("output_path")
def get_pairs(
    citations_input_path: PathLike,
    output_path: PathLike,
    relations: str = "dc,cc,bc",
    pairs_per_relation: Optional[int] = None,
    min_cocitation_count: int = 1,
    min_coupling_count: int = 1,
    negatives: str = "hard",
    seed: int = 0,
    override: bool = False,
) -> Dict[str, int]:
    """Positive pairs of citation relations, balanced across relation types (OpenMSD §5), optional negatives.

    ``relations``: expressions as in the module docstring; each part (a relation type of a union,
    an intersection, a single relation) contributes the same number of pairs (``pairs_per_relation``
    caps it).

    Output: triples CSV ``query_paper_id,positive_id,negative_id`` (``negatives`` hard/random) or a
    pairs CSV ``query_paper_id,positive_id`` (``negatives=none``). Returns the counts.
    """
    from scincl.graph.citations import read_citations_tsv

    if negatives not in NEGATIVES:
        raise InputError(f"--negatives {negatives!r}: choose one of {', '.join(NEGATIVES)}")
    out = Path(output_path)
    record = OutputRecord(out, command="get_pairs", record_file=args_path(out), key="made_by", settings={
        "relations": relations, "pairs_per_relation": pairs_per_relation,
        "min_cocitation_count": min_cocitation_count, "min_coupling_count": min_coupling_count,
        "negatives": negatives, "seed": seed}, inputs=[citations_input_path])
    if record.reusable(override):
        return {}
    exprs = parse_relations(relations)
    graph = build_citation_graph(read_citations_tsv(citations_input_path))
    needed = {t.strip() for e in exprs for t in re.split(r"[|&]", e)}
    base = {r: relation_keys(graph, r, min_cocitation_count, min_coupling_count) for r in sorted(needed)}
    sets = {e: expression_keys(e, base) for e in exprs}
    parts = {p: expression_keys(p, base) for p in balanced_parts(exprs)}
    stats: Dict[str, int] = {f"pairs_{r}": int(len(k)) for r, k in base.items()}
    stats.update({f"pairs_expr_{e}": int(len(k)) for e, k in sets.items()})
    empty = [p for p, k in parts.items() if len(k) == 0]
    if empty:
        raise InputError(f"relation(s) {', '.join(empty)} have no pairs in {citations_input_path}")
    size = min(len(k) for k in parts.values())
    if pairs_per_relation is not None:
        size = min(size, int(pairs_per_relation))
    rng = np.random.default_rng([seed, 3])
    chosen = np.concatenate([np.sort(rng.choice(k, size=size, replace=False)) for k in parts.values()])
    stats.update({f"pairs_drawn_{p}": int(size) for p in parts})
    n = graph.size
    a, b = chosen // n, chosen % n
    flip = rng.random(len(chosen)) < 0.5
    queries, positives = np.where(flip, b, a), np.where(flip, a, b)
    stats.update(pairs_per_relation=int(size), pairs=int(len(chosen)),
                 pairs_in_several_relations=int(len(chosen) - len(np.unique(chosen))))
    ids = graph.ids.astype(object)
    if negatives == "none":
        with atomic_open(out) as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(PAIRS_HEADER)
            writer.writerows(zip(ids[queries], ids[positives]))
    else:
        neg = sample_negatives(graph, queries, positives, negatives, rng, stats)
        write_triples_csv(out, zip(ids[queries], ids[positives], ids[neg]))
    logger.info("pairs: %s", stats)
    write_json(args_path(out), {"command": "get_pairs", "citations_input_path": str(citations_input_path),
                                "relations": exprs, "pairs_per_relation": pairs_per_relation,
                                "min_cocitation_count": min_cocitation_count,
                                "min_coupling_count": min_coupling_count, "negatives": negatives, "seed": seed,
                                "stats": stats})
    record.write()  # last: the pairs are complete
    return stats
