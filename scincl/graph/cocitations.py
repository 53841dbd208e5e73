"""Co-citation and bibliographic-coupling pair counts, and their TSV format.

- Co-citation (Small 1973): papers ``a`` and ``b`` are co-cited when one paper's reference list
  contains both; their count is the number of citing papers that list both.
- Bibliographic coupling (Kessler 1963): citing papers ``a`` and ``b`` are coupled when they share
  references; their count is the number of shared references.

Pairs are unordered, keyed ``(a, b)`` with ``a < b`` (string order). On disk
(``write_cocitations_tsv``) every pair is written in both directions, ``a<TAB>b<TAB>count``, sorted,
so the file is an undirected BigGraph edge list (``--lhs-col=0 --rhs-col=1``) whose third column
feeds the co-citation noise samplers (SciNCL paper, §4.3 / SPECTER-style co-citation triples).
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Mapping, Sequence, Tuple, Union

from scincl.errors import InputError
from scincl.graph.citations import ReadReferences, iter_citing_papers
from scincl.io import PathLike, atomic_open, iter_tsv
from scincl.corpus.shards import ReadStats, iter_paper_references, map_shards

logger = logging.getLogger(__name__)

PairCounts = Dict[Tuple[str, str], int]


def _count_pairs(groups: Iterable[Sequence[str]]) -> Counter:
    counts: Counter = Counter()
    for group in groups:
        members = sorted({str(m) for m in group})
        if len(members) > 1:
            counts.update(combinations(members, 2))
    return counts


def _at_least(counts: Counter, min_count: int) -> PairCounts:
    if min_count <= 1:
        return dict(counts)
    return {pair: c for pair, c in counts.items() if c >= min_count}


def count_cocitations(reference_lists: Iterable[Sequence[str]], min_count: int = 1) -> PairCounts:
    """Co-citation counts from the reference lists of citing papers.

    ``{(a, b): n}`` with ``a < b`` and ``n`` = number of reference lists containing both (a paper
    listed twice in one list counts once); pairs with ``n < min_count`` are dropped.

    >>> count_cocitations([["x", "y", "z"], ["y", "x"]])
    {('x', 'y'): 2, ('x', 'z'): 1, ('y', 'z'): 1}
    """
    return _at_least(_count_pairs(reference_lists), min_count)


def merge_pair_counts(parts: Iterable[Mapping[Tuple[str, str], int]], min_count: int = 1) -> PairCounts:
    """Sum pair counts computed on disjoint sets of citing papers (e.g. one per shard)."""
    total: Counter = Counter()
    for part in parts:
        total.update(part)
    return _at_least(total, min_count)


def count_bibliographic_coupling(
    papers_with_references: Union[Mapping[str, Sequence[str]], Iterable[Tuple[str, Sequence[str]]]],
    min_count: int = 1,
) -> PairCounts:
    """Bibliographic-coupling counts: pairs of citing papers -> number of shared references.

    Takes ``{citing_id: references}`` or ``(citing_id, references)`` pairs.

    >>> count_bibliographic_coupling({"p": ["x", "y"], "q": ["x", "y", "z"], "r": ["z"]})
    {('p', 'q'): 2, ('q', 'r'): 1}
    """
    items = papers_with_references.items() if isinstance(papers_with_references, Mapping) else papers_with_references
    citers: Dict[str, List[str]] = defaultdict(list)
    for citing, refs in items:
        for ref in set(map(str, refs)):
            citers[ref].append(str(citing))
    return _at_least(_count_pairs(citers.values()), min_count)


def write_cocitations_tsv(path: PathLike, counts: Mapping[Tuple[str, str], int]) -> int:
    """Write pair counts as ``a<TAB>b<TAB>count`` in both directions, sorted; returns lines written."""
    rows = []
    for (a, b), c in counts.items():
        rows.append((a, b, c))
        rows.append((b, a, c))
    rows.sort()
    with atomic_open(path) as fh:
        for a, b, c in rows:
            fh.write(f"{a}\t{b}\t{c}\n")
    return len(rows)


def read_cocitations_tsv(path: PathLike) -> Iterator[Tuple[str, str, int]]:
    """Yield ``(a, b, count)`` from a co-citation TSV (gzip-aware); a bad line is an InputError."""
    for line_no, cols in iter_tsv(path, min_columns=1):
        if len(cols) != 3 or not cols[0] or not cols[1]:
            raise InputError("expected 3 tab-separated columns: paper_a, paper_b, count", path=path, line=line_no)
        try:
            count = int(cols[2])
        except ValueError:
            raise InputError(f"count is not an integer: {cols[2]!r}", path=path, line=line_no,
                             field="count") from None
        yield cols[0], cols[1], count


# ------------------------------------------------------------------------- from S2ORC shards

def shard_cocitations(shard_path: Path, included=None, excluded=None, strict: bool = False,
                      read_references: ReadReferences = iter_paper_references):
    """Co-citation counts of one shard's citing papers (worker function of get_cocitations)."""
    stats = ReadStats()
    counts = _count_pairs(refs for _, refs in iter_citing_papers(shard_path, included, excluded, strict, stats,
                                                                 read_references=read_references))
    return counts, stats


def extract_cocitations(shards: Sequence[Path], output_path: PathLike, workers: int = 1, min_count: int = 1,
                        included=None, excluded=None, strict: bool = False,
                        read_references: ReadReferences = iter_paper_references) -> Dict:
    """Count co-citations over ``shards`` and write the TSV; returns the stats dict.

    Memory holds the pair counts (the output), not the corpus: shards stream in the workers.
    ``shards`` and ``read_references`` come from :func:`scincl.corpus.open_corpus` for other formats.
    """
    worker = partial(shard_cocitations, included=included, excluded=excluded, strict=strict,
                     read_references=read_references)
    results = map_shards(worker, shards, workers, desc="co-citations")
    stats = ReadStats()
    for _, shard_stats in results:
        stats.merge(shard_stats)
    counts = merge_pair_counts((c for c, _ in results), min_count=min_count)
    lines = write_cocitations_tsv(output_path, counts)
    summary = {**stats.to_dict(), "pairs": len(counts), "lines": lines, "output": str(output_path),
               "settings": {"workers": workers, "min_count": min_count, "strict": strict,
                            "included_paper_ids": None if included is None else len(included),
                            "excluded_paper_ids": None if excluded is None else len(excluded)}}
    logger.info("co-citations: %d papers read, %d pairs with count >= %d -> %s",
                summary["papers_read"], len(counts), min_count, output_path)
    return summary
