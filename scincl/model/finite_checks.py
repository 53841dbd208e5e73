"""Stop a training whose loss, gradients or weights stop being numbers (issue 29).

A diverged run (``--learning_rate 1e12``) must not finish with NaN weights and a "training loss"
the ``Trainer`` logged after dropping the NaN steps (``logging_nan_inf_filter``): the first
non-finite loss, gradient or weight ends training with one line naming the optimiser step, before
that step's checkpoint is written, so the newest ``checkpoint-N`` holds the last finite weights.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

import torch

from scincl.errors import InputError
from scincl.model.checkpoints import last_complete_checkpoint


class TrainingDiverged(InputError):
    """A loss, gradient norm or weight became NaN or infinite at an optimiser step."""


def diverged(what: str, step: int, output_dir: Optional[str]) -> TrainingDiverged:
    """The one-line error for a non-finite ``what`` at optimiser step ``step`` (names the newest checkpoint)."""
    newest = last_complete_checkpoint(Path(output_dir), remove_incomplete=False) if output_dir else None
    kept = (f"the newest checkpoint, {newest.name}, holds the last finite weights" if newest is not None
            else "no checkpoint was written")
    return TrainingDiverged(f"training diverged at step {step}: {what} (lower --learning_rate, or check the "
                            f"inputs); {kept}")


def first_non_finite(named: Iterable[tuple], grads: bool = False) -> Optional[str]:
    """The name of the first parameter (or its gradient) holding NaN/inf, or ``None``."""
    for name, param in named:
        tensor = param.grad if grads else param
        if tensor is not None and not bool(torch.isfinite(tensor).all()):
            return name
    return None


def check_loss(loss: torch.Tensor, step: int, output_dir: Optional[str]) -> None:
    """Raise :class:`TrainingDiverged` when a training ``loss`` is NaN or infinite."""
    if not bool(torch.isfinite(loss.detach()).all()):
        raise diverged(f"the loss is {float(loss.detach().float().mean())}", step, output_dir)


def finite_check_callback() -> Any:
    """A ``TrainerCallback``: non-finite gradients (before the optimiser step) or weights (after it) stop training.

    Gradients are not checked under ``--fp16``: its loss scaler skips steps with overflowing
    gradients by design.
    """
    from transformers import TrainerCallback

    class FiniteCheckCallback(TrainerCallback):
        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):  # noqa: D401 - hook
            if model is None or args.fp16:
                return
            name = first_non_finite(model.named_parameters(), grads=True)
            if name is not None:
                raise diverged(f"the gradient of {name} is not finite", state.global_step + 1, args.output_dir)

        def on_step_end(self, args, state, control, model=None, **kwargs):  # noqa: D401 - hook
            if model is None:
                return
            name = first_non_finite(model.named_parameters())
            if name is not None:
                raise diverged(f"weight {name} is not finite after the update", state.global_step, args.output_dir)

    return FiniteCheckCallback()
