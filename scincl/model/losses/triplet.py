"""Triplet margin loss (SPECTER, Cohan et al. 2020, eq. 2; SciNCL, Ostendorff et al. 2022, §3)."""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from scincl.model.losses.functional import distance_fn
from scincl.model.losses.registry import register_loss

TRIPLET_MARGIN = 1.0  # SPECTER eq. 2 / SciNCL §3: margin 1
TRIPLET_DISTANCE = "l2"  # SPECTER eq. 2 / SciNCL §3: L2 norm distance


@register_loss("triplet")
class TripletMarginLoss(nn.Module):
    """Triplet margin loss as SPECTER (eq. 2) and SciNCL (§3) print it::

        L = max{ ||d^Q − d^+||₂ − ||d^Q − d^-||₂ + ξ, 0 }      (000 §3.1; "ξ = 1 as in SPECTER")

    (``../shared/papers/000_a9b5f58ad3ba2ccb.txt`` §3.1; the co-citation thesis 004 eq. 3.1), i.e.
    ``max{ d(q, p) − d(q, n) + m, 0 }`` with ``d(x, y) = ||x − y||₂``,
    averaged over the triplets of the batch. Defaults: ``m = 1``, L2 distance (``--triplet_margin``,
    ``--distance l2|cosine``). Inputs: ``(anchor, positive, negative)`` triplets.

    Example::

        loss_fn = TripletMarginLoss()
        loss = loss_fn(emb, torch.tensor([0]), torch.tensor([1]), torch.tensor([2]))
    """

    input_kind = "triplets"
    flags = {"triplet_margin": "margin", "distance": "distance"}

    def __init__(self, margin: float = TRIPLET_MARGIN, distance: str = TRIPLET_DISTANCE) -> None:
        super().__init__()
        self.margin = margin
        self.distance = distance
        self._distance = distance_fn(distance)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        anchors = embeddings[anchor_index]
        d_pos = self._distance(anchors, embeddings[positive_index])
        d_neg = self._distance(anchors, embeddings[negative_index])
        return F.relu(d_pos - d_neg + self.margin).mean()
