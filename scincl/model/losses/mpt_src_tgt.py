"""MP-BERT4CR eq. 6: source- and target-anchored terms together (``--loss mpt-src-tgt``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import (
    SOURCE_COCITED, SOURCE_TARGET, TARGET_COCITED, MultiPositiveTupletLoss,
)
from scincl.model.losses.registry import register_loss


@register_loss("mpt-src-tgt")
class SourceTargetMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 6 (Zhang & Ma 2021): the terms of eqs. 4 and 5 in one N-tuplet loss::

        L = log(1 + Σ_{i=1..n} Σ_{j=1..m} [ exp(d(s, t) − d(s, nʲ)) + exp(d(s, cⁱ) − d(s, nʲ))
                                           + exp(d(t, cⁱ) − d(t, nʲ)) ])

    Notation as in eqs. 4–5 (:class:`~scincl.model.losses.mpt_tgt.TargetMultiPositiveLoss`); no
    margin, Euclidean distance, mean over groups; a group without co-cited papers falls back to
    ``log(1 + Σ_j exp(d(s, t) − d(s, nʲ)))``. Inputs: groups.

    Example::

        loss = SourceTargetMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                               torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET, SOURCE_COCITED, TARGET_COCITED)
