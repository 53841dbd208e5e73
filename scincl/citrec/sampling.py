"""Dynamic context sampling (MP-BERT4CR §4.1.1, ``../shared/papers/001_3753c6be31fc929c.txt``).

"The sampled contexts involve two components: a fundamental context [...] and a supplemental context":

- **manuscript** (the query, one citation context): the fundamental context is "the sentence
  including the target citation, the sentence before it, and the sentence after" (3 sentences); the
  supplemental context is 27 sentences "randomly selected from the content before the base context";
  30 in all;
- **cited paper** (a positive or negative candidate): the fundamental context is 10 abstract
  sentences, the supplemental context 30 sentences "randomly selected from the body content"; 40 in all.

Supplemental sentences are drawn anew for each pass ("maximumly 20% [of the body] for 2 iterations of
fine-tuning"): the draw is a pure function of ``(seed, epoch, item id)`` (``numpy.random.default_rng``
over a stable hash), so a rerun draws the same sentences, another epoch others, and the order in
which items are asked for never matters.

Readings of what the paper leaves open (README "Citation recommendation (MP-BERT4CR)"):

- a manuscript's content is its abstract sentences followed by its body sentences; "before the base
  context" = every content sentence before the first fundamental sentence (the abstract included);
- the fundamental window is centred on the citing sentence and stays inside the body (the first body
  sentence has no sentence before it in the window);
- a cited paper's fundamental context is its *first* 10 abstract sentences (all of them when fewer);
  a short abstract or body is not filled up from elsewhere, so a sample may hold fewer than 30 / 40;
- a sample keeps document order: supplemental sentences (sorted), then the fundamental context
  (manuscript), or the abstract sentences, then the sampled body sentences (cited paper).
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from scincl.errors import InputError
from scincl.settings.rules import AT_LEAST_ONE, NON_NEGATIVE_INT
from scincl.settings.schema import check_settings, setting


@dataclass(frozen=True)
class ContextSamplingSettings:
    """The sizes of the sampled contexts (paper §4.1.1 defaults); validated when built."""

    manuscript_fundamental_sentences: int = setting(
        3, "MP-BERT4CR §4.1.1: the citing sentence, the one before and the one after",
        "fundamental context of a citation context: this many body sentences centred on the citing one (odd)",
        AT_LEAST_ONE)
    manuscript_supplemental_sentences: int = setting(
        27, "MP-BERT4CR §4.1.1: 30 manuscript sentences = 3 fundamental + 27 supplemental",
        "supplemental sentences drawn at random from the manuscript's content before the fundamental context",
        NON_NEGATIVE_INT)
    cited_fundamental_sentences: int = setting(
        10, "MP-BERT4CR §4.1.1: 10 abstract sentences (the datasets' average abstract length)",
        "fundamental context of a cited paper: its first abstract sentences", NON_NEGATIVE_INT)
    cited_supplemental_sentences: int = setting(
        30, "MP-BERT4CR §4.1.1: 40 cited-paper sentences = 10 fundamental + 30 supplemental",
        "supplemental sentences drawn at random from the cited paper's body", NON_NEGATIVE_INT)

    def __post_init__(self) -> None:
        check_settings(dataclasses.asdict(self), fields={f.name: f for f in dataclasses.fields(self)})
        if self.manuscript_fundamental_sentences % 2 == 0:
            raise InputError(f"--manuscript_fundamental_sentences {self.manuscript_fundamental_sentences}: must be "
                             "odd (the citing sentence and as many sentences before it as after it)")

    @property
    def manuscript_window(self) -> int:
        """Sentences on each side of the citing sentence in the fundamental context."""
        return self.manuscript_fundamental_sentences // 2


@dataclass
class SampledContext:
    """The sentences one encoder input is made of, in document order, with where each came from.

    ``positions``: index in the paper's content (its abstract sentences, then its body sentences);
    ``fundamental``: True for a fundamental-context sentence, False for a supplemental one.
    """

    sentences: List[str] = field(default_factory=list)
    positions: List[int] = field(default_factory=list)
    fundamental: List[bool] = field(default_factory=list)


@dataclass
class PaperText:
    """The sentences of one paper (a ``sentences.jsonl.gz`` record)."""

    abstract: List[str]
    body: List[str]

    @property
    def content(self) -> List[str]:
        return self.abstract + self.body


def load_paper_texts(records: Iterable[Mapping]) -> Dict[str, PaperText]:
    """``{paper_id: PaperText}`` from ``sentences.jsonl.gz`` records (:mod:`scincl.citrec.stage`)."""
    return {str(r["paper_id"]): PaperText(list(r.get("abstract") or []), list(r.get("body") or [])) for r in records}


def draw_rng(seed: int, epoch: int, role: str, item: str) -> np.random.Generator:
    """The random stream of one draw: a pure function of seed, epoch, role and item id."""
    digest = hashlib.blake2b(f"{role}\0{item}".encode(), digest_size=8).digest()
    return np.random.default_rng([int(seed), int(epoch), int.from_bytes(digest, "little")])


class ContextSampler:
    """Draws manuscript and cited-paper samples from the papers' sentences (see the module docstring)."""

    def __init__(self, texts: Mapping[str, PaperText], settings: Optional[ContextSamplingSettings] = None,
                 seed: int = 0) -> None:
        self.texts = texts
        self.settings = settings or ContextSamplingSettings()
        self.seed = int(seed)

    # -- the pools: which content positions each part may come from
    def manuscript_fundamental(self, paper: PaperText, sentence: int) -> List[int]:
        """Content positions of the fundamental context of the citation in body sentence ``sentence``."""
        w = self.settings.manuscript_window
        offset = len(paper.abstract)
        return [offset + j for j in range(max(0, sentence - w), min(len(paper.body), sentence + w + 1))]

    def manuscript_pool(self, paper: PaperText, fundamental: Sequence[int]) -> List[int]:
        """Content positions supplemental sentences may come from: everything before the fundamental context."""
        return list(range(min(fundamental)))

    def cited_fundamental(self, paper: PaperText) -> List[int]:
        """Content positions of a cited paper's fundamental context: its first abstract sentences."""
        return list(range(min(len(paper.abstract), self.settings.cited_fundamental_sentences)))

    def cited_pool(self, paper: PaperText) -> List[int]:
        """Content positions supplemental sentences of a cited paper may come from: its body."""
        return list(range(len(paper.abstract), len(paper.abstract) + len(paper.body)))

    # -- the draws
    @staticmethod
    def _draw(pool: Sequence[int], count: int, rng: np.random.Generator) -> List[int]:
        if count >= len(pool):
            return list(pool)
        return sorted(int(pool[i]) for i in rng.choice(len(pool), size=count, replace=False))

    def _sample(self, paper: PaperText, supplemental: List[int], fundamental: List[int]) -> SampledContext:
        content = paper.content
        chosen = sorted([(p, False) for p in supplemental] + [(p, True) for p in fundamental])
        return SampledContext([content[p] for p, _ in chosen], [p for p, _ in chosen], [f for _, f in chosen])

    def paper(self, paper_id: str) -> PaperText:
        """The sentences of ``paper_id``; an InputError when the sentences file does not have it."""
        try:
            return self.texts[paper_id]
        except KeyError:
            raise InputError(f"no sentences for paper {paper_id!r} (not in the sentences file)") from None

    def manuscript(self, context: Mapping, epoch: int) -> SampledContext:
        """The manuscript sample of one citation context (a ``contexts.jsonl.gz`` record) in ``epoch``."""
        paper = self.paper(str(context["citing_paper_id"]))
        sentence = int(context["sentence"])
        if not 0 <= sentence < len(paper.body):
            raise InputError(f"context {context.get('context_id')!r}: sentence {sentence} is not in its paper's "
                             f"{len(paper.body)} body sentences (contexts and sentences files of different runs?)")
        fundamental = self.manuscript_fundamental(paper, sentence)
        rng = draw_rng(self.seed, epoch, "manuscript", str(context["context_id"]))
        pool = self.manuscript_pool(paper, fundamental)
        return self._sample(paper, self._draw(pool, self.settings.manuscript_supplemental_sentences, rng), fundamental)

    def cited(self, paper_id: str, epoch: int) -> SampledContext:
        """The sample of cited (or candidate) paper ``paper_id`` in ``epoch``."""
        paper = self.paper(paper_id)
        rng = draw_rng(self.seed, epoch, "cited", paper_id)
        supplemental = self._draw(self.cited_pool(paper), self.settings.cited_supplemental_sentences, rng)
        return self._sample(paper, supplemental, self.cited_fundamental(paper))
