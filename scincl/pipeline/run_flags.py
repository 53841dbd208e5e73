"""``run_specter``'s flags: which flag goes where (:func:`route_flags`) and which flags it takes
(:func:`run_specter_flag_names`; ``--help`` lists them: scincl/cli/pipeline_help.py).

``run_specter`` accepts the original SciNCL command verbatim. Each flag is one of:

- a :class:`RunSettings` field (``--graph_limit``, ``--easy_positives_count``, ...): type-checked
  against the field's annotation, then range-checked by :func:`~scincl.pipeline.run_checks.check_run`;
- ``skip_<stage>`` / ``override_<stage>``: stage control (validated against the stage names);
- another miner flag (``medium_negatives_count``, ``random_sorted_sample_n``, ...): the triplet miner;
- a ``TrainingArguments`` field or a ``train`` option (``learning_rate``, ``fp16``, ``save_steps``):
  the training stage;
- a flag of the original code that has no effect here (``ann_trees``: Annoy only; ``ann_workers``:
  FAISS uses ``--workers`` threads): accepted and logged, so the README command runs as written.

Anything else is an :class:`InputError` naming the closest valid flag, never silently ignored.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Set

from scincl.errors import InputError, unknown_flag_error
from scincl.settings.run import RunSettings
from scincl.triples.miner import miner_option_names

logger = logging.getLogger(__name__)

# The stages of run_specter's plan, in order (scincl/pipeline/scincl_plan.py:SciNCLPlan.stages builds them under
# these names): the stage control flags are --skip_<stage> and --override_<stage>.
ALL_STAGE_NAMES = ("demo", "scidocs_ids", "citations", "graph", "metadata_ids", "queries", "ann", "triples",
                   "metadata", "train", "eval_base", "eval", "compare")

# Flags of the original run_specter that select nothing in this implementation (see module doc).
ACCEPTED_WITHOUT_EFFECT = {
    "ann_trees": "Annoy index setting; the FAISS backend has no trees",
    "ann_workers": "FAISS search threads follow --workers",
    "disable_specter_to_s2orc_mapping": "pass no --s2id_to_s2orc_input_path to use ids as they are",
    "cache_metadata": "metadata is streamed from the shards for the ids of the triples",
    "scidocs_cuda_device": "evaluation uses CUDA when available",
}


def stage_selection(stages: Any) -> List[str]:
    """``--stages``' names (a comma-separated string or a list; none: every stage), each a stage of
    :data:`ALL_STAGE_NAMES` (else one :class:`InputError` line naming them)."""
    if stages is None or stages == "":
        return []
    names = [str(n).strip() for n in (stages.split(",") if isinstance(stages, str) else stages) if str(n).strip()]
    unknown = [n for n in names if n not in ALL_STAGE_NAMES]
    if unknown:
        raise InputError(f"--stages {unknown[0]}: unknown stage (stages: {', '.join(ALL_STAGE_NAMES)})")
    return names


@dataclass
class RoutedFlags:
    """``run_specter``'s extra keyword arguments, sorted by the stage that takes them."""

    skip: Set[str] = field(default_factory=set)
    override: Set[str] = field(default_factory=set)
    miner: Dict[str, Any] = field(default_factory=dict)
    training: Dict[str, Any] = field(default_factory=dict)
    ignored: Dict[str, Any] = field(default_factory=dict)


def training_option_names() -> Set[str]:
    """``TrainingArguments`` fields, the options of the training stage's ``train`` function and those the losses
    declare."""
    import inspect

    from transformers import TrainingArguments

    from scincl.model.losses import loss_options
    from scincl.model.train import train

    names = {f.name for f in dataclasses.fields(TrainingArguments) if f.init}
    return names | set(loss_options()) | {n for n, p in inspect.signature(train).parameters.items()
                                          if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}


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
                raise unknown_flag_error(name, "run_specter", run_specter_flag_names())
    return routed


# run_specter decides these training paths itself (they follow OUTPUT_DIR)
RESERVED_TRAINING_FLAGS = {"output_dir", "train_triples_path", "train_metadata_path", "logging_dir", "run_name"}


def setting_names() -> Set[str]:
    """The :class:`RunSettings` fields a user sets by flag (the routed ones are filled here)."""
    return {f.name for f in dataclasses.fields(RunSettings)} - {"miner_options", "training_options", "skip",
                                                                 "override", "demo"}


def run_specter_flag_names() -> Set[str]:
    """Every flag ``run_specter`` takes (for the front end's check before anything runs, and the closest name in an
    error): its OUTPUT_DIR, the settings, stage control, the miner's and the trainer's flags (the losses' options
    included), those accepted without effect and ``--seeds``; ``--help`` lists the same
    (scincl/cli/pipeline_help.py)."""
    return ({"output_dir", "seeds"} | setting_names() | {f"{prefix}_{stage}" for prefix in ("skip", "override")
                                                         for stage in ALL_STAGE_NAMES}
            | miner_option_names() | (training_option_names() - RESERVED_TRAINING_FLAGS) | set(ACCEPTED_WITHOUT_EFFECT))
