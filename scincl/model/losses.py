"""Contrastive objectives for citation-informed document embeddings, one small module per loss.

Every loss scores an *encoded batch*: ``embeddings`` holds one row per distinct paper of the batch
(see :class:`scincl.model.data.DedupCollator`), and index tensors say which rows play which role.
Losses never tokenise or read data, and the distance is a parameter (``"l2"`` or ``"cosine"``).

Two input kinds (attribute ``input_kind``):

* ``"triplets"``: ``anchor_index``, ``positive_index``, ``negative_index`` are 1-d ``[T]`` tensors,
  row ``t`` is the triplet ``(anchor_t, positive_t, negative_t)``.
* ``"groups"``: ``query_index`` is ``[G]``; ``positive_index`` ``[G, P]`` and ``negative_index``
  ``[G, N]`` list each query's positives/negatives, padded with ``-1``.

Usage::

    loss_fn = TripletMarginLoss(margin=1.0)          # SPECTER / SciNCL default
    embeddings = encoder(**batch_inputs)              # [U, d], one row per distinct paper
    loss = loss_fn(embeddings, anchor_index, positive_index, negative_index)
    loss.backward()

:func:`build_loss` maps the ``--loss`` names of ``cli_pipeline.py train`` to these modules.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# ----------------------------------------------------------------------------------- distances


def l2_distance(x: Tensor, y: Tensor) -> Tensor:
    """Row-wise Euclidean distance ``||x - y + eps||_2`` (eps 1e-6, as ``torch.nn.TripletMarginLoss``)."""
    return F.pairwise_distance(x, y, p=2.0, eps=1e-6)


def cosine_distance(x: Tensor, y: Tensor) -> Tensor:
    """Row-wise ``1 - cos(x, y)``."""
    return 1.0 - F.cosine_similarity(x, y, dim=-1)


DISTANCES: Dict[str, Callable[[Tensor, Tensor], Tensor]] = {"l2": l2_distance, "cosine": cosine_distance}


def _distance_fn(name: str) -> Callable[[Tensor, Tensor], Tensor]:
    if name not in DISTANCES:
        raise ValueError(f"unknown distance {name!r}; choose one of {sorted(DISTANCES)}")
    return DISTANCES[name]


def pairwise_cosine(x: Tensor, y: Tensor) -> Tensor:
    """``[n, m]`` matrix of cosine similarities between the rows of ``x`` and of ``y``."""
    return F.normalize(x, dim=-1) @ F.normalize(y, dim=-1).T


def angle_similarity(x: Tensor, y: Tensor) -> Tensor:
    """AnglE's row-wise angle score (Li & Li 2024, §3.4), as in its reference code.

    Each vector is read as a complex vector ``z = a + ib`` (first half real, second half imaginary
    part). With ``w = c + id`` and ``q_k = z_k · conj(w_k) / (|z| |w|)`` (the element-wise quotient
    ``z_k / w_k`` scaled by ``|w_k|² / (|z| |w|)``)::

        score(z, w) = | Σ_k Re(q_k) + Im(q_k) |

    The reference implementation (and the sentence-transformers port) rank pairs by this score
    like a similarity; it keeps a gradient where the cosine saturates.
    """
    a, b = torch.chunk(x, 2, dim=-1)
    c, d = torch.chunk(y, 2, dim=-1)
    w_norm_sq = (c**2 + d**2).sum(-1, keepdim=True)
    re = (a * c + b * d) / w_norm_sq
    im = (b * c - a * d) / w_norm_sq
    norm_ratio = (a**2 + b**2).sum(-1, keepdim=True).sqrt() / w_norm_sq.sqrt()
    return torch.abs((re / norm_ratio).sum(-1) + (im / norm_ratio).sum(-1))


def _zero_like_graph(embeddings: Tensor) -> Tensor:
    """A zero loss that still belongs to the autograd graph (for batches without valid terms)."""
    return embeddings.sum() * 0.0


def _ranking_logsumexp(positive_scores: Tensor, negative_scores: Tensor, scale: float) -> Tensor:
    """``log(1 + Σ_{i,j} exp(scale · (s_neg_j − s_pos_i)))``: CoSENT's pair-ranking term."""
    differences = scale * (negative_scores[None, :] - positive_scores[:, None])  # [P, N]
    zero = differences.new_zeros(1)
    return torch.logsumexp(torch.cat([zero, differences.flatten()]), dim=0)


# ------------------------------------------------------------------------------ triplet losses


class TripletMarginLoss(nn.Module):
    """Triplet margin loss (SPECTER, Cohan et al. 2020, eq. 2; SciNCL, Ostendorff et al. 2022, §3).

    ``L = mean_t max(d(q_t, p_t) − d(q_t, n_t) + m, 0)`` with ``d`` the L2 distance and margin
    ``m = 1`` (the SPECTER/SciNCL setting). Inputs: ``(anchor, positive, negative)`` triplets.

    Example::

        loss_fn = TripletMarginLoss()
        loss = loss_fn(emb, torch.tensor([0]), torch.tensor([1]), torch.tensor([2]))
    """

    input_kind = "triplets"

    def __init__(self, margin: float = 1.0, distance: str = "l2") -> None:  # paper §3: L2, margin 1
        super().__init__()
        self.margin = margin
        self.distance = distance
        self._distance = _distance_fn(distance)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        anchors = embeddings[anchor_index]
        d_pos = self._distance(anchors, embeddings[positive_index])
        d_neg = self._distance(anchors, embeddings[negative_index])
        return F.relu(d_pos - d_neg + self.margin).mean()


class InfoNCELoss(nn.Module):
    """InfoNCE with in-batch negatives plus the explicit hard negatives (van den Oord et al. 2018;
    the SimCSE / "multiple negatives ranking" form of Gao et al. 2021 and Henderson et al. 2017).

    For triplet ``t`` with anchor ``q_t`` and positive ``p_t`` the candidates ``C`` are all distinct
    positives and negatives of the batch::

        L = −mean_t log( exp(cos(q_t, p_t)/τ) / Σ_{c ∈ C_t} exp(cos(q_t, c)/τ) )

    ``C_t`` leaves out candidates that would be false negatives: the anchor paper itself and the
    *other* positives of the same query (five triplets of one query share a batch, so their
    positives must not be pushed away from it). Temperature ``τ = 0.05`` (SimCSE; = scale 20).

    Example::

        loss = InfoNCELoss(temperature=0.05)(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"

    def __init__(self, temperature: float = 0.05) -> None:  # SimCSE, Gao et al. 2021
        super().__init__()
        if temperature <= 0:
            raise ValueError("temperature must be > 0")
        self.temperature = temperature

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        candidates = torch.unique(torch.cat([positive_index, negative_index]))  # [C], sorted
        scores = pairwise_cosine(embeddings[anchor_index], embeddings[candidates]) / self.temperature
        is_own_positive = candidates[None, :] == positive_index[:, None]  # [T, C]
        target = is_own_positive.float().argmax(dim=1)
        same_query = (anchor_index[:, None] == anchor_index[None, :]).float()  # [T, T]
        positive_of_same_query = (same_query @ is_own_positive.float()) > 0  # [T, C]
        is_anchor = candidates[None, :] == anchor_index[:, None]
        excluded = (positive_of_same_query & ~is_own_positive) | (is_anchor & ~is_own_positive)
        scores = scores.masked_fill(excluded, float("-inf"))
        return F.cross_entropy(scores, target)


class CoSENTLoss(nn.Module):
    """CoSENT ranking loss (Su 2022, "CoSENT: a more efficient sentence vector scheme").

    Every positive pair of the batch should be more similar than every negative pair::

        L = log(1 + Σ_{i, j} exp(λ · (cos(q_j, n_j) − cos(q_i, p_i))))

    with scale ``λ = 20``. Inputs: ``(anchor, positive, negative)`` triplets; ``(q_t, p_t)`` are the
    positive pairs, ``(q_t, n_t)`` the negative pairs.

    Example::

        loss = CoSENTLoss(scale=20.0)(emb, anchor_index, positive_index, negative_index)
    """

    input_kind = "triplets"

    def __init__(self, scale: float = 20.0) -> None:  # Su 2022
        super().__init__()
        self.scale = scale

    def similarity(self, x: Tensor, y: Tensor) -> Tensor:
        """Row-wise similarity used for ranking (cosine)."""
        return F.cosine_similarity(x, y, dim=-1)

    def forward(self, embeddings: Tensor, anchor_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        anchors = embeddings[anchor_index]
        positive_scores = self.similarity(anchors, embeddings[positive_index])
        negative_scores = self.similarity(anchors, embeddings[negative_index])
        return _ranking_logsumexp(positive_scores, negative_scores, self.scale)


class AnglELoss(CoSENTLoss):
    """AnglE angle-optimised ranking loss (Li & Li 2024, "AnglE-optimized text embeddings", §3.4).

    CoSENT's ranking form with the cosine replaced by the angle score of :func:`angle_similarity`::

        L = log(1 + Σ_{i, j} exp(λ · (score(q_j, n_j) − score(q_i, p_i))))

    Scale ``λ = 20`` as in the sentence-transformers port. Inputs: ``(anchor, positive, negative)``
    triplets. (AnglE's full objective adds the cosine and in-batch terms, which are
    :class:`CoSENTLoss` and :class:`InfoNCELoss` here.)

    Example::

        loss = AnglELoss()(emb, anchor_index, positive_index, negative_index)
    """

    def similarity(self, x: Tensor, y: Tensor) -> Tensor:
        return angle_similarity(x, y)


# ------------------------------------------------------------------ multi-positive (group) losses


class MultiPositiveTripletLoss(nn.Module):
    """Multi-positive triplet objectives of MP-BERT4CR (Zhang & Ma 2021, eqs. 4-6).

    A group is a query ``q`` with positives ``P`` and negatives ``N``; ``d`` is the L2 distance,
    ``m`` the margin (1, as the triplet loss):

    * ``mpt-src`` (eq. 4, source-anchored): every positive closer to the query than every negative,
      ``Σ_{p∈P} Σ_{n∈N} max(0, m + d(q, p) − d(q, n))``;
    * ``mpt-tgt`` (eq. 5, target-anchored): positives of one query (co-cited papers) closer to
      each other than to the negatives,
      ``Σ_{p≠p'∈P} Σ_{n∈N} max(0, m + d(p, p') − d(p, n))``;
    * ``mpt-src-tgt`` (eq. 6): the sum of both.

    Each term is averaged over its valid ``(anchor, positive, negative)`` combinations in the batch
    (padding ``-1`` is skipped). Inputs: groups ``query_index [G]``, ``positive_index [G, P]``,
    ``negative_index [G, N]``.

    Example::

        loss = MultiPositiveTripletLoss("mpt-src")(emb, q_idx, pos_idx, neg_idx)
    """

    input_kind = "groups"
    VARIANTS = ("mpt-src", "mpt-tgt", "mpt-src-tgt")

    def __init__(self, variant: str = "mpt-src", margin: float = 1.0, distance: str = "l2") -> None:
        super().__init__()
        if variant not in self.VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose one of {self.VARIANTS}")
        self.variant = variant
        self.margin = margin
        self.distance = distance
        self._distance = _distance_fn(distance)

    def _mean_hinge(self, anchors: Tensor, positives: Tensor, negatives: Tensor, valid: Tensor,
                    embeddings: Tensor) -> Tensor:
        """Mean of ``max(0, m + d(a, p) − d(a, n))`` over the entries where ``valid`` is true."""
        if not bool(valid.any()):
            return _zero_like_graph(embeddings)
        a, p, n = anchors[valid], positives[valid], negatives[valid]
        return F.relu(self.margin + self._distance(embeddings[a], embeddings[p])
                      - self._distance(embeddings[a], embeddings[n])).mean()

    def source_loss(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                    negative_index: Tensor) -> Tensor:
        """Eq. 4: query-anchored hinge over all (positive, negative) combinations."""
        groups, n_pos = positive_index.shape
        n_neg = negative_index.shape[1]
        anchors = query_index[:, None, None].expand(groups, n_pos, n_neg)
        positives = positive_index[:, :, None].expand(groups, n_pos, n_neg)
        negatives = negative_index[:, None, :].expand(groups, n_pos, n_neg)
        valid = (positives >= 0) & (negatives >= 0)
        return self._mean_hinge(anchors.clamp(min=0), positives.clamp(min=0), negatives.clamp(min=0),
                                valid, embeddings)

    def target_loss(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                    negative_index: Tensor) -> Tensor:
        """Eq. 5: positive-anchored hinge, other positives of the query vs its negatives."""
        groups, n_pos = positive_index.shape
        n_neg = negative_index.shape[1]
        shape = (groups, n_pos, n_pos, n_neg)
        anchors = positive_index[:, :, None, None].expand(shape)
        positives = positive_index[:, None, :, None].expand(shape)
        negatives = negative_index[:, None, None, :].expand(shape)
        distinct = ~torch.eye(n_pos, dtype=torch.bool, device=positive_index.device)[None, :, :, None]
        valid = (anchors >= 0) & (positives >= 0) & (negatives >= 0) & distinct & (anchors != positives)
        return self._mean_hinge(anchors.clamp(min=0), positives.clamp(min=0), negatives.clamp(min=0),
                                valid, embeddings)

    def forward(self, embeddings: Tensor, query_index: Tensor, positive_index: Tensor,
                negative_index: Tensor) -> Tensor:
        loss = _zero_like_graph(embeddings)
        if self.variant in ("mpt-src", "mpt-src-tgt"):
            loss = loss + self.source_loss(embeddings, query_index, positive_index, negative_index)
        if self.variant in ("mpt-tgt", "mpt-src-tgt"):
            loss = loss + self.target_loss(embeddings, query_index, positive_index, negative_index)
        return loss


# ------------------------------------------------------------------------- auxiliary objectives


class GraphDistillationLoss(nn.Module):
    """Student-teacher loss between text and citation-graph similarities (SciNCL paper, A.7.9).

    The text encoder (student) should reproduce the similarity structure of the graph embeddings
    (teacher) over the distinct papers of the batch::

        L = mean_{i, j ∈ V} (cos(t_i, t_j) − cos(g_i, g_j))²

    where ``t`` are text embeddings, ``g`` graph embeddings and ``V`` the papers that have a graph
    embedding (``graph_mask``). The teacher is fixed (no gradient).

    Example::

        loss = GraphDistillationLoss()(text_emb, graph_emb, graph_mask)
    """

    def forward(self, text_embeddings: Tensor, graph_embeddings: Tensor,
                graph_mask: Optional[Tensor] = None) -> Tensor:
        if graph_mask is None:
            graph_mask = torch.ones(text_embeddings.shape[0], dtype=torch.bool, device=text_embeddings.device)
        if int(graph_mask.sum()) < 2:
            return _zero_like_graph(text_embeddings)
        student = pairwise_cosine(text_embeddings[graph_mask], text_embeddings[graph_mask])
        teacher = pairwise_cosine(graph_embeddings[graph_mask].to(student.dtype),
                                  graph_embeddings[graph_mask].to(student.dtype)).detach()
        return F.mse_loss(student, teacher)


# ----------------------------------------------------------------------------------- registry

LOSS_NAMES = ("triplet", "infonce", "cosent", "angle", "mpt-src", "mpt-tgt", "mpt-src-tgt")


def build_loss(name: str, margin: float = 1.0, distance: str = "l2", temperature: float = 0.05,
               scale: float = 20.0) -> nn.Module:
    """The loss module for a ``--loss`` name (see :data:`LOSS_NAMES`)."""
    if name == "triplet":
        return TripletMarginLoss(margin=margin, distance=distance)
    if name == "infonce":
        return InfoNCELoss(temperature=temperature)
    if name == "cosent":
        return CoSENTLoss(scale=scale)
    if name == "angle":
        return AnglELoss(scale=scale)
    if name in MultiPositiveTripletLoss.VARIANTS:
        return MultiPositiveTripletLoss(name, margin=margin, distance=distance)
    raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSS_NAMES)}")


__all__ = [
    "AnglELoss", "CoSENTLoss", "GraphDistillationLoss", "InfoNCELoss", "LOSS_NAMES",
    "MultiPositiveTripletLoss", "TripletMarginLoss", "angle_similarity", "build_loss",
    "cosine_distance", "l2_distance", "pairwise_cosine",
]
