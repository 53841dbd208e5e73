"""A real-corpus stage's identity is its call's settings and its inputs' fingerprints (issue 39, step 3): a builder
argument its folder name does not spell rebuilds it; a marker from before stages recorded their settings is adopted
once."""
from __future__ import annotations

import json
import logging
from functools import partial
from pathlib import Path

from scincl.io import read_json, write_json
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.pipeline.runner import STATUS_RAN, STATUS_REUSED, Stage, waiting_stages
from scincl.provenance import call_settings
from scincl.settings.arms import CorpusSpec
from scincl.settings.experiment import Experiment
from scincl.settings.recipe import Recipe


def _plan(tmp_path: Path) -> CorpusPlan:
    return CorpusPlan(CorpusSpec("hepth", tmp_path / "data"), tmp_path / "out", Experiment(kind="main"), workers=2)


def _margin_stage(tmp_path: Path, margin: float) -> tuple:
    """A one-stage plan whose library call (``write_json``) gets ``margin``, which its file name does not spell;
    returns the plan, the stage's output and what ran."""
    plan = _plan(tmp_path)
    out = plan.shared / "margins.json"
    plan.stage(out, partial(write_json, out, {"margin": margin}))
    marker = plan.planned[str(out.relative_to(plan.out))].marker
    return plan, out, marker


def _run(plan: CorpusPlan) -> str:
    stages = list(plan.planned.values())
    plan.built(None)
    return plan.manifest.data["stages"][stages[0].name]["status"]


def test_a_changed_argument_the_folder_name_does_not_spell_rebuilds_the_stage(tmp_path):
    plan, out, _ = _margin_stage(tmp_path, 1.0)
    assert _run(plan) == STATUS_RAN and read_json(out) == {"margin": 1.0}
    plan, out, _ = _margin_stage(tmp_path, 1.0)
    assert _run(plan) == STATUS_REUSED  # the same call: reused
    plan, out, _ = _margin_stage(tmp_path, 2.0)
    assert waiting_stages(list(plan.planned.values()))[0][1].startswith("setting obj differs")
    assert _run(plan) == STATUS_RAN and read_json(out) == {"margin": 2.0}  # main reused {"margin": 1.0}


def test_a_marker_from_before_settings_were_recorded_is_adopted_once(tmp_path, caplog):
    plan, out, marker = _margin_stage(tmp_path, 1.0)
    _run(plan)
    old = read_json(marker)
    write_json(marker, {**old, "settings": {}})  # the record main's code wrote for a real-corpus stage
    plan, out, marker = _margin_stage(tmp_path, 1.0)
    assert waiting_stages(list(plan.planned.values())) == []  # a dry run rebuilds nothing
    with caplog.at_level(logging.INFO):
        assert _run(plan) == STATUS_REUSED
    assert ("adopted the marker of shared/margins.json: made before stages recorded their settings; pass "
            "--override_shared/margins.json if the experiment's settings changed since") in caplog.text
    assert read_json(marker) == old and read_json(marker)["settings"] == {"obj": {"margin": 1.0}}
    caplog.clear()
    plan, out, marker = _margin_stage(tmp_path, 2.0)  # once adopted, its settings count
    with caplog.at_level(logging.INFO):
        assert _run(plan) == STATUS_RAN and read_json(out) == {"margin": 2.0}
    assert "adopted" not in caplog.text


def test_an_old_marker_whose_output_changed_is_rebuilt_not_adopted(tmp_path):
    plan, out, marker = _margin_stage(tmp_path, 1.0)
    _run(plan)
    write_json(marker, {**read_json(marker), "settings": {}})
    write_json(out, {"margin": 3.0})  # edited since
    plan, out, marker = _margin_stage(tmp_path, 1.0)
    assert _run(plan) == STATUS_RAN and read_json(out) == {"margin": 1.0}


def test_each_builder_records_its_arguments_but_paths_it_fingerprints_or_writes_and_worker_counts(tmp_path):
    plan = _plan(tmp_path)
    run = plan.cell("scincl", 0, Recipe(), "test")
    stages = {name.split("/")[-1] if name.startswith("runs/") else name: stage.settings
              for name, stage in plan.planned.items()}
    train = stages["train_args.json"]["arguments"]
    assert {k: train[k] for k in ("warmup_ratio", "learning_rate")} == {
        k: Recipe().training_arguments()[k] for k in ("warmup_ratio", "learning_rate")}
    assert train["logging_steps"] == 10  # the Trainer's logging: train_args.json (the output) holds it
    assert train["citations_path"] == "shared/citations/citations.train.tsv"  # below OUTPUT_DIR: relative
    assert set(stages["train_args.json"]) == {"arguments"}  # triples, texts (inputs) and model (its folder) left out
    assert stages["results.json"] == {"split": "test", "scidocs_dir": str(plan.corpus.scidocs_dir), "encoding": {
        "bf16": Recipe().eval_bf16, "max_sequence_length": plan.exp.eval_max_sequence_length,
        "papers": "shared/scidocs_papers.test.json", "pooling_strategy": None}}
    assert stages["train_metadata.jsonl"] == {"metadata_dir": str(plan.corpus.metadata_dir)}  # as given
    triples = stages["train_triples.csv"]
    assert "workers" not in triples and "show_progress" not in triples and "output_path" not in triples
    assert triples["config"]["hard_negatives_k_max"] == Recipe().miner.hard_negatives_k_max and triples["seed"] == 0
    assert stages["shared/citations/citations.train.tsv"] == {"seed": 0, "test_ratio": 0.05}
    assert stages["shared/graph_cite_64d_dot/embeddings.h5"]["embed"]["overrides"] == "dimension=64 workers=1"
    assert stages["shared/graph_cite_64d_dot.Flat.faiss"]["search"]["faiss_string_factory"] == "Flat"
    assert stages["shared/papers_with_text.json"] == {}  # a closure: no call to read (its name says all it does)
    assert json.dumps(stages).count(str(tmp_path / "out")) == 0 and run.name == "seed_0"


def test_call_settings_of_a_partial_and_of_anything_else(tmp_path, monkeypatch):
    def step(source: Path, target: Path, *, size: int, workers: int, **stage: object) -> None:
        """A stage's call."""

    stage = Stage("x", [tmp_path / "out" / "x"], lambda: None, inputs=[tmp_path / "in"])
    call = partial(step, tmp_path / "in", tmp_path / "out" / "x", size=3, workers=4, description="d",
                   extra=tmp_path / "out" / "y,z", training={"learning_rate": 1.0, "show_progress": False})
    assert call_settings(call, stage, tmp_path / "out") == {
        "size": 3, "extra": "y,z", "training": {"learning_rate": 1.0}}
    assert call_settings(partial(Stage, "x", [tmp_path / "out" / "x"], call), stage, tmp_path / "out") == {
        "size": 3, "extra": "y,z", "training": {"learning_rate": 1.0}}  # a Stage made directly: its run's call
    assert call_settings(lambda: None, stage, tmp_path) == {}
    monkeypatch.chdir(tmp_path)  # a data folder given relative to where the command runs: recorded where it is
    (tmp_path / "data" / "hepth").mkdir(parents=True)
    assert call_settings(partial(step, data="data/hepth", model="org/model"), stage, tmp_path / "out") == {
        "data": str(tmp_path / "data" / "hepth"), "model": "org/model"}  # a hub name as given
