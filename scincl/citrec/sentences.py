"""Sentence splitting of full-text paragraphs with citation markers and formulas kept intact.

MP-BERT4CR (``../shared/papers/001_3753c6be31fc929c.txt`` §4) encodes a paper as its sentences. We
split with ``sentencex`` (Wikimedia's rule-based segmenter, maintained, no model files: works
offline; pysbd gave the same quality on unarXive at ~400x the time and split at every line break,
which cuts unarXive's display formulas from their sentence).

Markers are *protected*: before splitting, every protected span (a citation marker such as
``[12]`` or ``{{cite:ID}}``, a formula ``{{formula:UUID}}``, a figure reference ``Fig. 3``) is
replaced by a run of ``c`` of the same length, so the segmenter sees one plain lower-case word
there: it never splits inside a marker, never takes the brackets of ``[12]`` for the end of a
quotation, and never ends a sentence at the ``.`` of ``Fig. 3``. The offsets it returns are those
of the original text (the masked text has the same length). A lower-case word after a period does
not start a sentence, so a sentence that *begins* with a marker joins the one before (a merge,
never a cut).
"""
from __future__ import annotations

import re
from typing import Iterable, List, Sequence, Tuple

import sentencex

Span = Tuple[int, int]

LANGUAGE = "en"
MASK_CHAR = "c"
# unarXive's inline markers: {{cite:ID}}, {{formula:UUID}}, {{figure:..}}, {{table:..}} (see its README)
BRACED_MARKER = re.compile(r"\{\{[a-z]+:[^{}]*\}\}")


def masked(text: str, protected: Iterable[Span]) -> str:
    """``text`` with every protected span replaced by ``MASK_CHAR`` (same length, so offsets are kept)."""
    chars = list(text)
    for start, end in protected:
        start, end = max(0, start), min(len(text), end)
        chars[start:end] = MASK_CHAR * max(0, end - start)
    return "".join(chars)


def split_sentences(text: str, protected: Sequence[Span] = ()) -> List[Span]:
    """The sentences of ``text`` as ``(start, end)`` character offsets, whitespace trimmed, in order.

    ``protected``: spans never split (markers, formulas); braced unarXive markers are always
    protected. Whitespace-only pieces are dropped; the spans do not overlap and cover every
    non-space character of ``text``.
    """
    if not text.strip():
        return []
    spans = list(protected) + [m.span() for m in BRACED_MARKER.finditer(text)]
    boundaries = sentencex.get_sentence_boundaries(LANGUAGE, masked(text, spans))
    out: List[Span] = []
    for boundary in boundaries:
        start, end = int(boundary["start_index"]), int(boundary["end_index"])
        piece = text[start:end]
        if not piece.strip():
            continue
        start += len(piece) - len(piece.lstrip())
        end -= len(piece) - len(piece.rstrip())
        out.append((start, end))
    return out
