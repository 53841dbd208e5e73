"""What both planners share (scincl/pipeline/layout.py): one file layout, one encoder rule, one leakage rule."""
from __future__ import annotations

from pathlib import Path

from scincl.leakage import leakage_inputs
from scincl.model.encoder import encoder_path
from scincl.pipeline.layout import citation_files, graph_files, run_files
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.settings.arms import ARM_SETTINGS, GRAPHS, CorpusSpec
from scincl.settings.experiment import Experiment
from scincl.settings.recipe import Recipe
from scincl.pipeline.scincl_plan import SciNCLPlan
from scincl.pipeline.scincl_plan import settings_from_flags


def test_leakage_rule_for_each_kind_of_run():
    ids, graph, cite, cocite = Path("ids.json"), Path("g.json"), Path("c.tsv"), Path("cc.tsv")
    # kNN on a graph the run built: its nodes and its edges; the triplets' own edges do not matter
    assert leakage_inputs(ids, "knn", graph, cocite, cite) == {
        "excluded_paper_ids": "ids.json", "graph_paper_ids_path": "g.json", "citations_path": "cc.tsv",
        "graph_leakage": False}
    # SPECTER-like without a graph: no nodes, the edges the triplets were drawn from
    assert leakage_inputs(ids, "specter_like", graph, None, cite)["graph_paper_ids_path"] is None
    assert leakage_inputs(ids, "specter_like", graph, None, cite)["citations_path"] == "c.tsv"
    # both sets of edges, once each; a given graph (none built) and no evaluation papers
    assert leakage_inputs(ids, "specter_like", None, cite, cite)["citations_path"] == "c.tsv"
    assert leakage_inputs(ids, "specter_like", None, cocite, cite)["citations_path"] == "cc.tsv,c.tsv"
    assert leakage_inputs(None, "knn", graph, None, cite, graph_leakage=True) == {
        "excluded_paper_ids": None, "graph_paper_ids_path": "g.json", "citations_path": None, "graph_leakage": True}


def test_both_planners_name_their_files_the_same_way(tmp_path):
    plan = SciNCLPlan(settings_from_flags(str(tmp_path / "run"), {
        "s2orc_metadata_dir": str(tmp_path), "base_model_name_or_path": "bert", "gzip": True}))
    rep = CorpusPlan(CorpusSpec("hepth", tmp_path / "data"), tmp_path / "out", Experiment(kind="main"))
    assert (plan.p.citations_train, plan.p.citations_test) == citation_files(plan.p.shared)
    assert (rep.citations_train, rep.citations_test) == citation_files(rep.out / "shared")
    assert (plan.p.graph_embeddings, plan.p.graph_ids) == (graph_files(plan.p.graph_dir)["embeddings"],
                                                           graph_files(plan.p.graph_dir)["ids"])
    assert (plan.p.triples, plan.p.metadata) == run_files(plan.p.run, gzip=True)
    assert plan.p.triples.name == "train_triples.csv.gz" and run_files(tmp_path)[1].name == "train_metadata.jsonl"
    assert rep.papers_with_text() == rep.out / "shared" / "papers_with_text.json"
    assert list(rep.planned) == ["shared/papers_with_text.json"]  # a stage is named by its output below OUTPUT_DIR


def test_one_encoder_rule(tmp_path):
    packaged = encoder_path(None)
    assert Path(packaged).is_dir() and encoder_path("bert") == "bert"
    assert encoder_path(Recipe().base_model_name_or_path) == packaged  # the real-corpus experiments' default
    assert SciNCLPlan(settings_from_flags(str(tmp_path), {})).base_model == packaged  # the demo's


def test_every_arm_samples_from_a_known_graph():
    for arm in ARM_SETTINGS.values():
        assert arm.triples_source in ("knn", "specter_like")
        assert (arm.graph in GRAPHS) == (arm.triples_source == "knn")
