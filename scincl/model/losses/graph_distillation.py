"""Student-teacher loss between text and citation-graph similarities (SciNCL paper, A.7.9)."""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scincl.model.losses.functional import pairwise_cosine, zero_like_graph


class GraphDistillationLoss(nn.Module):
    """Student-teacher loss between text and citation-graph similarities (SciNCL paper, A.7.9).

    The text encoder (student) should reproduce the similarity structure of the graph embeddings
    (teacher) over the distinct papers of the batch::

        L = mean_{i, j ∈ V} (cos(t_i, t_j) − cos(g_i, g_j))²

    where ``t`` are text embeddings, ``g`` graph embeddings and ``V`` the papers that have a graph
    embedding (``graph_mask``). The teacher is fixed (no gradient). An auxiliary objective
    (``--graph_distillation_weight``), not a ``--loss``.

    Example::

        loss = GraphDistillationLoss()(text_emb, graph_emb, graph_mask)
    """

    def forward(self, text_embeddings: Tensor, graph_embeddings: Tensor,
                graph_mask: Optional[Tensor] = None) -> Tensor:
        if graph_mask is None:
            graph_mask = torch.ones(text_embeddings.shape[0], dtype=torch.bool, device=text_embeddings.device)
        if int(graph_mask.sum()) < 2:
            return zero_like_graph(text_embeddings)
        student = pairwise_cosine(text_embeddings[graph_mask], text_embeddings[graph_mask])
        teacher = pairwise_cosine(graph_embeddings[graph_mask].to(student.dtype),
                                  graph_embeddings[graph_mask].to(student.dtype)).detach()
        return F.mse_loss(student, teacher)
