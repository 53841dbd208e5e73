"""issue 27: the real-corpus Recipe and Experiment declare every field once (default, its source, help), --help reads
that metadata, and the cached runs keep their directory names and recipe.json records."""
from __future__ import annotations

import dataclasses

from scincl.io import dumps_json
from scincl.cli import reproduce_flag_info
from scincl.settings.experiment import LOSSES, Experiment
from scincl.pipeline.layout import recipe_key
from scincl.settings.recipe import Recipe, recipe_record
from scincl.settings.schema import FIELDS as SCHEMA_FIELDS

# Recipe() before issue 27 as a run's recipe.json records it (under the former names of its fields)
RECORD = (b'{\n  "base_model": "",\n  "batch_size": 16,\n  "bf16": "auto",\n  "epochs": 1,\n  "eval_bf16": "false",\n'
          b'  "graph_dim": 64,\n  "k_hard": 500,\n  "k_pos": 25,\n  "learning_rate": 0.00005,\n  "loss": "triplet",\n'
          b'  "max_sequence_length": 64,\n  "pooling": "mean",\n  "triplets": 1000\n}')


def test_recipe_and_experiment_fields_carry_source_and_help_and_recipe_keys_stay():
    for cls in (Recipe, Experiment):
        for f in dataclasses.fields(cls):
            assert f.metadata.get("source") and f.metadata.get("help"), (cls.__name__, f.name)
    for f in dataclasses.fields(Recipe):  # a SciNCL setting: the schema's help and range, the recipe's own default
        if f.name in SCHEMA_FIELDS:
            schema = SCHEMA_FIELDS[f.name].metadata
            assert (f.metadata["help"], f.metadata["rule"]) == (schema["help"], schema["rule"]), f.name
            assert f.metadata["source"] != schema["source"], f.name
    fp32 = Recipe(bf16="false", eval_bf16="false")
    assert recipe_key(fp32) == "t1000_kp25_kh500_mean_lr5e-05_triplet_len64_bs16_ep1_g64"
    assert dumps_json(recipe_record(Recipe(bf16="auto")), indent=True) == RECORD  # as write_json writes it


def test_help_reads_the_declared_defaults_and_their_sources():
    rows = {row.name: row for row in reproduce_flag_info()}
    k_hard = rows["hard_negatives_k_max"]
    assert k_hard.default == "500" and "hep-th val, docs/results.md §1" in k_hard.help
    assert "SciNCL default 4000: paper §5" in k_hard.help  # the paper's value beside the recipe's
    assert rows["losses"].default == str(LOSSES) == "('triplet', 'infonce', 'cosent', 'angle')"
    assert "scincl/settings/experiment.py LOSSES" in rows["losses"].help
    assert "(default from: docs/results.md Setup" in rows["triplets"].help  # a recipe-only field
    assert rows["k_hard"].help == "the former name of --hard_negatives_k_max" and rows["k_hard"].default == "500"
    assert "kind" not in rows and "recipe" not in rows


def test_the_kinds_defaults_are_the_packages_data_and_the_kinds_are_the_registrys():
    """issue 39: a kind's defaults were read from experiments/ (the package needed the repository beside it); they are
    data of scincl/settings/experiment.py, and its kind names are the pipeline's registry of row generators."""
    from scincl.pipeline.experiment_kinds import KINDS
    from scincl.settings.experiment import KIND_NAMES, make_experiment

    assert make_experiment({"kind": "graph"}).graph_dims == (64, 128)
    assert make_experiment({"kind": "losses"}).losses == ("triplet", "infonce", "cosent", "angle")
    assert make_experiment({"kind": "losses", "losses": "cosent,angle"}).losses == ("cosent", "angle")
    assert tuple(KINDS) == KIND_NAMES


def test_an_experiment_is_checked_and_normalised_when_built():
    """No unchecked Experiment exists: its lists are normalised and its values refused in one line when it is built."""
    import pytest

    from scincl.errors import InputError

    exp = Experiment(kind="k_pos", seeds="0..2", values="10,25", arms="scincl", variants="pooling=cls")
    assert (exp.seeds, exp.values, exp.arms, exp.variants) == ((0, 1, 2), (10, 25), ("scincl",), ("pooling=cls",))
    with pytest.raises(InputError, match="unknown arm 'bm25'"):
        Experiment(kind="main", arms=("bm25",))
    with pytest.raises(InputError, match="unknown experiment 'mian'"):
        Experiment(kind="mian")
    with pytest.raises(InputError, match="--learning_rate -1: must be > 0"):
        Experiment(kind="main", recipe={"learning_rate": -1})
    with pytest.raises(InputError, match="^the k_hard sweep needs --values, e.g. --values 10,25,50$"):
        Experiment(kind="k_hard")
    with pytest.raises(InputError, match="^the budget curve compares two arms, got scincl$"):
        Experiment(kind="budget", values=(1000,), arms="scincl")
    with pytest.raises(InputError, match="^a paired experiment compares at least two arms, got scincl$"):
        Experiment(kind="paired", arms=("scincl",))


def test_a_recipe_miner_flag_is_range_checked_in_one_place_when_the_recipe_is_built(tmp_path, monkeypatch):
    """issue 39: `reproduce main --hard_negatives_k_max N` (and run_experiment, collect_runs): the command line only
    converts the value's type; its range is checked by MinerSpec's validator when the experiment's Recipe is built,
    not also by the CLI's rule check, the experiment's check or the plan (which reads the recipe's MinerSpec)."""
    import sys

    import pytest

    import cli_pipeline
    from scincl.cli import commands_of
    from scincl.errors import InputError
    from scincl.settings import schema, spec, values
    from tests.pipeline.test_golden_plans import _data_dir

    checked_by = set()
    for module in (schema, spec, values):
        def check_rule(name, value, rule, _check=module.check_rule):
            if name == "hard_negatives_k_max":
                checked_by.add(sys._getframe(1).f_code.co_name)
            return _check(name, value, rule)
        monkeypatch.setattr(module, "check_rule", check_rule)
    reproduce = commands_of(cli_pipeline)["reproduce"]
    flags = {"data_dir": str(_data_dir(tmp_path / "data")), "output_dir": str(tmp_path / "out"), "dry_run": True}
    plan = reproduce("main", **flags, hard_negatives_k_max=300, seeds="0")
    assert "scincl/seed_0" in plan and "_kh300_" in plan  # planned: the kNN arms' triplets use the recipe's MinerSpec
    assert checked_by == {"_validate"}
    checked_by.clear()
    with pytest.raises(InputError, match=r"^--hard_negatives_k_max -1: must be >= 0$"):
        reproduce("main", **flags, hard_negatives_k_max=-1)
    assert checked_by == {"_validate"} and not (tmp_path / "out").exists()
