"""Shared machinery of the MP-BERT4CR multi-positive N-tuplet losses (eqs. 4–6).

MP-BERT4CR (Zhang & Ma 2021, "Recommending multiple positive citations for manuscript via
content-dependent modeling and multi-positive triplet", arXiv:2111.12899) trains on groups built
from one citation edge: the source (citing) paper ``s``, the target (cited) paper ``t``, co-cited
papers ``c¹ … cⁿ`` of ``t`` and negatives ``n¹ … nᵐ``. Its three objectives are N-tuplet losses
``log(1 + Σ exp(d(a, pos) − d(a, neg)))`` with the Euclidean distance ``d`` and no margin, built
from three kinds of exponent:

* ``source-target``   ``d(s, t) − d(s, nʲ)``   (the source anchors the target),
* ``source-cocited``  ``d(s, cⁱ) − d(s, nʲ)``  (the source anchors a co-cited paper),
* ``target-cocited``  ``d(t, cⁱ) − d(t, nʲ)``  (the target anchors a co-cited paper).

Each equation sums its exponents over ``Σ_{i=1..n} Σ_{j=1..m}`` — the double sum covers every term
of the equation as printed, so the source-target term is counted once per co-cited paper. A group
without co-cited papers (``n = 0``) would make the double sum empty; it falls back to the target
terms ``log(1 + Σ_j exp(d(s, t) − d(s, nʲ)))``. The loss of a batch is the mean over its groups.

Inputs (the ``groups`` kind): ``query_index [G]`` (= ``s``), ``positive_index [G, P]`` with the
target in column 0 and co-cited papers after it, ``negative_index [G, N]``; padding ``-1``.
The equations' form is taken from the project's review of the paper (issue 12); the paper's PDF
could not be re-read from the machine this was written on.
"""
from __future__ import annotations

from typing import ClassVar, Tuple

import torch
from torch import Tensor, nn

from scincl.model.losses.functional import distance_fn, log1p_sum_exp

SOURCE_TARGET = "source-target"
SOURCE_COCITED = "source-cocited"
TARGET_COCITED = "target-cocited"
MPT_DISTANCE = "l2"  # MP-BERT4CR: Euclidean distance


class MultiPositiveTupletLoss(nn.Module):
    """Base of the ``mpt-*`` losses: subclasses set ``terms`` (the exponents their equation sums)."""

    input_kind = "groups"
    flags = {"distance": "distance"}
    terms: ClassVar[Tuple[str, ...]] = ()

    def __init__(self, distance: str = MPT_DISTANCE) -> None:
        super().__init__()
        self.distance = distance
        self._distance = distance_fn(distance)

    def group_losses(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                     negative_index: Tensor) -> Tensor:
        """``[G]`` per-group values ``log(1 + Σ …)`` (0 for a group without valid negatives)."""
        source = embeddings[query_index][:, None, :]  # [G, 1, d]
        target = embeddings[positive_index[:, 0]][:, None, :]  # [G, 1, d]
        cocited_index = positive_index[:, 1:]
        cocited = embeddings[cocited_index.clamp(min=0)]  # [G, n, d]
        negatives = embeddings[negative_index.clamp(min=0)]  # [G, m, d]
        cocited_valid = cocited_index >= 0  # [G, n]
        negative_valid = negative_index >= 0  # [G, m]

        d_sn = self._distance(source, negatives)  # [G, m]
        d_tn = self._distance(target, negatives)  # [G, m]
        d_st = self._distance(source, target)  # [G, 1]
        exponents = {
            SOURCE_TARGET: lambda: (d_st - d_sn)[:, None, :].expand(-1, cocited.shape[1], -1),
            SOURCE_COCITED: lambda: self._distance(source, cocited)[:, :, None] - d_sn[:, None, :],
            TARGET_COCITED: lambda: self._distance(target, cocited)[:, :, None] - d_tn[:, None, :],
        }
        pair_valid = cocited_valid[:, :, None] & negative_valid[:, None, :]  # [G, n, m]
        groups = len(query_index)
        logits = [exponents[term]().reshape(groups, -1) for term in self.terms]
        valid = [pair_valid.reshape(groups, -1)] * len(self.terms)
        # a group without co-cited papers: the target terms alone (the double sum would be empty)
        no_cocited = ~cocited_valid.any(dim=1)
        logits.append(d_st - d_sn)
        valid.append(negative_valid & no_cocited[:, None])
        return log1p_sum_exp(torch.cat(logits, dim=1), torch.cat(valid, dim=1))

    def forward(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        return self.group_losses(embeddings, query_index, positive_index, negative_index).mean()
