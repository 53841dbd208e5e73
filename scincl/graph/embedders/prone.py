"""ProNE (Zhang, Dong, Wang, Tang, Ding: "ProNE: Fast and Scalable Network Representation
Learning", IJCAI 2019): sparse matrix factorisation, then spectral propagation.

Why our own code: no maintained library ships ProNE (the authors' release is a script;
``nodevectors``' and ``cogdl``'s copies are unmaintained and pull numba/gensim or a GNN stack).
The method is two sparse-matrix algorithms that scipy / scikit-learn already run at full speed:
randomized truncated SVD (``sklearn.utils.extmath.randomized_svd``, Halko et al. 2011) and a
Chebyshev recurrence of sparse products, so a library would not be faster. The paper is not in
``../shared/papers``; the steps below are quoted from its §3 (IJCAI 2019 proceedings, pp. 4278-4284).

Step 1, §3.1 "Sparse matrix factorization for embedding initialization". With the proximity
``p_ij = A_ij / D_ii`` of an edge and negative samples drawn from ``P_D,j`` (the column sums of
``p`` raised to an exponent and normalised), setting the gradient of the skip-gram-with-negative-
sampling loss to zero gives, for every edge ``(i, j)``::

    r_i^T c_j = ln p_ij - ln(lambda * P_D,j)                                  (§3.1)

and 0 elsewhere: a *sparse* matrix ``M`` with one entry per edge, factorised by truncated SVD
``M ~ U_d Sigma_d V_d^T``; the initial embedding is ``R_d = U_d Sigma_d^(1/2)``.

Step 2, §3.2 "Spectral propagation". With the normalised Laplacian ``L = I_n - D^-1 A`` and the
band-pass filter ``g(lambda) = exp(-1/2 [(lambda - mu)^2 - 1] theta)`` on its spectrum,
``L~ = U diag(g(lambda_1) ... g(lambda_n)) U^T`` is applied without an eigendecomposition through
its order-``k`` Chebyshev expansion, and::

    R_d <- D^-1 A (I_n - L~) R_d                                              (§3.2)

followed by an SVD of ``R_d`` that orthogonalises the dimensions (the paper's last step).

Chebyshev reading (the paper gives the expansion, not the variable change): with
``x = (L - mu I)^2 / 2 - I`` the spectrum maps into ``[-1, 1]`` for ``lambda in [0, 2]``, and
``g = e^(-theta/2) e^(-theta x)``; ``e^(-theta x) = I_0(theta) + 2 sum_i (-1)^i I_i(theta) T_i(x)``
(modified Bessel functions ``I_i``, Chebyshev polynomials ``T_{i+1} = 2 x T_i - T_{i-1}``).
Everything runs in float32 (the Gram matrix in float64); every step but the final SVD works column
block by column block, so memory is the sparse graph, the randomized SVD's ``n x (d + 10)`` range
and a few ``n x block`` matrices; the final SVD goes through the ``d x d`` Gram matrix.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scincl.graph.embedders.adjacency import Graph, row_normalized
from scincl.graph.embedders.settings import check_ranges, setting


@dataclass(frozen=True)
class ProNESettings:
    """ProNE's settings (paper §4 "Experimental settings" unless said otherwise)."""

    chebyshev_order: int = setting(10, "terms k of the Chebyshev expansion of the spectral filter",
                                   "ProNE §4: k = 10", (1, 100))
    mu: float = setting(0.2, "centre mu of the band-pass filter on the Laplacian spectrum [0, 2]",
                        "ProNE §4: mu = 0.2", (0.0, 2.0))
    theta: float = setting(0.5, "width theta of the band-pass filter", "ProNE §4: theta = 0.5", (0.0, 10.0))
    negative_ratio: float = setting(1.0, "lambda: negative samples per edge in the factorised objective",
                                    "ProNE §3.1, lambda = 1 (word2vec's k)", (1e-6, 100.0))
    negative_exponent: float = setting(0.75, "exponent of the negative-sampling distribution P_D,j",
                                       "ProNE authors' release; word2vec's 3/4", (0.0, 1.0))
    svd_iterations: int = setting(5, "power iterations of the randomized truncated SVD of step 1",
                                  "Halko et al. 2011 §4.5 (q = 1-5 suffices for decaying spectra)", (0, 50))
    column_block: int = setting(64, "embedding columns propagated at once (memory, not result)",
                                "ours: bounds memory at S2ORC scale", (1, 4096))

    def __post_init__(self) -> None:
        check_ranges(self)


def factorize(graph: Graph, dimension: int, settings: ProNESettings, seed: int) -> np.ndarray:
    """Step 1: ``R_d = U_d Sigma_d^(1/2)`` of the sparse matrix ``M_ij = ln p_ij - ln(lambda P_D,j)`` (§3.1)."""
    import scipy.sparse as sp
    from sklearn.utils.extmath import randomized_svd

    p = row_normalized(graph.adjacency)
    column_mass = np.asarray(p.sum(axis=0, dtype=np.float64)).ravel() ** settings.negative_exponent
    negative = column_mass / column_mass.sum()
    matrix = p.copy()  # same sparsity: one entry per edge, in float32 (randomized_svd keeps the dtype)
    matrix.data = (np.log(p.data.astype(np.float64))
                   - np.log(settings.negative_ratio * negative[p.indices])).astype(np.float32)
    u, s, _ = randomized_svd(matrix, n_components=dimension, n_iter=settings.svd_iterations, random_state=seed)
    return (u * np.sqrt(s)).astype(np.float32)


def propagate(graph: Graph, embedding: np.ndarray, settings: ProNESettings) -> np.ndarray:
    """Step 2: ``D^-1 A (I - L~) R`` with ``L~`` the Chebyshev-expanded band-pass filter (§3.2)."""
    import scipy.sparse as sp
    from scipy.special import iv

    n = graph.adjacency.shape[0]
    transition = row_normalized(graph.adjacency).astype(embedding.dtype)
    identity = sp.eye(n, format="csr", dtype=embedding.dtype)
    shifted = ((1.0 - settings.mu) * identity - transition).tocsr()  # L - mu I, L = I - D^-1 A

    def x_times(block: np.ndarray) -> np.ndarray:  # x = (L - mu I)^2 / 2 - I
        return 0.5 * (shifted @ (shifted @ block)) - block

    theta = settings.theta
    scale = np.exp(-theta / 2.0)
    out = np.empty_like(embedding)
    for start in range(0, embedding.shape[1], settings.column_block):
        r = embedding[:, start:start + settings.column_block]
        t_prev, t_cur = r, x_times(r)
        filtered = iv(0, theta) * t_prev
        if settings.chebyshev_order > 1:
            filtered = filtered - 2.0 * iv(1, theta) * t_cur
        for i in range(2, settings.chebyshev_order):
            t_prev, t_cur = t_cur, 2.0 * x_times(t_cur) - t_prev
            filtered = filtered + 2.0 * (-1) ** i * iv(i, theta) * t_cur
        out[:, start:start + settings.column_block] = transition @ (r - scale * filtered)
    return out


def orthogonalize(matrix: np.ndarray) -> np.ndarray:
    """``U Sigma^(1/2)`` of the thin SVD of ``matrix``, via its ``d x d`` Gram matrix (no ``n x n`` work)."""
    gram = matrix.T.astype(np.float64) @ matrix.astype(np.float64)
    eigenvalues, vectors = np.linalg.eigh(gram)
    order = np.argsort(eigenvalues)[::-1]
    singular = np.sqrt(np.clip(eigenvalues[order], 0.0, None))
    vectors = vectors[:, order]
    inverse_root = np.divide(1.0, np.sqrt(singular), out=np.zeros_like(singular), where=singular > 1e-12)
    return matrix @ (vectors * inverse_root).astype(matrix.dtype)  # = U Sigma^(1/2), since U = M V Sigma^-1


def embed(graph: Graph, dimension: int, settings: ProNESettings, seed: int) -> np.ndarray:
    """ProNE embeddings ``[n, dimension]`` (float32) of ``graph``: factorise, propagate, orthogonalise."""
    initial = factorize(graph, dimension, settings, seed)
    return orthogonalize(propagate(graph, initial, settings)).astype(np.float32)
