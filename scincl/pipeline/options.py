"""The flags of ``run_specter`` that are not its own parameters: who takes which.

``run_specter`` accepts the original SciNCL command verbatim, so besides its named parameters it
takes ``**kwargs`` and routes each one:

- ``skip_<stage>`` / ``override_<stage>``: stage control (validated against the stage names);
- miner flags (``easy_positives_k_min``, ``random_sorted_sample_n``, ...): the triplet miner;
- ``TrainingArguments`` fields and ``train`` options (``learning_rate``, ``fp16``, ``save_steps``,
  ``eval_steps``, ...): the training stage;
- flags of the original code that have no effect here (``ann_trees``: Annoy only; ``ann_workers``:
  FAISS uses ``--workers`` threads): accepted and logged, so the README command runs as written.

Anything else is an :class:`InputError` naming the flag, never silently ignored.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Mapping, Set

from scincl.errors import InputError

logger = logging.getLogger(__name__)

# Flags of the original run_specter that select nothing in this implementation (see module doc).
ACCEPTED_WITHOUT_EFFECT = {
    "ann_trees": "Annoy index setting; the FAISS backend has no trees",
    "ann_workers": "FAISS search threads follow --workers",
    "disable_specter_to_s2orc_mapping": "pass no --s2id_to_s2orc_input_path to use ids as they are",
    "cache_metadata": "metadata is streamed from the shards for the ids of the triples",
    "scidocs_cuda_device": "evaluation uses CUDA when available",
}


@dataclass
class RoutedFlags:
    """``run_specter``'s extra keyword arguments, sorted by the stage that takes them."""

    skip: Set[str] = field(default_factory=set)
    override: Set[str] = field(default_factory=set)
    miner: Dict[str, Any] = field(default_factory=dict)
    training: Dict[str, Any] = field(default_factory=dict)
    ignored: Dict[str, Any] = field(default_factory=dict)


def miner_option_names() -> Set[str]:
    """Flags the triplet miner takes beyond run_specter's named ones."""
    from scincl.triples.config import MinerConfig, slot_option_names

    fields = {f.name for f in dataclasses.fields(MinerConfig)} - {"slots"}
    return set(slot_option_names()) | fields


def training_option_names() -> Set[str]:
    """``TrainingArguments`` fields plus the options of the training stage's ``train`` function."""
    import inspect

    from transformers import TrainingArguments

    names = {f.name for f in dataclasses.fields(TrainingArguments) if f.init}
    train = _train_function()
    if train is not None:
        names |= {n for n, p in inspect.signature(train).parameters.items()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    return names


def _train_function():
    """The training stage's entry point (issue 5), when present."""
    try:
        from scincl.model.train import train  # type: ignore[attr-defined]
    except ImportError:
        return None
    return train


def route_flags(kwargs: Mapping[str, Any], stage_names: Iterable[str],
                reserved: Iterable[str] = ()) -> RoutedFlags:
    """Sort ``kwargs`` (see module docstring); unknown flags raise :class:`InputError`.

    ``reserved``: flags run_specter sets itself for training (e.g. ``output_dir``); passing them
    here would be ambiguous, so they are rejected with a hint.
    """
    stages = list(stage_names)
    routed = RoutedFlags()
    miner, training, reserved = miner_option_names(), training_option_names(), set(reserved)
    for name, value in kwargs.items():
        for prefix, target in (("skip_", routed.skip), ("override_", routed.override)):
            if name.startswith(prefix):
                stage = name[len(prefix):]
                if stage not in stages:
                    raise InputError(f"--{name}: unknown stage {stage!r} (stages: {', '.join(stages)})")
                if value:
                    target.add(stage)
                break
        else:
            if name in ACCEPTED_WITHOUT_EFFECT:
                logger.info("--%s %s: accepted for compatibility, no effect (%s)", name, value,
                            ACCEPTED_WITHOUT_EFFECT[name])
                routed.ignored[name] = value
            elif name in miner:
                routed.miner[name] = value
            elif name in reserved:
                raise InputError(f"--{name} is set by run_specter itself (its value follows OUTPUT_DIR and "
                                 f"the stage layout); run `cli_pipeline.py train` directly to choose it")
            elif name in training:
                routed.training[name] = value
            else:
                raise InputError(f"--{name}: unknown flag for run_specter (not a stage skip/override, miner, "
                                 f"or training flag; see `cli_pipeline.py run_specter --help`)")
    return routed


def check_extra_flags(kwargs: Mapping[str, Any]) -> RoutedFlags:
    """Validate extra flags against the full stage list (used by tests rendering sbin/ scripts)."""
    from scincl.pipeline.specter import ALL_STAGE_NAMES

    return route_flags(kwargs, ALL_STAGE_NAMES)
