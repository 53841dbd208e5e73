"""The outputs of a corpus or graph stage command: its made-by record, reuse rule, error when nothing was read.

Every command of :mod:`scincl.corpus.stage` and :mod:`scincl.graph.stage` (``cli_s2orc.py``'s
subcommands) reuses existing outputs unless ``override`` when its made-by record says they were made
from the same inputs and settings and are unchanged (:class:`OutputRecord`, issue 29), resolves
``--workers`` and ``--corpus_format`` the same way and writes JSON with :func:`write_json_any`.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from scincl.corpus import Corpus, open_corpus
from scincl.corpus.base import files_seen
from scincl.errors import InputError
from scincl.io import atomic_open, dumps_json
from scincl.provenance import (difference, made_by, outputs_changed, outputs_record, read_record, record_path,
                               write_record)

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


def _outputs_of_our_commands(inputs: Sequence[Union[str, Path]]) -> list:
    """Files inside input folders that a command of ours wrote there (each has a ``.made_by.json``
    record beside it, e.g. ``get_metadata_id_mapping`` into the S2ORC folder): not part of the corpus."""
    found = []
    for folder in (Path(p) for p in inputs):
        if folder.is_dir():
            for record in folder.rglob("*.made_by.json"):
                found += [record, record.with_name(record.name[:-len(".made_by.json")])]
    return found


class OutputRecord:
    """The made-by record of a standalone command's outputs (``<first output>.made_by.json``, issue 29).

    ``settings``: every flag that changes the outputs' bytes; ``inputs``: the files and folders read
    (fingerprinted now, once, before the command runs; outputs written inside an input folder are
    left out of its fingerprint). :meth:`reusable` is the reuse rule, :meth:`write` is called after
    every output exists.
    """

    def __init__(self, *outputs: Union[str, Path], settings: Mapping[str, Any],
                 inputs: Sequence[Optional[Union[str, Path]]] = ()) -> None:
        self.outputs = [Path(p) for p in outputs]
        inputs = [p for p in inputs if p]
        self.wanted = made_by(settings, inputs, exclude=self.outputs + [record_path(p) for p in self.outputs]
                              + _outputs_of_our_commands(inputs))

    @property
    def path(self) -> Path:
        return record_path(self.outputs[0])

    def reusable(self, override: bool) -> bool:
        """True (logged) when every output exists, was made from the same inputs and settings and is
        unchanged since; False when something is missing or ``override``; otherwise an InputError
        naming the difference (an output made from another corpus or with other flags is never reused)."""
        if not all(p.exists() for p in self.outputs):
            return False
        stored = read_record(self.path)
        why = difference(stored, self.wanted)
        if why is None and stored is not None:
            why = outputs_changed(stored.get("outputs") or [], self.outputs) if "outputs" in stored else \
                "no record of its outputs"
        if override:
            logger.info("%s: --override given, rebuilding", self.outputs[0])
            return False
        if why is not None:
            raise InputError(f"exists but was made differently: {why}; pass --override to rebuild it",
                             path=self.outputs[0])
        logger.info("output exists and was made from the same inputs and settings, reusing it (use --override to "
                    "rebuild): %s", ", ".join(map(str, self.outputs)))
        return True

    def write(self) -> None:
        """Record the outputs (written last: every output exists)."""
        write_record(self.path, {**self.wanted, "outputs": outputs_record(self.outputs)})


def nothing_read(corpus: Corpus, what: str, outputs: Sequence[Union[str, Path]] = ()) -> InputError:
    """The error for a corpus folder that gave no ``what`` in its format (issue 29: it was an empty
    output and rc 0); the outputs already written are removed, so a rerun is not refused."""
    for output in outputs:
        if Path(output).is_file():
            Path(output).unlink()
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
