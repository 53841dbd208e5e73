"""Timings of the real-corpus experiments (a cached rerun does not replace the time a step took) and the one reader
of a run's scores."""
from __future__ import annotations

import json
import os
import time

from scincl.pipeline import timings as timings_module
from scincl.pipeline.timings import Timings


def test_a_reused_run_keeps_its_recorded_time_and_a_rerun_replaces_it(tmp_path, monkeypatch):
    t0 = time.time()
    run = tmp_path / "run"
    (run / "model").mkdir(parents=True)
    for name, age in (("results.json", -100), ("model/model.safetensors", -100)):
        (run / name).write_text("x")
        os.utime(run / name, (t0 + age, t0 + age))
    clock = iter([t0, t0 + 300.0, t0 + 10, t0 + 13.0, t0 + 20, t0 + 29.0])  # (start, end) of three calls
    monkeypatch.setattr(timings_module.time, "time", lambda: next(clock))
    timings = Timings(tmp_path / "timings.json")

    def records_only() -> object:  # a reuse: only the records are rewritten (3 s on a loaded machine)
        (run / "recipe.json").write_text("{}")
        (run / "manifest.json").write_text("{}")
        return run

    def retrains() -> object:
        (run / "model" / "model.safetensors").write_text("y")
        os.utime(run / "model" / "model.safetensors", (t0 + 25, t0 + 25))
        return run

    timings.run("scincl/seed_0", records_only)  # first time: recorded whatever it did
    timings.run("scincl/seed_0", records_only)
    assert json.loads((tmp_path / "timings.json").read_text()) == {"scincl/seed_0": 300.0}
    timings.run("scincl/seed_0", retrains)
    assert json.loads((tmp_path / "timings.json").read_text()) == {"scincl/seed_0": 9.0}


def test_run_scores_reads_a_finished_run_and_says_when_it_has_not_finished(tmp_path):
    """One reader of a run's scores: the grid's tables need finished runs, the budget curve's partial tables skip
    the others."""
    import pytest

    from scincl.errors import InputError
    from scincl.eval.experiment_pages import run_scores

    scores = {"cite": {"map": 70.0}}
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "results.json").write_text(json.dumps({"scores": {"test": scores}}))
    assert run_scores(tmp_path / "done", "test") == scores
    assert run_scores(tmp_path / "running", "test", missing_ok=True) is None
    assert run_scores(tmp_path / "done", "val", missing_ok=True) is None  # scored on another split only
    with pytest.raises(InputError, match="no test scores: the run has not finished"):
        run_scores(tmp_path / "running", "test")
