"""Choosing query papers, the one place for it: the ``--query_papers`` forms and the eligible-query rule.

- :func:`parse_query_papers`: ``all`` / a count / a ratio / a JSON id file / a list of ids, as one
  :class:`QuerySpec` (used by the kNN miner's :func:`select_query_rows` and the SPECTER-like
  sampler's ``candidate_query_codes``);
- :func:`is_eligible_query`: a paper can make SPECTER's 5 triplets (>= 5 cited papers and >= 2
  citations of citations that it does not cite), the rule of the real-corpus experiments;
- :func:`sample_query_ids` (``--sample_queries_ratio``) and :func:`sample_eligible_queries`: the
  pipelines' seeded samples of query ids; ``select_*``: how a plan's queries stage writes them.
"""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from collections import defaultdict
from typing import AbstractSet, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

import numpy as np

from scincl.errors import InputError
from scincl.io import iter_tsv, read_id_list, write_id_list

logger = logging.getLogger(__name__)

QueryPapers = Union[None, str, int, float, Sequence[str]]


# SPECTER's triplets per query paper: 5 positives (cited papers), 2 hard negatives (citations of
# citations not cited) + 3 easy ones (SPECTER paper §3; the real-corpus experiments' eligible queries)
SPECTER_POSITIVES = 5
SPECTER_HARD_NEGATIVES = 2


@dataclass(frozen=True)
class QuerySpec:
    """One ``--query_papers`` value: ``kind`` is ``all``, ``count``, ``ratio`` or ``ids`` (then ``ids``/``source``)."""

    kind: str
    count: int = 0
    ratio: float = 0.0
    ids: Sequence[str] = ()
    source: Optional[str] = None

    def wanted(self, n: int, population: str = "the corpus size {n}") -> Optional[int]:
        """How many of ``n`` papers a count or ratio asks for (None for ``all``/``ids``); range-checked.

        ``population`` names the ``n`` papers in the error of a count out of range.
        """
        if self.kind == "count":
            if not 1 <= self.count <= n:
                raise InputError(f"--query_papers {self.count}: choose between 1 and {population.format(n=n)}")
            return self.count
        if self.kind == "ratio":
            return max(1, int(round(n * self.ratio)))
        return None


def parse_query_papers(query_papers: QueryPapers) -> QuerySpec:
    """The ``--query_papers`` forms: ``None``/``"all"``, a count, a ratio in ``(0, 1]``, a JSON id file, a list.

    Strings from the command line are read as an int, else a float, else a path; a list or file keeps
    its order with duplicates dropped (a warning); an empty list is an :class:`InputError`.
    """
    if isinstance(query_papers, str) and query_papers.strip().lower() in ("", "all"):
        query_papers = None
    if isinstance(query_papers, str):
        text = query_papers.strip()
        try:
            query_papers = int(text)
        except ValueError:
            try:
                query_papers = float(text)
            except ValueError:
                query_papers = text
    if query_papers is None:
        return QuerySpec("all")
    if isinstance(query_papers, bool):
        raise InputError(f"--query_papers must be a count, a ratio, a JSON id file or 'all', got {query_papers!r}")
    if isinstance(query_papers, (int, np.integer)):
        return QuerySpec("count", count=int(query_papers))
    if isinstance(query_papers, float):
        if not 0.0 < query_papers <= 1.0:
            raise InputError(f"--query_papers ratio must be in (0, 1], got {query_papers}")
        return QuerySpec("ratio", ratio=query_papers)
    source = None
    if isinstance(query_papers, (str, Path)):
        source = str(query_papers)
        ids = read_id_list(query_papers)
    else:
        ids = [str(p) for p in query_papers]
    unique = list(dict.fromkeys(ids))
    if len(unique) < len(ids):
        logger.warning("query papers: dropped %d duplicated ids", len(ids) - len(unique))
    if not unique:
        raise InputError("the query paper list is empty", path=source)
    return QuerySpec("ids", ids=unique, source=source)


def is_eligible_query(paper: str, adjacency: Mapping[str, AbstractSet[str]]) -> bool:
    """Whether ``paper`` can make SPECTER's triplets: >= 5 cited papers, >= 2 not-cited citations of citations."""
    cited = adjacency.get(paper, set())
    if len(cited) < SPECTER_POSITIVES:
        return False
    second_hop = set().union(*(adjacency.get(c, set()) for c in cited)) - set(cited) - {paper}
    return len(second_hop) >= SPECTER_HARD_NEGATIVES


def citation_adjacency(edges: Iterable[Tuple[str, str]], bidirectional: bool = False) -> Dict[str, Set[str]]:
    """Paper -> the papers it cites (``bidirectional``: it is linked to either way); self-citations are dropped."""
    adjacency: Dict[str, Set[str]] = defaultdict(set)
    for citing, cited in edges:
        if citing == cited:
            continue
        adjacency[citing].add(cited)
        if bidirectional:
            adjacency[cited].add(citing)
    return adjacency


def eligible_for_every_arm(edges: Iterable[Tuple[str, str]], bidirectional: bool, in_graphs: AbstractSet[str],
                           with_text: AbstractSet[str], excluded: AbstractSet[str]) -> List[str]:
    """The papers (sorted) every real-corpus arm can build its triplets for: SPECTER-like needs
    :func:`is_eligible_query` on the citation ``edges``, the kNN arms the paper ``in_graphs``, the encoder its text;
    ``excluded`` (the SciDocs papers) are never eligible."""
    adjacency = citation_adjacency(edges, bidirectional)
    return sorted(paper for paper in adjacency if paper in in_graphs and paper in with_text
                  and paper not in excluded and is_eligible_query(paper, adjacency))


def sample_query_ids(query_ids: Sequence[str], ratio: float, seed: int = 0) -> List[str]:
    """Keep ``ratio`` of the query papers, sorted (``--sample_queries_ratio``; paper §6: 1% / 10% data)."""
    if not 0 < ratio <= 1:
        raise InputError(f"--sample_queries_ratio must be in (0, 1], got {ratio}")
    if ratio == 1:
        return list(query_ids)
    count = max(1, round(len(query_ids) * ratio))
    kept = sorted(random.Random(seed).sample(sorted(query_ids), count))
    logger.info("--sample_queries_ratio %s: %d of %d query papers", ratio, len(kept), len(query_ids))
    return kept


def sample_eligible_queries(eligible: Sequence[str], count: int, seed: int, where: str) -> List[str]:
    """``count`` of the eligible query papers drawn with ``seed``, sorted (shared by all arms of a run)."""
    if count > len(eligible):
        raise InputError(f"{count} queries wanted but only {len(eligible)} papers are eligible for every "
                         f"arm on {where}: lower --triplets (5 per query)")
    return sorted(random.Random(seed).sample(list(eligible), count))


def id_to_row(ids: Sequence[str]) -> Dict[str, int]:
    """``paper_id -> row`` for a list of ids; duplicated ids are an :class:`InputError`."""
    mapping = {str(pid): row for row, pid in enumerate(ids)}
    if len(mapping) != len(ids):
        raise InputError(f"the corpus id list has {len(ids) - len(mapping)} duplicated paper ids")
    return mapping


def rows_of_ids(ids: Sequence[str], mapping: Dict[str, int], what: str, source: Optional[str] = None) -> np.ndarray:
    """Rows of ``ids`` in ``mapping``; unknown ids are an :class:`InputError` naming how many and a few."""
    missing = [pid for pid in ids if pid not in mapping]
    if missing:
        examples = ", ".join(missing[:5])
        raise InputError(f"{len(missing)} of {len(ids)} {what} are not in the index/corpus (e.g. {examples})",
                         path=source)
    return np.fromiter((mapping[pid] for pid in ids), dtype=np.int64, count=len(ids))


def select_query_rows(query_papers: QueryPapers, corpus_ids: Sequence[str], seed: int = 0,
                      mapping: Optional[Dict[str, int]] = None) -> np.ndarray:
    """Corpus rows of the query papers (the paper samples queries from the training corpus, §4.1).

    ``query_papers`` is ``None``/``"all"`` (every corpus paper, in corpus order), an integer count
    or a ratio in ``(0, 1]`` (a uniform sample drawn with ``seed``, returned in corpus order), a
    path to a JSON list of paper ids, or such a list (its order is kept; duplicates are dropped).
    """
    n = len(corpus_ids)
    if n == 0:
        raise InputError("the corpus is empty: no papers to choose queries from")
    spec = parse_query_papers(query_papers)
    if spec.kind == "all":
        rows = np.arange(n, dtype=np.int64)
    elif spec.kind == "ids":
        rows = rows_of_ids(spec.ids, mapping if mapping is not None else id_to_row(corpus_ids), "query papers",
                           spec.source)
    else:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=spec.wanted(n), replace=False))
    if rows.size == 0:
        raise InputError("no query papers selected")
    logger.info("query papers: %d of %d corpus papers", rows.size, n)
    return rows


def select_graph_limit_and_ratio(queries: Path, *, corpus: Path, graph_ids: Path, graph_limit: str, ratio: float, seed: int,
                           with_text: Optional[Path], specter_triples: Optional[str], id_mapping: Optional[str],
                           excluded: Optional[Path]) -> Dict[str, int]:
    """``run_specter``'s selection: the training corpus (``corpus.selection.select_training_corpus``: the graph papers
    with a text, limited by ``graph_limit`` to SPECTER's papers of ``specter_triples`` or not, without the
    ``excluded`` ones) written to ``corpus``, and ``ratio`` of its query papers drawn with ``seed``."""
    from scincl.corpus.selection import read_id_mapping, read_specter_ids, select_training_corpus
    from scincl.io import read_json
    mapping = read_id_mapping(id_mapping)
    specter = read_specter_ids(specter_triples, mapping) if specter_triples else None
    graph = read_id_list(graph_ids)
    if with_text is not None:  # the corpus' metadata id mapping {shard: [[paper_id, line], ...]}
        texts = {str(row[0]) for rows in read_json(with_text).values() for row in rows}
        kept = [pid for pid in graph if pid in texts]
        logger.info("queries: %d of %d graph papers have a text in the corpus (the others cannot be encoded)",
                    len(kept), len(graph))
        graph = kept
    selected = select_training_corpus(graph, graph_limit, specter, read_id_list(excluded) if excluded else [],
                                      seed=seed)
    sampled = sample_query_ids(selected.query_ids, ratio, seed=seed)
    write_id_list(corpus, selected.paper_ids)
    write_id_list(queries, sampled)
    return {**selected.stats, "sampled_query_papers": len(sampled)}


def select_ratio_of_corpus(queries: Path, *, corpus: Path, ratio: float, seed: int) -> Dict[str, int]:
    """``ratio`` of the papers of a given training ``corpus`` drawn with ``seed``."""
    papers = read_id_list(corpus)
    sampled = sample_query_ids(papers, ratio, seed=seed)
    write_id_list(queries, sampled)
    return {"corpus_papers": len(papers), "sampled_query_papers": len(sampled)}


def select_eligible_for_every_arm(eligible: Path, citations: Path, cite_ids: Path, cocite_ids: Path, with_text: Path,
                                  excluded: Path, *, bidirectional: bool) -> None:
    """Write to ``eligible`` the papers :func:`eligible_for_every_arm` finds from the files of the ``citations`` (TSV),
    the cite and cocite graphs' paper ids, the papers with a text and the ``excluded`` ones."""
    edges = ((citing, cited) for _, (citing, cited, *_rest) in iter_tsv(citations))
    cite, cocite, text_ids, excluded_ids = (set(read_id_list(path))
                                            for path in (cite_ids, cocite_ids, with_text, excluded))
    papers = eligible_for_every_arm(edges, bidirectional, cite & cocite, text_ids, excluded_ids)
    write_id_list(eligible, papers)
    logger.info("%d papers are eligible queries for every arm", len(papers))


def select_eligible_for_all_arms(queries: Path, *, eligible: Path, count: int, seed: int, where: str) -> None:
    """``count`` of the papers listed in ``eligible`` (those every arm can build its triplets for) drawn with
    ``seed`` (``where``: the corpus, named in the error when too few are eligible)."""
    write_id_list(queries, sample_eligible_queries(read_id_list(eligible), count, seed, where))

