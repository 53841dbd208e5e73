"""Full-text formats: where a paragraph's citation markers are and which paper each one cites.

Two formats, one shape (S2ORC's: ``abstract`` + ``body_text`` paragraphs with ``text``, ``cite_spans``
and ``ref_spans``, and ``bib_entries``):

- ``s2orc``: S2ORC 20200705v1 ``pdf_parses``. A marker is a ``cite_spans`` entry (``start``, ``end``,
  ``ref_id``); its cited paper is ``bib_entries[ref_id]["link"]``, the S2ORC ``paper_id`` of the
  reference (``null`` when S2ORC could not link it).
- ``unarxive``: unarXive 2022 (``../shared/data/unarxive/README.md``). A marker is a ``{{cite:ID}}``
  in the paragraph text; its cited paper comes from ``bib_entries[ID]["ids"]``: the OpenAlex work id
  (``W…``) when there is one, else ``arxiv:<id>``, ``doi:<doi>``, ``pubmed:<id>``, ``pmc:<id>`` (in
  that order; in the 2212_086 sample every reference with any id has an OpenAlex id). A reference
  whose ``ids`` are all empty is a marker without id (counted, not a context).

A marker resolves to ``(cited_id, None)`` or ``(None, skip_reason)``; the skip reasons are the keys of
the ``markers_skipped`` counts in ``contexts.stats.json``. A reference's text (:func:`reference_texts`, the
candidate text of cited works outside the corpus): unarXive's ``bib_entry_raw``; S2ORC's title, venue and year.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from scincl.errors import InputError

Span = Tuple[int, int]

SKIP_NO_REFERENCE = "no_reference"  # ref_id null or not a key of bib_entries
SKIP_NO_ID = "no_id"  # the reference has no paper id (S2ORC: link null; unarXive: every ids field empty)
SKIP_BAD_SPAN = "bad_span"  # a cite span outside its paragraph's text

UNARXIVE_CITE = re.compile(r"\{\{cite:([^{}]*)\}\}")
OPENALEX_PREFIX = "https://openalex.org/"
# unarXive ids fields in order of preference, with the prefix the id gets (OpenAlex W-ids bare, as the
# project's OpenAlex corpus reader writes them)
UNARXIVE_ID_FIELDS = (("open_alex_id", ""), ("arxiv_id", "arxiv:"), ("doi", "doi:"), ("pubmed_id", "pubmed:"),
                      ("pmc_id", "pmc:"))


@dataclass(frozen=True)
class Marker:
    """One citation marker of a paragraph: its span in the paragraph text and the bib entry key."""

    start: int
    end: int
    ref_id: Optional[str]


@dataclass(frozen=True)
class FullTextFormat:
    """How to read one full-text format (see the module docstring)."""

    name: str
    markers: Callable[[Mapping[str, Any]], List[Marker]]
    cited_id: Callable[[Mapping[str, Any]], Optional[str]]  # bib entry -> paper id (None: no id)
    protected: Callable[[Mapping[str, Any]], List[Span]]  # spans sentence splitting must not cut
    reference_text: Callable[[Mapping[str, Any]], str]  # bib entry -> the reference as text ("": none)


def _span_list(paragraph: Mapping[str, Any], key: str) -> List[Mapping[str, Any]]:
    spans = paragraph.get(key) or []
    return [s for s in spans if isinstance(s, Mapping)]


def _s2orc_markers(paragraph: Mapping[str, Any]) -> List[Marker]:
    out = []
    for span in _span_list(paragraph, "cite_spans"):
        ref_id = span.get("ref_id")
        out.append(Marker(int(span.get("start", -1)), int(span.get("end", -1)),
                          str(ref_id) if ref_id is not None else None))
    return sorted(out, key=lambda m: (m.start, m.end))


def _s2orc_protected(paragraph: Mapping[str, Any]) -> List[Span]:
    return [(int(s.get("start", 0)), int(s.get("end", 0)))
            for key in ("cite_spans", "ref_spans") for s in _span_list(paragraph, key)]


def _s2orc_cited_id(entry: Mapping[str, Any]) -> Optional[str]:
    link = entry.get("link")
    return str(link) if link not in (None, "") else None


def _s2orc_reference_text(entry: Mapping[str, Any]) -> str:
    return " ".join(str(entry[key]).strip() for key in ("title", "venue", "year") if entry.get(key))


def _unarxive_markers(paragraph: Mapping[str, Any]) -> List[Marker]:
    return [Marker(m.start(), m.end(), m.group(1)) for m in UNARXIVE_CITE.finditer(paragraph.get("text") or "")]


def _unarxive_cited_id(entry: Mapping[str, Any]) -> Optional[str]:
    ids = entry.get("ids") or {}
    for field, prefix in UNARXIVE_ID_FIELDS:
        value = ids.get(field)
        if value:
            value = str(value)
            return prefix + (value[len(OPENALEX_PREFIX):] if value.startswith(OPENALEX_PREFIX) else value)
    return None


FULL_TEXT_FORMATS: Dict[str, FullTextFormat] = {
    "s2orc": FullTextFormat("s2orc", _s2orc_markers, _s2orc_cited_id, _s2orc_protected, _s2orc_reference_text),
    "unarxive": FullTextFormat("unarxive", _unarxive_markers, _unarxive_cited_id, lambda paragraph: [],
                               lambda entry: str(entry.get("bib_entry_raw") or "").strip()),
}


def get_full_text_format(name: str) -> FullTextFormat:
    """The format called ``name``; an unknown name is one error line listing the formats."""
    if name not in FULL_TEXT_FORMATS:
        raise InputError(f"unknown --full_text_format {name!r}; one of: {', '.join(FULL_TEXT_FORMATS)}")
    return FULL_TEXT_FORMATS[name]


def resolve(marker: Marker, bib_entries: Mapping[str, Any], fmt: FullTextFormat,
            text_length: int) -> Tuple[Optional[str], Optional[str]]:
    """``(cited_id, None)`` for a marker whose reference has an id, else ``(None, skip_reason)``."""
    if not 0 <= marker.start < marker.end <= text_length:
        return None, SKIP_BAD_SPAN
    entry = bib_entries.get(marker.ref_id) if marker.ref_id is not None else None
    if not isinstance(entry, Mapping):
        return None, SKIP_NO_REFERENCE
    cited = fmt.cited_id(entry)
    return (cited, None) if cited else (None, SKIP_NO_ID)


def reference_texts(bib_entries: Any, fmt: FullTextFormat) -> Dict[str, str]:
    """``{cited id: reference text}`` of the bib entries that have an id and a text (the first entry of an id)."""
    out: Dict[str, str] = {}
    for entry in (bib_entries.values() if isinstance(bib_entries, Mapping) else []):
        if not isinstance(entry, Mapping):
            continue
        cited, text = fmt.cited_id(entry), fmt.reference_text(entry)
        if cited and text:
            out.setdefault(cited, text)
    return out


def paragraphs_of(value: Any) -> Sequence[Mapping[str, Any]]:
    """A record's ``abstract``/``body_text`` as paragraphs: a list of paragraphs (S2ORC), one paragraph
    (unarXive's ``abstract``), a plain string, or nothing."""
    if isinstance(value, str):
        return [{"text": value}]
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list):
        return [p for p in value if isinstance(p, Mapping)]
    return []
