"""Training corpus and query papers of a ``run_specter`` experiment (``--graph_limit``).

The paper trains on a corpus the size of SPECTER's (311,860 training papers, 136,820 query
papers: the counts in the original SciNCL code) drawn from the citation graph, never on SciDocs
papers (no leakage). Which graph papers form
the kNN corpus and which are query papers is set by ``--graph_limit``, as in the original code:

- ``specter``: SPECTER's training papers (from ``--specter_triples_path``, mapped to graph ids
  with ``--s2id_to_s2orc_input_path``) that are in the graph; papers SPECTER used but the graph
  lacks are replaced by random graph papers, so the corpus keeps SPECTER's size. Query papers:
  SPECTER's queries, topped up the same way.
- ``s2orc``: random graph papers, as many as SPECTER used (queries likewise) - same size, no
  SPECTER ids.
- ``graph``: every graph paper is in the corpus; queries are SPECTER's when given, else all.
- ``none``: only SPECTER's papers that are in the graph, no top-up.

SciDocs papers (``excluded_ids``) are removed from the corpus in every mode. Selection is seeded
(``--corpus_seed``) and independent of set iteration order, so a seed gives identical id lists.

:func:`select_specter_corpus` is the selection of the original ``get_specter_corpus`` (``cli_s2orc.py``),
which ``specter`` reuses.
"""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from scincl.errors import InputError
from scincl.io import PathLike, iter_triples_csv
from scincl.settings.choices import GRAPH_LIMITS

logger = logging.getLogger(__name__)

NEEDS_SPECTER_TRIPLES = ("specter", "s2orc", "none")


@dataclass
class SpecterIds:
    """Paper ids of SPECTER-format training triples, mapped to graph (S2ORC) ids."""

    paper_ids: Set[str]
    query_ids: Set[str]
    original_papers: int  # distinct ids in the triples before mapping
    original_queries: int
    unmapped: int = 0
    triples_path: Optional[str] = None
    mapping: Optional[Dict[str, str]] = None


@dataclass
class TrainingCorpus:
    """Sorted training-corpus ids (the kNN corpus) and query ids, with counts for the log/manifest."""

    paper_ids: List[str]
    query_ids: List[str]
    stats: Dict[str, int] = field(default_factory=dict)


def read_id_mapping(paths: Optional[str]) -> Optional[Dict[str, str]]:
    """``{s2_id: s2orc_paper_id}`` from one or more JSON files (comma-separated; see
    :func:`scincl.corpus.s2orc_mappings.read_mapping`). ``None``: ids are already graph ids."""
    if not paths:
        return None
    from scincl.corpus.s2orc_mappings import read_mapping

    mapping = read_mapping(str(paths))
    logger.info("id mapping: %d S2 ids -> S2ORC ids from %s", len(mapping), paths)
    return mapping


def _map_ids(ids: Iterable[str], mapping: Optional[Dict[str, str]]) -> Set[str]:
    if mapping is None:
        return set(ids)
    return {mapping[i] for i in ids if i in mapping}


def read_specter_ids(triples_path: PathLike, mapping: Optional[Dict[str, str]] = None) -> SpecterIds:
    """All paper ids and query ids of a ``query_paper_id,positive_id,negative_id`` CSV, mapped."""
    papers: Set[str] = set()
    queries: Set[str] = set()
    for query, positive, negative in iter_triples_csv(triples_path):
        queries.add(query)
        papers.update((query, positive, negative))
    if not queries:
        raise InputError("no triples in file", path=triples_path)
    mapped_papers = _map_ids(papers, mapping)
    mapped_queries = _map_ids(queries, mapping)
    unmapped = len(papers) - len([p for p in papers if mapping is None or p in mapping])
    logger.info("SPECTER triples %s: %d papers, %d queries (%d without a graph id)", triples_path, len(papers),
                len(queries), unmapped)
    return SpecterIds(mapped_papers, mapped_queries, len(papers), len(queries), unmapped, str(triples_path), mapping)


def _sample(candidates: Iterable[str], count: int, rng: random.Random, what: str) -> List[str]:
    """``count`` ids drawn from sorted ``candidates`` (all of them, with a warning, when too few)."""
    pool = sorted(candidates)
    if count <= 0:
        return []
    if count > len(pool):
        logger.warning("%s: wanted %d random papers but only %d candidates are left; taking all", what, count,
                       len(pool))
        return pool
    return rng.sample(pool, count)


def _specter_with_top_up(graph_paper_ids: Sequence[str], specter: SpecterIds, excluded: Set[str], seed: int,
                         stats: Dict[str, int]) -> Tuple[Set[str], Set[str]]:
    """SPECTER's papers topped up to SPECTER's size (:func:`select_specter_corpus`).

    Query papers outside the selected corpus cannot be kNN queries, so the queries are SPECTER's
    queries (plus random top-ups) that are in the corpus.
    """
    allowed = sorted(set(graph_paper_ids) - excluded)  # SciDocs papers never enter the corpus
    selection = select_specter_corpus(allowed, set(), specter.triples_path, specter.mapping or _Identity(),
                                      sample_n_nodes="specter", seed=seed)
    papers = set(selection["train_paper_ids"])
    queries = set(selection["specter_and_random_queries"]) & papers
    stats.update(specter_papers_in_graph=int(selection["counts"]["specter_papers_in_graph"]),
                 specter_queries_in_graph=int(selection["counts"]["specter_queries_in_graph"]),
                 queries_outside_corpus=len(set(selection["specter_and_random_queries"]) - papers))
    return papers, queries


def select_specter_corpus(s2orc_paper_ids: Sequence[str], scidocs_s2_ids: Set[str], triples_path: PathLike,
                          s2id_to_s2orc: Dict[str, str], sample_n_nodes: Union[int, str] = 0,
                          seed: int = 0) -> Dict[str, object]:
    """Choose the SPECTER-like training corpus over S2ORC, as the original ``get_specter_corpus``.

    - SPECTER triples (S2 ids) are mapped to S2ORC ids and kept where they are in ``s2orc_paper_ids``;
    - ``specter_queries``: mapped SPECTER query papers; ``specter_and_random_queries``: those plus
      random S2ORC papers (not SciDocs, not SPECTER) up to the original number of queries;
    - ``train_paper_ids``: SPECTER papers + random papers up to ``sample_n_nodes`` (an int, or
      ``"specter"`` for the SPECTER corpus size); 0 = all S2ORC papers except excluded ones;
    - ``excluded_paper_ids``: SciDocs papers (mapped to S2ORC) that are not SPECTER papers, to be
      excluded from the citation graph.

    Sampling draws from sorted candidates with ``random.Random(seed)``: deterministic.
    """
    rnd = random.Random(seed)
    corpus = set(map(str, s2orc_paper_ids))
    scidocs_s2orc = {s2id_to_s2orc[s] for s in scidocs_s2_ids if s in s2id_to_s2orc}
    triples = list(iter_triples_csv(triples_path))
    if not triples:
        raise InputError("no triples in file", path=triples_path)
    specter_s2_ids = {i for t in triples for i in t}
    specter_in_graph = {s2id_to_s2orc[s] for s in specter_s2_ids if s in s2id_to_s2orc} & corpus
    query_s2_ids = {q for q, _, _ in triples}
    queries = sorted({s2id_to_s2orc[s] for s in query_s2_ids if s in s2id_to_s2orc} & corpus)
    candidates = sorted(corpus - scidocs_s2orc - specter_in_graph)
    missing_queries = max(0, len(query_s2_ids) - len(queries))
    random_queries = rnd.sample(candidates, min(missing_queries, len(candidates)))
    excluded = scidocs_s2orc - specter_in_graph
    if sample_n_nodes == "specter" or (isinstance(sample_n_nodes, int) and sample_n_nodes > 0):
        target = len(specter_s2_ids) if sample_n_nodes == "specter" else int(sample_n_nodes)
        if target < len(specter_in_graph):
            raise InputError(f"sample_n_nodes={target} is smaller than the {len(specter_in_graph)} SPECTER "
                             f"papers in the graph")
        extra = rnd.sample(candidates, min(target - len(specter_in_graph), len(candidates)))
        train = sorted(specter_in_graph) + extra
    elif sample_n_nodes in (0, None, "0", ""):
        train = sorted(corpus - excluded)
    else:
        raise InputError(f"sample_n_nodes must be an integer or 'specter', got {sample_n_nodes!r}")
    counts = {"s2orc_papers": len(corpus), "specter_triples": len(triples), "specter_s2_ids": len(specter_s2_ids),
              "specter_papers_in_graph": len(specter_in_graph), "specter_queries": len(query_s2_ids),
              "specter_queries_in_graph": len(queries), "random_queries": len(random_queries),
              "scidocs_s2_ids": len(scidocs_s2_ids), "scidocs_in_s2orc": len(scidocs_s2orc),
              "excluded_paper_ids": len(excluded), "train_paper_ids": len(train)}
    logger.info("SPECTER corpus: %s", counts)
    return {"specter_queries": queries, "specter_and_random_queries": queries + random_queries,
            "train_paper_ids": train, "excluded_paper_ids": sorted(excluded), "counts": counts}


class _Identity(dict):
    """A mapping that maps every id to itself (SPECTER ids that already are graph ids)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return key


def select_training_corpus(
    graph_paper_ids: Sequence[str],
    graph_limit: str = "specter",
    specter: Optional[SpecterIds] = None,
    excluded_ids: Iterable[str] = (),
    seed: int = 0,
) -> TrainingCorpus:
    """Choose the kNN corpus and the query papers (see the module docstring for ``graph_limit``)."""
    if graph_limit not in GRAPH_LIMITS:
        raise InputError(f"--graph_limit {graph_limit!r}: expected one of {', '.join(GRAPH_LIMITS)}")
    if graph_limit in NEEDS_SPECTER_TRIPLES and specter is None:
        raise InputError(f"--graph_limit {graph_limit} needs --specter_triples_path "
                         "(or use --graph_limit graph to train on every graph paper)")
    rng = random.Random(seed)
    excluded = set(excluded_ids)
    candidates = set(graph_paper_ids) - excluded
    if not candidates:
        raise InputError("no graph papers left for training after removing the SciDocs papers")
    stats = {"graph_papers": len(set(graph_paper_ids)), "excluded_papers": len(set(graph_paper_ids) & excluded)}

    if graph_limit == "graph":
        papers = set(candidates)
        queries = (specter.query_ids & papers) if specter is not None else set(papers)
    elif graph_limit == "none":
        papers = specter.paper_ids & candidates
        queries = specter.query_ids & papers
    elif graph_limit == "specter":
        papers, queries = _specter_with_top_up(graph_paper_ids, specter, excluded, seed, stats)
    else:  # s2orc: SPECTER-sized random sample of the graph
        papers = set(_sample(candidates, specter.original_papers, rng, "random corpus"))
        queries = set(_sample(papers, specter.original_queries, rng, "random queries"))

    if not queries:
        raise InputError(f"--graph_limit {graph_limit}: no query papers are in the training corpus "
                         "(do the SPECTER ids map to graph ids? check --s2id_to_s2orc_input_path)")
    stats.update(corpus_papers=len(papers), query_papers=len(queries))
    logger.info("training corpus (--graph_limit %s, seed %d): %d papers, %d query papers (%d graph papers removed "
                "as SciDocs papers)", graph_limit, seed, len(papers), len(queries), stats["excluded_papers"])
    return TrainingCorpus(sorted(papers), sorted(queries), stats)


def scidocs_graph_ids(scidocs_dir: PathLike, mapping: Optional[Dict[str, str]] = None) -> Set[str]:
    """Graph ids of every SciDocs paper (keys of the ``paper_metadata_*.json`` files, mapped)."""
    from scincl.scidocs_io import read_scidocs_metadata_dir

    ids = {str(pid) for papers in read_scidocs_metadata_dir(scidocs_dir).values() for pid in papers}
    mapped = _map_ids(ids, mapping)
    logger.info("SciDocs %s: %d papers, %d with a graph id", Path(scidocs_dir), len(ids), len(mapped))
    return mapped
