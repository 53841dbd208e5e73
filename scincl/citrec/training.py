"""The update loop of MP-BERT4CR's pre-training and fine-tuning, with Table 2's optimiser.

Table 2: Adam (β₁ 0.9; β₂ 0.999 pre-training / 0.98 fine-tuning; weight decay 0.01) with fairseq's
inverse-square-root schedule (linear warm-up from the warm-up learning rate, then ``lr · sqrt(warmup / step)``).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterable, List, Tuple

from scincl.errors import InputError

Batches = Callable[[int], Iterable[Tuple[Dict[str, Any], Callable[[], Any]]]]


def inverse_sqrt_factor(step: int, warmup_steps: int, learning_rate: float, warmup_learning_rate: float) -> float:
    """fairseq's ``inverse_sqrt`` schedule as a factor of ``learning_rate``: linear from ``warmup_learning_rate``
    to ``learning_rate`` over ``warmup_steps`` updates, then ``learning_rate * sqrt(warmup_steps / step)``."""
    if warmup_steps > 0 and step < warmup_steps:
        return (warmup_learning_rate + (learning_rate - warmup_learning_rate) * step / warmup_steps) / learning_rate
    return math.sqrt(max(warmup_steps, 1) / max(step, 1))


def adam_with_inverse_sqrt(model, learning_rate: float, warmup_learning_rate: float, warmup_steps: int,
                           weight_decay: float, adam_beta2: float):
    """Table 2's optimiser: Adam (decoupled weight decay, β₁ 0.9) and the inverse-square-root schedule."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=float(learning_rate), betas=(0.9, float(adam_beta2)),
                                  weight_decay=float(weight_decay))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: inverse_sqrt_factor(
        step, int(warmup_steps), float(learning_rate), float(warmup_learning_rate)))
    return optimizer, schedule


def run_updates(model, optimizer, schedule, epochs: int, max_steps: int, batches: Batches) -> List[Dict[str, Any]]:
    """One update per batch of ``batches(epoch)`` (pairs of log fields and a loss closure) for ``epochs`` epochs,
    or until ``max_steps`` updates (0: no limit); returns the log (step, epoch, loss, learning rate, fields).
    A non-finite loss stops with one error line naming the update."""
    import torch

    model.train()
    log: List[Dict[str, Any]] = []
    for epoch in range(int(epochs)):
        for fields, compute_loss in batches(epoch):
            rate = optimizer.param_groups[0]["lr"]
            loss = compute_loss()
            if not torch.isfinite(loss):
                raise InputError(f"non-finite loss {loss.item()} at update {len(log) + 1}; lower --learning_rate")
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            log.append({"step": len(log) + 1, "epoch": epoch, "loss": round(loss.item(), 6), "learning_rate": rate,
                        **fields})
            if int(max_steps) and len(log) >= int(max_steps):
                return log
    return log
