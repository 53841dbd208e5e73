"""MP-BERT4CR eq. 5: the source (manuscript)-based multi-positive N-tuplet loss (``--loss mpt-src``)."""
from __future__ import annotations

from scincl.model.losses.multi_positive import SOURCE_COCITED, SOURCE_TARGET, MultiPositiveTupletLoss
from scincl.model.losses.registry import register_loss


@register_loss("mpt-src")
class SourceMultiPositiveLoss(MultiPositiveTupletLoss):
    """MP-BERT4CR eq. 5, "mpt-ms" (Zhang & Ma 2021, ``../shared/papers/001_3753c6be31fc929c.txt`` §4.1.5)::

        L_mpt-ms = log(1 + Σ_{j=1}^{m} exp(||d_s − d_t|| − ||d_s − d_ns^j||)
                         + Σ_{j=1}^{m} Σ_{i=1}^{n} exp(||d_s − d_c^i|| − ||d_s − d_ns^j||))      (5)

    "Source-based" strategy: the source pulls its target and every co-cited paper. The source–target
    exponent is summed over the negatives only (once, not once per co-cited paper). The paper prints
    ``||d_s^i − d_ns^j||`` in the second exponent; there is one source, so we read ``d_s^i`` as an
    index typo for ``d_s`` (as in eq. 6's same term). ``d`` = Euclidean distance (``--distance``), no
    margin; mean over groups; with ``n = 0`` only the first sum remains. Inputs: groups.

    Example::

        loss = SourceMultiPositiveLoss()(emb, torch.tensor([0]), torch.tensor([[1, 2]]),
                                         torch.tensor([[3, 4]]))
    """

    terms = (SOURCE_TARGET, SOURCE_COCITED)
