"""Golden snapshots of the plans (issue 39, step 1): what each pipeline and experiment would run, recorded without
running anything heavy, so the one-spec redesign keeps every stage, its outputs and its recorded settings.

For each plan below a JSON file in ``tests/pipeline/golden/`` holds its stages in running order: the name (the
completion marker's, ``--skip_<name>``), the outputs and inputs (paths with ``<out>``, ``<data>``, ``<repo>``,
``<minilm>`` for the machine-dependent prefixes), the settings its completion marker records and, for a stage
built by ``scincl/pipeline/layout.py``, the arguments of its builder (``call``: what the stage would do; for the
triplets and the queries, the library call's arguments).

- ``run_specter`` plans (``SciNCLPlan.stages()``): the demo (``make demo``), the demo with SPECTER-like triplets,
  with ``--seeds 0,1`` (one plan per seed) and the original README's paper command;
- every ``experiments/*.py`` definition (``run_experiment NAME``): its grid run by ``run_grid`` with every stage
  recorded instead of run (a placeholder is written for each output so later steps find their inputs; the
  tables and plots, which only read results, are not drawn).

A change to a plan fails this test; a deliberate one regenerates the snapshots in the same commit
(``SCINCL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/pipeline/test_golden_plans.py``) and says why in its
message.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import attrs
import pytest

from tests.conftest import REPO_ROOT

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SCINCL_UPDATE_GOLDEN") == "1"
# the library calls a planner hands its triplets and queries stages (a functools.partial): the samplers and the
# query selections, recorded with their arguments as a builder's
PLANNED_CALLS = ("scincl.triples.knn_miner", "scincl.triples.specter_like", "scincl.triples.queries")
STAGE_BUILDERS = ("train_stage", "texts_stage", "index_stage", "citations_stage", "graph_stage", "evaluate_stage")


class PlanRecorder:
    """Records stages in running order instead of running them; replaces machine-dependent path prefixes."""

    def __init__(self, prefixes: Dict[str, str]) -> None:
        self.prefixes = sorted(prefixes.items(), key=lambda item: -len(item[0]))  # longest prefix first
        self.stages: List[Dict[str, Any]] = []
        self.seen: Dict[str, Dict[str, Any]] = {}

    def plain(self, value: Any) -> Any:
        """``value`` as JSON data with the recorder's prefixes replaced (dataclasses as their fields)."""
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {"<" + type(value).__name__ + ">": self.plain(dataclasses.asdict(value))}
        if attrs.has(type(value)):  # the spec's sections (scincl/settings/spec.py)
            return {"<" + type(value).__name__ + ">": self.plain(attrs.asdict(value))}
        if isinstance(value, dict):
            return {str(k): self.plain(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [self.plain(v) for v in value]
            return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
        if callable(value):
            return "<function>"
        if value is None or isinstance(value, (bool, int, float)):
            return value
        text = str(value)
        for prefix, name in self.prefixes:
            text = text.replace(prefix, name)
        return text

    def record(self, stage: Any) -> None:
        """Record one stage; a stage met again must be the same stage (the real runner reuses it)."""
        call = getattr(stage, "golden_call", None)
        run = stage.run
        if call is None and isinstance(run, functools.partial) and run.func.__module__ in PLANNED_CALLS:
            call = (run.func.__name__, inspect.signature(run.func).bind_partial(*run.args, **run.keywords).arguments)
        entry: Dict[str, Any] = {"name": self.plain(stage.name), "outputs": self.plain(list(stage.outputs)),
                                 "inputs": self.plain(list(stage.inputs)),
                                 "output_dir": self.plain(stage.manifest_dir), "settings": self.plain(stage.settings)}
        if call is not None:
            builder, arguments = call
            entry["call"] = {"builder": builder,
                             "arguments": self.plain({k: v for k, v in arguments.items()
                                                      if k not in ("name", "outputs", "inputs", "settings",
                                                                   "output_dir", "description", "adopts")})}
        previous = self.seen.get(entry["name"])
        if previous is not None:
            assert previous == entry, f"stage {entry['name']} planned twice with different records"
            return
        self.seen[entry["name"]] = entry
        self.stages.append(entry)
        for output in stage.outputs:  # what later steps read must exist
            output = Path(output)
            if "." not in output.name:
                output.mkdir(parents=True, exist_ok=True)
            elif not output.exists():
                output.parent.mkdir(parents=True, exist_ok=True)
                output.write_text("[]" if output.suffix == ".json" else "")


def _wrap_builder(name: str, builder: Callable[..., Any]) -> Callable[..., Any]:
    """A stage builder of ``scincl/pipeline/layout.py`` that keeps its arguments on the stage it returns."""
    signature = inspect.signature(builder)

    @functools.wraps(builder)  # its signature: the planner reads the builder's arguments as the stage's settings
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        stage = builder(*args, **kwargs)
        arguments = dict(signature.bind(*args, **kwargs).arguments)
        arguments.update(arguments.pop("stage", {}))  # the Stage fields a builder passes through
        stage.golden_call = (name, arguments)
        return stage

    return wrapped


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlanRecorder:
    """A recorder with every stage builder wrapped, the machine's CPU count, threads and bf16 support pinned (the
    plans name them), and the planners' runners recording instead of running."""
    import scincl.model.device as device
    from scincl.model.encoder import packaged_minilm_path
    from scincl.pipeline import layout, real_corpus, scincl_plan

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(scincl_plan, "torch_threads", lambda: 2)
    monkeypatch.setattr(layout, "default_device", lambda: "cpu")
    for module in (device, layout):
        monkeypatch.setattr(module, "resolve_bf16",
                            lambda request, device_name: str(request).lower() in ("auto", "true"))
    for module in (layout, real_corpus, scincl_plan):
        for name in STAGE_BUILDERS:
            if hasattr(module, name):
                monkeypatch.setattr(module, name, _wrap_builder(name, getattr(module, name)))
    rec = PlanRecorder({str(tmp_path / "out"): "<out>", str(tmp_path / "data"): "<data>",
                        str(packaged_minilm_path()): "<minilm>", str(REPO_ROOT): "<repo>"})
    def record_plan(stages: Any, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        for stage in stages:
            rec.record(stage)
        return {}  # no stage ran

    monkeypatch.setattr(real_corpus, "run_stages", record_plan)  # the real-corpus plans: CorpusPlan.built, run_cell
    return rec


def _check(name: str, plan: Dict[str, Any]) -> None:
    """Compare ``plan`` with its snapshot (or write it with ``SCINCL_UPDATE_GOLDEN=1``)."""
    path = GOLDEN_DIR / f"{name}.json"
    text = json.dumps(plan, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with SCINCL_UPDATE_GOLDEN=1 and commit it"
    expected = json.loads(path.read_text())
    assert plan == expected, (f"the plan {name} differs from {path.name}; if deliberate, regenerate it "
                              "(SCINCL_UPDATE_GOLDEN=1) and say why in the commit message")


# ---------------------------------------------------------------------- run_specter
def _paper_flags(data: Path) -> Dict[str, Any]:
    """The original README's command (run_specter's docstring) with its variables as paths below ``data``."""
    specter = data / "specter"
    return dict(auto_output_dir=True, scidocs_dir=str(data / "scidocs"), s2orc_metadata_dir=str(data / "s2orc"),
                specter_triples_path=str(specter / "train_triples.csv"),
                graph_paper_ids_path=str(data / "s2orc_paper_ids.json"),
                graph_embeddings_path=str(data / "embeddings.h5"),
                s2id_to_s2orc_input_path=str(specter / "s2id_to_s2orc_paper_id.json"), graph_limit="specter",
                ann_metric="inner_product", ann_workers=1, ann_backend="faiss",
                ann_index_path=str(data / "ann.faiss"), val_or_test_or_both="both", eval_steps=1, save_steps=2,
                triples_per_query=5, workers=2, gzip=True, base_model_name_or_path=str(data / "scibert"),
                easy_positives_count=5, easy_positives_strategy="knn", easy_positives_k_min=20,
                easy_positives_k_max=25, easy_negatives_count=3, easy_negatives_strategy="random_without_knn",
                hard_negatives_count=2, hard_negatives_strategy="knn", hard_negatives_k_min=3998,
                hard_negatives_k_max=4000)


RUN_SPECTER_PLANS: Dict[str, Callable[[Path], Dict[str, Any]]] = {
    "run_specter_demo": lambda data: {},
    "run_specter_demo_specter_like": lambda data: {"triples_source": "specter_like"},
    "run_specter_paper": _paper_flags,
}


def _run_specter_plan(recorder: PlanRecorder, output_dir: Path, flags: Dict[str, Any],
                      shared_dir: Optional[Path] = None) -> List[Dict[str, Any]]:
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan

    settings = settings_from_flags(str(output_dir), flags)
    for stage in SciNCLPlan(settings, shared_dir=shared_dir).stages():
        recorder.record(stage)
    return recorder.stages


@pytest.mark.parametrize("name", sorted(RUN_SPECTER_PLANS))
def test_run_specter_plan_matches_its_snapshot(name: str, recorder: PlanRecorder, tmp_path: Path) -> None:
    stages = _run_specter_plan(recorder, tmp_path / "out", RUN_SPECTER_PLANS[name](tmp_path / "data"))
    _check(name, {"command": name, "stages": stages})


def test_run_specter_seeds_plan_matches_its_snapshot(recorder: PlanRecorder, tmp_path: Path) -> None:
    """``run_specter --seeds 0,1``: one plan per seed in OUTPUT_DIR/seeds/seed_N, sharing OUTPUT_DIR (as
    ``run_command.run_specter`` builds them)."""
    out = tmp_path / "out"
    plans = {}
    for seed in (0, 1):  # each seed's plan is run on its own (its stages are not the other seed's)
        recorder.stages, recorder.seen = [], {}
        plans[f"seed_{seed}"] = _run_specter_plan(recorder, out / "seeds" / f"seed_{seed}",
                                                  {"seed": seed, "corpus_seed": 0, "auto_output_dir": False},
                                                  shared_dir=out)
    for name in ("citations", "graph"):  # one edge split and one graph in OUTPUT_DIR for every seed (made once)
        records = [[st for st in plans[f"seed_{seed}"] if st["name"] == name] for seed in (0, 1)]
        assert records[0] == records[1] and records[0], name
    _check("run_specter_demo_seeds_0_1", {"command": "run_specter --seeds 0,1", "plans": plans})


# ---------------------------------------------------------------------- experiments/*.py
def _data_dir(root: Path) -> Path:
    """Empty corpora in the layout of ``../shared/data`` (the plan reads no corpus file)."""
    from scincl.settings.arms import CORPORA

    for corpus in CORPORA:
        (root / corpus / "s2orc" / "metadata").mkdir(parents=True)
        (root / corpus / "scidocs").mkdir()
        (root / corpus / "scidocs_paper_ids.json").write_text("[]")
    return root


def _tables_not_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reports' table and plot writers (``scincl/eval``, bound in the pipeline's modules) do nothing (they read
    results the recorder does not make); the steps the reports run through the stage runner are recorded as any
    other."""
    from scincl.pipeline import experiment_kinds, grid

    monkeypatch.setattr(grid, "write_tables", lambda exp, *a, **k: exp / "results.md")
    for module, name, value in ((experiment_kinds, "mean_std_page", ("", [])),
                                (experiment_kinds, "main_page", ("", [])), (experiment_kinds, "sweep_report", ("", [])),
                                (experiment_kinds, "budget_report", ("", [])),
                                (experiment_kinds, "paired_report", ("", [])),  # the paired kind: no run has finished
                                (experiment_kinds, "collision_report", ("", [])),
                                (experiment_kinds, "graph_report", ("", []))):
        monkeypatch.setattr(module, name, lambda *a, _value=value, **k: _value)


def _experiment_names() -> List[str]:
    from scincl.settings.experiment import experiment_names

    return experiment_names()


@pytest.mark.parametrize("name", _experiment_names())
def test_experiment_plan_matches_its_snapshot(name: str, recorder: PlanRecorder, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from scincl.pipeline.experiment_kinds import load_experiments, run_experiments

    _tables_not_drawn(monkeypatch)
    run_experiments(load_experiments(name), tmp_path / "out", _data_dir(tmp_path / "data"), workers=2)
    _check(f"experiment_{name}", {"command": f"run_experiment {name}", "stages": recorder.stages})


def test_every_snapshot_has_a_plan() -> None:
    """A snapshot whose plan is gone (a removed experiment) is removed with it."""
    names = {f"experiment_{n}" for n in _experiment_names()} | set(RUN_SPECTER_PLANS) | {"run_specter_demo_seeds_0_1"}
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.json")) == sorted(names)
