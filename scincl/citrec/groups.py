"""Training groups of MP-BERT4CR's fine-tuning from citation contexts (§4.1.3–4.1.4, eqs. 1–2).

One group per (training context, target ``t``): ``t`` is one of the context's cited ids, the
additional positives are up to ``n`` of the context's *other* cited ids (its co-citations), drawn
without replacement with probability ∝ ``frequency(t, c) ** ¾`` (eq. 1; ``frequency`` = the number of
training contexts citing both, so at least 1 here), and ``m`` negatives are papers the context does not
cite, drawn without replacement with probability ∝ ``count ** ¾`` (eq. 2; ``count`` = the number of
training contexts citing the paper; a paper never cited in training is never drawn). Only papers with
sentences (``sentences.jsonl.gz``) take part. The counts come from the training contexts only, so no
held-out context's answer reaches them (issue 43: "no leakage through co-citation statistics").

Defaults ``n = 3``, ``m = 4``, power ¾: :mod:`scincl.triples.config` (§5.2). Draws are a pure function
of ``(seed, epoch, context id, target)``, so each epoch draws other co-cited positives and negatives.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

import numpy as np

from scincl.citrec.sampling import draw_rng
from scincl.triples.config import COCITATION_NEGATIVES_COUNT, COCITATION_POSITIVES_COUNT, COCITATION_POWER


@dataclass
class Group:
    """One training group: the context, its positives (target first) and its negatives."""

    context: Mapping
    positives: List[str]
    negatives: List[str]


class GroupSampler:
    """Co-citation frequencies and citation counts of the training contexts, and the draws of eqs. 1–2."""

    def __init__(self, contexts: Sequence[Mapping], has_text: Iterable[str],
                 positives_count: int = COCITATION_POSITIVES_COUNT,
                 negatives_count: int = COCITATION_NEGATIVES_COUNT, power: float = COCITATION_POWER,
                 seed: int = 0) -> None:
        self.has_text = set(has_text)
        self.positives_count, self.negatives_count, self.power, self.seed = positives_count, negatives_count, power, seed
        self.contexts = [c for c in contexts if any(i in self.has_text for i in c["cited_ids"])]
        self.counts: Counter = Counter(i for c in self.contexts for i in set(c["cited_ids"]) if i in self.has_text)
        self.cocitations: Counter = Counter(
            tuple(sorted(pair)) for c in self.contexts
            for pair in combinations(sorted({i for i in c["cited_ids"] if i in self.has_text}), 2))
        self.candidates = np.array(sorted(self.counts))
        self.negative_weights = np.array([self.counts[i] for i in self.candidates], dtype=float) ** power

    def frequency(self, a: str, b: str) -> int:
        """How many training contexts cite both ``a`` and ``b``."""
        return self.cocitations.get(tuple(sorted((a, b))), 0)

    def cocited(self, context: Mapping, target: str, rng: np.random.Generator) -> List[str]:
        """Up to n of the context's other cited ids, drawn by eq. 1 (∝ frequency(target, c) ** ¾)."""
        others = [i for i in dict.fromkeys(context["cited_ids"]) if i != target and i in self.has_text]
        if not others or self.positives_count <= 0:
            return []
        weights = np.array([self.frequency(target, c) for c in others], dtype=float) ** self.power
        keep = [k for k in range(len(others)) if weights[k] > 0]
        count = min(self.positives_count, len(keep))
        picked = rng.choice(len(keep), size=count, replace=False, p=weights[keep] / weights[keep].sum())
        return [others[keep[k]] for k in picked]

    def negatives(self, context: Mapping, rng: np.random.Generator) -> List[str]:
        """m papers the context does not cite, drawn by eq. 2 (∝ citation count ** ¾)."""
        cited = set(context["cited_ids"])
        allowed = np.array([c not in cited for c in self.candidates])
        weights = np.where(allowed, self.negative_weights, 0.0)
        count = min(self.negatives_count, int((weights > 0).sum()))
        if count == 0:
            return []
        return [str(x) for x in rng.choice(self.candidates, size=count, replace=False, p=weights / weights.sum())]

    def groups(self, epoch: int) -> List[Group]:
        """Every (context, target) group of the training contexts for ``epoch``."""
        out = []
        for context in self.contexts:
            for target in dict.fromkeys(context["cited_ids"]):
                if target not in self.has_text:
                    continue
                rng = draw_rng(self.seed, epoch, "group", f"{context['context_id']}\0{target}")
                out.append(Group(context, [target] + self.cocited(context, target, rng), self.negatives(context, rng)))
        return out


def split_citing_papers(paper_ids: Iterable[str], test_ratio: float, seed: int) -> Tuple[List[str], List[str]]:
    """``(train, test)`` citing papers: a seeded shuffle of the sorted ids, the last ``test_ratio`` share held out,
    so no test context's manuscript is seen in training (issue 43)."""
    ids = sorted(set(paper_ids))
    order = np.random.default_rng([int(seed), 43]).permutation(len(ids))
    n_test = int(round(len(ids) * float(test_ratio)))
    test = sorted(ids[i] for i in order[len(ids) - n_test:]) if n_test else []
    held = set(test)
    return [i for i in ids if i not in held], test


def counts_table(sampler: GroupSampler) -> Dict[str, int]:
    """Sizes for logs and the training summary."""
    return {"training_contexts": len(sampler.contexts), "cited_papers": len(sampler.counts),
            "cocited_pairs": len(sampler.cocitations)}
