"""Contrastive objectives for citation-informed document embeddings: one loss per module.

Every loss scores an *encoded batch*: ``embeddings`` holds one row per distinct paper of the batch
(see :class:`scincl.model.collator.DedupCollator`), and index tensors say which rows play which role.
Losses never tokenise or read data; distances and similarities are parameters.

Two input kinds (attribute ``input_kind``):

* ``"triplets"``: ``anchor_index``, ``positive_index``, ``negative_index`` are 1-d ``[T]`` tensors,
  row ``t`` is the triplet ``(anchor_t, positive_t, negative_t)``.
* ``"groups"``: ``query_index`` is ``[G]``; ``positive_index`` ``[G, P]`` (column 0 = the target
  citation) and ``negative_index`` ``[G, N]``, padded with ``-1``.

``--loss`` names map to classes through one registry (:mod:`scincl.model.losses.registry`):

=============== ======================================= ========================================
``--loss``      class (module)                          equation source
=============== ======================================= ========================================
``triplet``     TripletMarginLoss (``triplet``)          SPECTER eq. 2 / SciNCL (000) §3.1
``infonce``     InfoNCELoss (``infonce``)                thesis (004) eq. 3.4; OpenMSD (002) eq. 1
``cosent``      CoSENTLoss (``cosent``)                  Su 2022; thesis (004) eq. 3.7
``angle``       AnglELoss (``angle``)                    Li & Li 2024 (cosine + in-batch + angle)
``angle-term``  AnglETermLoss (``angle_term``)           Li & Li 2024, the angle term alone
``mpt-tgt``     TargetMultiPositiveLoss (``mpt_tgt``)    MP-BERT4CR (001) eq. 4
``mpt-src``     SourceMultiPositiveLoss (``mpt_src``)    MP-BERT4CR (001) eq. 5
``mpt-src-tgt`` SourceTargetMultiPositiveLoss            MP-BERT4CR (001) eq. 6
=============== ======================================= ========================================

Usage::

    loss_fn = build_loss("triplet")                   # SPECTER / SciNCL default
    embeddings = encoder(**batch_inputs)              # [U, d], one row per distinct paper
    loss = loss_fn(embeddings, anchor_index, positive_index, negative_index)
    loss.backward()
"""
from __future__ import annotations

# import order = registration order = the order ``--help`` and errors list the names in
from scincl.model.losses.triplet import TripletMarginLoss  # noqa: I001
from scincl.model.losses.infonce import InfoNCELoss
from scincl.model.losses.cosent import CoSENTLoss
from scincl.model.losses.angle_term import AnglETermLoss
from scincl.model.losses.angle import AnglELoss
from scincl.model.losses.mpt_tgt import TargetMultiPositiveLoss
from scincl.model.losses.mpt_src import SourceMultiPositiveLoss
from scincl.model.losses.mpt_src_tgt import SourceTargetMultiPositiveLoss
from scincl.model.losses.multi_positive import MultiPositiveTupletLoss
from scincl.model.losses.graph_distillation import GraphDistillationLoss
from scincl.model.losses.functional import (
    angle_similarity, cosine_distance, l2_distance, pairwise_cosine, pairwise_dot,
)
from scincl.model.losses.registry import (LOSSES, LossOption, build_loss, check_loss_name, loss_names, loss_options,
                                           loss_revision, loss_settings, take_loss_options)

LOSS_NAMES = tuple(loss_names())

__all__ = [
    "AnglELoss", "AnglETermLoss", "CoSENTLoss", "GraphDistillationLoss", "InfoNCELoss", "LOSSES", "LOSS_NAMES",
    "LossOption", "check_loss_name", "loss_options", "take_loss_options",
    "MultiPositiveTupletLoss", "SourceMultiPositiveLoss", "SourceTargetMultiPositiveLoss",
    "TargetMultiPositiveLoss", "TripletMarginLoss", "angle_similarity", "build_loss", "cosine_distance",
    "l2_distance", "loss_names", "loss_revision", "loss_settings", "pairwise_cosine", "pairwise_dot",
]
