"""MP-BERT4CR eq. 5: the source-anchored multi-positive N-tuplet loss (``--loss mpt-src``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import SOURCE_COCITED, SOURCE_TARGET, MultiPositiveTupletLoss
from scincl.model.losses.registry import register_loss


@register_loss("mpt-src")
class SourceMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 5 (Zhang & Ma 2021): the source pulls its target and the co-cited papers::

        L = log(1 + Σ_{i=1..n} Σ_{j=1..m} [ exp(d(s, t) − d(s, nʲ)) + exp(d(s, cⁱ) − d(s, nʲ)) ])

    ``s`` = source (query), ``t`` = target (first positive), ``cⁱ`` = co-cited papers, ``nʲ`` =
    negatives, ``d`` = Euclidean distance, no margin; mean over groups. A group without co-cited
    papers falls back to ``log(1 + Σ_j exp(d(s, t) − d(s, nʲ)))``. Inputs: groups.

    Example::

        loss = SourceMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                         torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET, SOURCE_COCITED)
