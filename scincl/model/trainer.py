"""``transformers.Trainer`` subclass for contrastive training.

Everything (optimiser, schedule, DDP/torchrun, accelerate, fp16/bf16, gradient accumulation,
checkpoints, resume, W&B) stays the ``Trainer``'s. Overridden are only:

* ``compute_loss``: the model returns ``{"loss", <components>}``; components are averaged into
  the training logs (``contrastive_loss``, ``mlm_loss``, ``graph_distillation_loss``);
* the first non-finite loss, gradient or weight stops training (:mod:`scincl.model.finite_checks`);
* ``prediction_step``: evaluation reports the contrastive loss (there are no labels/logits);
* ``_get_train_sampler``: shuffle whole queries (:class:`QueryBlockSampler`) so the triplets of a
  query share a batch and the dedup collator encodes the query once; ``--group_by_length`` or
  ``keep_query_triplets_together=False`` fall back to the ``Trainer``'s own samplers.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, Optional

import torch
from transformers import Trainer

from scincl.faults import kill_point_callback
from scincl.model.collator import QueryBlockSampler
from scincl.model.finite_checks import check_loss, finite_check_callback


class ContrastiveTrainer(Trainer):
    """A ``Trainer`` for :class:`scincl.model.objective.ContrastiveModel`."""

    def __init__(self, *args: Any, keep_query_triplets_together: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keep_query_triplets_together = keep_query_triplets_together
        self.add_callback(kill_point_callback())  # SCINCL_KILL_AT=train:step:<N> (crash tests)
        self.add_callback(finite_check_callback())  # a NaN gradient or weight stops training (issue 29)
        self._component_sums: Dict[str, float] = defaultdict(float)
        self._component_counts: Dict[str, int] = defaultdict(int)

    def _get_train_sampler(self, train_dataset=None):
        dataset = train_dataset if train_dataset is not None else self.train_dataset
        if self.keep_query_triplets_together and not self.args.group_by_length and dataset is not None:
            return QueryBlockSampler(dataset["query"], seed=self.args.seed)
        # transformers < 4.50 takes no dataset argument here
        return super()._get_train_sampler(train_dataset) if train_dataset is not None else super()._get_train_sampler()

    def compute_loss(self, model, inputs, return_outputs: bool = False, num_items_in_batch=None):
        outputs = model(**inputs)
        if model.training:
            check_loss(outputs["loss"], self.state.global_step + 1, self.args.output_dir)
            for name, value in outputs.items():
                if name != "loss":
                    self._component_sums[name] += float(value)
                    self._component_counts[name] += 1
        return (outputs["loss"], outputs) if return_outputs else outputs["loss"]

    def log(self, logs: Dict[str, float], start_time: Optional[float] = None) -> None:
        if "loss" in logs:  # a training log: add the mean of each loss component since the last one
            for name, total in self._component_sums.items():
                logs[name] = round(total / max(self._component_counts[name], 1), 4)
            self._component_sums.clear()
            self._component_counts.clear()
        if start_time is None:  # transformers < 4.47 has no start_time argument
            super().log(logs)
        else:
            super().log(logs, start_time)

    def prediction_step(self, model, inputs, prediction_loss_only: bool, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.detach().mean(), None, None
