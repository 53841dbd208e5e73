"""InfoNCE (van den Oord et al. 2018) with explicit or in-batch negatives, cosine or dot similarity."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scincl.model.losses.functional import similarity_fn
from scincl.model.losses.registry import register_loss

EXPLICIT = "explicit"
IN_BATCH = "in-batch"
IN_BATCH_POSITIVES = "in-batch-positives"
NEGATIVE_MODES = (EXPLICIT, IN_BATCH, IN_BATCH_POSITIVES)

# Defaults = the co-citation thesis' setting: τ = 0.1, cosine, only the query's own negatives (it
# argues against in-batch negatives for citation data, where they are often related papers).
INFONCE_TEMPERATURE = 0.1  # thesis
INFONCE_NEGATIVES = EXPLICIT  # thesis
INFONCE_SIMILARITY = "cos"  # thesis; OpenMSD (Gao et al. 2023) scores with the dot product: --similarity dot


@register_loss("infonce")
class InfoNCELoss(nn.Module):
    """InfoNCE (van den Oord et al. 2018, eq. 4) for triplets; the co-citation thesis prints it as
    ``L = −log e^{s(q,d+)/τ} / (e^{s(q,d+)/τ} + Σ_{i=1}^n e^{s(q,d_i−)/τ})`` (``../shared/papers/
    004_c0e997bd26e55c12.txt`` eq. 3.4, τ = 0.1 in §5.3), OpenMSD as its CL objective (002 eq. 1)::

        L = −mean_t log( exp(s(q_t, p_t)/τ) / Σ_{c ∈ {p_t} ∪ N_t} exp(s(q_t, c)/τ) )

    * ``negatives="explicit"`` (default, thesis): ``N_t`` = the negatives of every triplet of the
      same query in the batch (the query's own negatives only);
    * ``negatives="in-batch"`` (SimCSE / multiple-negatives-ranking form, Gao et al. 2021): ``N_t``
      = every other positive and negative of the batch, except the anchor paper itself and the
      *other positives of the same query* (a query's triplets share a batch; its positives must not
      be pushed away from it);
    * ``negatives="in-batch-positives"``: as ``in-batch`` without the explicit negatives: ``N_t`` =
      the batch's other positives only (OpenMSD's CL objective eq. 1 on pairs, Henderson et al. 2017;
      angle-emb's ``contrastive_with_negative_loss(text, positive)``).

    ``s`` is the cosine (``similarity="cos"``, thesis) or the dot product (``"dot"``, OpenMSD).
    Defaults: ``τ = 0.1``, explicit negatives, cosine — the co-citation thesis' setting
    (``--temperature``, ``--infonce_negatives``, ``--similarity``). OpenMSD (002 §4) states "the
    temperature is 1" for its contrastive pre-training of mT5 (``--temperature 1 --similarity dot``);
    its fine-tuning temperature is not stated. Inputs: triplets.

    Example::

        loss = InfoNCELoss(temperature=0.1)(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"
    flags = {"temperature": "temperature", "infonce_negatives": "negatives", "similarity": "similarity"}
    revision = 2  # 2: the thesis' defaults (issue 12); 1: tau 0.05 with in-batch negatives

    def __init__(self, temperature: float = INFONCE_TEMPERATURE, negatives: str = INFONCE_NEGATIVES,
                 similarity: str = INFONCE_SIMILARITY) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError("temperature must be > 0")
        if negatives not in NEGATIVE_MODES:
            raise ValueError(f"unknown InfoNCE negatives {negatives!r}; choose one of {', '.join(NEGATIVE_MODES)}")
        self.temperature = temperature
        self.negatives = negatives
        self.similarity = similarity
        self._similarity = similarity_fn(similarity)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        pool = positive_index if self.negatives == IN_BATCH_POSITIVES else torch.cat([positive_index, negative_index])
        candidates = torch.unique(pool)  # [C], sorted
        scores = self._similarity(embeddings[anchor_index], embeddings[candidates]) / self.temperature
        is_own_positive = candidates[None, :] == positive_index[:, None]  # [T, C]
        target = is_own_positive.float().argmax(dim=1)
        same_query = (anchor_index[:, None] == anchor_index[None, :]).float()  # [T, T]
        if self.negatives == EXPLICIT:
            is_negative = (candidates[None, :] == negative_index[:, None]).float()  # [T, C]
            own_negative = (same_query @ is_negative) > 0
            allowed = is_own_positive | own_negative
        else:
            positive_of_same_query = (same_query @ is_own_positive.float()) > 0
            is_anchor = candidates[None, :] == anchor_index[:, None]
            allowed = is_own_positive | ~(positive_of_same_query | is_anchor)
        return F.cross_entropy(scores.masked_fill(~allowed, float("-inf")), target)
