"""PBG's ranking evaluator plus the training loss on the evaluation edges (the "loss" column).

A module of its own because PBG pickles the evaluator into its spawned worker pool, so the class
must be importable at module level (and importing it imports torchbiggraph).
"""
from __future__ import annotations

from scincl.graph.pbg_compat import import_torchbiggraph

import_torchbiggraph()

from torchbiggraph.eval import RankingEvaluator  # noqa: E402
from torchbiggraph.losses import LOSS_FUNCTIONS  # noqa: E402


class LossAndRankingEvaluator(RankingEvaluator):
    """Ranks each positive edge against the config's negatives (PBG) and adds the loss function.

    ``loss`` is the config's loss (``ranking`` with ``margin``, as in training) summed over the
    batch, like PBG's training stats, so after PBG averages by edge count it is a per-edge mean.
    """

    def __init__(self, loss_fn: str, margin: float) -> None:
        super().__init__()
        cls = LOSS_FUNCTIONS.get_class(loss_fn)
        self.loss_fn = cls(margin) if loss_fn == "ranking" else cls()

    def eval(self, scores, batch_edges):
        stats = super().eval(scores, batch_edges)
        loss = self.loss_fn(scores.lhs_pos, scores.lhs_neg) + self.loss_fn(scores.rhs_pos, scores.rhs_neg)
        stats.metrics["loss"] = float(loss)
        return stats
