"""A SciDocs-format cite / co-cite evaluation folder built from any corpus (``cli_s2orc.py make_eval_dir``).

The rules are those of docs/data.md "A SciDocs-format evaluation folder", by which the hep-th folder of
``../shared/data`` was built, and of SciDocs' own cite and co-cite tasks (Cohan et al. 2020, §3.2):

- ``cite``: a query paper, 5 papers it cites (``qid 0 pid 1``) and 25 random papers it does not cite
  (``qid 0 pid 0``); a query needs at least 5 cited papers with a text;
- ``cocite``: a query paper, 5 papers co-cited with it by at least :data:`MIN_COCITATIONS` papers and 25
  random papers that are not; a query needs at least 5 such papers with a text;
- the two tasks draw disjoint query sets (cite first); each task's queries are split
  :data:`VAL_SHARE` val / the rest test (hep-th: 100 / 300);
- every paper in a qrel has a text (title or abstract) and is written to
  ``paper_metadata_view_cite_read.json``; the query ids go to ``scidocs_paper_ids.json``, the list
  to exclude from training (``run_specter --scidocs_dir`` reads it from the folder; scincl/settings/run.py:resolve).

Random candidates are drawn from every paper of the corpus with a text, not only from graph papers,
so a candidate can be another task's query (on hep-th 463 of the 800 queries are also candidates).
Draws are seeded (``random.Random(seed)`` over sorted ids), so the same corpus and flags give the same bytes.
A task without eligible queries (a corpus whose papers have no co-citations, say) is left out, and
``eval_dir.stats.json`` says so. Memory: the ids of the papers with a text, the citation pairs (to count
each once) and the per-paper counts of co-cited papers; the lists of relevant papers are read again for
the drawn queries only, and the texts for the papers in the qrels only.
"""
from __future__ import annotations

import logging
import random
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from scincl.corpus import Corpus, write_papers
from scincl.corpus.outputs import open_corpus_with_workers, resolved_format, worker_count
from scincl.errors import InputError
from scincl.graph.citations import extract_citations, read_citations_tsv
from scincl.graph.cocitations import read_cocitations_tsv
from scincl.graph.regroup import corpus_cocitations
from scincl.io import PathLike, atomic_open, iter_jsonl, write_id_list, write_json
from scincl.provenance import OutputRecord
from scincl.scidocs_io import METADATA_FILES, QREL_TASKS
from scincl.settings.run import EXCLUDED_IDS_FILE
from scincl.temporaries import make_temporary_dir
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

RELEVANT_PER_QUERY = 5  # SciDocs cite / co-cite: 5 relevant candidates per query (Cohan et al. 2020, §3.2)
RANDOM_PER_QUERY = 25  # ... and 25 random, not relevant ones
MIN_COCITATIONS = 2  # co-cite: "co-cited with the query by at least 2 papers" (docs/data.md; hep-th's folder)
VAL_SHARE = 0.25  # share of a task's queries in val (hep-th: 100 val / 300 test)
DEFAULT_QUERIES = 400  # queries per task: hep-th's folder (100 val + 300 test)
TASK_FOLDERS = (QREL_TASKS["cite"], QREL_TASKS["co-cite"])  # "cite", "cocite"


@dataclass
class TaskDraw:
    """The queries of one task, each with its 5 relevant and 25 random candidates, split val / test."""

    name: str
    eligible: int
    val: Dict[str, Tuple[List[str], List[str]]] = field(default_factory=dict)
    test: Dict[str, Tuple[List[str], List[str]]] = field(default_factory=dict)

    def papers(self) -> Set[str]:
        """Every paper of the task's qrels (queries and candidates)."""
        out: Set[str] = set()
        for split in (self.val, self.test):
            for query, (relevant, random_ones) in split.items():
                out.update([query, *relevant, *random_ones])
        return out


def split_sizes(queries: int) -> Tuple[int, int]:
    """(val, test) query counts for ``queries`` drawn queries: :data:`VAL_SHARE` in val, at least one each."""
    if queries < 2:
        return (0, queries)
    val = min(max(1, round(queries * VAL_SHARE)), queries - 1)
    return (val, queries - val)


def draw_task(name: str, relevant_counts: Counter, min_relevant: int, queries: int, taken: Set[str],
              relevant_of: Callable[[Set[str]], Dict[str, Set[str]]], pool: Sequence[str],
              rnd: random.Random) -> TaskDraw:
    """Draw one task: ``queries`` papers with at least ``min_relevant`` relevant papers (not in ``taken``),
    then for each 5 of its relevant papers and 25 random papers of ``pool`` that are neither relevant nor
    the query. ``relevant_of(query ids)`` returns the relevant papers (with a text) of those queries.
    ``eligible`` counts every paper with enough relevant ones, those in ``taken`` included."""
    eligible = sorted(q for q, n in relevant_counts.items() if n >= min_relevant)
    free = [q for q in eligible if q not in taken]
    chosen = rnd.sample(free, min(queries, len(free)))
    relevant = relevant_of(set(chosen))
    n_val, _ = split_sizes(len(chosen))
    draw = TaskDraw(name, eligible=len(eligible))
    in_pool = set(pool)
    for i, query in enumerate(chosen):
        positives = rnd.sample(sorted(relevant[query]), RELEVANT_PER_QUERY)
        excluded = relevant[query] | {query}
        if len(pool) - len(excluded & in_pool) < RANDOM_PER_QUERY:
            raise InputError(f"the corpus has too few papers with a text to draw {RANDOM_PER_QUERY} random "
                             f"candidates per query ({len(pool)} papers with a text)")
        negatives = _random_papers(pool, excluded=excluded, n=RANDOM_PER_QUERY, rnd=rnd)
        (draw.val if i < n_val else draw.test)[query] = (positives, negatives)
    return draw


def _random_papers(pool: Sequence[str], excluded: Set[str], n: int, rnd: random.Random) -> List[str]:
    """``n`` distinct papers of ``pool`` not in ``excluded`` (rejection sampling: the caller checked that there are
    ``n``, and the pool is far larger than ``excluded`` in any corpus with queries to draw)."""
    out: List[str] = []
    while len(out) < n:
        paper = pool[rnd.randrange(len(pool))]
        if paper not in excluded and paper not in out:
            out.append(paper)
    return out


# ---------------------------------------------------------------------------------- corpus -> counts

def _texts(papers_jsonl: Path) -> Iterator[dict]:
    for _, record in iter_jsonl(papers_jsonl):
        if (record.get("title") or "").strip() or (record.get("abstract") or "").strip():
            yield record


def _cited_counts(citations: Path, with_text: Set[str]) -> Counter:
    counts: Counter = Counter()
    for citing, cited in _unique_edges(citations):
        if citing in with_text and cited in with_text:
            counts[citing] += 1
    return counts


def _unique_edges(citations: Path) -> Iterator[Tuple[str, str]]:
    """Citation edges without self-citations, each (citing, cited) pair once (a corpus may repeat a line)."""
    seen: Set[Tuple[str, str]] = set()
    for citing, cited in read_citations_tsv(citations):
        if citing != cited and (citing, cited) not in seen:
            seen.add((citing, cited))
            yield citing, cited


def _cited_by(citations: Path, with_text: Set[str]) -> Callable[[Set[str]], Dict[str, Set[str]]]:
    def relevant_of(queries: Set[str]) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {q: set() for q in queries}
        for citing, cited in read_citations_tsv(citations):
            if citing in out and cited in with_text and cited != citing:
                out[citing].add(cited)
        return out
    return relevant_of


def _cocitation_pairs(cocitations: Path, with_text: Set[str]) -> Iterator[Tuple[str, str]]:
    for a, b, _count in read_cocitations_tsv(cocitations):  # min_count already applied; both directions listed
        if a != b and a in with_text and b in with_text:
            yield a, b


def _cocited_with(cocitations: Path, with_text: Set[str]) -> Callable[[Set[str]], Dict[str, Set[str]]]:
    def relevant_of(queries: Set[str]) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {q: set() for q in queries}
        for a, b in _cocitation_pairs(cocitations, with_text):
            if a in out:
                out[a].add(b)
        return out
    return relevant_of


# ---------------------------------------------------------------------------------- writing

def _write_qrels(path: Path, split: Dict[str, Tuple[List[str], List[str]]]) -> None:
    if not split:
        return  # an empty qrel file is an error for every reader: the task or split is absent instead
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as fh:
        for query, (relevant, random_ones) in split.items():
            fh.writelines(f"{query} 0 {pid} 1\n" for pid in relevant)
            fh.writelines(f"{query} 0 {pid} 0\n" for pid in random_ones)


def _write_metadata(path: Path, papers_jsonl: Path, needed: Set[str]) -> int:
    texts = {r["paper_id"]: {"paper_id": r["paper_id"], "title": r.get("title") or "",
                             "abstract": r.get("abstract") or ""}
             for r in _texts(papers_jsonl) if r["paper_id"] in needed}
    write_json(path, {pid: texts[pid] for pid in sorted(texts)}, indent=False)
    return len(texts)


def build_eval_dir(corpus: Corpus, output_dir: PathLike, queries: int = DEFAULT_QUERIES, seed: int = 0,
                   workers: int = 1, strict: bool = False) -> Dict:
    """Write the cite and co-cite tasks of ``corpus`` to ``output_dir`` (module docstring); returns the stats."""
    if int(queries) < 2:
        raise InputError(f"--queries {queries}: give at least 2 queries per task (one val, one test)")
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = make_temporary_dir(out, "eval_dir.work")
    try:
        papers_jsonl, citations, cocitations = work / "papers.jsonl", work / "citations.tsv", work / "cocitations.tsv"
        write_papers(corpus, papers_jsonl, workers=workers, strict=strict)
        with_text = {r["paper_id"] for r in _texts(papers_jsonl)}
        extract_citations(corpus.reference_files, citations, workers=workers, strict=strict,
                          read_references=corpus.read_references)
        corpus_cocitations(corpus, cocitations, workers=workers, min_count=MIN_COCITATIONS, strict=strict)
        cocited_counts = Counter(a for a, _ in _cocitation_pairs(cocitations, with_text))
        rnd = random.Random(int(seed))
        pool = sorted(with_text)
        cite = draw_task(TASK_FOLDERS[0], _cited_counts(citations, with_text), RELEVANT_PER_QUERY, int(queries), set(),
                         _cited_by(citations, with_text), pool, rnd)
        cocite = draw_task(TASK_FOLDERS[1], cocited_counts, RELEVANT_PER_QUERY, int(queries),
                           set(cite.val) | set(cite.test), _cocited_with(cocitations, with_text), pool, rnd)
        if not (cite.val or cite.test or cocite.val or cocite.test):
            raise InputError(f"no paper of the corpus cites {RELEVANT_PER_QUERY} papers with a text or is co-cited "
                             f"with {RELEVANT_PER_QUERY} of them by {MIN_COCITATIONS}+ papers: no query to draw",
                             path=corpus.root)
        for task in (cite, cocite):
            for split in ("val", "test"):
                _write_qrels(out / task.name / f"{split}.qrel", getattr(task, split))
        query_ids = sorted(set(cite.val) | set(cite.test) | set(cocite.val) | set(cocite.test))
        metadata_papers = _write_metadata(out / METADATA_FILES["view_cite_read"], papers_jsonl,
                                          cite.papers() | cocite.papers())
        write_id_list(out / EXCLUDED_IDS_FILE, query_ids)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    stats = {"corpus_format": corpus.format, "papers_with_text": len(with_text), "seed": int(seed),
             "queries_per_task": int(queries),
             "tasks": {t.name: {"eligible_queries": t.eligible, "val": len(t.val), "test": len(t.test)}
                       for t in (cite, cocite)},
             "queries": len(query_ids), "metadata_papers": metadata_papers}
    for task in (cite, cocite):
        if len(task.val) + len(task.test) < int(queries):
            logger.warning("%s: only %d eligible queries, fewer than --queries %d", task.name, task.eligible, queries)
    write_json(out / "eval_dir.stats.json", stats)
    logger.info("evaluation folder %s: %s", out, stats)
    return stats


@writes("output_dir")
def make_eval_dir(corpus_dir: str, output_dir: str, queries: int = DEFAULT_QUERIES, seed: int = 0,
                  corpus_format: Optional[str] = None, workers: Optional[int] = None, strict: bool = False,
                  override: bool = False):
    """Build a SciDocs-format cite / co-cite evaluation folder from your own corpus (any --corpus_format).

    Draws QUERIES query papers per task (seeded): cite = 5 papers the query cites + 25 random ones,
    co-cite = 5 papers co-cited with it by at least 2 papers + 25 random ones; 1/4 of each task's
    queries in val, the rest in test (the shape of ../shared/data/hepth/scidocs). Writes
    OUTPUT_DIR/{cite,cocite}/{val,test}.qrel, paper_metadata_view_cite_read.json (the texts of every
    paper in the qrels), scidocs_paper_ids.json (the query papers: exclude them from training) and
    eval_dir.stats.json (eligible and drawn queries per task). Pass OUTPUT_DIR as --scidocs_dir to
    run_specter (its query papers are then kept out of the graph and the triplets) and to evaluate.

    Example:
        python cli_s2orc.py make_eval_dir data/my_corpus data/my_eval --queries 400 --seed 0

    :param corpus_dir: the corpus folder (S2ORC shards, S2AG release, OpenAlex snapshot or plain folder)
    :param output_dir: the evaluation folder to write (created)
    :param queries: query papers per task (fewer when fewer papers qualify; the stats say how many)
    :param seed: seed of the query and candidate draws (same corpus and flags: the same bytes)
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder)
    :param workers: processes reading files in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing folder
    """
    out = Path(output_dir)
    record = OutputRecord(out / "eval_dir.stats.json", out / EXCLUDED_IDS_FILE,
                          out / METADATA_FILES["view_cite_read"], command="make_eval_dir",
                          settings={"command": "make_eval_dir", "queries": int(queries), "seed": int(seed),
                                    "corpus_format": resolved_format(corpus_dir, corpus_format)},
                          inputs=[corpus_dir])
    if not record.reusable(override):
        corpus = open_corpus_with_workers(corpus_dir, corpus_format, workers, strict)
        build_eval_dir(corpus, out, queries=int(queries), seed=int(seed), workers=worker_count(workers),
                       strict=strict)
        record.write()
    print(f"evaluation folder written to {out} ({_summary(out)}); pass it as --scidocs_dir")


def _summary(output_dir: Path) -> str:
    from scincl.io import read_json

    stats = read_json(output_dir / "eval_dir.stats.json")
    tasks = ", ".join(f"{name} {t['val']} val + {t['test']} test queries" for name, t in stats["tasks"].items())
    return f"{tasks}, {stats['metadata_papers']} papers"
