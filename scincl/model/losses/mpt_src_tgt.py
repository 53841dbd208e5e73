"""MP-BERT4CR eq. 6: source- and target-based terms together (``--loss mpt-src-tgt``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import (
    SOURCE_COCITED, SOURCE_TARGET, TARGET_COCITED, MultiPositiveTupletLoss,
)
from scincl.model.losses.registry import register_loss


@register_loss("mpt-src-tgt")
class SourceTargetMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 6 (Zhang & Ma 2021, ``../shared/papers/001_3753c6be31fc929c.txt`` §4.1.5), as printed::

        L_mpt-src-tgt = log(1 + Σ_{j=1}^{m} exp(||d_s − d_t|| − ||d_s − d_ns^j||)
                              + Σ_{j=1}^{m} Σ_{i=1}^{n} exp(||d_s − d_c^i|| − ||d_s − d_ns^j||)
                              + Σ_{j=1}^{m} Σ_{i=1}^{n} exp(||d_t − d_c^i|| − ||d_t − d_ns^j||))   (6)

    "Source-target-based" strategy, the paper's default objective (§4.1.5, §5.5): the source pulls
    the target and the co-cited papers, the target pulls the co-cited papers. The source–target
    exponent is summed over the negatives only. ``d`` = Euclidean distance (``--distance``), no margin;
    mean over groups; with ``n = 0`` only the first sum remains. Inputs: groups.

    Example::

        loss = SourceTargetMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                               torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET, SOURCE_COCITED, TARGET_COCITED)
