"""CoSENT ranking loss (Su 2022, "CoSENT: a more efficient sentence vector scheme")."""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from scincl.model.losses.functional import ranking_logsumexp
from scincl.model.losses.registry import register_loss

RANKING_SCALE = 20.0  # CoSENT (Su 2022) and AnglE's reference code: λ = τ = 20


@register_loss("cosent")
class CoSENTLoss(nn.Module):
    """CoSENT: every positive pair of the batch scores above every negative pair (Su 2022)::

        L = log(1 + Σ_{sim(i,j) > sim(k,l)} e^{τ(cos(θ_k, θ_l) − cos(θ_i, θ_j))})     (004 eq. 3.7)

    (``../shared/papers/004_c0e997bd26e55c12.txt`` eq. 3.7; τ = 20 in §5.3; written λ below)::

        L = log(1 + Σ_{sim(i) > sim(j)} exp(λ · (cos(u_j, v_j) − cos(u_i, v_i))))

    For triplets ``(q_t, p_t)`` are the positive pairs and ``(q_t, n_t)`` the negative pairs, so the
    sum runs over every (positive pair, negative pair) of the batch. Scale ``λ = 20``
    (``--ranking_scale``). Inputs: ``(anchor, positive, negative)`` triplets.

    Example::

        loss = CoSENTLoss(scale=20.0)(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"
    flags = {"ranking_scale": "scale"}

    def __init__(self, scale: float = RANKING_SCALE) -> None:
        super().__init__()
        self.scale = scale

    def similarity(self, x: Tensor, y: Tensor) -> Tensor:
        """Row-wise similarity used for ranking (cosine)."""
        return F.cosine_similarity(x, y, dim=-1)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        anchors = embeddings[anchor_index]
        positive_scores = self.similarity(anchors, embeddings[positive_index])
        negative_scores = self.similarity(anchors, embeddings[negative_index])
        return ranking_logsumexp(positive_scores, negative_scores, self.scale)
