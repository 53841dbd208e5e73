"""Shared machinery of the MP-BERT4CR multi-positive N-tuplet losses (eqs. 4–6).

MP-BERT4CR (Zhang & Ma 2021, "Recommending multiple positive citations for manuscript via
content-dependent modeling and multi-positive triplet", ``../shared/papers/001_3753c6be31fc929c.txt``
§4.1.5) trains on groups built from one citation edge: the source (citing) context ``s``, the
target (cited) paper ``t``, co-cited papers ``c¹ … cⁿ`` of ``t`` and negatives ``n¹ … nᵐ``. Its three
objectives are N-tuplet losses ``log(1 + Σ exp(‖d_a − d_pos‖ − ‖d_a − d_neg‖))`` with the Euclidean
distance and no margin. Each equation is a sum of *terms*; a term is one exponent summed over the
indices the equation prints for it:

============================ ===================================== ================ =========
term                         exponent                              summed over      eqs.
============================ ===================================== ================ =========
``source-target``            ``‖d_s − d_t‖ − ‖d_s − d_nsʲ‖``       ``Σ_j``          5, 6
``source-target-per-cocited`` ``‖d_s − d_t‖ − ‖d_s − d_nsʲ‖``      ``Σ_i Σ_j``      4
``cocited-target``           ``‖d_cⁱ − d_t‖ − ‖d_cⁱ − d_nsʲ‖``     ``Σ_i Σ_j``      4
``source-cocited``           ``‖d_s − d_cⁱ‖ − ‖d_s − d_nsʲ‖``      ``Σ_j Σ_i``      5, 6
``target-cocited``           ``‖d_t − d_cⁱ‖ − ‖d_t − d_nsʲ‖``      ``Σ_j Σ_i``      6
============================ ===================================== ================ =========

Eq. 4 prints one double sum ``Σ_{i=1}^{n} Σ_{j=1}^{m} exp(…) + exp(…)`` in front of both of its
exponents (the second one uses ``i`` and ``j``, so the sum covers both): its source–target exponent
counts once per co-cited paper and per negative. Eqs. 5 and 6 print ``Σ_{j=1}^{m}`` alone in front of
the source–target exponent: it counts once per negative. Eq. 4 anchors its second exponent at the
co-cited paper ``cⁱ`` (``‖d_cⁱ − d_t‖ − ‖d_cⁱ − d_nsʲ‖``: ``cⁱ`` is pulled towards ``t``); eq. 6's third
term anchors at the target ``t``.

Padding (``-1``) drops a co-cited paper or negative from every sum. A group without negatives gives
``log(1) = 0``. Eqs. 5–6 with ``n = 0`` reduce to their source–target term by themselves; eq. 4 with
``n = 0`` would be ``log(1) = 0`` (the paper assumes ``1 ≤ n``, §4.1.5): such a group falls back to
``log(1 + Σ_j exp(‖d_s − d_t‖ − ‖d_s − d_nsʲ‖))`` (a documented extension, so a target co-cited with
nothing still trains the source). The loss of a batch is the mean over its groups.

Inputs (the ``groups`` kind): ``query_index [G]`` (= ``s``), ``positive_index [G, P]`` with the
target in column 0 and co-cited papers after it, ``negative_index [G, N]``; padding ``-1``.
"""
from __future__ import annotations

from typing import Callable, ClassVar, Dict, Tuple

import torch
from torch import Tensor, nn

from scincl.model.losses.functional import distance_fn, log1p_sum_exp

SOURCE_TARGET = "source-target"  # Σ_j: eqs. 5, 6
SOURCE_TARGET_PER_COCITED = "source-target-per-cocited"  # Σ_i Σ_j: eq. 4
COCITED_TARGET = "cocited-target"  # anchor cⁱ: eq. 4
SOURCE_COCITED = "source-cocited"  # anchor s: eqs. 5, 6
TARGET_COCITED = "target-cocited"  # anchor t: eq. 6
TERMS = (SOURCE_TARGET, SOURCE_TARGET_PER_COCITED, COCITED_TARGET, SOURCE_COCITED, TARGET_COCITED)
MPT_DISTANCE = "l2"  # MP-BERT4CR §4.1.5: "||.|| denotes euclidean distance"


class MultiPositiveTupletLoss(nn.Module):
    """Base of the ``mpt-*`` losses: subclasses set ``terms`` (the terms their equation sums)."""

    input_kind = "groups"
    flags = {"distance": "distance"}
    terms: ClassVar[Tuple[str, ...]] = ()
    revision: ClassVar[int] = 2  # 2: eqs. 4-6 as printed (issue 25); 1: the transcription before it
    # eq. 4 with n = 0 is an empty sum: fall back to the source-target terms (module docstring)
    fallback_without_cocited: ClassVar[bool] = False

    def __init__(self, distance: str = MPT_DISTANCE) -> None:
        super().__init__()
        unknown = set(self.terms) - set(TERMS)
        if unknown:
            raise ValueError(f"unknown multi-positive terms {sorted(unknown)}; choose from {TERMS}")
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
        pair_valid = cocited_valid[:, :, None] & negative_valid[:, None, :]  # [G, n, m]
        dist = self._distance
        n = cocited.shape[1]

        def source_target() -> Tensor:  # [G, m]
            return dist(source, target) - dist(source, negatives)

        def per_pair(anchor: Tensor, positive: Tensor) -> Tensor:  # [G, n, m]: d(a, pos) - d(a, nʲ)
            anchor_n = anchor.expand(-1, n, -1)[:, :, None, :]
            return dist(anchor_n, positive.expand(-1, n, -1)[:, :, None, :]) - dist(anchor_n, negatives[:, None])

        exponents: Dict[str, Tuple[Callable[[], Tensor], Tensor]] = {
            SOURCE_TARGET: (source_target, negative_valid),
            SOURCE_TARGET_PER_COCITED: (lambda: source_target()[:, None, :].expand(-1, n, -1), pair_valid),
            COCITED_TARGET: (lambda: per_pair(cocited, target), pair_valid),
            SOURCE_COCITED: (lambda: per_pair(source, cocited), pair_valid),
            TARGET_COCITED: (lambda: per_pair(target, cocited), pair_valid),
        }
        groups = len(query_index)
        logits, valid = [], []
        for term in self.terms:
            exponent, mask = exponents[term]
            logits.append(exponent().reshape(groups, -1))
            valid.append(mask.reshape(groups, -1))
        if self.fallback_without_cocited:
            logits.append(source_target())
            valid.append(negative_valid & ~cocited_valid.any(dim=1)[:, None])
        return log1p_sum_exp(torch.cat(logits, dim=1), torch.cat(valid, dim=1))

    def forward(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        return self.group_losses(embeddings, query_index, positive_index, negative_index).mean()
