"""The synthetic universe's words: vocabularies, papers and their titles and abstracts.

Shared by :mod:`scincl.demo` (the S2ORC-format corpus) and :mod:`scincl.demo_scidocs` (the SciDocs
directory built from held-out papers of the same universe). Every draw is a pure function of the
seed and the paper index, so the demo files are byte-identical for the same arguments.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Dict, List, Optional, Sequence, Tuple

# Subtopic facets: subtopic j of every topic shares the facet-j vocabulary (the MeSH-like labelling).
FACETS = ("theory", "experiment", "method", "application")

BACKGROUND_WORDS = (
    "the of and a in to is for we that this with on are by as an be from which our these results "
    "show propose proposed approach method methods study paper based using use used two new data "
    "model models analysis performance problem problems present presents novel between can also "
    "has have it its their than such however both different first significant significantly high "
    "low large small number effect effects provide provides evaluate evaluated compared previous "
    "existing framework general specific important investigate investigated demonstrate observed "
    "findings evidence further well known recent work works here paper's under over within across "
    "each other three several various approaches increase decrease improved improvement obtained "
    "measure measured estimate estimated potential possible suggest suggests role key main result "
    "process processes structure system systems time level levels rate rates order case cases "
    "set sets range form forms function functions terms conditions condition type types"
).split()

_ONSETS = ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "cl", "dr", "gr", "pl", "pr", "st", "tr", "ch", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ae", "io", "ou")
_ENDINGS = ("", "", "ic", "ism", "ase", "ene", "ity", "ion", "al", "or", "ide", "ate", "on", "ar")

# Vocabulary sizes per group, and the share of each group in titles / abstracts (issue 18: more
# subtopic words, fewer background ones, than at first, so the subtopic is learnable in one epoch).
SUBTOPIC_WORDS, TOPIC_WORDS, FACET_WORDS, GENERIC_WORDS = 40, 80, 25, 120
TITLE_MIX = {"subtopic": 0.22, "topic": 0.12, "facet": 0.06, "background": 0.44, "noise": 0.16}
ABSTRACT_MIX = {"subtopic": 0.12, "topic": 0.08, "facet": 0.04, "background": 0.64, "noise": 0.12}
NO_ABSTRACT_SHARE = 0.08


@dataclass
class Paper:
    """One corpus paper of the synthetic universe: its subject(s), year and references."""

    index: int
    paper_id: str
    topic: int
    subtopic: int  # facet index within the topic
    second: Optional[Tuple[int, int]]  # interdisciplinary: (topic, subtopic) of the second subject
    year: int
    references: List[str]
    inbound: List[str] = field(default_factory=list)


class Vocabulary:
    """Pseudo-word vocabularies of the topic universe (deterministic given the seed)."""

    def __init__(self, topics: int, rnd: random.Random) -> None:
        used = set(BACKGROUND_WORDS)

        def words(n: int) -> List[str]:
            out = []
            while len(out) < n:
                w = "".join(rnd.choice(_ONSETS) + rnd.choice(_VOWELS) for _ in range(rnd.randint(2, 3)))
                w += rnd.choice(_ENDINGS)
                if w not in used:
                    used.add(w)
                    out.append(w)
            return out

        self.background = list(BACKGROUND_WORDS) + words(GENERIC_WORDS)
        self.topic = [words(TOPIC_WORDS) for _ in range(topics)]
        self.facet = [words(FACET_WORDS) for _ in FACETS]
        # subtopics of a topic draw their words from one shared pool, so their vocabularies overlap
        pools = [words(SUBTOPIC_WORDS * 2) for _ in range(topics)]
        self.subtopic = [[rnd.sample(pool, SUBTOPIC_WORDS) for _ in FACETS] for pool in pools]
        self.all_topical = [w for ws in self.topic for w in ws] + [w for pool in pools for w in pool]


class TextGenerator:
    """Titles and abstracts of a paper; a pure function of (seed, paper index), cached per paper."""

    def __init__(self, vocab: Vocabulary, seed: int) -> None:
        self.vocab = vocab
        self.seed = seed
        self._groups: Dict[Tuple, Tuple[List[Sequence[str]], List[float]]] = {}
        self._cache: Dict[int, Tuple[str, Optional[str]]] = {}

    def _rnd(self, paper: Paper, salt: int) -> random.Random:
        return random.Random((self.seed << 40) + (paper.index << 2) + salt)

    def _word_groups(self, paper: Paper, mix: Dict[str, float]) -> Tuple[List[Sequence[str]], List[float]]:
        """Word lists a paper draws from and their cumulative weights (second subject: 35 % of topical draws)."""
        key = (paper.topic, paper.subtopic, paper.second, id(mix))
        if key not in self._groups:
            v = self.vocab
            subjects = [((paper.topic, paper.subtopic), 1.0)]
            if paper.second is not None:
                subjects = [((paper.topic, paper.subtopic), 0.65), (paper.second, 0.35)]
            lists: List[Sequence[str]] = []
            weights: List[float] = []
            for (t, s), share in subjects:
                lists += [v.subtopic[t][s], v.topic[t], v.facet[s]]
                weights += [mix["subtopic"] * share, mix["topic"] * share, mix["facet"] * share]
            lists += [v.background, v.all_topical]
            weights += [mix["background"], mix["noise"]]
            self._groups[key] = (lists, list(accumulate(weights)))
        return self._groups[key]

    def _words(self, paper: Paper, n: int, mix: Dict[str, float], rnd: random.Random) -> List[str]:
        """``n`` words: a group per word by its weight, then a Zipf-like skewed pick inside the group."""
        lists, cum = self._word_groups(paper, mix)
        rand = rnd.random
        return [words[int(len(words) * rand() ** 1.7)] for words in rnd.choices(lists, cum_weights=cum, k=n)]

    def words(self, paper: Paper, n: int, mix: Dict[str, float], rnd: random.Random) -> List[str]:
        """``n`` words of ``paper``'s vocabulary mix drawn from ``rnd`` (the demo's full text, scincl.demo_fulltext)."""
        return self._words(paper, n, mix, rnd)

    def texts(self, paper: Paper) -> Tuple[str, Optional[str]]:
        """``(title, abstract)`` of a paper (abstract None for some papers)."""
        if paper.index not in self._cache:
            self._cache[paper.index] = (self.title(paper), self.abstract(paper))
        return self._cache[paper.index]

    def title(self, paper: Paper) -> str:
        rnd = self._rnd(paper, 0)
        words = self._words(paper, rnd.randint(5, 12), TITLE_MIX, rnd)
        return " ".join(words).capitalize()

    def abstract(self, paper: Paper) -> Optional[str]:
        rnd = self._rnd(paper, 1)
        if rnd.random() < NO_ABSTRACT_SHARE:
            return None
        sentences = []
        for _ in range(rnd.randint(3, 6)):
            sentences.append(" ".join(self._words(paper, rnd.randint(8, 18), ABSTRACT_MIX, rnd)).capitalize() + ".")
        return " ".join(sentences)
