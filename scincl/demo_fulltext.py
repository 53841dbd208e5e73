"""Full text of the demo universe: S2ORC ``pdf_parses`` records with sections, sentences and real
``cite_spans`` that follow the citation graph (issue 43: contexts for MP-BERT4CR).

``make_demo(..., full_text=True)`` (``cli_s2orc.py make_demo --full_text``) also writes
``DIR/s2orc/full_text/full_text_{i}.jsonl.gz``, one record per corpus paper, in the same shards and
order as ``metadata/`` (off by default: it takes several times as long as the rest of the demo). (``pdf_parses/`` keeps the release's 60 % share of papers
with a title-only body; its bytes, and those of every other demo file, are what they were before.)

A record: ``paper_id``, ``_pdf_hash`` (as in ``pdf_parses/``), ``abstract`` (the metadata abstract as
one paragraph), ``body_text`` (five sections of 1–2 paragraphs of 3–6 sentences) and ``bib_entries``:
``BIBREF{k}`` for the k-th outbound citation (``link`` = the cited id, ``title`` = its title when it is
a corpus paper), then about 15 % extra references S2ORC could not link (``link`` null: markers
without id). Every bib entry is cited at least once; the entries are shuffled into citation locations
of 1 (70 %), 2 (20 %) or 3 (10 %) references (co-citations: one location's multiple positives),
written ``[k]`` with one ``cite_spans`` entry each (``[2] [5]`` or ``[2], [5]`` for a co-citation), and a
fifth of the locations cite again later. A citing sentence holds one or more locations (then
separated by words: two contexts) and mixes the citing paper's words with words of each cited corpus
paper (``TITLE_MIX``), so the context says something about what it cites.

Every draw comes from ``random.Random((seed << 40) + (index << 2) + 2)``: salt 2 of the per-paper
streams (0 = title, 1 = abstract, 3 = metadata), so no draw of the existing files changes.
"""
from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from scincl.demo_text import ABSTRACT_MIX, TITLE_MIX, Paper, TextGenerator

SECTIONS = ("Introduction", "Related work", "Method", "Experiments", "Conclusion")
PARAGRAPHS_PER_SECTION = (1, 2)
SENTENCES_PER_PARAGRAPH = (3, 6)
UNLINKED_SHARE = 0.15  # extra references without an S2ORC link
LOCATION_SIZES = ((1, 0.70), (2, 0.20), (3, 0.10))  # references per citation location
CITE_AGAIN_SHARE = 0.2
FULL_TEXT_SALT = 2


def _rnd(seed: int, paper: Paper) -> random.Random:
    return random.Random((seed << 40) + (paper.index << 2) + FULL_TEXT_SALT)


def _sentence(words: List[str]) -> str:
    """Words as a sentence; a final "a" is dropped (the splitter reads "a." as an initial, not an end)."""
    while len(words) > 1 and words[-1] == "a":
        words.pop()
    return " ".join(words).capitalize() + "."


def _locations(n_entries: int, rnd: random.Random) -> List[List[int]]:
    """Bib entry indices shuffled into citation locations of 1–3 entries; some locations repeated."""
    order = list(range(n_entries))
    rnd.shuffle(order)
    sizes, weights = zip(*LOCATION_SIZES)
    locations: List[List[int]] = []
    while order:
        size = rnd.choices(sizes, weights=weights)[0]
        locations.append(sorted(order[:size]))
        order = order[size:]
    locations += [loc for loc in locations if rnd.random() < CITE_AGAIN_SHARE]
    return locations


def _markers(sentence: str, location: List[int], separator: str) -> Tuple[str, List[dict]]:
    """``sentence`` followed by the markers of ``location`` and their cite spans."""
    spans = []
    for j, k in enumerate(location):
        if j:
            sentence += separator
        marker = f"[{k + 1}]"
        spans.append({"start": len(sentence), "end": len(sentence) + len(marker), "text": marker,
                      "ref_id": f"BIBREF{k}"})
        sentence += marker
    return sentence, spans


def _citing_sentence(paper: Paper, locations: List[List[int]], cited: Sequence[Optional[Paper]],
                     text: TextGenerator, rnd: random.Random) -> Tuple[str, List[dict]]:
    """One sentence citing every location given: own words, then per location the cited papers' words
    and the location's markers (``[2] [5]`` or ``[2], [5]``)."""
    sentence = " ".join(text.words(paper, rnd.randint(4, 8), ABSTRACT_MIX, rnd)).capitalize()
    spans: List[dict] = []
    for i, location in enumerate(locations):
        words = [w for k in location if cited[k] is not None
                 for w in text.words(cited[k], rnd.randint(3, 6), TITLE_MIX, rnd)]
        sentence += (" and " if i else " ") + " ".join(words) + (" " if words else "")
        sentence, new_spans = _markers(sentence, location, rnd.choice((" ", ", ")))
        spans += new_spans
    return sentence + ".", spans


def full_text_record(paper: Paper, by_id: Dict[str, Paper], text: TextGenerator, seed: int) -> dict:
    """The full-text record of one demo paper (see the module docstring); ``by_id``: the corpus papers."""
    rnd = _rnd(seed, paper)
    abstract = text.texts(paper)[1]
    n_unlinked = sum(rnd.random() < UNLINKED_SHARE for _ in paper.references)
    links: List[Optional[str]] = list(paper.references) + [None] * n_unlinked
    cited = [by_id.get(link) if link is not None else None for link in links]
    bib_entries = {f"BIBREF{k}": {"ref_id": f"b{k}", "title": text.texts(cited[k])[0] if cited[k] else "",
                                  "link": link} for k, link in enumerate(links)}
    layout = [(section, rnd.randint(*SENTENCES_PER_PARAGRAPH)) for section in SECTIONS
              for _ in range(rnd.randint(*PARAGRAPHS_PER_SECTION))]
    slots = sum(n for _, n in layout)
    citing: Dict[int, List[List[int]]] = {}
    for location in _locations(len(links), rnd):
        citing.setdefault(rnd.randrange(1, slots), []).append(location)
    body = []
    slot = 0
    for section, n_sentences in layout:
        paragraph, spans = "", []
        for _ in range(n_sentences):
            if slot in citing:
                sentence, sentence_spans = _citing_sentence(paper, citing[slot], cited, text, rnd)
            else:
                sentence, sentence_spans = _sentence(text.words(paper, rnd.randint(8, 16), ABSTRACT_MIX, rnd)), []
            paragraph += " " if paragraph else ""
            spans += [{**s, "start": s["start"] + len(paragraph), "end": s["end"] + len(paragraph)}
                      for s in sentence_spans]
            paragraph += sentence
            slot += 1
        body.append({"section": section, "text": paragraph, "cite_spans": spans, "ref_spans": []})
    return {
        "paper_id": paper.paper_id,
        "_pdf_hash": hashlib.sha1(f"demo-pdf-{paper.paper_id}".encode()).hexdigest(),
        "abstract": [{"section": "Abstract", "text": abstract, "cite_spans": [], "ref_spans": []}] if abstract else [],
        "body_text": body,
        "bib_entries": bib_entries,
        "ref_entries": {},
    }


def full_text_path(full_text_dir: Path, shard: int) -> Path:
    """The full-text shard beside ``metadata/metadata_{shard}.jsonl.gz``."""
    return Path(full_text_dir) / f"full_text_{shard}.jsonl.gz"
