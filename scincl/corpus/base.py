"""What every corpus format provides: its files and the readers that turn them into the same records.

A :class:`Corpus` lists the files of one corpus and names module-level (so picklable) readers:

- ``read_references(path, strict=, stats=)`` -> ``(line, paper_id, outbound ids)`` per citing paper,
  the shape of :func:`scincl.corpus.shards.iter_paper_references`, which feeds get_citations and
  get_cocitations unchanged;
- ``read_texts(path, strict=, stats=)`` -> ``(line, paper_id, title, abstract)`` per paper;
- for formats that ship abstracts apart from titles (S2AG), ``read_abstracts(path, strict=, stats=)``
  -> ``(line, paper_id, abstract)``, joined to the titles by paper id;
- ``read_external_ids(path, strict=, stats=)`` -> ``(line, paper_id, [external ids])`` over the text
  files, for mapping SciDocs ids to corpus ids (:mod:`scincl.corpus.id_mapping`).

Downstream stages only see these records, never the format (DESIGN.md "Data contracts").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple, Union

CORPUS_FORMATS = ("s2orc", "s2ag", "openalex", "plain")

ReadReferences = Callable[..., Iterator[Tuple[int, str, Any]]]
ReadTexts = Callable[..., Iterator[Tuple[int, str, Optional[str], Optional[str]]]]
ReadAbstracts = Callable[..., Iterator[Tuple[int, str, Optional[str]]]]
ReadExternalIds = Callable[..., Iterator[Tuple[int, str, List[str]]]]


@dataclass
class Corpus:
    """One corpus on disk: its format, root, files and readers (see the module docstring)."""

    format: str
    root: Path
    reference_files: List[Path]
    read_references: ReadReferences
    text_files: List[Path]
    read_texts: ReadTexts
    abstract_files: List[Path] = field(default_factory=list)
    read_abstracts: Optional[ReadAbstracts] = None
    read_external_ids: Optional[ReadExternalIds] = None
    references_grouped: bool = True  # False: one record per citation (co-citations regroup them, graph/regroup.py)

    @property
    def joins_abstracts(self) -> bool:
        """True when titles and abstracts come from different files (joined by paper id)."""
        return self.read_abstracts is not None


def files_seen(root: Union[str, Path], limit: int = 8) -> str:
    """The first ``limit`` names in a corpus folder (for an error that says what was there)."""
    root = Path(root)
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir()) if root.is_dir() else [root.name]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(names[:limit]) + more) if names else "none"
