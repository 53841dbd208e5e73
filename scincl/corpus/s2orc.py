"""The S2ORC 20200705v1 metadata layout: ``metadata/metadata_{i}.jsonl.gz`` shards.

References come from :func:`scincl.corpus.shards.iter_paper_references` (the fast path citation
extraction has always used); texts from the full records. Ids are S2ORC ``paper_id`` strings.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from scincl.corpus.base import Corpus, files_seen
from scincl.corpus.plain import PAPERS_NAMES
from scincl.errors import InputError
from scincl.corpus.arxiv_ids import arxiv_keys
from scincl.corpus.records import SKIP_INVALID_RECORD
from scincl.io import PathLike
from scincl.corpus.shards import ReadStats, iter_numbered_papers, iter_paper_references, list_metadata_shards


def metadata_dir_of(path: PathLike) -> Path:
    """The shard directory: ``path`` itself, or its ``metadata/`` folder when ``path`` holds no shards."""
    path = Path(path)
    sub = path / "metadata"
    if sub.is_dir() and not any(p.name.endswith((".jsonl.gz", ".jsonl")) for p in path.iterdir() if p.is_file()):
        return sub
    return path


def read_texts(path: PathLike, strict: bool = False,
               stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, Optional[str], Optional[str]]]:
    """``(line, paper_id, title, abstract)`` of one S2ORC shard; a title or abstract that is not a string or null is
    a counted ``invalid_record`` skip (``strict``: an error), as the other formats' typed readers skip it (issue 41)."""
    stats = stats if stats is not None else ReadStats()
    for line_no, record in iter_numbered_papers(path, strict=strict, stats=stats):
        title, abstract = record.get("title"), record.get("abstract")
        bad = next((name for name, value in (("title", title), ("abstract", abstract))
                    if value is not None and not isinstance(value, str)), None)
        if bad is not None:
            message = f"invalid record ({bad} is a {type(record[bad]).__name__}, not a string or null)"
            if strict:
                raise InputError(message, path=path, line=line_no, field=bad)
            stats.papers -= 1  # counted by the shard reader; not a paper of the texts
            stats.skip(SKIP_INVALID_RECORD, path, line_no, message)
            continue
        yield line_no, record["paper_id"], title, abstract


EXTERNAL_ID_FIELDS = ("doi", "pubmed_id", "pmc_id", "mag_id", "acl_id")  # S2ORC 20200705v1 metadata fields


def read_external_ids(path: PathLike, strict: bool = False,
                      stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, paper_id, external ids)``: ``arxiv_id`` (also without its archive prefix), DOI, PubMed, MAG, ACL ids."""
    for line_no, record in iter_numbered_papers(path, strict=strict, stats=stats):
        keys = arxiv_keys(record.get("arxiv_id"))
        keys.extend(str(record[f]) for f in EXTERNAL_ID_FIELDS if record.get(f) not in (None, ""))
        yield line_no, record["paper_id"], keys


def open_s2orc(path: PathLike) -> Corpus:
    """An S2ORC corpus (the metadata shard directory, or the release folder that holds ``metadata/``)."""
    shards = [p for p in list_metadata_shards(metadata_dir_of(path)) if p.name not in PAPERS_NAMES]
    if not shards:  # a plain corpus's papers.jsonl is not an S2ORC shard (issue 29: it read as 0 citations)
        raise InputError(f"no S2ORC shards (*.jsonl.gz) in the folder (files seen: {files_seen(path)}); is "
                         "--corpus_format s2orc right?", path=path)
    return Corpus(format="s2orc", root=Path(path), reference_files=shards, read_references=iter_paper_references,
                  text_files=shards, read_texts=read_texts, read_external_ids=read_external_ids)
