"""``run_specter``'s flags -> a validated :class:`~scincl.pipeline.settings.RunSettings`, before any stage runs.

``run_specter`` accepts the original SciNCL command verbatim. Each flag is one of:

- a :class:`RunSettings` field (``--graph_limit``, ``--hard_negatives_k_max``, ...): type-checked
  against the field's annotation, then range-checked by :func:`~scincl.pipeline.settings.check_ranges`;
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
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Union

from scincl.errors import InputError, unknown_flag_error

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
    from scincl.triples.config import miner_option_names

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


def check_extra_flags(kwargs: Mapping[str, Any]) -> RoutedFlags:
    """Validate extra flags against the full stage list (used by tests rendering sbin/ scripts)."""
    from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES

    return route_flags({k: v for k, v in kwargs.items() if k not in setting_names()}, ALL_STAGE_NAMES)


# run_specter decides these training paths itself (they follow OUTPUT_DIR)
RESERVED_TRAINING_FLAGS = {"output_dir", "train_triples_path", "train_metadata_path", "logging_dir", "run_name"}


def setting_names() -> Set[str]:
    """The :class:`RunSettings` fields a user sets by flag (the routed ones are filled here)."""
    from scincl.pipeline.settings import RunSettings

    return {f.name for f in dataclasses.fields(RunSettings)} - {"miner_options", "training_options", "skip",
                                                                 "override", "demo"}


def run_specter_flag_names() -> Set[str]:
    """Every flag ``run_specter`` takes (for the front end's check before anything runs)."""
    from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES
    from scincl.triples.config import miner_option_names

    stages = {f"{prefix}_{name}" for prefix in ("skip", "override") for name in ALL_STAGE_NAMES}
    return (setting_names() | stages | miner_option_names() | (training_option_names() - RESERVED_TRAINING_FLAGS)
            | set(ACCEPTED_WITHOUT_EFFECT) | {"seeds"})


def settings_from_flags(output_dir: Optional[str], flags: Mapping[str, Any]):
    """:class:`RunSettings` from run_specter's flags: routed, type- and range-checked, defaults resolved."""
    from scincl.pipeline.settings import RunSettings, check_ranges, check_types, resolve
    from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES

    names = setting_names()
    named = {k: v for k, v in flags.items() if k in names and k != "output_dir"}
    routed = route_flags({k: v for k, v in flags.items() if k not in names}, ALL_STAGE_NAMES,
                         reserved=RESERVED_TRAINING_FLAGS)
    settings = RunSettings(output_dir=output_dir, **check_types(named), miner_options=routed.miner,
                           training_options=routed.training, skip=sorted(routed.skip),
                           override=sorted(routed.override))
    return check_training_choices(check_ranges(resolve(settings)))


def check_training_choices(settings):
    """The loss and its flags build (``--loss hinge`` was refused only after the citation and graph
    stages ran, issue 29): one :class:`InputError` line before any stage."""
    from scincl.model.losses import LOSS_NAMES, build_loss

    if settings.loss not in LOSS_NAMES:
        raise InputError(f"unknown --loss {settings.loss!r}; choose one of {', '.join(LOSS_NAMES)}")
    try:
        build_loss(settings.loss, **dict(settings.training_options))
    except (TypeError, ValueError) as exc:
        raise InputError(f"--loss {settings.loss}: {exc}") from None
    return settings



SeedsArg = Union[None, int, str, Sequence[int]]


def parse_seeds(seeds: SeedsArg) -> List[int]:
    """``3`` -> [3]; ``"0..9"`` -> 0..9 inclusive; ``"0,2,4"`` or ``(0, 2, 4)`` -> that list."""
    if seeds is None:
        return []
    if isinstance(seeds, bool):
        raise InputError(f"--seeds: expected seeds like 0..9 or 0,1,2, got {seeds!r}")
    if isinstance(seeds, int):
        values = [seeds]
    elif isinstance(seeds, str):
        text = seeds.strip()
        try:
            if ".." in text:
                low, high = (int(x) for x in text.split(".."))
                values = list(range(low, high + 1))
            else:
                values = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise InputError(f"--seeds: expected seeds like 0..9 or 0,1,2, got {seeds!r}") from None
    else:
        values = [int(x) for x in seeds]
    if not values or len(set(values)) != len(values):
        raise InputError(f"--seeds: expected distinct seeds, got {seeds!r}")
    if any(not 0 <= v < 2 ** 32 for v in values):  # numpy's and torch's seed range (issue 29: -1 crashed in training)
        raise InputError(f"--seeds {seeds!r}: seeds must be >= 0 and < 2**32")
    return values


def parse_int_list(values: Any, name: str) -> List[int]:
    """``"10,25,100"`` / ``(10, 25)`` / ``25`` -> list of ints (an :class:`InputError` otherwise)."""
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    elif isinstance(values, int):
        values = [values]
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        raise InputError(f"--{name}: expected integers like 10,25,100, got {values!r}") from None


def run_specter_flag_info() -> list:
    """``run_specter --help``: every flag of :func:`run_specter_flag_names` with type, default and source."""
    from scincl.cli_help import FlagInfo, dataclass_flags, miner_flags, training_flags
    from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES
    from scincl.pipeline.settings import DEMO_DEFAULTS, PAPER_DEFAULTS, RunSettings

    both = {name: f"paper {PAPER_DEFAULTS.get(name)!r} / demo {DEMO_DEFAULTS.get(name)!r} "
                  "(scincl/pipeline/settings.py:PAPER_DEFAULTS, DEMO_DEFAULTS)"
            for name in set(PAPER_DEFAULTS) | set(DEMO_DEFAULTS) if name != "training"}
    rows = dataclass_flags(RunSettings, exclude={"output_dir"} | (
        {f.name for f in dataclasses.fields(RunSettings)} - setting_names()), defaults=both)
    rows += [FlagInfo(f"{prefix}_{stage}", "bool", "False", "scincl/pipeline/scincl_plan.py:ALL_STAGE_NAMES",
                      f"{'skip' if prefix == 'skip' else 'rebuild'} the {stage} stage")
             for prefix in ("skip", "override") for stage in ALL_STAGE_NAMES]
    rows += [r for r in miner_flags() if r.name not in setting_names()]
    demo_training = DEMO_DEFAULTS["training"]
    for row in training_flags(exclude=RESERVED_TRAINING_FLAGS):
        if row.name in demo_training:
            row.default += f" (demo {demo_training[row.name]!r}: scincl/pipeline/settings.py:DEMO_DEFAULTS)"
        rows.append(row)
    from scincl.cli_help import signature_flags
    from scincl.model.train import train

    rows += [r for r in signature_flags(train) if r.name in training_option_names() - RESERVED_TRAINING_FLAGS
             and r.name not in setting_names()]
    rows += [FlagInfo(name, "any", "None", "scincl/pipeline/flags.py:ACCEPTED_WITHOUT_EFFECT",
                      f"accepted for the original command, no effect: {why}")
             for name, why in ACCEPTED_WITHOUT_EFFECT.items()]
    rows.append(FlagInfo("seeds", "str", "None", "scincl/pipeline/flags.py:parse_seeds",
                         "e.g. 0..9 or 0,1,2: one run per seed on the same corpus"))
    return rows
