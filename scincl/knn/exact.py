"""Exact k-nearest-neighbour search for the SciNCL miner, for any k, on CPU or GPU (torch).

faiss GPU indexes cannot select more than 2048 neighbours (``ann.GPU_MAX_SELECTION_K``), and the
paper's hard negatives are n_3999..n_4000. This backend (``--ann_backend exact``) computes the
similarities of a block of queries to the whole corpus with one matrix product (torch: the same
code on CPU and CUDA) and selects only what mining needs:

- the top-k **set** of every query (one ``torch.topk`` without sorting; the k-th neighbour is
  the threshold), which is what ``random_without_knn`` excludes, and
- the **sorted ranks inside each band** ``[k_min, k_max)`` the miner draws from (``knn`` slots:
  positives n_21..n_25, hard negatives n_3999..n_4000), by a small ``topk`` over the k selected.

The result has the miner's shape ``[n, k + 1]`` (column 0 is the query itself, which
``strategies.drop_self`` removes): inside the bands the columns hold exactly the neighbours of
those ranks; the other columns hold the rest of the top-k set in no particular order.

Ties: neighbours with equal similarity are ranked by ascending corpus row. faiss has no fixed rule
(which of several tied rows makes the top k depends on its blocking and threads; tied rows that
are returned come in descending row order), so on tie-free data the bands equal faiss
``IndexFlatIP``'s. A row whose selection depends on a tie (equal similarities across the k-th
boundary, a band boundary or inside a band) is ranked exactly on the CPU (``numpy.lexsort`` of
that query's similarities); that is rare with float embeddings. Similarities come from torch's
BLAS, faiss' from its own, so two neighbours whose float32 similarities differ only in the last
bits may swap ranks between the two backends (measured in ``benchmarks/bench_triples.py``).
"""
from __future__ import annotations

import logging
from typing import List, Sequence, Tuple

import numpy as np

logger = logging.getLogger(__name__)

# Similarity block of one matrix product: queries x corpus float32 entries (256 MiB); with
# topk's output and workspace the search stays under ~1 GiB whatever the corpus size.
DEFAULT_BLOCK_ENTRIES = 1 << 26
METRICS = ("inner_product", "l2")

Band = Tuple[int, int]  # [k_min, k_max): 0-based ranks among the query's neighbours (self excluded)


class ExactKnn:
    """Exact kNN over ``vectors`` (the corpus = index rows) for queries that are corpus rows.

    Args:
        vectors: ``[N, d]`` corpus vectors as the index sees them (already normalised for cosine).
        metric: ``inner_product`` (higher = nearer) or ``l2`` (squared euclidean, lower = nearer).
        bands: the ``[k_min, k_max)`` rank intervals whose order matters (the miner's ``knn``
            slots); all other ranks are only returned as members of the top-k set.
        device: -1 for CPU, a CUDA device index otherwise.
        block_entries: queries per matrix product = ``block_entries // N`` (at least 1).
    """

    def __init__(self, vectors: np.ndarray, metric: str = "inner_product", bands: Sequence[Band] = (),
                 device: int = -1, block_entries: int = DEFAULT_BLOCK_ENTRIES) -> None:
        import torch

        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        self.device = torch.device("cpu" if device is None or int(device) < 0 else f"cuda:{int(device)}")
        self.x = torch.as_tensor(np.ascontiguousarray(vectors, dtype=np.float32)).to(self.device)
        self.metric = metric
        self.sq_norms = (self.x * self.x).sum(dim=1) if metric == "l2" else None
        self.bands = sorted({(int(lo), int(hi)) for lo, hi in bands if hi > lo})
        self.block = max(1, int(block_entries) // max(1, len(self.x)))
        self.tie_rows = 0  # rows ranked on the slow exact path so far (ties at a selection boundary)

    def __len__(self) -> int:
        return len(self.x)

    def scores(self, query_rows: np.ndarray):
        """Similarities ``[n, N]`` of corpus rows to the corpus (higher = nearer), self set to -inf."""
        import torch

        rows = torch.as_tensor(np.asarray(query_rows, dtype=np.int64), device=self.device)
        q = self.x[rows]
        s = q @ self.x.T
        if self.sq_norms is not None:  # -||q - x||^2 + ||q||^2: same order as the squared distance
            s = 2 * s - self.sq_norms[None, :]
        s[torch.arange(len(rows), device=self.device), rows] = float("-inf")
        return s

    def search(self, query_rows: np.ndarray, k_plus_self: int) -> np.ndarray:
        """The miner's search function: ``[n, k_plus_self]`` corpus rows, column 0 the query itself.

        The other ``k = k_plus_self - 1`` columns are the query's top-k set with every band in rank
        order (see the module docstring).
        """
        query_rows = np.asarray(query_rows, dtype=np.int64)
        k = int(k_plus_self) - 1
        if not 0 < k <= len(self) - 1:
            raise ValueError(f"k={k} neighbours requested but the corpus has {len(self)} rows")
        bands = [(lo, min(hi, k)) for lo, hi in self.bands if lo < k]
        out = np.empty((len(query_rows), k + 1), dtype=np.int64)
        out[:, 0] = query_rows
        for start in range(0, len(query_rows), self.block):
            rows = query_rows[start:start + self.block]
            out[start:start + len(rows), 1:] = self._select(rows, k, bands)
        return out

    def _select(self, rows: np.ndarray, k: int, bands: List[Band]) -> np.ndarray:
        import torch

        s = self.scores(rows)
        n, size = s.shape
        take = min(k + 1, size - 1)  # k + 1: the (k+1)-th tells whether the k-th is tied
        values, cols = torch.topk(s, take, dim=1, sorted=False)
        windows = [(lo, hi) for lo, hi in bands] + ([(k, k)] if take > k else [])
        tied = torch.zeros(n, dtype=torch.bool, device=s.device)
        placed = []  # (first rank, rows [n, w]) of every band
        drop_pos = []  # positions in `values` of band members and of the (k+1)-th
        for lo, hi in windows:
            first, last = max(lo - 1, 0), min(hi, take - 1)  # ranks lo-1 .. hi decide ties at the edges
            if last + 1 <= take // 2:
                wv, wp = torch.topk(values, last + 1, dim=1, largest=True, sorted=True)
                wv, wp = wv[:, first:], wp[:, first:]
            else:
                wv, wp = torch.topk(values, take - first, dim=1, largest=False, sorted=True)
                wv, wp = wv.flip(1)[:, : last - first + 1], wp.flip(1)[:, : last - first + 1]
            if wv.shape[1] > 1:
                tied |= (wv[:, :-1] == wv[:, 1:]).any(dim=1)
            inner = slice(lo - first, lo - first + (hi - lo)) if hi > lo else slice(lo - first, lo - first + 1)
            if hi > lo:
                placed.append((lo, torch.gather(cols, 1, wp[:, inner])))
            drop_pos.append(wp[:, inner])
        mark = torch.zeros_like(values, dtype=torch.bool)
        for pos in drop_pos:
            mark.scatter_(1, pos, True)
        result = torch.empty((n, k), dtype=torch.int64, device=s.device)
        band_cols = torch.zeros(k, dtype=torch.bool)
        for lo, ids in placed:
            result[:, lo:lo + ids.shape[1]] = ids
            band_cols[lo:lo + ids.shape[1]] = True
        rest = (~band_cols).nonzero().squeeze(1).to(s.device)
        clean = (~tied).nonzero().squeeze(1)  # tied rows: tied windows may overlap; ranked below instead
        result[clean[:, None], rest[None, :]] = cols[clean][~mark[clean]].reshape(len(clean), len(rest))
        out = result.cpu().numpy()
        tied_rows = tied.nonzero().squeeze(1).cpu().numpy()
        if tied_rows.size:
            self.tie_rows += int(tied_rows.size)
            block_scores = s[torch.as_tensor(tied_rows, device=s.device)].cpu().numpy()
            for j, r in enumerate(tied_rows):
                out[r] = exact_order(block_scores[j])[:k]
        return out


def exact_order(scores: np.ndarray) -> np.ndarray:
    """Corpus rows by descending score, ties by ascending row (the backend's documented rule)."""
    return np.lexsort((np.arange(len(scores)), -scores.astype(np.float64)))
