"""MP-BERT4CR eq. 4: the target-based multi-positive N-tuplet loss (``--loss mpt-tgt``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import COCITED_TARGET, SOURCE_TARGET_PER_COCITED, MultiPositiveTupletLoss
from scincl.model.losses.registry import register_loss


@register_loss("mpt-tgt")
class TargetMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 4 (Zhang & Ma 2021, ``../shared/papers/001_3753c6be31fc929c.txt`` §4.1.5), as printed::

        L_mpt-tgt = log(1 + Σ_{i=1}^{n} Σ_{j=1}^{m} exp(||d_s − d_t|| − ||d_s − d_ns^j||)
                                                  + exp(||d_c^i − d_t|| − ||d_c^i − d_ns^j||))   (4)

    "Target-based" strategy: the source pulls its target, and each co-cited paper ``cⁱ`` is the anchor
    that pulls the target ``t`` (and pushes the negatives ``nʲ``). The double sum covers both
    exponents, so the source–target exponent counts ``n`` times per negative. ``d`` = Euclidean
    distance (``--distance``), no margin; mean over groups. Deviation: a group without co-cited
    papers (``n = 0``, outside the paper's ``1 ≤ n``) falls back to
    ``log(1 + Σ_j exp(||d_s − d_t|| − ||d_s − d_ns^j||))`` instead of ``log(1) = 0``. Gradients reach
    s, t, every valid cⁱ and nʲ. Inputs: groups (see :mod:`scincl.model.losses.multi_positive`).

    Example::

        loss = TargetMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                         torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET_PER_COCITED, COCITED_TARGET)
    fallback_without_cocited = True
