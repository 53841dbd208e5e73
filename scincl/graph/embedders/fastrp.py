"""FastRP (Chen, Sultan, Tian, Chen, Skiena: "Fast and Accurate Network Embeddings via Very Sparse
Random Projection", CIKM 2019): a weighted sum of powers of the transition matrix applied to a very
sparse random projection.

Why our own code: the one library on PyPI (``fastrp``, Rust, 2026) has neither the degree
normalisation ``L^beta`` nor the per-power row normalisation of the paper's method, the two
settings its experiments tune, so it computes another embedding; the method itself is ``k`` sparse
x dense products, which scipy runs at memory bandwidth (a Rust loop over the same CSR arrays does
the same arithmetic). The paper is not in ``../shared/papers``; Algorithm 1 (§3) reads:

    Input: transition matrix A = D^-1 S, dimension d, normalization strength beta, weights a_1..a_k
    1: produce R in R^(n x d) with entries sqrt(s) * {+1 w.p. 1/(2s), 0 w.p. 1 - 1/s, -1 w.p. 1/(2s)}
       (very sparse random projection, Li et al. 2006, s = sqrt(n))
    2: L = diag((d_1 / 2m)^beta, ..., (d_n / 2m)^beta)      (d_i degree, m edges)
    3: N_1 = A . L . R
    4: for i = 2..k: N_i = A . N_(i-1)
    5: N = a_1 N_1 + ... + a_k N_k
    Output: N

Each ``N_i`` is row-normalised (l2) before the weighted sum, as in the authors' released
experiments. Columns are independent, so the products run column block by column block.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from scincl.graph.embedders.adjacency import Graph, row_normalized
from scincl.graph.embedders.settings import check_ranges, setting


@dataclass(frozen=True)
class FastRPSettings:
    """FastRP's settings (paper §4 "Experimental setup": k = 4, a_1 = a_2 = 0, a_3 = 1; a_4, beta tuned)."""

    iteration_weights: Tuple[float, ...] = setting((0.0, 0.0, 1.0, 1.0),
                                                   "a_1..a_k: weight of A^i R in the sum (k = how many)",
                                                   "FastRP §4: k = 4, a_1 = a_2 = 0, a_3 = 1, a_4 tuned in "
                                                   "[2^-3, 2^6] (1 here)", (0.0, 1000.0))
    normalization_strength: float = setting(0.0, "beta: rows of R scaled by (degree / 2m)^beta",
                                            "FastRP §3.3, tuned in [-1, 0] (0 = no scaling)", (-2.0, 1.0))
    sparsity: float = setting(0.0, "s of the very sparse projection (0: sqrt(n), the paper's choice)",
                              "FastRP §3.2 after Li et al. 2006: s = sqrt(n)", (0.0, 1e9))
    normalize_powers: bool = setting(True, "l2-normalise the rows of each N_i before the weighted sum",
                                     "FastRP authors' released experiments", None)
    column_block: int = setting(64, "embedding columns computed at once (memory, not result)",
                                "ours: bounds memory at S2ORC scale", (1, 4096))

    def __post_init__(self) -> None:
        check_ranges(self)
        if not self.iteration_weights:
            from scincl.errors import InputError
            raise InputError("FastRPSettings.iteration_weights needs at least one weight")


def projection(n: int, dimension: int, sparsity: float, seed: int):
    """Li et al.'s very sparse random projection ``R`` (``n x dimension`` CSC; step 1 of Algorithm 1)."""
    import scipy.sparse as sp

    s = sparsity or np.sqrt(n)
    rng = np.random.default_rng(seed)
    nonzero = rng.binomial(n, 1.0 / s, size=dimension)  # per column, exact in distribution
    rows = np.concatenate([rng.choice(n, size=int(c), replace=False) for c in nonzero])
    cols = np.repeat(np.arange(dimension), nonzero)
    signs = rng.choice(np.array([-1.0, 1.0]), size=len(rows)) * np.sqrt(s)
    return sp.csc_matrix((signs, (rows, cols)), shape=(n, dimension))


def _powers(transition, r_block, weights):
    """``(i, (D^-1 A)^(i+1) R_block)`` for every weighted power of Algorithm 1, in order (dense float32)."""
    power = np.asarray((transition @ r_block).todense(), dtype=np.float32)
    for i, weight in enumerate(weights):
        if i > 0:
            power = transition @ power
        if weight:
            yield i, power


def embed(graph: Graph, dimension: int, settings: FastRPSettings, seed: int) -> np.ndarray:
    """FastRP embeddings ``[n, dimension]`` (float32) of ``graph`` (Algorithm 1).

    Column block by column block: with ``normalize_powers`` a first pass sums each power's squared
    row norms over the blocks and a second pass divides by them, so memory stays the graph, the
    output and one block however large the graph (the products are computed twice).
    """
    import scipy.sparse as sp

    n = graph.adjacency.shape[0]
    transition = row_normalized(graph.adjacency)  # float32: the dense products run in single precision
    degrees = graph.degrees
    edges = degrees.sum() / 2.0
    with np.errstate(divide="ignore"):
        scaling = np.where(degrees > 0, (degrees / (2.0 * max(edges, 1.0))) ** settings.normalization_strength, 0.0)
    r = (sp.diags(scaling) @ projection(n, dimension, settings.sparsity, seed)).astype(np.float32).tocsc()
    weights = settings.iteration_weights
    blocks = [slice(start, min(start + settings.column_block, dimension))
              for start in range(0, dimension, settings.column_block)]
    inverse_norms = None
    if settings.normalize_powers:
        squared = np.zeros((len(weights), n), dtype=np.float64)
        for block in blocks:
            for i, power in _powers(transition, r[:, block], weights):
                squared[i] += np.einsum("ij,ij->i", power, power, dtype=np.float64)
        norms = np.sqrt(squared)
        inverse_norms = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
    out = np.zeros((n, dimension), dtype=np.float32)
    for block in blocks:
        for i, power in _powers(transition, r[:, block], weights):
            if inverse_norms is not None:
                power = power * inverse_norms[i][:, None]
            out[:, block] += weights[i] * power
    return out
