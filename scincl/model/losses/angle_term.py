"""AnglE's angle term alone (Li & Li 2024, §3.4): CoSENT ranking over angle scores."""
from __future__ import annotations

from torch import Tensor

from scincl.model.losses.cosent import CoSENTLoss
from scincl.model.losses.functional import angle_similarity
from scincl.model.losses.registry import register_loss


@register_loss("angle-term")
class AnglETermLoss(CoSENTLoss):
    """The angle term of AnglE (Li & Li 2024, "AnglE-optimized text embeddings")::

        L_angle = log(1 + Σ_{s(i) > s(j)} exp(τ · (Δθ_ij − Δθ_ji)))

    (the co-citation thesis, ``../shared/papers/004_c0e997bd26e55c12.txt`` §3 and §5.3: eq. 3.7
    "reformulated" in complex space, "the division in complex space in polar coordinates to compute
    the angle difference is reused from Li et al."), i.e. CoSENT's ranking form with the cosine replaced by the angle score of
    :func:`~scincl.model.losses.functional.angle_similarity`. This is the objective the co-citation
    thesis uses under the name "AnglE"; the paper's full objective is ``--loss angle``
    (:class:`~scincl.model.losses.angle.AnglELoss`). Scale ``τ = 20`` (``--ranking_scale``, the
    reference code's ``angle_tau``). Inputs: ``(anchor, positive, negative)`` triplets.

    Example::

        loss = AnglETermLoss()(emb, anchor_index, positive_index, negative_index)
    """

    def similarity(self, x: Tensor, y: Tensor) -> Tensor:
        return angle_similarity(x, y)
