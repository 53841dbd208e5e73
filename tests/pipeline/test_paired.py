"""The paired experiment kind's files (scincl/eval/paired_runs.py; its rows: scincl/pipeline/experiment_kinds.py
paired_rows): collect_runs copies finished runs of experiments/hepth_powered.py into a docs folder, writes runs.csv
from the copies, and the docs' tables recompute from it. Synthetic run folders stand in for trained runs (no training
here: tests/pipeline/test_reproduce.py runs the kind)."""
from __future__ import annotations

import csv
import json

import pytest

from scincl.errors import InputError
from scincl.pipeline.experiment_kinds import collect_runs
from scincl.pipeline.experiment_kinds import experiment_grid, load_experiments
from scincl.eval.paired_runs import docs_text, read_runs_csv
from scincl.pipeline.grid import BASE

ENCODER = {"base_model_name_or_path": "/models/encoder"}


@pytest.fixture()
def folders(tmp_path):
    """An empty corpus folder in the ../shared/data layout and a results folder."""
    corpus = tmp_path / "data" / "hepth"
    (corpus / "s2orc" / "metadata").mkdir(parents=True)
    (corpus / "scidocs").mkdir()
    (corpus / "scidocs_paper_ids.json").write_text("[]")
    return tmp_path / "data", tmp_path / "results"


def _finish(run_dir, seed, value):
    """A finished run: its results.json (test scores), per_query.json and recipe.json."""
    run_dir.mkdir(parents=True, exist_ok=True)
    scores = {"cite": {"map": value, "ndcg": value + 10}, "co-cite": {"map": value - 5, "ndcg": value + 5}}
    (run_dir / "results.json").write_text(json.dumps({"scores": {"test": scores}}))
    (run_dir / "per_query.json").write_text(json.dumps({"per_query": {"test": {"cite": {"map": {"q1": value / 100}}}}}))
    (run_dir / "recipe.json").write_text(json.dumps({"seed": seed}))


def _cells(data, results):
    """{(arm id, triplets, seed): run dir} of every trained cell of hepth_powered, as the runner names them."""
    cells = {}
    for exp in load_experiments("hepth_powered", ENCODER):
        rep, grid = experiment_grid(exp, results, data)
        assert exp.split == "test"
        for row in grid.rows:
            if row.arm != BASE:
                for seed in exp.seeds:
                    cells[(row.id, row.recipe.triplets, seed)] = rep.run_dir(row.arm, seed, row.recipe, exp.split)
    return cells


def test_the_powered_experiment_is_three_arms_on_20_seeds_then_two_on_10(folders):
    cells = _cells(*folders)
    assert len(cells) == 3 * 20 + 2 * 10
    assert {arm for arm, triplets, _ in cells if triplets == 1000} == {"specter_like", "scincl", "scincl_kp25"}
    assert {seed for _, triplets, seed in cells if triplets == 6840} == set(range(3, 13))
    assert "/t1000_kp25_kh500_mean_" in str(cells[("scincl_kp25", 1000, 3)])  # k+ 25 is the only change
    assert "/t1000_kp10_kh500_mean_" in str(cells[("scincl", 1000, 3)])
    assert "_mencoder-" in str(cells[("scincl", 1000, 3)])  # keyed by the encoder given


def test_the_paired_rows_name_their_runs_and_the_pages_effect_is_the_pre_registered_one(folders):
    """Each trained row of the paired kind carries its arm id (runs.csv's arm, the timings' key); the power on the
    page is for experiments/hepth_powered.py's EFFECT."""
    from scincl.eval.paired_tables import REFERENCE_EFFECT
    from scincl.settings.experiment import experiment_data

    data, results = folders
    _, grid = experiment_grid(load_experiments("hepth_powered", ENCODER)[0], results, data)
    assert [(row.id, row.timing, row.group) for row in grid.rows[1:]] == [
        ("specter_like", "t1000/specter_like", "paired"), ("scincl", "t1000/scincl", "paired"),
        ("scincl_kp25", "t1000/scincl_kp25", "paired")]
    assert [row.label for row in grid.rows] == ["base encoder (no fine-tuning)", "SPECTER-like (citations)",
                                                "SciNCL (kNN on citation embeddings)",
                                                "SciNCL (kNN on citation embeddings), kp25"]
    assert REFERENCE_EFFECT == experiment_data("hepth_powered").EFFECT


def test_collect_runs_copies_finished_runs_and_writes_runs_csv_from_the_copies(folders, tmp_path):
    data, results = folders
    cells = _cells(data, results)
    finished = {("specter_like", 1000, 3): 60.0, ("scincl", 1000, 3): 61.0, ("scincl_kp25", 1000, 3): 60.5,
                ("specter_like", 1000, 4): 62.0, ("scincl", 1000, 4): 62.25, ("specter_like", 6840, 3): 70.0}
    for (arm, triplets, seed), value in finished.items():
        _finish(cells[(arm, triplets, seed)], seed, value)
    cells[("scincl", 6840, 3)].mkdir(parents=True)  # started, not finished: not collected
    exp = load_experiments("hepth_powered", ENCODER)[0]
    rep, grid = experiment_grid(exp, results, data)
    (rep.out / grid.folder).mkdir(parents=True)
    (rep.out / grid.folder / "timings.json").write_text('{"t1000/scincl/seed_3": 100.0}')  # the runner's wall times
    docs = tmp_path / "docs" / "powered"
    path = collect_runs("hepth_powered", str(docs), results_dir=str(results), data_dir=str(data), **ENCODER)
    assert path == docs / "runs.csv"
    for (arm, triplets, seed) in finished:
        copy = docs / arm / f"t{triplets}" / f"seed_{seed}"
        for name in ("results.json", "per_query.json", "recipe.json"):  # byte copies
            assert (copy / name).read_bytes() == (cells[(arm, triplets, seed)] / name).read_bytes()
    assert not (docs / "scincl" / "t6840").exists()
    assert (docs / "timings_t1000.json").read_text() == '{"t1000/scincl/seed_3": 100.0}'
    assert not (docs / "timings_t6840.json").exists()  # that part has not run
    with path.open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["arm", "triplets", "seed", "cite_map", "cite_ndcg", "cocite_map", "cocite_ndcg", "avg"]
    assert rows[1:4] == [["scincl", "1000", "3", "61.00", "71.00", "56.00", "66.00", "63.5"],
                         ["scincl_kp25", "1000", "3", "60.50", "70.50", "55.50", "65.50", "63.0"],
                         ["specter_like", "1000", "3", "60.00", "70.00", "55.00", "65.00", "62.5"]]
    assert len(rows) == 1 + len(finished)

    text = docs_text(path)  # the docs' tables, from runs.csv alone
    assert "1,000 triplets: 5 of 60 runs (3 arms × seeds 3–22); 6,840 triplets: 1 of 20 runs" in text
    table = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| SciNCL (k+ 10) −")}
    # seeds 3 and 4 are paired: +1.00, +0.25; the 6,840 comparison has no pair yet and is left out
    assert "| 1,000 | primary | 2 | 0.62 ± 0.53 |" in table["SciNCL (k+ 10) − SPECTER-like"]
    assert "6,840" not in table["SciNCL (k+ 10) − SPECTER-like"] and len(table) == 2
    empty = tmp_path / "empty.csv"
    empty.write_text(path.read_text().splitlines()[0] + "\n")
    assert docs_text(empty) == ("Runs in: 1,000 triplets: 0 of 60 runs (3 arms × seeds 3–22); 6,840 triplets: 0 of 20 "
                                "runs (2 arms × seeds 3–12). No run has finished yet.\n")

    # a later collect adds the new runs and keeps the copies made before (the results folder may be gone)
    for run in cells.values():
        if run.exists():
            for name in ("results.json", "per_query.json", "recipe.json"):
                (run / name).unlink(missing_ok=True)
    _finish(cells[("scincl", 6840, 3)], 3, 71.0)  # finished since
    _finish(results / "hepth" / "runs" / "test" / "other_recipe" / "scincl" / "seed_3", 3, 0.0)  # not this experiment's
    collect_runs("hepth_powered", str(docs), results_dir=str(results), data_dir=str(data), **ENCODER)
    runs = read_runs_csv(path)
    assert len(runs) == len(finished) + 1
    assert [(r["arm"], r["avg"]) for r in runs if r["triplets"] == 6840] == [("scincl", 73.5), ("specter_like", 72.5)]


def test_collect_runs_refuses_other_kinds_and_runs_csv_other_columns(folders, tmp_path):
    data, results = folders
    with pytest.raises(InputError, match="collect_runs takes experiments of kind paired, hepth_main has main"):
        collect_runs("hepth_main", str(tmp_path / "d"), results_dir=str(results), data_dir=str(data))
    bad = tmp_path / "runs.csv"
    bad.write_text("arm,seed,avg\nscincl,3,60\n")
    with pytest.raises(InputError, match="expected the columns arm,triplets,seed,cite_map"):
        read_runs_csv(bad)
