"""The trainable module handed to the ``Trainer``: encoder + contrastive loss (+ auxiliary losses).

``forward`` takes what :class:`scincl.model.collator.DedupCollator` returns and gives
``{"loss": ...}`` plus the loss components, so the ``Trainer`` (and DDP, which wraps ``forward``)
drive it like any Hugging Face model::

    L = L_contrastive + w_mlm · L_MLM + w_graph · L_graph-distillation
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import torch
from torch import Tensor, nn

from scincl.model.encoder import DocumentEncoder
from scincl.model.losses import GraphDistillationLoss


class ContrastiveModel(nn.Module):
    """Encode the distinct papers of a batch once, then score them with ``loss``.

    Args:
        encoder: the document encoder (its backbone has an MLM head when ``mlm_weight > 0``).
        loss: a module of :mod:`scincl.model.losses` (triplet or group input kind).
        mlm_weight: weight of the auxiliary masked-language-modelling loss (paper A.7.8; 0 = off).
        graph_distillation_weight: weight of the text/graph similarity MSE (paper A.7.9; 0 = off).
    """

    def __init__(self, encoder: DocumentEncoder, loss: nn.Module, mlm_weight: float = 0.0,
                 graph_distillation_weight: float = 0.0) -> None:
        super().__init__()
        if mlm_weight > 0 and not encoder.has_mlm_head:
            raise ValueError("mlm_weight > 0 needs an encoder loaded with an MLM head")
        self.encoder = encoder
        self.loss = loss
        self.mlm_weight = mlm_weight
        self.graph_distillation_weight = graph_distillation_weight
        self.graph_distillation = GraphDistillationLoss()

    def forward(self, input_ids: Tensor, attention_mask: Tensor, query_index: Tensor, positive_index: Tensor,
                negative_index: Tensor, token_type_ids: Optional[Tensor] = None,
                mlm_input_ids: Optional[Tensor] = None, mlm_labels: Optional[Tensor] = None,
                graph_embeddings: Optional[Tensor] = None, graph_mask: Optional[Tensor] = None
                ) -> Dict[str, Tensor]:
        embeddings = self.encoder(input_ids, attention_mask, token_type_ids)
        contrastive = self.loss(embeddings.float(), query_index, positive_index, negative_index)
        out = {"contrastive_loss": contrastive.detach()}
        total = contrastive
        if self.mlm_weight > 0 and mlm_input_ids is not None and bool((mlm_labels != -100).any()):
            kwargs = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
            mlm = self.encoder.backbone(input_ids=mlm_input_ids, attention_mask=attention_mask, labels=mlm_labels,
                                        **kwargs).loss
            total = total + self.mlm_weight * mlm
            out["mlm_loss"] = mlm.detach()
        if self.graph_distillation_weight > 0 and graph_embeddings is not None:
            distill = self.graph_distillation(embeddings.float(), graph_embeddings, graph_mask)
            total = total + self.graph_distillation_weight * distill
            out["graph_distillation_loss"] = distill.detach()
        out["loss"] = total
        return out

    @property
    def is_gradient_checkpointing(self) -> bool:
        """Whether the backbone recomputes activations in the backward pass (``--gradient_checkpointing``)."""
        return bool(getattr(self.encoder.backbone, "is_gradient_checkpointing", False))

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs: Optional[Dict[str, Any]] = None) -> None:
        """Called by the ``Trainer`` for ``--gradient_checkpointing``: checkpoint the backbone's layers.

        Non-reentrant checkpointing by default (torch's recommendation; it also works under DDP and
        with BitFit, where the embeddings' outputs need no gradient); ``--gradient_checkpointing_kwargs``
        overrides it.
        """
        kwargs = {"use_reentrant": False, **(gradient_checkpointing_kwargs or {})}
        self.encoder.backbone.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)

    def gradient_checkpointing_disable(self) -> None:
        """Undo :meth:`gradient_checkpointing_enable`."""
        self.encoder.backbone.gradient_checkpointing_disable()

    @torch.inference_mode()
    def embed(self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Optional[Tensor] = None) -> Tensor:
        """Document embeddings without gradients (for evaluation)."""
        return self.encoder(input_ids, attention_mask, token_type_ids)
