"""Timings of the real-corpus experiments (a cached rerun does not replace the time a step took) and the one reader
of a run's scores."""
from __future__ import annotations

import json
import types

from scincl.pipeline import grid
from scincl.pipeline.grid import timed
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.settings.arms import CorpusSpec
from scincl.settings.experiment import Experiment


def test_a_reused_step_keeps_its_recorded_time_and_a_rerun_replaces_it(tmp_path, monkeypatch):
    """A step's wall time is replaced only when the runner ran one of its stages: a cached rerun (3 s on a loaded
    machine) keeps the time the work took."""
    rep = CorpusPlan(CorpusSpec("hepth", tmp_path / "data"), tmp_path / "out", Experiment(kind="main"))
    out = rep.shared / "step.txt"
    clock = iter([0.0, 300.0, 10.0, 20.0, 29.0])  # (start, end) of each call; a reuse is not timed
    monkeypatch.setattr(grid, "time", types.SimpleNamespace(time=lambda: next(clock)))
    path = tmp_path / "timings.json"

    def step():
        return rep.built(rep.stage(out, lambda: out.write_text("x")))

    assert timed(rep, path, "step", step) == out and rep.ran == 1  # first time: recorded
    timed(rep, path, "step", step)  # reused: the runner ran nothing
    assert json.loads(path.read_text()) == {"step": 300.0} and rep.ran == 1
    out.unlink()
    timed(rep, path, "step", step)  # made again
    assert json.loads((tmp_path / "timings.json").read_text()) == {"step": 9.0} and rep.ran == 2


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
