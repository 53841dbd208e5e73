"""The outputs of a corpus or graph stage command: workers, corpus format, error when nothing was read.

Every command of :mod:`scincl.corpus.stage` and :mod:`scincl.graph.stage` (``cli_s2orc.py``'s
subcommands) keeps its made-by record with :class:`scincl.provenance.OutputRecord` (the one reuse
rule), resolves ``--workers`` and ``--corpus_format`` the same way and writes JSON with
:func:`write_json_any`.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from scincl.corpus import Corpus, open_corpus
from scincl.corpus.base import files_seen
from scincl.errors import InputError
from scincl.io import atomic_open, dumps_json
from scincl.provenance import discard_pending, record_path

logger = logging.getLogger(__name__)


def worker_count(workers: Optional[int]) -> int:
    """``--workers``, or every CPU when not given."""
    return int(workers) if workers else (os.cpu_count() or 1)


def open_corpus_with_workers(corpus_dir: str, corpus_format: Optional[str], workers: Optional[int],
                             strict: bool = False) -> Corpus:
    """:func:`scincl.corpus.open_corpus` with ``--workers`` resolved."""
    return open_corpus(corpus_dir, corpus_format, workers=worker_count(workers), strict=strict)


def resolved_format(corpus_dir: Optional[Union[str, Path]], corpus_format: Optional[str]) -> Optional[str]:
    """The format a corpus is read as (``--corpus_format``, else detected): what a made-by record keeps,
    so ``--corpus_format s2orc`` and its detection on an S2ORC folder make the same record."""
    from scincl.corpus import check_format, detect_format

    try:
        return check_format(corpus_format) or (detect_format(corpus_dir) if corpus_dir else None)
    except InputError:
        return corpus_format  # opening the corpus reports it


def nothing_read(corpus: Corpus, what: str, outputs: Sequence[Union[str, Path]] = ()) -> InputError:
    """The error for a corpus folder that gave no ``what`` in its format (issue 29: it was an empty
    output and rc 0); the outputs already written are removed, so a rerun is not refused."""
    for output in [*outputs, *(record_path(output) for output in outputs)]:  # with the record begun for them
        if Path(output).is_file():
            Path(output).unlink()
    discard_pending()
    for parent in {Path(output).parent for output in outputs}:
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()  # the output folder this command created, left empty
    return InputError(f"read no {what} as --corpus_format {corpus.format} from {len(corpus.reference_files)} "
                      f"file(s) (files seen: {files_seen(corpus.root)}); is that the corpus's format?",
                      path=corpus.root)



def write_json_any(path: Union[str, Path], obj: Any) -> None:
    """JSON output, gzip-compressed when the name ends in .gz (deterministic bytes)."""
    with atomic_open(path) as fh:
        fh.write(dumps_json(obj).decode() + "\n")


def stats_path_of(output: Union[str, Path], default_name: str) -> Path:
    """Where the counts of ``output`` go: ``<name>.stats.json`` beside a file, ``default_name`` in a directory."""
    out = Path(output)
    if out.suffix in (".tsv", ".json", ".gz"):
        name = out.name.split(".")[0]
        return out.parent / f"{name}.stats.json"
    return out / default_name


def paths_of(comma_separated: Union[str, list, tuple, None]) -> list:
    """The files of a comma-separated path flag (fire may pass a list or tuple), for a made-by record."""
    if not comma_separated:
        return []
    items = comma_separated if isinstance(comma_separated, (list, tuple)) else str(comma_separated).split(",")
    return [str(item).strip() for item in items if str(item).strip()]
