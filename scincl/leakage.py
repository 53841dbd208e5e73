"""The leakage guard: no evaluation paper reaches the graph or the triplets of a training run.

SciNCL's "w/o leakage" setting (paper §4.1, Table 1) removes the SciDocs papers from the citation
graph as citing *and* as cited papers, so neither the graph embeddings nor the triplets mined from
them have seen an evaluation paper. Every path that trains (``run_specter`` and its seeds/sweeps,
the real-corpus experiments, ``sbin/``, the standalone ``cli_pipeline.py train``) calls
:func:`guard_training` through :func:`scincl.model.train.train` before the first step. Given the
evaluation ids (``--excluded_paper_ids`` / ``--scidocs_paper_ids``), it builds a
:class:`LeakageReport` from the files the run trains from:

- ``evaluation_papers``: how many evaluation ids were named;
- ``edges_removed``: citation edges the extraction dropped for them (``citing_excluded`` +
  ``cited_excluded`` of ``citations.stats.json``; ``None`` when the edges were not extracted by us);
- ``in_graph``: evaluation papers among the graph's nodes (its entity names, and the citation
  edges it was trained from);
- ``in_triplets``: evaluation papers among the triplets' queries, positives and negatives;
- ``in_corpus``: evaluation ids the extraction found in the corpus (``id_lists`` of ``citations.stats.json``),
  and ``warning`` when fewer than half of them occur (ids of another corpus or form: "0 leaked" would mean
  nothing). Every id is compared in its canonical form (:mod:`scincl.ids`).

A report with ``in_graph`` or ``in_triplets`` above 0 refuses to train (:class:`LeakageError`)
unless the run asks for the paper's "w/ leakage" setting by name: ``--graph_leakage``
(:data:`WITH_LEAKAGE_FLAG`). The report is written to ``OUTPUT_DIR/leakage_report.json`` beside the
model and returned, so the pipelines put it in their ``manifest.json``.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from scincl.errors import InputError
from scincl.ids import FEW_IDS_MATCHED_SHARE, canonical_id, canonical_ids
from scincl.io import iter_tsv, read_json
from scincl.triples.sources import KNN

logger = logging.getLogger(__name__)

WITH_LEAKAGE_FLAG = "graph_leakage"  # the paper's "w/ leakage" setting (Table 1); RunSettings.graph_leakage
LEAKAGE_REPORT_NAME = "leakage_report.json"
EXAMPLES_SHOWN = 5  # leaked ids named in the error and the report

PathLike = Union[str, Path]


class LeakageError(InputError):
    """Evaluation papers would reach training (the run did not ask for ``--graph_leakage``)."""


@dataclass
class LeakageReport:
    """What of the evaluation papers a training run's inputs hold (see module docstring)."""

    evaluation_papers: int
    edges_removed: Optional[int] = None
    in_graph: Optional[int] = None
    in_triplets: Optional[int] = None
    in_corpus: Optional[int] = None  # excluded ids the extraction found in the corpus (None: not extracted by us)
    warning: Optional[str] = None  # e.g. few of the evaluation ids occur in the corpus (another id form?)
    with_leakage: bool = False
    sources: Dict[str, str] = field(default_factory=dict)  # what was checked: name -> path
    examples: List[str] = field(default_factory=list)  # a few leaked ids

    @property
    def leaked(self) -> int:
        """Evaluation papers found in the graph or the triplets (0 for a leakage-free run)."""
        return (self.in_graph or 0) + (self.in_triplets or 0)

    def to_dict(self) -> Dict[str, Any]:
        """The report as recorded in ``leakage_report.json`` and the manifests."""
        return {**asdict(self), "leaked": self.leaked}


def read_evaluation_ids(path: PathLike) -> Set[str]:
    """The evaluation paper ids of a JSON list, canonical (:func:`scincl.ids.canonical_id`: numbers become strings,
    surrounding whitespace goes; an id that cannot be one is an error naming the item)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of evaluation paper ids", path=path)
    return {canonical_id(x, path, field=f"item {i}") for i, x in enumerate(data)}


def ids_in_edges(paths: Iterable[PathLike], ids: Set[str]) -> Set[str]:
    """The ``ids`` that appear as citing or cited paper in citation TSV files."""
    found: Set[str] = set()
    for path in paths:
        for _, row in iter_tsv(path):
            if row[0] in ids:
                found.add(row[0])
            if row[1] in ids:
                found.add(row[1])
    return found


def ids_in_names(path: PathLike, ids: Set[str]) -> Set[str]:
    """The ``ids`` among a graph's nodes (PBG ``entity_names_*.json`` or any JSON id list)."""
    names = read_json(path)
    if not isinstance(names, list):
        raise InputError("expected a JSON list of graph paper ids", path=path)
    return set(canonical_ids(names, path)) & ids


def ids_in_triplets(path: PathLike, ids: Set[str]) -> Set[str]:
    """The ``ids`` among the queries, positives and negatives of a triples CSV or a groups jsonl."""
    from scincl.io import is_gzip_path, iter_jsonl, iter_triples_csv
    from scincl.triples.groups import group_members

    path = Path(path)
    name = path.name[:-3] if is_gzip_path(path) else path.name
    if name.endswith(".jsonl"):
        rows = (group_members(record, path, line) for line, record in iter_jsonl(path))
    else:
        rows = ((q, [p], [n]) for q, p, n in iter_triples_csv(path))
    found: Set[str] = set()
    for query, positives, negatives in rows:
        found.update(ids.intersection([query, *positives, *negatives]))
    return found


def citations_stats_path(citations: PathLike) -> Path:
    """The ``citations.stats.json`` that :func:`scincl.graph.stage.get_citations` wrote beside an edge file."""
    path = Path(citations)
    return path.parent / f"{path.name.split('.')[0]}.stats.json"


def _extraction_stats(citations: Sequence[PathLike]) -> List[Dict[str, Any]]:
    """The ``citations.stats.json`` of each distinct extraction the edge files come from."""
    return [read_json(path) or {} for path in sorted({citations_stats_path(c) for c in citations}) if path.exists()]


def edges_removed(citations: Sequence[PathLike]) -> Optional[int]:
    """Edges dropped for the excluded ids when the citations were extracted (``None``: no stats found)."""
    stats = _extraction_stats(citations)
    if not stats:
        return None
    return sum(int(s.get("edges_dropped", {}).get("citing_excluded", 0))
               + int(s.get("edges_dropped", {}).get("cited_excluded", 0)) for s in stats)


def excluded_in_corpus(citations: Sequence[PathLike]) -> Optional[int]:
    """How many excluded ids the extraction found in the corpus (the most over the extractions; ``None``: unknown)."""
    found = [s.get("id_lists", {}).get("excluded_paper_ids", {}).get("in_corpus") for s in _extraction_stats(citations)]
    found = [int(n) for n in found if n is not None]
    return max(found) if found else None


def leakage_report(evaluation_ids: Set[str], *, triplets: Optional[PathLike] = None,
                   graph_paper_ids: Optional[PathLike] = None, citations: Sequence[PathLike] = (),
                   with_leakage: bool = False) -> LeakageReport:
    """Count the evaluation papers in the inputs a training run uses (any input may be absent)."""
    citations = [Path(c) for c in citations if c]
    report = LeakageReport(len(evaluation_ids), edges_removed=edges_removed(citations), with_leakage=with_leakage,
                           in_corpus=excluded_in_corpus(citations))
    if report.in_corpus is not None and report.in_corpus < FEW_IDS_MATCHED_SHARE * len(evaluation_ids):
        report.warning = (f"only {report.in_corpus} of the {len(evaluation_ids)} evaluation papers occur in the "
                          "corpus: the others could not be removed (ids of another corpus or form?)")
        logger.warning("leakage: %s", report.warning)
    leaked: Set[str] = set()
    if graph_paper_ids or citations:
        in_graph: Set[str] = set()
        if graph_paper_ids:
            in_graph |= ids_in_names(graph_paper_ids, evaluation_ids)
            report.sources["graph_paper_ids"] = str(graph_paper_ids)
        if citations:
            in_graph |= ids_in_edges(citations, evaluation_ids)
            report.sources["citations"] = ",".join(map(str, citations))
        report.in_graph = len(in_graph)
        leaked |= in_graph
    if triplets:
        in_triplets = ids_in_triplets(triplets, evaluation_ids)
        report.in_triplets = len(in_triplets)
        report.sources["triplets"] = str(triplets)
        leaked |= in_triplets
    report.examples = sorted(leaked)[:EXAMPLES_SHOWN]
    return report


def check_report(report: LeakageReport) -> None:
    """Refuse a report that found evaluation papers, unless it is a "w/ leakage" run."""
    if not report.leaked:
        return
    where = ", ".join(f"{n} in the {w}" for n, w in ((report.in_graph, "graph"), (report.in_triplets, "triplets"))
                      if n)
    if report.with_leakage:
        logger.warning("leakage: %s of %d evaluation papers (--%s: the 'w/ leakage' setting, as asked)",
                       where, report.evaluation_papers, WITH_LEAKAGE_FLAG)
        return
    raise LeakageError(f"{where} of the {report.evaluation_papers} evaluation papers (e.g. "
                       f"{', '.join(report.examples)}): training would see them. Extract the citations with "
                       f"--excluded_paper_ids, or pass --{WITH_LEAKAGE_FLAG} for the paper's 'w/ leakage' setting")


def guard_training(evaluation_paper_ids: Optional[PathLike], triplets: PathLike, *,
                   graph_paper_ids: Optional[PathLike] = None, citations: Sequence[PathLike] = (),
                   with_leakage: bool = False, output_dir: Optional[PathLike] = None) -> Dict[str, Any]:
    """The guard every training path runs before training: report, log, refuse a leak.

    Returns the report as a dict (also written to ``OUTPUT_DIR/leakage_report.json`` when
    ``output_dir`` is given). Without evaluation ids nothing can be checked: the report says so
    (``evaluation_papers`` 0, ``checked`` false) and is only returned (the manifests record it).
    """
    from scincl.io import write_json

    if evaluation_paper_ids is None:
        data: Dict[str, Any] = {"checked": False, "evaluation_papers": 0, "with_leakage": with_leakage,
                                "reason": "no evaluation ids given (--excluded_paper_ids / --scidocs_paper_ids)"}
        logger.info("leakage: no evaluation ids given, nothing to check")
    else:
        report = leakage_report(read_evaluation_ids(evaluation_paper_ids), triplets=triplets,
                                graph_paper_ids=graph_paper_ids, citations=citations, with_leakage=with_leakage)
        data = {"checked": True, "evaluation_paper_ids": str(evaluation_paper_ids), **report.to_dict()}
        logger.info("leakage: %d evaluation papers (%s in the corpus), %s edges removed, %s in the graph, %s in the "
                    "triplets", report.evaluation_papers, report.in_corpus, report.edges_removed, report.in_graph,
                    report.in_triplets)
    if output_dir is not None and evaluation_paper_ids is not None:  # before the verdict: a refusal is on disk too
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        write_json(Path(output_dir) / LEAKAGE_REPORT_NAME, data)
    if evaluation_paper_ids is not None:
        check_report(report)
    return data


def recorded_report(output_dir: PathLike) -> Optional[Dict[str, Any]]:
    """The leakage report a training run wrote into ``output_dir`` (``None`` when absent)."""
    path = Path(output_dir) / LEAKAGE_REPORT_NAME
    return read_json(path) if path.exists() else None



def model_report(model_dir: PathLike, triplets: PathLike, excluded_paper_ids: Optional[str] = None,
                 graph_paper_ids_path: Optional[str] = None, citations_path: Optional[str] = None,
                 graph_leakage: bool = False) -> Optional[Dict[str, Any]]:
    """A trained model's leakage report: the one its training wrote, else (a model trained before the guard) checked
    now from its ``triplets`` and the guard's arguments as ``model.train.train`` takes them."""
    report = recorded_report(model_dir)
    if report is None and Path(triplets).exists():
        report = guard_training(excluded_paper_ids, triplets, graph_paper_ids=graph_paper_ids_path,
                                citations=citations_path.split(",") if citations_path else (),
                                with_leakage=graph_leakage, output_dir=model_dir)
    return report

def write_edges_without(edges: Path, path: Path, hidden: Set[Tuple[str, str]]) -> Tuple[int, int]:
    """Write the citation ``edges`` (TSV) to ``path`` without the ``hidden`` (citing, cited) pairs (the evaluation's
    query-candidate pairs, :func:`scincl.scidocs_io.query_candidate_pairs`: the transductive graph keeps a query's
    other citations); returns (edges kept, edges hidden). ``path`` appears only when complete."""
    from scincl.io import atomic_open

    kept = removed = 0
    with atomic_open(path) as fh:  # removed on an error; a killed run's temp file goes at the next write
        for _, (citing, cited, *_rest) in iter_tsv(edges):
            if (citing, cited) in hidden:
                removed += 1
                continue
            fh.write(f"{citing}\t{cited}\n")
            kept += 1
    logger.info("%s: %d edges kept, %d hidden (query-candidate pairs)", path, kept, removed)
    return kept, removed


def leakage_inputs(excluded: Optional[Path], triples_source: str, graph_ids: Optional[Path],
                   graph_edges: Optional[Path], triples_edges: Optional[Path],
                   graph_leakage: bool = False) -> Dict[str, Any]:
    """``model.train.train``'s leakage arguments (its :func:`guard_training`): the evaluation papers in ``excluded``
    against the graph's nodes (kNN triplets) and the edges the run learnt from (its graph's, SPECTER-like triplets')."""
    knn = triples_source == KNN
    edges = [path for path in (graph_edges, None if knn else triples_edges) if path is not None]
    return {"excluded_paper_ids": str(excluded) if excluded else None,
            "graph_paper_ids_path": str(graph_ids) if knn and graph_ids else None,
            "citations_path": ",".join(dict.fromkeys(str(path) for path in edges)) or None,
            "graph_leakage": graph_leakage}
