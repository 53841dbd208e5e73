"""The ``--help`` rows of the pipeline commands whose flags are settings: ``run_specter`` / ``run_specter_like`` /
``sweep`` (:func:`run_specter_flag_info`) and ``reproduce`` / ``run_experiment`` (:func:`reproduce_flag_info`).

They are presentation (the CLI layer): the planner decides which flags a command takes
(:func:`scincl.pipeline.run_flags.run_specter_flag_names`, the experiments' fields), these functions show them with
their types, defaults (each preset's, each loss's), sources and help.
"""
from __future__ import annotations

import dataclasses

from scincl.cli.help import FlagInfo, dataclass_flags, loss_flags, miner_flags, signature_flags, training_flags
from scincl.pipeline.run_flags import (ACCEPTED_WITHOUT_EFFECT, ALL_STAGE_NAMES, RESERVED_TRAINING_FLAGS,
                                       setting_names, training_option_names)
from scincl.settings.experiment import Experiment, experiment_data
from scincl.settings.presets import preset_defaults_text, preset_fields, preset_values
from scincl.settings.recipe import RECIPE_ALIASES, Recipe
from scincl.settings.run import RunSettings


def run_specter_flag_info() -> list:
    """``run_specter --help``: the flags beyond its OUTPUT_DIR: the
    :class:`~scincl.settings.run.RunSettings` fields with the paper's and the demo's defaults, stage
    control, the miner's and the trainer's flags and those accepted without effect."""
    from scincl.model.train import train

    settings, reserved = setting_names(), RESERVED_TRAINING_FLAGS
    rows = dataclass_flags(RunSettings, exclude={f.name for f in dataclasses.fields(RunSettings)} - settings
                           | {"output_dir"}, defaults={name: preset_defaults_text(name) for name in preset_fields()})
    rows += [FlagInfo(f"{prefix}_{stage}", "bool", "False", "scincl/pipeline/run_flags.py:ALL_STAGE_NAMES",
                      f"{'skip' if prefix == 'skip' else 'rebuild'} the {stage} stage")
             for prefix in ("skip", "override") for stage in ALL_STAGE_NAMES]
    rows += [r for r in miner_flags() if r.name not in settings]
    demo_training = preset_values("demo").get("training_options", {})
    for row in training_flags(exclude=reserved):
        if row.name in demo_training:
            row.default += f" (demo {demo_training[row.name]!r}: experiments/presets/demo.py)"
        rows.append(row)
    rows += [r for r in signature_flags(train) if r.name in training_option_names() - reserved
             and r.name not in settings]
    rows += loss_flags()
    rows += [FlagInfo(name, "any", "None", "scincl/pipeline/run_flags.py:ACCEPTED_WITHOUT_EFFECT",
                      f"accepted for the original command, no effect: {why}")
             for name, why in ACCEPTED_WITHOUT_EFFECT.items()]
    return rows + [FlagInfo("seeds", "str", "None", "scincl/settings/run.py:parse_seeds",
                            "e.g. 0..9 or 0,1,2: one run per seed on the same corpus")]


def reproduce_flag_info() -> list:
    """``reproduce`` / ``run_experiment --help``: the experiment's and the recipe's fields, defaults defined there."""
    recipe = dataclass_flags(Recipe)
    rows = {row.name: row for row in recipe}
    aliases = [FlagInfo(alias, rows[name].type, rows[name].default, "scincl/settings/recipe.py:RECIPE_ALIASES",
                        f"the former name of --{name}") for alias, name in RECIPE_ALIASES.items()]
    data = {"losses": tuple(experiment_data("hepth_losses").LOSSES),  # the defaults read from experiments/
            "graph_dims": tuple(experiment_data("hepth_graph").GRAPH_DIMS)}
    return dataclass_flags(Experiment, exclude={"kind", "recipe"}, defaults={k: str(v) for k, v in data.items()}) + \
        recipe + aliases
