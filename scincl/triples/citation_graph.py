"""A citation graph as integer CSR arrays, and vectorised per-query ("segment") sampling.

The citation-based samplers (SPECTER-like, co-citation noise sampling, pairs) work on papers as
integer codes: :class:`CitationGraph` holds the sorted id vocabulary and the outbound / inbound
adjacency in CSR form (numpy), so neighbour sets of a block of queries are gathered without a
per-query Python loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError


@dataclass
class Csr:
    """Compressed sparse rows: the neighbours of node ``i`` are ``indices[indptr[i]:indptr[i+1]]``."""

    indptr: np.ndarray
    indices: np.ndarray

    data: Optional[np.ndarray] = None  # edge values aligned with ``indices`` (e.g. co-citation counts)

    @classmethod
    def from_edges(cls, src: np.ndarray, dst: np.ndarray, n: int, data: Optional[np.ndarray] = None) -> "Csr":
        """CSR of the (already de-duplicated) edges ``src -> dst``; neighbours sorted."""
        order = np.lexsort((dst, src))
        indptr = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))).astype(np.int64)
        return cls(indptr=indptr, indices=dst[order].astype(np.int64),
                   data=None if data is None else np.asarray(data)[order])

    def degree(self, nodes: Optional[np.ndarray] = None) -> np.ndarray:
        """Number of neighbours (of ``nodes``, default all)."""
        deg = np.diff(self.indptr)
        return deg if nodes is None else deg[nodes]

    def positions(self, nodes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(segment, position in indices)`` of all neighbours of ``nodes`` (``segment`` = index into ``nodes``)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        starts = self.indptr[nodes]
        sizes = self.indptr[nodes + 1] - starts
        segment = np.repeat(np.arange(len(nodes)), sizes)
        offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return segment, np.repeat(starts, sizes) + offsets

    def gather(self, nodes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(segment, neighbour)`` for all neighbours of ``nodes``: ``segment[j]`` = position in ``nodes``."""
        segment, pos = self.positions(nodes)
        return segment, self.indices[pos]


@dataclass
class CitationGraph:
    """Papers (sorted id vocabulary) with outbound (``cites``) and inbound (``cited by``) CSR."""

    ids: np.ndarray  # [N] paper ids (str), sorted
    outbound: Csr
    inbound: Csr

    @property
    def size(self) -> int:
        return len(self.ids)

    def codes(self, paper_ids: Sequence[str], what: str = "paper ids", source: Optional[str] = None) -> np.ndarray:
        """Integer codes of ``paper_ids``; unknown ids are an :class:`InputError`."""
        arr = np.asarray(list(paper_ids), dtype=str)
        pos = np.searchsorted(self.ids, arr)
        pos_clipped = np.minimum(pos, len(self.ids) - 1)
        known = (pos < len(self.ids)) & (self.ids[pos_clipped] == arr)
        if not known.all():
            missing = arr[~known]
            raise InputError(f"{len(missing)} of {len(arr)} {what} are not in the citation graph "
                             f"(e.g. {', '.join(missing[:5])})", path=source)
        return pos_clipped.astype(np.int64)

    def neighbours(self, bidirectional: bool) -> Csr:
        """Outbound CSR, or the union of outbound and inbound when ``bidirectional``."""
        if not bidirectional:
            return self.outbound
        src = np.concatenate([np.repeat(np.arange(self.size), self.outbound.degree()),
                              np.repeat(np.arange(self.size), self.inbound.degree())])
        dst = np.concatenate([self.outbound.indices, self.inbound.indices])
        keys = np.unique(src * self.size + dst)
        return Csr.from_edges(keys // self.size, keys % self.size, self.size)


def build_citation_graph(edges: Iterable[Tuple[str, str]]) -> CitationGraph:
    """Citation graph from ``(citing, cited)`` pairs; self-citations and duplicate edges are dropped."""
    citing: List[str] = []
    cited: List[str] = []
    for a, b in edges:
        citing.append(a)
        cited.append(b)
    if not citing:
        raise InputError("no citations: the citation graph is empty")
    ids, codes = np.unique(np.asarray(citing + cited, dtype=str), return_inverse=True)
    n = len(ids)
    src, dst = codes[:len(citing)].astype(np.int64), codes[len(citing):].astype(np.int64)
    keep = src != dst
    keys = np.unique(src[keep] * n + dst[keep])
    src, dst = keys // n, keys % n
    return CitationGraph(ids=ids, outbound=Csr.from_edges(src, dst, n), inbound=Csr.from_edges(dst, src, n))


def unique_pairs(segment: np.ndarray, values: np.ndarray, n_values: int) -> Tuple[np.ndarray, np.ndarray]:
    """De-duplicated ``(segment, value)`` pairs, sorted by segment then value."""
    keys = np.unique(segment.astype(np.int64) * n_values + values)
    return keys // n_values, keys % n_values


def remove_pairs(segment: np.ndarray, values: np.ndarray, drop_segment: np.ndarray, drop_values: np.ndarray,
                 n_values: int) -> Tuple[np.ndarray, np.ndarray]:
    """``(segment, value)`` pairs that are not among the ``drop`` pairs."""
    keys = segment.astype(np.int64) * n_values + values
    drop = drop_segment.astype(np.int64) * n_values + drop_values
    keep = ~np.isin(keys, drop)
    return segment[keep], values[keep]


def sample_segments(segment: np.ndarray, values: np.ndarray, n_segments: int, count: int,
                    rng: np.random.Generator, weights: Optional[np.ndarray] = None,
                    up_to: bool = False) -> np.ndarray:
    """``count`` distinct values per segment without replacement, ``[n_segments, count]``.

    Uniform, or with ``weights`` the Efraimidis-Spirakis scheme (each value gets an exponential
    key with rate ``weight``; the ``count`` smallest keys win), so a single draw picks a value with
    probability ``weight / sum(weights of its segment)``. Segments with fewer than ``count``
    values (or fewer with positive weight) get a row of ``-1``; with ``up_to`` they keep all their
    values (in drawn order) and are padded with ``-1``.
    """
    out = np.full((n_segments, count), -1, dtype=np.int64)
    if count == 0 or len(values) == 0:
        return out
    u = rng.random(len(values))
    if weights is None:
        keys = u
        valid = np.ones(len(values), dtype=bool)
    else:
        valid = weights > 0
        with np.errstate(divide="ignore"):
            keys = -np.log1p(-u) / np.where(valid, weights, 1.0)
    segment, values, keys = segment[valid], values[valid], keys[valid]
    order = np.lexsort((keys, segment))
    segment, values = segment[order], values[order]
    sizes = np.bincount(segment, minlength=n_segments)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    enough = sizes >= count
    if enough.any():
        out[enough] = values[starts[enough, None] + np.arange(count)[None, :]]
    if up_to and (~enough).any():
        rank = np.arange(len(values)) - starts[segment]
        few = ~enough[segment]
        out[segment[few], rank[few]] = values[few]
    return out


def padded(segment: np.ndarray, values: np.ndarray, n_segments: int) -> np.ndarray:
    """Segments as a ``[n_segments, max_size]`` matrix padded with ``-1`` (for row-wise exclusion)."""
    sizes = np.bincount(segment, minlength=n_segments)
    out = np.full((n_segments, int(sizes.max(initial=0))), -1, dtype=np.int64)
    if len(values):
        order = np.argsort(segment, kind="stable")
        segment, values = segment[order], values[order]
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        out[segment, np.arange(len(values)) - starts[segment]] = values
    return out
