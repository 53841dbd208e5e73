"""The leakage guard (scincl/leakage.py): no evaluation paper reaches the graph or the triplets of a training run.

One test per path class that trains: the library report, the standalone get_citations -> triples ->
train path, run_specter without a SciDocs folder (query ids only), and the sbin/ scripts. The
experiments (real_corpus) and run_specter with a SciDocs folder record a clean report in the runs of
tests/pipeline/test_reproduce.py and tests/pipeline/test_pipeline_e2e.py.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scincl.graph.stage import get_citations
from scincl.io import read_json
from scincl.leakage import LEAKAGE_REPORT_NAME, LeakageError, guard_training, leakage_report, read_evaluation_ids
from scincl.triples.specter_like import get_specter_like_triples
from tests.conftest import REPO_ROOT as REPO


@pytest.fixture(scope="module")
def split_graphs(demo_corpus, tmp_path_factory):
    """The demo's citations and SPECTER-like triplets with and without the held-out SciDocs papers."""
    root = tmp_path_factory.mktemp("leakage")
    out = {}
    for name, excluded in (("leaky", None), ("clean", str(demo_corpus.scidocs_paper_ids_path))):
        get_citations(str(demo_corpus.s2orc_metadata_dir), str(root / name), workers=1, excluded_paper_ids=excluded)
        citations = root / name / "citations.tsv"
        triples = root / name / "train_triples.csv"
        get_specter_like_triples(citations, triples, triples_count=400, seed=0)
        out[name] = {"citations": citations, "triples": triples, "dir": root / name}
    return out


def test_report_counts_the_evaluation_papers_in_graph_and_triplets(split_graphs, demo_corpus):
    ids = read_evaluation_ids(demo_corpus.scidocs_paper_ids_path)
    leaky = leakage_report(ids, triplets=split_graphs["leaky"]["triples"], citations=[split_graphs["leaky"]["citations"]])
    assert leaky.evaluation_papers == len(ids) > 0
    assert leaky.edges_removed == 0  # extracted without --excluded_paper_ids
    assert leaky.in_graph > 0 and leaky.in_triplets > 0 and leaky.leaked == leaky.in_graph + leaky.in_triplets
    clean = leakage_report(ids, triplets=split_graphs["clean"]["triples"], citations=[split_graphs["clean"]["citations"]])
    stats = read_json(split_graphs["clean"]["dir"] / "citations.stats.json")
    assert clean.edges_removed == sum(stats["edges_dropped"].values()) > 0
    assert (clean.in_graph, clean.in_triplets, clean.leaked) == (0, 0, 0)



def test_a_model_without_a_recorded_report_is_checked_when_reused(split_graphs, demo_corpus, tmp_path):
    """run_specter's manifest records the model's leakage report: the one training wrote, else (a model trained before
    the guard) one made now from the run's triplets and the guard's arguments as train takes them."""
    from scincl.leakage import model_report

    clean, model = split_graphs["clean"], tmp_path / "model"
    model.mkdir()
    assert model_report(model, tmp_path / "none.csv", str(demo_corpus.scidocs_paper_ids_path)) is None
    made = model_report(model, clean["triples"], str(demo_corpus.scidocs_paper_ids_path),
                        citations_path=f"{clean['citations']},{clean['citations']}")
    assert (made["in_graph"], made["in_triplets"], made["leaked"]) == (0, 0, 0) and made["edges_removed"] > 0
    assert read_json(model / LEAKAGE_REPORT_NAME) == made == model_report(model, "unused.csv")  # now recorded

def test_standalone_train_refuses_a_leak_and_reports_a_clean_run(split_graphs, demo_corpus, tmp_path):
    """get_citations -> SPECTER-like triples -> `train --excluded_paper_ids`: refused before any model loads."""
    import cli_pipeline

    leaky = split_graphs["leaky"]
    with pytest.raises(LeakageError, match="in the graph.*in the triplets.*--graph_leakage"):
        cli_pipeline.train(str(leaky["triples"]), "unused.jsonl", str(tmp_path / "model"),
                           excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path),
                           citations_path=str(leaky["citations"]))
    refused = read_json(tmp_path / "model" / LEAKAGE_REPORT_NAME)  # the refusal is on disk too
    assert refused["leaked"] > 0 and refused["with_leakage"] is False
    # asked by name, the paper's "w/ leakage" setting passes the guard (recorded as such)
    allowed = guard_training(demo_corpus.scidocs_paper_ids_path, leaky["triples"], citations=[leaky["citations"]],
                             with_leakage=True, output_dir=tmp_path / "with_leakage")
    assert allowed["leaked"] > 0 and allowed["with_leakage"] is True
    clean = split_graphs["clean"]
    report = guard_training(demo_corpus.scidocs_paper_ids_path, clean["triples"], citations=[clean["citations"]],
                            output_dir=tmp_path / "clean")
    assert (report["in_graph"], report["in_triplets"], report["leaked"]) == (0, 0, 0)
    assert report["edges_removed"] > 0 and read_json(tmp_path / "clean" / LEAKAGE_REPORT_NAME) == report


def test_run_specter_without_scidocs_dir_excludes_the_named_ids_and_refuses_a_leaky_graph(
        demo_corpus, demo_biggraph, demo_tiny_bert, tmp_path):
    """--scidocs_paper_ids / --excluded_paper_ids without --scidocs_dir: the citations drop their edges;
    a given graph that holds them is refused at the train stage."""
    base = [sys.executable, "cli_pipeline.py", "run_specter", "--corpus_dir", str(demo_corpus.s2orc_metadata_dir),
            "--base_model_name_or_path", str(demo_tiny_bert), "--hard_negatives_k_min", "98",
            "--hard_negatives_k_max", "100", "--easy_positives_k_min", "5", "--easy_positives_k_max", "10",
            "--sample_queries_ratio", "0.05", "--max_sequence_length", "16", "--workers", "1"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # a graph made from every edge (demo_biggraph: no exclusion) holds the evaluation papers
    leaky = subprocess.run(base + [str(tmp_path / "leaky"), "--excluded_paper_ids", str(demo_corpus.scidocs_paper_ids_path),
                                   "--graph_embeddings_path", str(demo_biggraph["dir"] / "embeddings.h5"),
                                   "--graph_paper_ids_path", str(demo_biggraph["dir"] / "entity_names_paper_id_0.json")],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert leaky.returncode == 2, leaky.stderr[-3000:]
    assert "evaluation papers" in leaky.stderr and "--graph_leakage" in leaky.stderr
    manifest = read_json(tmp_path / "leaky" / "manifest.json")
    assert manifest["stages"]["train"]["status"] == "failed"
    model_dir = next((tmp_path / "leaky").glob("model_*"))
    assert not list(model_dir.glob("*.safetensors"))  # nothing was trained
    report = read_json(model_dir / LEAKAGE_REPORT_NAME)
    assert report["in_graph"] > 0 and report["evaluation_papers"] == len(read_evaluation_ids(demo_corpus.scidocs_paper_ids_path))
    # the citations stage of a graph built here drops their edges: the plan's inputs say what is checked
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan

    settings = settings_from_flags(str(tmp_path / "clean"), {"corpus_dir": str(demo_corpus.s2orc_metadata_dir),
                                                            "scidocs_paper_ids": str(demo_corpus.scidocs_paper_ids_path)})
    plan = SciNCLPlan(settings)
    first = plan.stages()[0]
    assert plan.excluded is not None and first.name == "citations" and first.settings["excludes_scidocs"] is True
    leak = plan.leakage
    assert leak["excluded_paper_ids"] == str(demo_corpus.scidocs_paper_ids_path)
    assert leak["graph_paper_ids_path"] == str(plan.p.graph_ids) and leak["citations_path"] == str(plan.p.citations_train)


def test_sbin_extracts_the_training_graph_without_the_evaluation_papers():
    """01_citations.sbatch's train/test split (02_biggraph.sbatch's input) is the run_specter plan's citations stage,
    which excludes the SciDocs papers (no --graph_leakage in the plan's flags); 02b trains on the same split;
    train_multi_gpu.sbatch passes them to the guard."""
    common = (REPO / "sbin" / "common.sh").read_text()
    plan = common[common.index("RUN_SPECTER=("):]
    assert '--scidocs_dir "${SCIDOCS_DIR}"' in plan.split(")\n")[0] and "graph_leakage" not in common
    assert '"${RUN_SPECTER[@]}" --stages scidocs_ids,citations' in (REPO / "sbin" / "01_citations.sbatch").read_text()
    assert 'EDGES_DIR:=${OUTPUT_DIR}/citations}' in (REPO / "sbin" / "02b_biggraph_distributed.sbatch").read_text()
    assert '--excluded_paper_ids "${SCIDOCS_PAPER_IDS}"' in (REPO / "sbin" / "train_multi_gpu.sbatch").read_text()
