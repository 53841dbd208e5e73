"""Citation contexts of one full-text paper: its sentences and, per citation location, the cited ids.

MP-BERT4CR's query is a place in a manuscript where citations go (§3.2, §4.1.1 of
``../shared/papers/001_3753c6be31fc929c.txt``). For one paper record (:mod:`scincl.citrec.formats`)
:func:`paper_contexts` returns

- :class:`PaperSentences`: the abstract's and the body's sentences (:mod:`scincl.citrec.sentences`),
  each body sentence with the index of its ``body_text`` paragraph: what dynamic context sampling
  draws from (the manuscript's content before a context; a cited paper's abstract and body);
- :class:`CitationContext` per citation location: the citing paper, paragraph and sentence
  position, the fundamental context (the sentence with the markers, the one before, the one after,
  across paragraph boundaries: §4.1.1), and the ids the markers cite. Co-cited references of one
  location are that context's multiple positives (§4.1.3).

What one location is (``context_unit``; the paper does not say): ``markers`` (default) = a run of
adjacent markers in one sentence, only whitespace, brackets, commas or semicolons between them
(``[3, 7]``, ``{{cite:a}}{{cite:b}}``, ``(A, 2001; B, 2003)``), as unarXive's README reads it;
``sentence`` = every marker of the sentence. Markers whose reference has no id are counted by
reason and dropped; a location with none left is no context. So, per paper,
``markers == markers_in_contexts + sum(markers_skipped)``.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from scincl.citrec.formats import FullTextFormat, Marker, SKIP_BAD_SPAN, paragraphs_of, resolve
from scincl.citrec.sentences import split_sentences

CONTEXT_UNITS = ("markers", "sentence")
DEFAULT_CONTEXT_UNIT = "markers"
MARKER_GAP = re.compile(r"[\s,;()\[\]]*")  # what may stand between two markers of one location


@dataclass
class PaperSentences:
    """A paper's text as sentences: ``abstract``, ``body`` and each body sentence's paragraph index."""

    paper_id: str
    abstract: List[str] = field(default_factory=list)
    body: List[str] = field(default_factory=list)
    paragraph: List[int] = field(default_factory=list)

    def to_record(self) -> Dict[str, Any]:
        return asdict(self)


@dataclass
class CitationContext:
    """One citation location of a citing paper (see the module docstring)."""

    context_id: str  # "<citing paper id>:<sentence>:<location in the sentence>"
    citing_paper_id: str
    paragraph: int  # index in body_text
    sentence: int  # index in the paper's body sentences
    sentence_in_paragraph: int
    section: Optional[str]
    cited_ids: List[str]  # distinct, in marker order: the context's positives
    markers: int  # markers of this location with an id (a repeated reference counts each time)
    sentences: List[str]  # the fundamental context: sentence before, the citing sentence, sentence after

    def to_record(self) -> Dict[str, Any]:
        return asdict(self)


def _locations(markers: List[Marker], sentence_of: List[int], text: str, unit: str) -> List[List[int]]:
    """Marker indices grouped into citation locations (markers sorted by position)."""
    groups: List[List[int]] = []
    for i, marker in enumerate(markers):
        if groups:
            last = markers[groups[-1][-1]]
            same_sentence = sentence_of[groups[-1][-1]] == sentence_of[i]
            adjacent = marker.start <= last.end or MARKER_GAP.fullmatch(text[last.end:marker.start]) is not None
            if same_sentence and (unit == "sentence" or adjacent):
                groups[-1].append(i)
                continue
        groups.append([i])
    return groups


def paper_contexts(record: Mapping[str, Any], fmt: FullTextFormat, context_unit: str = DEFAULT_CONTEXT_UNIT
                   ) -> Tuple[PaperSentences, List[CitationContext], Counter]:
    """The sentences and citation contexts of one full-text record, and the counts of what was met."""
    paper_id = str(record["paper_id"])
    counts: Counter = Counter()
    bib_entries = record.get("bib_entries") or {}
    if not isinstance(bib_entries, Mapping):
        bib_entries = {}
    paper = PaperSentences(paper_id)
    for par in paragraphs_of(record.get("abstract")):
        text = str(par.get("text") or "")
        paper.abstract += [text[a:b] for a, b in split_sentences(text, fmt.protected(par))]
    contexts: List[CitationContext] = []
    per_sentence: Counter = Counter()  # locations so far in each sentence
    for p_index, par in enumerate(paragraphs_of(record.get("body_text"))):
        text = str(par.get("text") or "")
        spans = split_sentences(text, fmt.protected(par))
        first = len(paper.body)
        paper.body += [text[a:b] for a, b in spans]
        paper.paragraph += [p_index] * len(spans)
        counts["paragraphs"] += 1
        markers = fmt.markers(par)
        counts["markers"] += len(markers)
        if not markers:
            continue
        starts = [a for a, _ in spans]
        resolved = [resolve(m, bib_entries, fmt, len(text)) for m in markers]
        keep = [i for i, (_, why) in enumerate(resolved) if why != SKIP_BAD_SPAN] if spans else []
        counts[f"markers_skipped_{SKIP_BAD_SPAN}"] += len(markers) - len(keep)
        kept = [markers[i] for i in keep]
        sentence_of = [max(0, bisect_right(starts, m.start) - 1) for m in kept]
        for group in _locations(kept, sentence_of, text, context_unit):
            ids: List[str] = []
            n_markers = 0
            for g in group:
                cited, why = resolved[keep[g]]
                if cited is None:
                    counts[f"markers_skipped_{why}"] += 1
                    continue
                n_markers += 1
                if cited not in ids:
                    ids.append(cited)
            if not ids:
                counts["locations_without_id"] += 1
                continue
            sentence = first + sentence_of[group[0]]
            contexts.append(CitationContext(
                context_id=f"{paper_id}:{sentence}:{per_sentence[sentence]}", citing_paper_id=paper_id,
                paragraph=p_index, sentence=sentence, sentence_in_paragraph=sentence_of[group[0]],
                section=par.get("section") if isinstance(par.get("section"), str) else None,
                cited_ids=ids, markers=n_markers, sentences=[]))
            per_sentence[sentence] += 1
            counts["markers_in_contexts"] += n_markers
    # the fundamental context (§4.1.1): the citing sentence and its neighbours in the whole body
    for context in contexts:
        context.sentences = paper.body[max(0, context.sentence - 1):context.sentence + 2]
    counts["contexts"] += len(contexts)
    counts["sentences_abstract"] += len(paper.abstract)
    counts["sentences_body"] += len(paper.body)
    return paper, contexts, counts
