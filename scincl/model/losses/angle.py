"""AnglE as published (Li & Li 2024): cosine + in-batch-negative + angle terms, weighted."""
from __future__ import annotations

from torch import Tensor, nn

from scincl.model.losses.angle_term import AnglETermLoss
from scincl.model.losses.cosent import RANKING_SCALE, CoSENTLoss
from scincl.model.losses.functional import zero_like_graph
from scincl.model.losses.infonce import IN_BATCH, IN_BATCH_POSITIVES, InfoNCELoss
from scincl.model.losses.registry import register_loss

# Default weights of the reference implementation (angle-emb 0.6.1, AngleLoss / angle-trainer flags
# cosine_w, ibn_w, angle_w; taus cosine_tau = ibn_tau = angle_tau = 20).
ANGLE_COSINE_WEIGHT = 0.0  # angle-emb 0.6.1 cosine_w
ANGLE_IBN_WEIGHT = 1.0  # angle-emb 0.6.1 ibn_w
ANGLE_ANGLE_WEIGHT = 0.02  # angle-emb 0.6.1 angle_w
# The in-batch term for (query, positive, negative) data (angle-emb AngleLoss, its format with hard
# negatives): the mean of the term without the explicit negatives (ibn_w) and with them (cln_w = 1).
AVERAGE = "average"  # angle-emb: (L_ibn without negatives + L_ibn with negatives) / 2
WITH_NEGATIVES = "with-negatives"  # the in-batch term with the explicit negatives only (before issue 25)
WITHOUT_NEGATIVES = "without-negatives"  # the in-batch term over the batch's positives only
ANGLE_IN_BATCH_MODES = (AVERAGE, WITH_NEGATIVES, WITHOUT_NEGATIVES)
ANGLE_IN_BATCH = AVERAGE  # angle-emb AngleLoss (cln_w = 1.0 default)


@register_loss("angle")
class AnglELoss(nn.Module):
    """AnglE objective as published (Li & Li 2024, "AnglE-optimized text embeddings"; the paper is not
    among ``../shared/papers/``: the terms and defaults follow its reference code, angle-emb)::

        L = w_cos · L_cos + w_ibn · L_ibn + w_angle · L_angle

    * ``L_cos`` (the cosine objective, CoSENT): ``log(1 + Σ_{s(i) > s(j)} exp(τ_cos (cos(X_j) − cos(X_i))))`` over the
      positive pairs ``(q_t, p_t)`` and negative pairs ``(q_t, n_t)`` of the batch
      (:class:`~scincl.model.losses.cosent.CoSENTLoss`);
    * ``L_ibn`` (the in-batch negative objective): ``−Σ_t log(exp(cos(q_t, p_t) τ_ibn) / Σ_c exp(cos(q_t, c) τ_ibn))``
      (:class:`InfoNCELoss`, temperature ``1/τ_ibn``). For (query, positive, negative) triplets the
      reference (angle-emb ``AngleLoss``) takes the mean of two such terms, one whose candidates ``c``
      are the batch's positives (its ``ibn_w`` term) and one whose candidates are the batch's
      positives and negatives (its ``cln_w`` term, "contrastive learning with hard negative");
      ``--angle_in_batch`` (default ``average``) selects that mean, ``with-negatives`` (the second
      term alone, this loss before issue 25) or ``without-negatives`` (the first alone);
    * ``L_angle`` (the angle objective): the same ranking as ``L_cos`` over angle differences in complex space
      (:class:`~scincl.model.losses.angle_term.AnglETermLoss`).

    Defaults = the reference implementation's (``angle-emb`` 0.6.1): ``w_cos = 0``, ``w_ibn = 1``
    (= its ``ibn_w`` = ``cln_w``), ``w_angle = 0.02``, ``τ_cos = τ_ibn = τ_angle = 20``, the in-batch
    term averaged (``--cosine_weight``, ``--ibn_weight``, ``--angle_weight``, ``--ranking_scale``,
    ``--angle_in_batch``). Deviation: other positives of the same query and the anchor paper itself
    are not counted as in-batch negatives (the reference assumes one pair per query and distinct
    texts). Inputs: triplets.

    Example::

        loss = AnglELoss()(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"
    flags = {"cosine_weight": "cosine_weight", "ibn_weight": "ibn_weight", "angle_weight": "angle_weight",
             "ranking_scale": "scale", "angle_in_batch": "in_batch"}
    # 3: the in-batch term averaged as angle-emb (issue 25); 2: the weighted objective with the explicit
    # negatives in the in-batch term (issue 12); 1: the angle term alone (today's angle-term)
    revision = 3

    def __init__(self, cosine_weight: float = ANGLE_COSINE_WEIGHT, ibn_weight: float = ANGLE_IBN_WEIGHT,
                 angle_weight: float = ANGLE_ANGLE_WEIGHT, scale: float = RANKING_SCALE,
                 in_batch: str = ANGLE_IN_BATCH) -> None:
        super().__init__()
        if in_batch not in ANGLE_IN_BATCH_MODES:
            raise ValueError(f"unknown AnglE in-batch term {in_batch!r}; choose one of {', '.join(ANGLE_IN_BATCH_MODES)}")
        self.cosine_weight = cosine_weight
        self.ibn_weight = ibn_weight
        self.angle_weight = angle_weight
        self.scale = scale
        self.in_batch = in_batch
        self.cosine_term = CoSENTLoss(scale=scale)
        with_negatives = InfoNCELoss(temperature=1.0 / scale, negatives=IN_BATCH, similarity="cos")
        without_negatives = InfoNCELoss(temperature=1.0 / scale, negatives=IN_BATCH_POSITIVES, similarity="cos")
        self.ibn_terms = nn.ModuleList({AVERAGE: [without_negatives, with_negatives], WITH_NEGATIVES: [with_negatives],
                                        WITHOUT_NEGATIVES: [without_negatives]}[in_batch])
        self.angle_term = AnglETermLoss(scale=scale)

    def ibn_term(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                 negative_index: Tensor) -> Tensor:
        """``L_ibn``: the mean of the selected in-batch terms (``--angle_in_batch``)."""
        terms = [term(embeddings, anchor_index, positive_index, negative_index) for term in self.ibn_terms]
        return sum(terms) / len(terms)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        loss = zero_like_graph(embeddings)
        for weight, term in ((self.cosine_weight, self.cosine_term), (self.ibn_weight, self.ibn_term),
                             (self.angle_weight, self.angle_term)):
            if weight:
                loss = loss + weight * term(embeddings, anchor_index, positive_index, negative_index)
        return loss
