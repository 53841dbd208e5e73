"""MP-BERT4CR eq. 4: the target-anchored multi-positive N-tuplet loss (``--loss mpt-tgt``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import SOURCE_TARGET, TARGET_COCITED, MultiPositiveTupletLoss
from scincl.model.losses.registry import register_loss


@register_loss("mpt-tgt")
class TargetMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 4 (Zhang & Ma 2021): the source pulls its target, the target its co-cited papers::

        L = log(1 + Σ_{i=1..n} Σ_{j=1..m} [ exp(d(s, t) − d(s, nʲ)) + exp(d(t, cⁱ) − d(t, nʲ)) ])

    ``s`` = source (query), ``t`` = target (first positive), ``cⁱ`` = co-cited papers (the other
    positives), ``nʲ`` = negatives, ``d`` = Euclidean distance, no margin; mean over groups. A group
    without co-cited papers falls back to ``log(1 + Σ_j exp(d(s, t) − d(s, nʲ)))``. Gradients reach
    s, t, every cⁱ and every nʲ. Inputs: groups (see :mod:`scincl.model.losses.multi_positive`).

    Example::

        loss = TargetMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                         torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET, TARGET_COCITED)
