"""The plain layout: ``papers.jsonl[.gz]`` (``{"paper_id","title","abstract"}``) + ``citations.tsv[.gz]``.

``citations.tsv`` holds ``citing<TAB>cited`` lines without header. The lines of one citing paper
are grouped while they are consecutive (as when written citing paper by citing paper); a citing
paper whose lines come back later is counted as ``citing_paper_split_runs``, since its references
then reach the co-citation counts as two lists.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Optional, Tuple, Union

import msgspec

from scincl.corpus.base import Corpus
from scincl.corpus.records import iter_records, iter_tsv_lines
from scincl.errors import InputError
from scincl.io import PathLike
from scincl.corpus.shards import ReadStats, record_id

PAPERS_NAMES = ("papers.jsonl", "papers.jsonl.gz")
CITATIONS_NAMES = ("citations.tsv", "citations.tsv.gz")


class _PlainPaper(msgspec.Struct):
    paper_id: Union[str, int]
    title: Optional[str] = None
    abstract: Optional[str] = None


_PAPER_DECODER = msgspec.json.Decoder(_PlainPaper)


def read_texts(path: PathLike, strict: bool = False,
               stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, Optional[str], Optional[str]]]:
    """``(line, paper_id, title, abstract)`` of ``papers.jsonl``."""
    stats = stats if stats is not None else ReadStats()
    for line_no, rec in iter_records(path, _PAPER_DECODER, strict, stats):
        paper_id = record_id(rec.paper_id, path, line_no, strict, stats)
        if paper_id is None:
            continue
        stats.papers += 1
        yield line_no, paper_id, rec.title, rec.abstract


def group_consecutive(edges: Iterator[Tuple[int, str, str]],
                      stats: ReadStats) -> Iterator[Tuple[int, str, List[str]]]:
    """``(first line, citing, [cited, …])`` per run of consecutive edges with the same citing paper."""
    seen = set()
    current, refs, first = None, [], 0
    for line_no, citing, cited in edges:
        if citing != current:
            if current is not None:
                stats.papers += 1
                yield first, current, refs
            if citing in seen:
                stats.counted["citing_paper_split_runs"] += 1
            seen.add(citing)
            current, refs, first = citing, [], line_no
        refs.append(cited)
    if current is not None:
        stats.papers += 1
        yield first, current, refs


def read_references(path: PathLike, strict: bool = False,
                    stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, citing, references)`` of ``citations.tsv`` (consecutive lines grouped)."""
    stats = stats if stats is not None else ReadStats()
    yield from group_consecutive(iter_tsv_lines(path, strict, stats), stats)


def read_external_ids(path: PathLike, strict: bool = False,
                      stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, paper_id, [paper_id])``: plain corpora carry no other ids (SciDocs ids must be theirs)."""
    for line_no, pid, _, _ in read_texts(path, strict, stats):
        yield line_no, pid, [pid]


def _one_of(root: Path, names: Tuple[str, ...]) -> Optional[Path]:
    found = [root / n for n in names if (root / n).is_file()]
    if len(found) > 1:
        raise InputError(f"both {found[0].name} and {found[1].name} present; keep one", path=root)
    return found[0] if found else None


def open_plain(path: PathLike) -> Corpus:
    """A plain corpus folder; ``papers.jsonl[.gz]`` is required, ``citations.tsv[.gz]`` optional (no edges)."""
    root = Path(path)
    papers = _one_of(root, PAPERS_NAMES)
    if papers is None:
        raise InputError("plain corpus needs papers.jsonl or papers.jsonl.gz", path=root)
    citations = _one_of(root, CITATIONS_NAMES)
    return Corpus(format="plain", root=root, reference_files=[citations] if citations else [],
                  read_references=read_references, text_files=[papers], read_texts=read_texts,
                  read_external_ids=read_external_ids, references_grouped=False)
