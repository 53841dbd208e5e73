"""Which format a corpus folder is in, and opening it as a :class:`~scincl.corpus.base.Corpus`.

Detection looks only at names: ``papers/`` + ``citations/`` or ``abstracts/`` folders (S2AG),
``updated_date=*`` partitions under the folder, ``works/`` or ``data/works/`` (OpenAlex),
``papers.jsonl[.gz]`` (plain), ``*.jsonl[.gz]`` shards in the folder or its ``metadata/`` (S2ORC).
Exactly one match is the format; none or several is an error that names the formats.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional

from scincl.corpus.base import CORPUS_FORMATS, Corpus
from scincl.corpus.openalex import open_openalex, works_dir_of
from scincl.corpus.plain import PAPERS_NAMES, open_plain
from scincl.corpus.s2ag import dataset_files, open_s2ag
from scincl.corpus.s2orc import metadata_dir_of, open_s2orc
from scincl.errors import InputError
from scincl.io import PathLike
from scincl.corpus.shards import SHARD_SUFFIXES


def _is_s2orc(root: Path) -> bool:
    shards = metadata_dir_of(root)
    return any(p.is_file() and p.name.endswith(SHARD_SUFFIXES) and p.name not in PAPERS_NAMES
               for p in shards.iterdir())


def _is_s2ag(root: Path) -> bool:
    return bool(dataset_files(root, "papers")) and ((root / "citations").is_dir() or (root / "abstracts").is_dir())


def _is_openalex(root: Path) -> bool:
    try:
        works_dir_of(root)
    except InputError:
        return False
    return True


def _is_plain(root: Path) -> bool:
    return any((root / name).is_file() for name in PAPERS_NAMES)


_DETECTORS: Dict[str, Callable[[Path], bool]] = {"s2orc": _is_s2orc, "s2ag": _is_s2ag, "openalex": _is_openalex,
                                                 "plain": _is_plain}
_FORMAT_HELP = ("s2orc (*.jsonl.gz shards, or a folder with metadata/), s2ag (papers/ abstracts/ citations/), "
                "openalex (data/works/updated_date=*/part_*.gz), plain (papers.jsonl[.gz] + citations.tsv[.gz])")


def detect_format(path: PathLike) -> str:
    """The format of the corpus at ``path``; :class:`InputError` naming the formats when none or several fit."""
    root = Path(path)
    if not root.exists():
        raise InputError("corpus folder not found", path=root)
    if not root.is_dir():
        raise InputError("expected a corpus folder, got a file", path=root)
    matches: List[str] = [name for name, test in _DETECTORS.items() if test(root)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(f"cannot tell the corpus format; pass --corpus_format, one of: {_FORMAT_HELP}", path=root)
    raise InputError(f"ambiguous corpus format (looks like {' and '.join(matches)}); pass --corpus_format "
                     f"{'|'.join(matches)}", path=root)


def check_format(corpus_format: Optional[str]) -> Optional[str]:
    """``corpus_format`` validated (None or ``auto`` = detect); an unknown name is an error listing the formats."""
    if corpus_format in (None, "", "auto"):
        return None
    if corpus_format not in CORPUS_FORMATS:
        raise InputError(f"unknown --corpus_format {corpus_format!r}; one of: {', '.join(CORPUS_FORMATS)} "
                         "(or auto)")
    return corpus_format


def open_corpus(path: PathLike, corpus_format: Optional[str] = None, workers: int = 1,
                strict: bool = False) -> Corpus:
    """Open the corpus at ``path`` in ``corpus_format`` (detected when None or ``auto``).

    OpenAlex snapshots are indexed here (one parallel pass over the ids, see
    :mod:`scincl.corpus.openalex`); the other formats only list their files.
    """
    fmt = check_format(corpus_format) or detect_format(path)
    if not Path(path).is_dir():
        raise InputError(f"{fmt} corpus folder not found", path=path)
    return _OPENERS[fmt](Path(path), workers, strict)


_OPENERS: Dict[str, Callable[[Path, int, bool], Corpus]] = {
    "s2orc": lambda path, workers, strict: open_s2orc(path),
    "s2ag": lambda path, workers, strict: open_s2ag(path),
    "openalex": open_openalex,
    "plain": lambda path, workers, strict: open_plain(path),
}
