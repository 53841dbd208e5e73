"""A citing paper found twice (in two shards, or twice in one) gives its edges once, as ``get_papers`` keeps its first
record (issue 41, class 4: the citation readers passed both copies, a duplicate edge nobody counted).

Citation extraction streams shards in parallel workers and does not hold the corpus's ids. Each worker returns
a 64-bit hash of every citing record's id (8 bytes per paper; :class:`RecordTracker`), in record order. The
parent finds hashes seen twice (:func:`later_copies`); only then the shards holding them are read again: first
to compare the ids themselves (a hash collision between two distinct ids drops nothing), then to extract those
shards without the later copies. Duplicates are rare, so the common case costs the hashes alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple

import numpy as np

DUPLICATE_PAPER_ID = "duplicate_paper_id"  # the counted event, as get_papers names it


def id_hashes(paper_ids: Sequence[str]) -> np.ndarray:
    """Stable 64-bit hashes of ids (polars' hash with its fixed seed: the same in every worker process)."""
    import polars as pl

    return pl.Series(list(paper_ids), dtype=pl.String).hash(seed=0).to_numpy()


@dataclass
class RecordTracker:
    """Per shard: the hash of every citing record's id (record order), and what a rerun should probe or drop."""

    hashes: List[np.ndarray] = field(default_factory=list)
    drop: Set[int] = field(default_factory=set)  # record numbers to leave out
    probe: Set[int] = field(default_factory=set)  # record numbers whose ids to report
    probed: Dict[int, str] = field(default_factory=dict)
    offset: int = 0

    def apply(self, pids: List[str], refs_of: List[List[str]]) -> Tuple[List[str], List[List[str]]]:
        """Record the batch's hashes (and probed ids); return it without the records to drop."""
        start, self.offset = self.offset, self.offset + len(pids)
        self.hashes.append(id_hashes(pids))
        for number in (n for n in self.probe if start <= n < self.offset):
            self.probed[number] = pids[number - start]
        if not any(start <= n < self.offset for n in self.drop):
            return pids, refs_of
        keep = [start + i not in self.drop for i in range(len(pids))]
        return [p for p, k in zip(pids, keep) if k], [r for r, k in zip(refs_of, keep) if k]

    def all_hashes(self) -> np.ndarray:
        return np.concatenate(self.hashes) if self.hashes else np.empty(0, dtype=np.uint64)


def candidate_copies(hashes_per_shard: Sequence[np.ndarray]) -> Dict[int, Set[int]]:
    """``{shard: record numbers}`` of every record whose id hash occurs more than once (first copies included)."""
    sizes = [len(h) for h in hashes_per_shard]
    if not sizes or sum(sizes) == 0:
        return {}
    everything = np.concatenate(hashes_per_shard)
    unique, counts = np.unique(everything, return_counts=True)
    repeated = unique[counts > 1]
    if repeated.size == 0:
        return {}
    out: Dict[int, Set[int]] = {}
    for shard, hashes in enumerate(hashes_per_shard):
        numbers = np.flatnonzero(np.isin(hashes, repeated))
        if numbers.size:
            out[shard] = set(int(n) for n in numbers)
    return out


def later_copies(probed: Dict[int, Dict[int, str]]) -> Dict[int, Set[int]]:
    """``{shard: record numbers}`` of the records whose id an earlier record (shard order, then record order) had."""
    seen: Set[str] = set()
    out: Dict[int, Set[int]] = {}
    for shard in sorted(probed):
        for number in sorted(probed[shard]):
            pid = probed[shard][number]
            if pid in seen:
                out.setdefault(shard, set()).add(number)
            seen.add(pid)
    return out
