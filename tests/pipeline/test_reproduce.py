"""The real-corpus experiment driver (``cli_pipeline.py reproduce``) on a demo corpus laid out like ../shared/data."""
from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from scincl.errors import InputError
from scincl.io import read_id_list
from scincl.eval import study_tables
from scincl.settings.run import parse_int_list, parse_seeds
from scincl.pipeline.layout import precision_key, recipe_key
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.settings.arms import corpus_spec
from scincl.settings.experiment import Experiment, variant_changes
from scincl.settings.recipe import Recipe
from tests.conftest import REPO_ROOT, run_command


def _corpus_folder(demo_corpus, root: Path) -> Path:
    """``root/hepth`` in the ../shared/data layout (S2ORC shards, SciDocs dir, query ids to exclude)."""
    corpus = root / "hepth"
    (corpus / "s2orc").mkdir(parents=True)
    shutil.copytree(demo_corpus.s2orc_metadata_dir, corpus / "s2orc" / "metadata")
    shutil.copytree(demo_corpus.scidocs_dir, corpus / "scidocs")
    queries = set()
    for qrel in (corpus / "scidocs").glob("*/*.qrel"):
        queries |= {line.split()[0] for line in qrel.read_text().splitlines() if line.strip()}
    (corpus / "scidocs_paper_ids.json").write_text(json.dumps(sorted(queries)))
    return root


def _apply(recipe: Recipe, variant: str) -> Recipe:
    """``recipe`` with one tuning variant ``field=value`` applied."""
    import dataclasses

    return dataclasses.replace(recipe, **variant_changes(recipe, variant))


def test_recipe_variants_and_table_formatting():
    recipe = Recipe()
    assert _apply(recipe, "pooling=cls").pooling_strategy == "cls"  # the former name, an alias
    assert _apply(recipe, "pooling_strategy=cls") == _apply(recipe, "pooling=cls")
    assert _apply(recipe, "learning_rate=2e-5").learning_rate == 2e-5
    assert recipe_key(_apply(recipe, "triplets=2000")) != recipe_key(recipe)
    # a revised loss definition (issue 25) gets its own runs; unrevised losses keep their run names
    assert "_triplet_len" in recipe_key(recipe) and "_angle.r3_len" in recipe_key(_apply(recipe, "loss=angle"))
    with pytest.raises(InputError, match="unknown recipe field 'k'"):
        _apply(recipe, "k=3")
    assert parse_seeds("0..2") == [0, 1, 2]
    assert parse_int_list("10,50", "values") == [10, 50]
    table = study_tables.mean_std_table([("a", [{"cite": {"map": 70.0, "ndcg": 80.0}}, {"cite": {"map": 72.0, "ndcg": 84.0}}])])
    # mean ± sample std over seeds; Avg = per-seed average of the present metrics, then mean ± std
    assert "| a | 2 | 71.00 ± 1.41 | 82.00 ± 2.83 | 76.50 ± 2.12 |" in table
    assert "| cite map | cite ndcg | Avg. (over 2 of 12 metrics present) |" in table


def test_one_avg_definition_for_every_table():
    """run_average: unrounded mean of the table metrics only; tables and results.json use it."""
    from scincl.eval.report import average, markdown_table, run_average, runs_average
    runs = [{"cite": {"map": 70.01, "ndcg": 80.0}, "extra": {"x": 1.0}}, {"cite": {"map": 72.0, "ndcg": 84.0}}]
    assert run_average(runs[0]) == (75.005, 2)   # the non-table metric is left out, the mean not rounded
    assert average(runs[0]) == {"value": 75.0, "metrics": 2}   # float 75.005 rounds half-even: 75.0
    assert runs_average(runs) == {"value": 76.5, "std": 2.12, "metrics": 2}
    for table in (study_tables.mean_std_table([("a", runs)]), markdown_table([("a", runs)])):
        assert "76.50 ± 2.12 |" in table and "Avg. (over 2 of 12 metrics present)" in table


def test_unknown_corpus_and_missing_folder(tmp_path):
    with pytest.raises(InputError, match="unknown corpus 'arxiv'"):
        corpus_spec("arxiv", tmp_path)
    with pytest.raises(InputError, match="corpus hepth: missing metadata"):
        corpus_spec("hepth", tmp_path)


# the main run's settings (one seed, val, 20 triplets per run, the demo's bands, short texts, 16-d graph);
# the studies below run in the same output dir with these settings, so they reuse its shared stages and runs.
# The encoder is the session's tiny BERT (``--base_model``, added by the fixture), not the packaged MiniLM: what
# is asserted here is the driver (arms, reuse, tables, studies), not MiniLM, and the tiny BERT trains and embeds in
# a fraction of the time. A randomly initialised tiny BERT needs a high learning rate (as in
# tests/pipeline/test_pipeline_e2e.py) for its two updates to move the scores of every arm and loss apart.
MAIN_SETTINGS = {"corpus": "hepth", "seeds": "0", "split": "val", "triplets": 20, "k_pos": 10, "k_hard": 60,
                 "max_sequence_length": 32, "eval_max_sequence_length": 32, "batch_size": 10, "graph_dim": 16,
                 "learning_rate": 1e-3}


@pytest.fixture(scope="module")
def reproduced(demo_corpus, demo_tiny_bert, tmp_path_factory, python_exe):
    """One small ``reproduce main`` run (every arm, one seed, val, the tiny BERT) through the CLI, shared by the
    tests below; ``settings``: its flags, which the studies reuse."""
    root = tmp_path_factory.mktemp("reproduce")
    data = _corpus_folder(demo_corpus, root / "data")
    out = root / "results"
    settings = {**MAIN_SETTINGS, "base_model": str(demo_tiny_bert)}
    cmd = [python_exe, "cli_pipeline.py", "reproduce", "main", "--data_dir", str(data), "--output_dir", str(out),
           *[arg for name, value in settings.items() for arg in (f"--{name}", str(value))],
           "--arms", "specter_like,scincl,cocite"]
    run_command(cmd, timeout=420, check=True)
    return {"data": data, "out": out, "cmd": cmd, "settings": settings}


def test_reproduce_main_runs_every_arm_on_the_same_queries(reproduced, caplog):
    data, out = reproduced["data"], reproduced["out"]
    exp = next((out / "hepth" / "main_val").iterdir())
    runs = out / "hepth" / "runs" / "val" / exp.name  # one dir per recipe, shared by every experiment
    table = (exp / "results.md").read_text()
    for name in ("base encoder", "SPECTER-like", "SciNCL", "continuous co-citation"):
        assert name in table
    assert "20 triplets per run" in table
    # SPECTER-like positives are cited papers by construction: 100 % direct citations
    assert "| SPECTER-like (citations) | 100.0 |" in table
    excluded = set(json.loads((data / "hepth" / "scidocs_paper_ids.json").read_text()))
    # the untuned encoder's scores (shared/base/<pooling>_len<eval length><encoder key>/<split>)
    key = Recipe(base_model_name_or_path=reproduced["settings"]["base_model"]).encoder_key()
    base = json.loads((out / "hepth" / "shared" / "base" / f"mean_len32{key}" / "val" / "results.json").read_text())
    base_scores = base["scores"]["val"]
    query_sets = []
    for arm in ("specter_like", "scincl", "cocite"):
        rows = (runs / arm / "seed_0" / "train_triples.csv").read_text().splitlines()[1:]
        assert len(rows) == 20  # the same budget for every arm
        papers = {p for row in rows for p in row.split(",")}
        assert not papers & excluded  # w/o leakage: SciDocs queries never reach the triplets
        leakage = json.loads((runs / arm / "seed_0" / "model" / "leakage_report.json").read_text())
        assert leakage["evaluation_papers"] == len(excluded) and leakage["in_triplets"] == 0
        assert leakage["in_graph"] == 0 and leakage["leaked"] == 0  # the guard of train() checked the arm
        query_sets.append({row.split(",")[0] for row in rows})
        scores = json.loads((runs / arm / "seed_0" / "results.json").read_text())["scores"]["val"]
        assert 0 < scores["cite"]["map"] <= 100
        # the arm was evaluated with its tuned encoder, not the base one (two steps on 20 triplets are too few
        # to beat it here: tests/pipeline/test_pipeline_e2e.py asserts the gain on the demo)
        assert scores != base_scores, arm
    assert query_sets[0] == query_sets[1] == query_sets[2]  # the same 4 query papers for every arm
    # a second call (in this process: the fixture ran the CLI) reuses every output and writes the same table
    with caplog.at_level(logging.INFO):
        _study(reproduced, "main", arms="specter_like,scincl,cocite")
    assert (exp / "results.md").read_text() == table
    assert "output exists, reused" in caplog.text  # the stage runner's records were captured ...
    assert "train scincl seed 0" not in caplog.text  # ... and none says it trained: nothing retrained


def test_eligible_queries_have_five_citations_and_are_not_excluded(reproduced):
    data = reproduced["data"]
    rep = CorpusPlan(corpus_spec("hepth", data), reproduced["out"] / "hepth", Experiment(kind="main"))
    eligible = read_id_list(rep.built(rep.eligible_queries_file(16)))
    excluded = set(json.loads((data / "hepth" / "scidocs_paper_ids.json").read_text()))
    cites = {}
    for line in rep.citations_train.read_text().splitlines():
        a, b = line.split("\t")[:2]
        cites.setdefault(a, set()).add(b)
    assert eligible and not set(eligible) & excluded
    assert all(len(cites[q]) >= 5 for q in eligible)
    first = json.loads(rep.built(rep.queries(0, 5, 16)).read_text())
    assert first == json.loads(rep.built(rep.queries(0, 5, 16)).read_text()) and len(first) == 5
    with pytest.raises(InputError, match="only .* papers are eligible"):
        rep.built(rep.queries(1, len(eligible) + 1, 16))


def test_every_experiment_definition_is_valid_data():
    from scincl.pipeline.experiment_kinds import KINDS, load_experiments
    from scincl.settings.experiment import experiment_names

    names = experiment_names()  # what `bash experiments/run.sh NAME` runs (one entry point, no wrappers)
    assert names == ["citeseer_main", "hepth_budget", "hepth_collisions", "hepth_graph", "hepth_k_hard",
                     "hepth_k_pos", "hepth_losses", "hepth_main", "hepth_powered", "hepth_pretrained",
                     "hepth_pretrained_val", "hepth_tuning"]
    assert not list((REPO_ROOT / "experiments").glob("hepth_*.sh"))
    for name in names:
        for exp in load_experiments(name):
            assert exp.kind in KINDS and exp.corpus in ("hepth", "citeseer")
    main = load_experiments("hepth_main", {"k_hard": 2000, "seeds": "0..1"})[0]  # --k_hard: the former name
    assert main.seeds == (0, 1) and main.full_recipe().hard_negatives_k_max == 2000
    assert main.full_recipe().easy_positives_k_max == 25
    assert load_experiments("hepth_main", {"hard_negatives_k_max": 2000})[0].full_recipe() == main.full_recipe()
    with pytest.raises(InputError, match="--k_hard 100 and --hard_negatives_k_max 2000 name one setting"):
        load_experiments("hepth_main", {"hard_negatives_k_max": 2000, "k_hard": 100})[0].full_recipe()
    graph = load_experiments("hepth_graph")[0]
    assert graph.graph_dims == (64, 128) and load_experiments("hepth_graph", {"graph_dims": "16"})[0].graph_dims == (16,)
    with pytest.raises(InputError, match="--graph_dims: expected integers"):
        load_experiments("hepth_graph", {"graph_dims": "16d"})
    budget = load_experiments("hepth_budget")[0]
    assert (budget.kind, budget.values, budget.seeds, budget.arms) == ("budget", (1000, 2500, 6840), (0, 1, 2),
                                                                        ("specter_like", "scincl"))
    citeseer = load_experiments("citeseer_main")[0].full_recipe()
    assert (citeseer.triplets, citeseer.easy_positives_k_max, citeseer.hard_negatives_k_max) == (600, 10, 100)
    with pytest.raises(InputError, match=r"--k_hrad: unknown flag for run_experiment \(did you mean --k_hard\?\)"):
        load_experiments("hepth_main", {"k_hrad": 3})
    with pytest.raises(InputError, match="no experiment definition 'hepth_mian'"):
        load_experiments("hepth_mian")


def test_an_experiment_module_reruns_the_reproduce_command_from_its_outputs(reproduced, python_exe, repo_root,
                                                                           tmp_path):
    out = reproduced["out"]
    exp = next((out / "hepth" / "main_val").iterdir())
    table = (exp / "results.md").read_text()
    definition = tmp_path / "tiny_main.py"
    experiment = {"kind": "main", "corpus": "hepth", "seeds": [0], "split": "val", "eval_max_sequence_length": 32,
                  "recipe": _definition_recipe(reproduced)}
    definition.write_text(f"def get_experiment():\n    return {experiment!r}\n")
    done = subprocess.run([python_exe, "cli_pipeline.py", "run_experiment", str(definition), "--output_dir", str(out),
                           "--data_dir", str(reproduced["data"])], cwd=repo_root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (exp / "results.md").read_text() == table  # the same runs, reused: byte-identical table
    assert ": running" not in done.stderr  # every stage reused by the runner
    run = out / "hepth" / "runs" / "val" / exp.name / "scincl" / "seed_0"
    record = json.loads((run / "manifest.json").read_text())["stages"]
    assert record[f"runs/val/{exp.name}/scincl/seed_0/results.json"]["completed"] is True


def _study(reproduced, experiment, **settings):
    """``reproduce EXPERIMENT`` with the main run's settings (``settings`` added or changed), in its output dir
    (shared stages reused): the library call the CLI makes, in this process (the fixture runs the CLI once)."""
    from scincl.pipeline.experiment_kinds import reproduce

    reproduce(experiment, output_dir=str(reproduced["out"]), data_dir=str(reproduced["data"]),
              **{**reproduced["settings"], **settings})


def _definition_recipe(reproduced) -> dict:
    """The main run's recipe settings as an experiment definition's ``recipe`` (the experiment's own fields,
    corpus, seeds and split, left out)."""
    return {name: value for name, value in reproduced["settings"].items()
            if name not in ("corpus", "seeds", "split", "eval_max_sequence_length")}


def _table_rows(markdown: str) -> dict:
    """First cell -> the other cells of every table row of a results.md."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(cells[0]) <= {"-", ""}:
            rows[cells[0]] = cells[1:]
    return rows


def _trained_runs(out):
    """loss -> (learning rate, train_triples.csv bytes) of every SciNCL val run in the output dir."""
    runs = {}
    for args_path in (out / "runs" / "val").glob("*/scincl/seed_0/*/train_args.json"):
        args = json.loads(args_path.read_text())
        triples = (args_path.parent.parent / "train_triples.csv").read_bytes()
        runs[args["arguments"]["loss"]] = (args["training_arguments"]["learning_rate"], triples)
    return runs


def test_tuning_trains_a_variant_on_the_same_triplets(reproduced):
    # one trained variant serves both studies: tuning's loss=infonce is the loss comparison's infonce run
    _study(reproduced, "tuning", variants="loss=infonce", arms="scincl")
    out = reproduced["out"] / "hepth"
    page = (out / "tuning_val" / "results.md").read_text()
    rows = _table_rows(page)
    assert {"base encoder (no fine-tuning) (mean pooling)", "scincl: default", "scincl: loss=infonce"} <= set(rows)
    assert "Budget: 20 triplets per run" in page  # every row trains 20 (a triplets= variant: "the table's triplets")
    assert rows["scincl: default"] != rows["scincl: loss=infonce"]
    runs = _trained_runs(out)
    assert set(runs) == {"triplet", "infonce"}  # the main run's recipe (reused) and the variant
    assert runs["triplet"] == runs["infonce"]  # same learning rate, same mined triplets; only the loss differs


def test_loss_comparison_reuses_the_runs_of_each_loss(reproduced):
    out = reproduced["out"] / "hepth"
    models = sorted((out / "runs" / "val").glob("*/scincl/seed_0/*/model.safetensors"))
    before = {m: m.stat().st_mtime_ns for m in models}
    _study(reproduced, "losses", losses="triplet,infonce")
    rows = _table_rows((out / "losses_val" / "results.md").read_text())
    assert {"base encoder (no fine-tuning)", "triplet", "infonce"} <= set(rows)
    assert rows["triplet"] != rows["infonce"] and rows["triplet"][1:] == _table_rows(
        (out / "tuning_val" / "results.md").read_text())["scincl: default"][1:]
    # both runs exist (main's triplet run, tuning's infonce variant): nothing is retrained
    assert len(before) == 2 and {m: m.stat().st_mtime_ns for m in models} == before
    assert set(_trained_runs(out)) == {"triplet", "infonce"}


def test_k_pos_sweep_writes_its_table_plots_and_reuses_the_main_run(reproduced):
    _study(reproduced, "k_pos", values="10")
    exp = reproduced["out"] / "hepth" / "sweep_val"
    assert "k_pos = 10" in _table_rows((exp / "results_k_pos.md").read_text())
    run = exp / "sweep" / "k_pos" / "10" / "seed_0"
    args = json.loads((run / "train_triples.csv.args.json").read_text())
    slots = {s["difficulty"] + "_" + s["role"]: s for s in args["slots"]}
    assert (slots["easy_positives"]["k_min"], slots["easy_positives"]["k_max"]) == (5, 10)
    assert (slots["hard_negatives"]["k_min"], slots["hard_negatives"]["k_max"]) == (58, 60)
    # k_pos = 10 is the main run's recipe: the sweep links that run instead of training it again
    main_runs = [p.resolve() for p in (reproduced["out"] / "hepth" / "runs" / "val").glob("*/scincl/seed_0")]
    assert run.resolve() in main_runs
    assert {p.name for p in exp.glob("k_pos_*.png")} == {"k_pos_avg.png", "k_pos_cite_map.png", "k_pos_co-cite_map.png"}


def test_collisions_study_counts_each_margin_of_the_grid(reproduced):
    _study(reproduced, "collisions", values="30,60")
    exp = reproduced["out"] / "hepth" / "collisions"
    table = [line for line in (exp / "results.md").read_text().splitlines() if line.startswith("| 10 ") or
             line.startswith("| 50 ")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in table]
    # k+ in {10, --k_pos, 50}; a k-hard band must lie beyond the positives (k-hard - 2 > k+)
    assert [(c[0], c[1], c[2]) for c in cells] == [("10", "30", "20"), ("10", "60", "50"), ("50", "60", "10")]
    triplets = {int(c[3]) for c in cells}
    assert len(triplets) == 1 and triplets.pop() % 5 == 0  # the same queries, 5 triplets each, for every setting
    for c in cells:
        same_query, either = int(c[4]), int(c[5])
        assert 0 <= same_query <= either and float(c[6]) == pytest.approx(100 * either / int(c[3]), abs=0.01)
    for kp in (10, 50):
        entries = json.loads((exp / f"k_pos_{kp}.json").read_text())
        assert [e["margin"] for e in entries] == [e["k_hard_negatives"] - kp for e in entries]
    assert (exp / "collisions_vs_margin.png").stat().st_size > 0


def test_triplet_relations_counts_direct_cocited_and_two_hop_pairs(tmp_path):
    from scincl.eval.study_reports import triplet_relations
    from scincl.settings.arms import ARM_NAMES, CorpusSpec

    rep = CorpusPlan(CorpusSpec(name="hepth", root=tmp_path / "data"), tmp_path / "out", Experiment(kind="main"))
    rep.citations_train.parent.mkdir(parents=True)
    # A->B, B->C, D->B, D->E, F->G: B and E are co-cited (by D); C is two hops from A (via B)
    rep.citations_train.write_text("A\tB\nB\tC\nD\tB\nD\tE\nF\tG\n")
    triples = tmp_path / "scincl.csv"
    triples.write_text("query_paper_id,positive_id,negative_id\nA,B,C\nB,E,G\nA,B,C\n")  # the repeat counts once
    table = triplet_relations(rep.citations_train, {ARM_NAMES["scincl"]: triples,
                                                    ARM_NAMES["cocite"]: tmp_path / "missing.csv"})
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 2  # header + the scincl arm; an arm without triplets is left out
    # positives (A,B) direct + 2 hops, (B,E) co-cited + 2 hops; negatives (A,C) 2 hops, (B,G) unrelated
    assert rows[1] == f"| {ARM_NAMES['scincl']} | 50.0 | 50.0 | 100.0 | 0.0 | 0.0 | 50.0 |"


def test_training_stage_keeps_the_record_of_cached_runs(tmp_path):
    """The training stage is built by scincl/pipeline/layout.py (as run_specter's), named by its output below
    OUTPUT_DIR where the cached runs hold its marker; its settings are its call's arguments (the trainer's flags, the
    paths below OUTPUT_DIR relative to it, not its inputs or outputs: those are fingerprinted or its place), the
    triplets and texts its inputs; an arm's plan holds its triplets and texts before it and the evaluation after it."""
    from scincl.settings.arms import CorpusSpec

    rep = CorpusPlan(CorpusSpec(name="hepth", root=tmp_path / "data"), tmp_path / "out", Experiment(kind="main"))
    recipe = Recipe()
    run_dir, stages = rep.cell("scincl", 1, recipe, "test"), list(rep.planned.values())
    assert run_dir == rep.run_dir("scincl", 1, recipe, "test")
    stage = next(planned for planned in stages if planned.name.endswith("/model/train_args.json"))
    assert stage.name == f"runs/test/{recipe_key(recipe)}/scincl/seed_1/model/train_args.json"
    assert stage.adopts and list(stage.settings) == ["arguments"]  # a marker of a cached run (settings {}) is adopted
    arguments = stage.settings["arguments"]
    assert {k: arguments[k] for k in ("learning_rate", "num_train_epochs", "per_device_train_batch_size", "seed",
                                      "warmup_ratio", "loss", "pooling_strategy")} == {
        "learning_rate": recipe.learning_rate, "num_train_epochs": 1, "per_device_train_batch_size": 16, "seed": 1,
        "warmup_ratio": 0.1, "loss": "triplet", "pooling_strategy": "mean"}
    assert arguments["graph_paper_ids_path"] == "shared/graph_cite_64d_dot/entity_names_paper_id_0.json"
    assert not {"triples", "metadata", "model", "output_dir", "train_triples_path"} & set(arguments)
    assert stage.inputs == [run_dir / "train_triples.csv", run_dir / "train_metadata.jsonl"]
    assert stage.outputs == [run_dir / "model" / "train_args.json"]
    assert stage.marker == run_dir / "model" / f"stage_{stage.name}.done.json"  # where the cached runs hold it
    names = [planned.name for planned in stages]
    arm = f"runs/test/{recipe_key(recipe)}/scincl/seed_1"
    assert names[-5:] == [f"{arm}/train_triples.csv", f"{arm}/train_metadata.jsonl", stage.name,
                          "shared/scidocs_papers.test.json", f"{arm}/results.json"]
    assert names.index("shared/citations/citations.train.tsv") < names.index(f"{arm}/train_triples.csv")


def test_graph_study_runs_link_prediction_retrieval_and_the_graph_alone(reproduced):
    # --graph_dims 16: the main run's 16-d graph (reused) and its cos variant, on the demo corpus
    _study(reproduced, "graph", graph_dims="16")
    out = reproduced["out"] / "hepth"
    exp = out / "graph"
    table = (exp / "results.md").read_text()
    mrr = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[1] in ("trained", "random"):
            mrr[(cells[0], cells[1])] = float(cells[2])
    assert set(mrr) == {(g, e) for g in ("16d dot", "16d cos") for e in ("trained", "random")}
    # link prediction on the held-out edges: the trained embeddings rank them above random ones
    assert mrr[("16d dot", "trained")] > mrr[("16d dot", "random")]
    assert mrr[("16d cos", "trained")] > mrr[("16d cos", "random")]
    held_out = len((out / "shared" / "citations" / "citations.test.tsv").read_text().splitlines())
    for comparator, metric in (("dot", "dot"), ("cos", "cosine")):
        retrieval = json.loads((exp / f"retrieval_16d_{comparator}.json").read_text())
        assert retrieval["pairs"] == held_out and retrieval["metric"] == metric
        assert 0 < retrieval["metrics"]["map"] <= 100
    assert {p.name for p in (out / "shared").glob("graph_*_*d_*") if p.is_dir()} == {
        "graph_cite_16d_dot", "graph_cite_16d_cos", "graph_cocite_16d_dot", "graph_transductive_16d_dot"}
    rows = _table_rows(table)  # only the dimensions asked for were trained (no 64-d / 128-d graphs)
    alone = json.loads((exp / "scidocs_transductive_16d" / "val" / "results.json").read_text())["scores"]["val"]
    assert 0 < alone["cite"]["map"] <= 100 and 0 < alone["co-cite"]["map"] <= 100
    assert rows["graph embeddings alone (16d dot, transductive graph)"][0] == "1"  # one run, its scores
    assert {"base encoder (text only)", "scincl (text encoder)", "cocite (text encoder)"} <= set(rows)


def _scores(cite_map, cite_ndcg, cocite_map, cocite_ndcg):
    return {"cite": {"map": cite_map, "ndcg": cite_ndcg}, "co-cite": {"map": cocite_map, "ndcg": cocite_ndcg}}


def test_budget_tables_give_mean_std_paired_differences_and_mark_partial_cells(tmp_path):
    from scincl.eval.study_tables import budget_tables, paired_test
    from scincl.pipeline.experiment_kinds import experiment_grid
    from scincl.pipeline.grid import run_order
    from scincl.settings.experiment import make_experiment
    from tests.pipeline.test_golden_plans import _data_dir

    specter = {s: _scores(70.0, 80.0, 60.0, 70.0 + s) for s in (0, 1, 2)}  # Avg 70.00, 70.25, 70.50
    scincl = {s: _scores(71.0 + s, 80.0, 60.0, 70.0 + 2 * s) for s in (0, 1, 2)}  # Avg 70.25, 71.00, 71.75
    cells = {("specter_like", 1000): specter, ("scincl", 1000): scincl,
             ("specter_like", 2500): {0: specter[0], 1: specter[1]}, ("scincl", 2500): {}}
    labels = {"base": "base", "specter_like": "SPECTER-like", "scincl": "SciNCL"}
    arms = ("specter_like", "scincl")  # the pair compared: SciNCL minus SPECTER-like
    rows = _table_rows(budget_tables(cells, _scores(60.0, 70.0, 50.0, 60.0), [0, 1, 2], [1000, 2500], labels, arms))
    assert rows["base"] == ["0", "-", "60.00", "70.00", "50.00", "60.00", "60.00"]
    assert rows["SciNCL"] == ["1,000", "3", "72.00 ± 1.00", "80.00 ± 0.00", "60.00 ± 0.00", "72.00 ± 2.00",
                              "71.00 ± 0.75"]
    table = budget_tables(cells, None, [0, 1, 2], [1000, 2500], labels, arms)
    assert "| SPECTER-like | 2,500 | 2 of 3 (partial) |" in table
    assert "| SciNCL | 2,500 |" not in table  # no finished run: no row
    # per-seed Avg differences 0.25, 0.75, 1.25: mean 0.75, sd 0.5, t = 0.75 / (0.5 / sqrt(3)) = 2.598, df 2
    paired = _table_rows(table)["1,000"]
    assert paired[:6] == ["3", "+0.25 (seed 0), +0.75 (seed 1), +1.25 (seed 2)", "0.75 ± 0.50", "2.60", "2", "0.122"]
    assert "2,500" not in _table_rows(table.split("Paired differences")[1])  # no pair at 2,500 yet
    assert paired_test([1.0], [2.0])["diffs"] == [1.0]
    budget = make_experiment({"kind": "budget", "values": [2500, 1000], "seeds": [0, 1]})
    _, grid = experiment_grid(budget, tmp_path / "out", _data_dir(tmp_path / "data"))
    order = [(row.recipe.triplets, seed, row.arm) for row, seed in run_order(grid.rows, [0, 1])
             if seed is not None]  # every seed and arm of the smallest budget first
    assert order[:4] == [(1000, 0, "specter_like"), (1000, 0, "scincl"), (1000, 1, "specter_like"), (1000, 1, "scincl")]


def test_budget_curve_reuses_the_main_run_and_writes_its_tables_and_plot(reproduced):
    out = reproduced["out"] / "hepth"
    models = sorted((out / "runs" / "val").glob("t20_*/*/seed_0/*/model.safetensors"))
    before = {m: m.stat().st_mtime_ns for m in models}
    _study(reproduced, "budget", values="20,25")
    exp = next((out / "budget_val").iterdir())
    text = (exp / "results.md").read_text()
    rows = _table_rows(text)
    assert "Partial" not in text and "the table's triplets per run" in text
    body = [line for line in text.splitlines() if line.startswith("| SciNCL") or line.startswith("| SPECTER")]
    assert [line.split("|")[2].strip() for line in body] == ["20", "20", "25", "25"]
    assert rows["20"][0] == "1" and rows["25"][0] == "1" and rows["25"][3] == "n/a"  # one seed: no t-test
    assert {m: m.stat().st_mtime_ns for m in models} == before and len(before) >= 2  # t20 reused from main
    assert (exp / "budget_avg.png").stat().st_size > 0
    assert sorted(p.parent.parent.name for p in (out / "runs" / "val").glob("t25_*/*/seed_0/results.json")) == [
        "scincl", "specter_like"]


def test_paired_trains_every_arm_of_a_seed_on_the_same_queries_and_collects_them(reproduced, tmp_path):
    """The paired kind (experiments/hepth_powered.py's): SPECTER-like and SciNCL (reused from main) and a k+ variant of
    SciNCL on one seed's query papers; runs.csv and the tables; collect_runs copies the runs into a docs folder."""
    from scincl.eval.paired_runs import read_runs_csv

    out = reproduced["out"] / "hepth"
    models = sorted((out / "runs" / "val").glob("t20_kp10_*/*/seed_0/*/model.safetensors"))
    before = {m: m.stat().st_mtime_ns for m in models}
    _study(reproduced, "paired", arms="specter_like,scincl", variants="easy_positives_k_max=15")
    assert {m: m.stat().st_mtime_ns for m in models} == before and len(before) >= 2  # main's runs reused
    exp = next((out / "paired_val").iterdir())
    runs = read_runs_csv(exp / "runs.csv")
    assert [(r["arm"], r["triplets"], r["seed"]) for r in runs] == [
        ("scincl", 20, 0), ("scincl_kp15", 20, 0), ("specter_like", 20, 0)]
    key = exp.name  # the experiment's recipe: the k+ 15 runs live under their own recipe key
    runs_dir = out / "runs" / "val"
    triplets = {"specter_like": runs_dir / key / "specter_like", "scincl": runs_dir / key / "scincl",
                "scincl_kp15": runs_dir / key.replace("_kp10_", "_kp15_") / "scincl"}
    rows = {arm: (path / "seed_0" / "train_triples.csv").read_text().splitlines()[1:] for arm, path in triplets.items()}
    assert len({frozenset(r.split(",")[0] for r in lines) for lines in rows.values()}) == 1  # the same query papers
    assert rows["scincl"] != rows["scincl_kp15"]  # other positives
    text = (exp / "results.md").read_text()
    assert "SciNCL (kNN on citation embeddings), kp15 − SPECTER-like (citations)" in text and "Partial" not in text
    relations = _table_rows(text.split("How the sampled papers relate")[1])  # the first seed's, computed once
    assert relations["SPECTER-like (citations)"][0] == "100.0"  # its positives are citations by construction
    assert "SciNCL (kNN on citation embeddings), kp15" in relations and (exp / "relations.md").exists()

    definition = tmp_path / "paired_demo.py"  # the same experiment as data, for collect_runs
    experiment = {"kind": "paired", "corpus": "hepth", "seeds": [0], "split": "val", "arms": ["specter_like", "scincl"],
                  "variants": ["easy_positives_k_max=15"], "eval_max_sequence_length": 32,
                  "recipe": _definition_recipe(reproduced)}
    definition.write_text(f"def get_experiment():\n    return {experiment!r}\n")
    docs = tmp_path / "docs"
    proc = run_command([reproduced["cmd"][0], "cli_pipeline.py", "collect_runs", str(definition), str(docs),
                        "--results_dir", str(reproduced["out"]), "--data_dir", str(reproduced["data"])], check=True)
    assert proc.stdout.strip() == str(docs / "runs.csv")
    assert (docs / "runs.csv").read_text() == (exp / "runs.csv").read_text()  # the copies give the same rows
    assert (docs / "scincl_kp15" / "t20" / "seed_0" / "per_query.json").exists()
    assert (docs / "relations_t20.md").read_text() == (exp / "relations.md").read_text()


def test_another_base_encoder_gets_its_own_runs_and_base_evaluation(reproduced, toy_bert):
    """``--base_model DIR``: that encoder is fine-tuned and evaluated as the base, in runs named for it (here the
    toy corpus' tiny BERT, another folder than the main run's encoder)."""
    other = toy_bert
    # the test split keeps this run out of the val runs the other tests count
    _study(reproduced, "main", arms="scincl", split="test", base_model=str(other))
    out = reproduced["out"] / "hepth"
    key = Recipe(base_model_name_or_path=str(other)).encoder_key()
    main_key = Recipe(base_model_name_or_path=reproduced["settings"]["base_model"]).encoder_key()
    assert key.startswith("_mbert-") and len(key) == len("_mbert-") + 8 and main_key.startswith("_mtiny_bert-")
    run = next((out / "runs" / "test").glob(f"t20_*{key}*/scincl/seed_0"))
    assert json.loads((run / "model" / "train_args.json").read_text())["arguments"]["base_model_name_or_path"] == str(other)
    base_runs = {p.name for p in (out / "shared" / "base").iterdir()}
    assert f"mean_len32{key}" in base_runs and f"mean_len32{main_key}" in base_runs  # each encoder's own base run
    table = next((out / "main_test").iterdir()) / "results.md"
    assert f"Encoder: {other}." in table.read_text()
    # the packaged MiniLM keeps the run names it always had
    assert Recipe().encoder_key() == "" and recipe_key(Recipe()).endswith(precision_key(Recipe()))
