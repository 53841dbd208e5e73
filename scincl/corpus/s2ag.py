"""The Semantic Scholar Academic Graph (Datasets API) release layout.

A release folder with ``papers/``, ``abstracts/`` and ``citations/`` subfolders of gzip JSON-lines
files, named as the download links name them (no extension: gzip is detected by its magic bytes).
Ids are ``str(corpusid)``.

- references: ``citations`` records ``{"citingcorpusid", "citedcorpusid", …}``; a record with a null
  id (a citation of or by a paper outside the graph) is counted and skipped. The records of one
  citing paper are grouped while consecutive (see :func:`scincl.corpus.plain.group_consecutive`).
- texts: ``papers.title`` joined by corpusid to ``abstracts.abstract``; the abstracts dataset covers
  only part of the papers, and a paper without one gets an empty abstract (counted as
  ``abstract_missing``). The join is done by :mod:`scincl.corpus.papers` in hash buckets, so it
  never holds all texts in memory.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import msgspec

from scincl.corpus.base import Corpus
from scincl.corpus.arxiv_ids import arxiv_keys
from scincl.corpus.plain import group_consecutive
from scincl.corpus.records import iter_records
from scincl.errors import InputError
from scincl.io import PathLike
from scincl.corpus.shards import ReadStats, _shard_sort_key, is_corpus_file, record_id

DATASETS = ("papers", "abstracts", "citations")
SKIP_NULL_CITING = "null_citingcorpusid"
SKIP_NULL_CITED = "null_citedcorpusid"

CorpusId = Union[int, str]


class _Citation(msgspec.Struct):
    citingcorpusid: Optional[CorpusId] = None
    citedcorpusid: Optional[CorpusId] = None


class _Paper(msgspec.Struct):
    corpusid: CorpusId
    title: Optional[str] = None


class _PaperIds(msgspec.Struct):
    corpusid: CorpusId
    url: Optional[str] = None
    externalids: Optional[Dict[str, Optional[Union[str, int]]]] = None


class _Abstract(msgspec.Struct):
    corpusid: CorpusId
    abstract: Optional[str] = None


_CITATION_DECODER = msgspec.json.Decoder(_Citation)
_PAPER_DECODER = msgspec.json.Decoder(_Paper)
_ABSTRACT_DECODER = msgspec.json.Decoder(_Abstract)
_PAPER_IDS_DECODER = msgspec.json.Decoder(_PaperIds)


def _edges(path: Path, strict: bool, stats: ReadStats) -> Iterator[Tuple[int, str, str]]:
    for line_no, rec in iter_records(path, _CITATION_DECODER, strict, stats):
        if rec.citingcorpusid is None:
            stats.skip(SKIP_NULL_CITING, path, line_no)
        elif rec.citedcorpusid is None:
            stats.skip(SKIP_NULL_CITED, path, line_no)
        else:
            citing = record_id(rec.citingcorpusid, path, line_no, strict, stats, "citingcorpusid")
            cited = None if citing is None else record_id(rec.citedcorpusid, path, line_no, strict, stats,
                                                          "citedcorpusid")
            if cited is not None:
                yield line_no, citing, cited


def read_references(path: PathLike, strict: bool = False,
                    stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, citing corpusid, cited corpusids)`` of one ``citations`` file (consecutive records grouped).

    Null ids are counted and skipped even under ``strict`` (they are part of the release, not errors).
    """
    stats = stats if stats is not None else ReadStats()
    yield from group_consecutive(_edges(Path(path), strict, stats), stats)


def read_texts(path: PathLike, strict: bool = False,
               stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, Optional[str], Optional[str]]]:
    """``(line, corpusid, title, None)`` of one ``papers`` file (the abstract is joined later)."""
    stats = stats if stats is not None else ReadStats()
    for line_no, rec in iter_records(path, _PAPER_DECODER, strict, stats):
        corpus_id = record_id(rec.corpusid, path, line_no, strict, stats, "corpusid")
        if corpus_id is None:
            continue
        stats.papers += 1
        yield line_no, corpus_id, rec.title, None


def read_abstracts(path: PathLike, strict: bool = False,
                   stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, Optional[str]]]:
    """``(line, corpusid, abstract)`` of one ``abstracts`` file."""
    for line_no, rec in iter_records(path, _ABSTRACT_DECODER, strict, stats):
        corpus_id = record_id(rec.corpusid, path, line_no, strict, stats, "corpusid")
        if corpus_id is not None:
            yield line_no, corpus_id, rec.abstract


def read_external_ids(path: PathLike, strict: bool = False,
                      stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, corpusid, external ids)`` of one ``papers`` file: the S2 paper sha (end of ``url``) and
    the ``externalids`` values (arXiv ids also without their archive prefix)."""
    stats = stats if stats is not None else ReadStats()
    for line_no, rec in iter_records(path, _PAPER_IDS_DECODER, strict, stats):
        corpus_id = record_id(rec.corpusid, path, line_no, strict, stats, "corpusid")
        if corpus_id is None:
            continue
        stats.papers += 1
        keys = [rec.url.rstrip("/").rsplit("/", 1)[-1]] if rec.url else []
        for name, value in (rec.externalids or {}).items():
            if value is not None and value != "":
                keys.extend(arxiv_keys(str(value)) if name == "ArXiv" else [str(value)])
        yield line_no, corpus_id, keys


def dataset_files(root: Path, dataset: str) -> List[Path]:
    """The files of one dataset folder (any name; hidden files skipped), in natural name order."""
    folder = root / dataset
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if is_corpus_file(p) and not p.name.startswith(".")]
    return sorted(files, key=_shard_sort_key)


def open_s2ag(path: PathLike) -> Corpus:
    """An S2AG release folder; ``papers/`` is required, ``citations/`` and ``abstracts/`` may be absent."""
    root = Path(path)
    papers = dataset_files(root, "papers")
    if not papers:
        raise InputError("S2AG release needs a papers/ folder with dataset files", path=root)
    return Corpus(format="s2ag", root=root, reference_files=dataset_files(root, "citations"),
                  read_references=read_references, text_files=papers, read_texts=read_texts,
                  abstract_files=dataset_files(root, "abstracts"), read_abstracts=read_abstracts,
                  read_external_ids=read_external_ids, references_grouped=False)
