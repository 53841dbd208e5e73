"""AnglE as published (Li & Li 2024): cosine + in-batch-negative + angle terms, weighted."""
from __future__ import annotations

from torch import Tensor, nn

from scincl.model.losses.angle_term import AnglETermLoss
from scincl.model.losses.cosent import RANKING_SCALE, CoSENTLoss
from scincl.model.losses.functional import zero_like_graph
from scincl.model.losses.infonce import IN_BATCH, InfoNCELoss
from scincl.model.losses.registry import register_loss

# Default weights of the reference implementation (angle-emb 0.6.1, AngleLoss / angle-trainer flags
# cosine_w, ibn_w, angle_w; taus cosine_tau = ibn_tau = angle_tau = 20).
ANGLE_COSINE_WEIGHT = 0.0  # angle-emb 0.6.1 cosine_w
ANGLE_IBN_WEIGHT = 1.0  # angle-emb 0.6.1 ibn_w
ANGLE_ANGLE_WEIGHT = 0.02  # angle-emb 0.6.1 angle_w


@register_loss("angle")
class AnglELoss(nn.Module):
    """AnglE objective as published (Li & Li 2024, "AnglE-optimized text embeddings")::

        L = w_cos · L_cos + w_ibn · L_ibn + w_angle · L_angle

    * ``L_cos`` (the cosine objective, CoSENT): ``log(1 + Σ_{s(i) > s(j)} exp(τ_cos (cos(X_j) − cos(X_i))))`` over the
      positive pairs ``(q_t, p_t)`` and negative pairs ``(q_t, n_t)`` of the batch
      (:class:`~scincl.model.losses.cosent.CoSENTLoss`);
    * ``L_ibn`` (the in-batch negative objective): ``−Σ_t log(exp(cos(q_t, p_t) τ_ibn) / Σ_c exp(cos(q_t, c) τ_ibn))`` with the
      batch's other positives and negatives as candidates (:class:`InfoNCELoss` with in-batch
      negatives and temperature ``1/τ_ibn``);
    * ``L_angle`` (the angle objective): the same ranking as ``L_cos`` over angle differences in complex space
      (:class:`~scincl.model.losses.angle_term.AnglETermLoss`).

    Defaults = the reference implementation's (``angle-emb`` 0.6.1): ``w_cos = 0``, ``w_ibn = 1``,
    ``w_angle = 0.02``, ``τ_cos = τ_ibn = τ_angle = 20`` (``--cosine_weight``, ``--ibn_weight``,
    ``--angle_weight``, ``--ranking_scale``). Deviations: for (query, positive, negative) data the
    reference averages ``L_ibn`` with and without the explicit negatives (its ``cln_w`` term); we
    keep the paper's single in-batch term with them. Other positives of the same query are not
    counted as negatives (the reference assumes one pair per query). Inputs: triplets.

    Example::

        loss = AnglELoss()(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"
    flags = {"cosine_weight": "cosine_weight", "ibn_weight": "ibn_weight", "angle_weight": "angle_weight",
             "ranking_scale": "scale"}

    def __init__(self, cosine_weight: float = ANGLE_COSINE_WEIGHT, ibn_weight: float = ANGLE_IBN_WEIGHT,
                 angle_weight: float = ANGLE_ANGLE_WEIGHT, scale: float = RANKING_SCALE) -> None:
        super().__init__()
        self.cosine_weight = cosine_weight
        self.ibn_weight = ibn_weight
        self.angle_weight = angle_weight
        self.scale = scale
        self.cosine_term = CoSENTLoss(scale=scale)
        self.ibn_term = InfoNCELoss(temperature=1.0 / scale, negatives=IN_BATCH, similarity="cos")
        self.angle_term = AnglETermLoss(scale=scale)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        loss = zero_like_graph(embeddings)
        for weight, term in ((self.cosine_weight, self.cosine_term), (self.ibn_weight, self.ibn_term),
                             (self.angle_weight, self.angle_term)):
            if weight:
                loss = loss + weight * term(embeddings, anchor_index, positive_index, negative_index)
        return loss
