"""The SciDocs directory of the demo corpus (see :mod:`scincl.demo`), in the official formats.

Held-out papers of the demo universe become SciDocs papers:

- classification papers (``paper_metadata_mag_mesh.json``, ``mag/`` and ``mesh/`` csvs): an equal
  number per topic; MAG label = topic index, MeSH label = subtopic facet (a second labelling);
- query papers of the ranking tasks (``paper_metadata_view_cite_read.json`` + qrels), each with
  5 positives and 25 negatives (5 of them hard: same topic) drawn from the training universe:
  ``cite`` = papers the query cites, ``cocite`` = papers most often co-cited with it,
  ``coread`` = papers sharing references with it (bibliographic coupling; same-subtopic fill),
  ``coview`` = papers of its subtopic.

Candidates never are held-out papers, so excluding the held-out ids from the citation graph
(``--excluded_paper_ids scidocs_paper_ids.json``) removes exactly the query/classification
papers' own edges while the tasks stay learnable from text and neighbourhood structure.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from scincl.demo_text import Paper, TextGenerator
from scincl.io import atomic_open, dumps_json
from scincl.errors import InputError

POSITIVES, NEGATIVES, HARD_NEGATIVES = 5, 25, 5  # per query; real SciDocs: 5 positives + 25 negatives
RANKING_TASKS = ("coview", "coread", "cite", "cocite")
VAL_SHARE = 1 / 3  # of the queries; the rest is test
CLASSIFICATION_SPLIT = (0.6, 0.15)  # train, val shares per class; the rest is test


@dataclass
class DemoScidocs:
    """What :func:`build_scidocs` decided: held-out ids (sorted by corpus order) and counts."""

    held_out_ids: List[str]
    counts: Dict[str, object] = field(default_factory=dict)


def _clamp(value: float, low: int, high: int) -> int:
    return int(max(low, min(high, round(value))))


class _Universe:
    """Index structures over the demo papers used to pick queries and candidates."""

    def __init__(self, papers: Sequence[Paper]) -> None:
        self.papers = papers
        self.index_of = {p.paper_id: p.index for p in papers}
        self.refs = [[self.index_of[r] for r in p.references if r in self.index_of] for p in papers]
        self.cited_by: List[List[int]] = [[] for _ in papers]
        for i, refs in enumerate(self.refs):
            for j in refs:
                self.cited_by[j].append(i)
        self.by_topic: Dict[int, List[int]] = {}
        self.by_subtopic: Dict[Tuple[int, int], List[int]] = {}
        for p in papers:
            self.by_topic.setdefault(p.topic, []).append(p.index)
            self.by_subtopic.setdefault((p.topic, p.subtopic), []).append(p.index)

    def cocited(self, q: int) -> Counter:
        """Papers co-cited with ``q`` -> number of papers citing both."""
        counts: Counter = Counter()
        for citing in self.cited_by[q]:
            counts.update(j for j in self.refs[citing] if j != q)
        return counts

    def coupled(self, q: int) -> Counter:
        """Papers sharing references with ``q`` -> number of shared references."""
        counts: Counter = Counter()
        for ref in self.refs[q]:
            counts.update(i for i in self.cited_by[ref] if i != q)
        return counts


def _top(counts: Counter, allowed, k: int, rnd: random.Random) -> List[int]:
    """The ``k`` highest-count allowed keys; ties broken by a seeded shuffle."""
    keys = [key for key in counts if allowed(key)]
    rnd.shuffle(keys)
    keys.sort(key=lambda key: -counts[key])
    return keys[:k]


def _sample(pool: Sequence[int], allowed, k: int, rnd: random.Random, max_tries: int = 2000) -> List[int]:
    """Up to ``k`` distinct allowed members of ``pool`` drawn at random."""
    out: List[int] = []
    seen: Set[int] = set()
    for _ in range(max_tries):
        if len(out) >= k or not pool:
            break
        x = pool[rnd.randrange(len(pool))]
        if x not in seen and allowed(x):
            seen.add(x)
            out.append(x)
    return out


def _may_qualify(u: _Universe, q: int, blocked: Set[int]) -> bool:
    """Cheap pre-check of :func:`_query_candidates`: enough cited and co-cited papers outside ``blocked``."""
    refs = sum(1 for j in u.refs[q] if j not in blocked)
    return refs >= POSITIVES and sum(1 for j in u.cocited(q) if j != q and j not in blocked) >= POSITIVES


def _query_candidates(u: _Universe, q: int, blocked: Set[int], rnd: random.Random) -> Optional[Dict[str, Tuple]]:
    """Positives and negatives of every ranking task for query ``q``, or None when it does not qualify."""
    p = u.papers[q]
    free = lambda j: j != q and j not in blocked  # noqa: E731
    all_indices = range(len(u.papers))
    same_topic = u.by_topic[p.topic]
    same_sub = set(u.by_subtopic[(p.topic, p.subtopic)])

    refs = [j for j in u.refs[q] if free(j)]
    cocited = u.cocited(q)
    if len(refs) < POSITIVES or sum(1 for j in cocited if free(j)) < POSITIVES:
        return None
    out: Dict[str, Tuple] = {}
    relations = {
        "cite": (rnd.sample(refs, POSITIVES), set(u.refs[q])),
        "cocite": (_top(cocited, free, POSITIVES, rnd), set(cocited)),
    }
    coupled = u.coupled(q)
    coread = _top(coupled, lambda j: free(j) and j in same_sub, POSITIVES, rnd)
    if len(coread) < POSITIVES:
        coread += _sample(sorted(same_sub), lambda j: free(j) and j not in coread, POSITIVES - len(coread), rnd)
    relations["coread"] = (coread, set(coupled) | same_sub)
    relations["coview"] = (_sample(sorted(same_sub), free, POSITIVES, rnd), same_sub)
    for task in RANKING_TASKS:
        positives, related = relations[task]
        if len(positives) < POSITIVES:
            return None
        ok = lambda j: free(j) and j not in related and j not in positives  # noqa: E731
        hard = _sample(same_topic, ok, HARD_NEGATIVES, rnd)
        easy = _sample(all_indices, lambda j: ok(j) and j not in hard, NEGATIVES - len(hard), rnd)
        if len(hard) + len(easy) < NEGATIVES:
            return None
        out[task] = (positives, hard + easy)
    return out


def _write_text(path: Path, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def _write_metadata(path: Path, indices, papers, text) -> None:
    meta = {}
    for i in sorted(set(indices)):
        p = papers[i]
        title, abstract = text.texts(p)
        meta[p.paper_id] = {"paper_id": p.paper_id, "title": title, "abstract": abstract}
    _write_text(path, dumps_json(meta).decode() + "\n")


def _classification_split(class_papers: Dict[int, List[int]], rnd: random.Random) -> Dict[str, List[int]]:
    """Per-class train/val/test split (at least 3 train papers per class, for 3-fold CV)."""
    split: Dict[str, List[int]] = {"train": [], "val": [], "test": []}
    for label in sorted(class_papers):
        members = list(class_papers[label])
        rnd.shuffle(members)
        n_train = max(3, round(len(members) * CLASSIFICATION_SPLIT[0]))
        n_val = max(1, round(len(members) * CLASSIFICATION_SPLIT[1]))
        split["train"] += members[:n_train]
        split["val"] += members[n_train:n_train + n_val]
        split["test"] += members[n_train + n_val:]
    for part in split.values():
        rnd.shuffle(part)
    return split


def build_scidocs(papers: Sequence[Paper], text: TextGenerator, scidocs_dir: Path,
                  rnd: random.Random) -> DemoScidocs:
    """Choose held-out papers and write the SciDocs directory; returns held-out ids and counts."""
    u = _Universe(papers)
    n = len(papers)
    topics = sorted(u.by_topic)

    # Classification papers: the same number per topic (MAG label = topic, MeSH label = facet).
    per_topic = max(8, _clamp(0.08 * n, 80, 4000) // len(topics))
    classification: List[int] = []
    for t in topics:
        members = list(u.by_topic[t])
        rnd.shuffle(members)
        classification += members[:per_topic]
    blocked: Set[int] = set(classification)

    # Queries: papers with enough cited and co-cited papers outside the held-out set; candidates
    # are drawn once the whole held-out set is known (queries whose candidates then fall short drop out).
    n_queries = _clamp(0.06 * n, 30, 1000)
    order = list(range(n))
    rnd.shuffle(order)
    picked: List[int] = []
    for q in order:
        if len(picked) >= round(n_queries * 1.1):
            break
        if q not in blocked and _may_qualify(u, q, blocked):
            picked.append(q)
            blocked.add(q)
    queries: List[int] = []
    qrels: Dict[int, Dict[str, Tuple]] = {}
    for q in picked:
        cands = _query_candidates(u, q, blocked, rnd) if len(queries) < n_queries else None
        if cands is None:
            blocked.discard(q)
            continue
        queries.append(q)
        qrels[q] = cands
    used_as_candidate = {j for cands in qrels.values() for pos, neg in cands.values() for j in pos + neg}
    if len(queries) < 10:
        raise InputError(f"only {len(queries)} of the {n} demo papers qualify as SciDocs queries (10 needed): "
                         "use more papers")

    n_val = max(1, round(len(queries) * VAL_SHARE))
    splits = {"val": queries[:n_val], "test": queries[n_val:]}
    for task in RANKING_TASKS:
        for split, split_queries in splits.items():
            lines = []
            for q in split_queries:
                positives, negatives = qrels[q][task]
                rows = [(j, 1) for j in positives] + [(j, 0) for j in negatives]
                rnd.shuffle(rows)
                qid = papers[q].paper_id
                lines += [f"{qid} 0 {papers[j].paper_id} {rel}\n" for j, rel in rows]
            _write_text(scidocs_dir / task / f"{split}.qrel", "".join(lines))

    ranking_papers = list(queries) + sorted(used_as_candidate)
    _write_metadata(scidocs_dir / "paper_metadata_view_cite_read.json", ranking_papers, papers, text)
    _write_metadata(scidocs_dir / "paper_metadata_mag_mesh.json", classification, papers, text)
    for task, label_of in (("mag", lambda p: p.topic), ("mesh", lambda p: p.subtopic)):
        by_label: Dict[int, List[int]] = {}
        for i in classification:
            by_label.setdefault(label_of(papers[i]), []).append(i)
        for split, members in _classification_split(by_label, rnd).items():
            rows = "".join(f"{papers[i].paper_id},{label_of(papers[i])}\n" for i in members)
            _write_text(scidocs_dir / task / f"{split}.csv", "pid,class_label\n" + rows)

    held_out = sorted(blocked)
    counts = {"queries": len(queries), "val_queries": len(splits["val"]), "test_queries": len(splits["test"]),
              "classification_papers": len(classification), "held_out_papers": len(held_out),
              "ranking_metadata_papers": len(set(ranking_papers))}
    return DemoScidocs(held_out_ids=[papers[i].paper_id for i in held_out], counts=counts)
