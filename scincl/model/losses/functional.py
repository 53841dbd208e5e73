"""Distances, similarities and small tensor helpers shared by the losses (no state, no data)."""
from __future__ import annotations

from typing import Callable, Dict

import torch
import torch.nn.functional as F
from torch import Tensor


def l2_distance(x: Tensor, y: Tensor) -> Tensor:
    """Row-wise Euclidean distance ``||x - y + eps||_2`` (eps 1e-6, as ``torch.nn.TripletMarginLoss``)."""
    return F.pairwise_distance(x, y, p=2.0, eps=1e-6)


def cosine_distance(x: Tensor, y: Tensor) -> Tensor:
    """Row-wise ``1 - cos(x, y)``."""
    return 1.0 - F.cosine_similarity(x, y, dim=-1)


DISTANCES: Dict[str, Callable[[Tensor, Tensor], Tensor]] = {"l2": l2_distance, "cosine": cosine_distance}


def _by_name(table: Dict[str, Callable[[Tensor, Tensor], Tensor]], name: str, what: str):
    if name not in table:
        raise ValueError(f"unknown {what} {name!r}; choose one of {sorted(table)}")
    return table[name]


def distance_fn(name: str) -> Callable[[Tensor, Tensor], Tensor]:
    """The row-wise distance called ``name`` (``l2`` or ``cosine``)."""
    return _by_name(DISTANCES, name, "distance")


def pairwise_cosine(x: Tensor, y: Tensor) -> Tensor:
    """``[n, m]`` matrix of cosine similarities between the rows of ``x`` and of ``y``."""
    return F.normalize(x, dim=-1) @ F.normalize(y, dim=-1).T


def pairwise_dot(x: Tensor, y: Tensor) -> Tensor:
    """``[n, m]`` matrix of dot products between the rows of ``x`` and of ``y``."""
    return x @ y.T


SIMILARITIES: Dict[str, Callable[[Tensor, Tensor], Tensor]] = {"cos": pairwise_cosine, "dot": pairwise_dot}


def similarity_fn(name: str) -> Callable[[Tensor, Tensor], Tensor]:
    """The pairwise similarity called ``name`` (``cos`` or ``dot``)."""
    return _by_name(SIMILARITIES, name, "similarity")


def angle_similarity(x: Tensor, y: Tensor) -> Tensor:
    """AnglE's row-wise angle score (Li & Li 2024, §3.4), as in its reference code.

    Each vector is read as a complex vector ``z = a + ib`` (first half real, second half imaginary
    part). With ``w = c + id`` and ``q_k = z_k · conj(w_k) / (|z| |w|)`` (the element-wise quotient
    ``z_k / w_k`` scaled by ``|w_k|² / (|z| |w|)``)::

        score(z, w) = | Σ_k Re(q_k) + Im(q_k) |

    The reference implementation (and the sentence-transformers port) rank pairs by this score
    like a similarity; it keeps a gradient where the cosine saturates.
    """
    a, b = torch.chunk(x, 2, dim=-1)
    c, d = torch.chunk(y, 2, dim=-1)
    w_norm_sq = (c**2 + d**2).sum(-1, keepdim=True)
    re = (a * c + b * d) / w_norm_sq
    im = (b * c - a * d) / w_norm_sq
    norm_ratio = (a**2 + b**2).sum(-1, keepdim=True).sqrt() / w_norm_sq.sqrt()
    return torch.abs((re / norm_ratio).sum(-1) + (im / norm_ratio).sum(-1))


def zero_like_graph(embeddings: Tensor) -> Tensor:
    """A zero loss that still belongs to the autograd graph (for batches without valid terms)."""
    return embeddings.sum() * 0.0


def log1p_sum_exp(logits: Tensor, valid: Tensor) -> Tensor:
    """Row-wise ``log(1 + Σ_k exp(logits[..., k]))`` over the entries where ``valid`` is true.

    Computed stably as a logsumexp with an extra 0 term; a row without valid entries gives 0.
    """
    masked = logits.masked_fill(~valid, float("-inf"))
    zero = masked.new_zeros(masked.shape[:-1] + (1,))
    return torch.logsumexp(torch.cat([zero, masked], dim=-1), dim=-1)


def ranking_logsumexp(positive_scores: Tensor, negative_scores: Tensor, scale: float) -> Tensor:
    """``log(1 + Σ_{i,j} exp(scale · (s_neg_j − s_pos_i)))``: CoSENT's pair-ranking term."""
    differences = scale * (negative_scores[None, :] - positive_scores[:, None])  # [P, N]
    return log1p_sum_exp(differences.flatten(), torch.ones(differences.numel(), dtype=torch.bool,
                                                             device=differences.device))
