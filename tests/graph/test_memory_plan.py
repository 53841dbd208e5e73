"""Issue 45: the memory plan (``cli_graph.py plan_memory``, the check at the start of ``embed_graph``,
``--memory_limit`` choosing FastRP's block size and PBG's partitions). The logic is tested on a cost
table written here (known coefficients); the committed, measured table on a 1 TB graph."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.graph import memory_plan
from scincl.graph.embed import embed_graph, graph_counts
from scincl.io import read_embeddings_matrix
from tests.conftest import run_front_end

MIB = 2 ** 20
TOY_COSTS = {"dimension": 128, "edges_per_paper": 10, "models": {
    "fastrp": {"base_bytes": 100 * MIB, "per": {"papers": 2000.0}},
    "fastrp_blocks": {"base_bytes": 60 * MIB, "per": {"papers": 50.0, "block_rows": 3000.0}},
    "prone": {"base_bytes": 100 * MIB, "per": {"papers": 4000.0}},
    "pbg": {"base_bytes": 200 * MIB, "per": {"papers": 100.0, "held_rows": 1000.0}},
    "index": {"base_bytes": 50 * MIB, "per": {"papers": 100.0, "pool_values": 8.0}},
    "knn": {"base_bytes": 50 * MIB, "per": {"papers": 100.0, "pool_values": 8.0}}}}


@pytest.fixture
def toy_costs(tmp_path, monkeypatch):
    path = tmp_path / "memory_costs.json"
    path.write_text(json.dumps(TOY_COSTS))
    monkeypatch.setattr(memory_plan, "COSTS_PATH", path)
    return TOY_COSTS


def test_parse_memory_units():
    assert memory_plan.parse_memory("32GB") == memory_plan.parse_memory("32GiB") == 32 * 2 ** 30
    assert memory_plan.parse_memory("500MB") == 500 * MIB and memory_plan.parse_memory("1TB") == 2 ** 40
    assert memory_plan.parse_memory("1.5g") == int(1.5 * 2 ** 30) and memory_plan.parse_memory(2 ** 21) == 2 ** 21
    for bad in ("lots", "32XB", "10"):
        with pytest.raises(InputError, match="--memory_limit"):
            memory_plan.parse_memory(bad)


def test_plan_is_the_linear_model_and_refuses_naming_a_setting_that_fits(toy_costs):
    papers, edges = 10_000_000, 100_000_000
    plan = memory_plan.plan_memory(papers, edges, 128, "fastrp", memory_limit="100GB")
    graph, index, knn = plan["stages"]
    assert graph["setting"] == "fastrp (in memory)" and graph["peak_bytes"] == 100 * MIB + 2000.0 * papers
    assert index["peak_bytes"] == 50 * MIB + 100.0 * papers + 8.0 * papers * 128 and "| graph |" in plan["text"]
    with pytest.raises(InputError) as refused:  # 19 GiB in memory: too much for 8 GB
        memory_plan.check_graph_memory("fastrp", papers, edges, 128, "8GB")
    message = str(refused.value)
    assert "\n" not in message and "more than --memory_limit 8GB" in message
    rows = int(re.search(r"--block_size (\d+)", message).group(1))
    assert memory_plan.check_graph_memory("fastrp", papers, edges, 128, "8GB", block_size=rows).peak_bytes * \
        memory_plan.SAFETY <= 8 * 2 ** 30 < memory_plan.check_graph_memory(
            "fastrp", papers, edges, 128, "100GB", block_size=2 * rows).peak_bytes * memory_plan.SAFETY
    with pytest.raises(InputError, match="use --method fastrp --block_size"):  # prone has no bounded mode
        memory_plan.check_graph_memory("prone", papers, edges, 128, "8GB")


def test_pbg_gets_the_fewest_partitions_whose_two_held_partitions_fit(toy_costs):
    papers, edges = 10_000_000, 100_000_000
    one = memory_plan.pbg_estimate(papers, edges, 128, 1, toy_costs).peak_bytes
    two = memory_plan.pbg_estimate(papers, edges, 128, 2, toy_costs).peak_bytes
    four = memory_plan.pbg_estimate(papers, edges, 128, 4, toy_costs).peak_bytes
    assert one == two and four < two  # P = 2 holds both halves: no saving before P = 4
    assert memory_plan.choose_setting("pbg", papers, edges, 128, "5GB") == (None, 8)
    assert memory_plan.choose_setting("pbg", papers, edges, 128, "100GB") == (None, 1)
    assert memory_plan.choose_setting("pbg", papers, edges, 128, "5GB", partitions=2) == (None, 2)  # given: kept
    with pytest.raises(InputError, match=r"use -p entities.paper_id.num_partitions=8 "):
        memory_plan.check_graph_memory("pbg", papers, edges, 128, "5GB", partitions=1)


def test_embed_graph_checks_the_real_counts_and_picks_a_block_size(toy_costs, demo_citations, tmp_path):
    papers, edges = graph_counts(demo_citations["train"], demo_citations["test"])
    assert edges == sum(1 for _ in open(demo_citations["train"])) and papers > 100
    with pytest.raises(InputError, match=r"fastrp \(in memory\) needs .* more than --memory_limit 10MB"):
        embed_graph(demo_citations["train"], tmp_path / "refused", method="fastrp", config="demo", dimension=8,
                    memory_limit="10MB")
    assert not (tmp_path / "refused" / "embeddings.h5").exists()
    limit = int(1.2 * (100 * MIB + 2000 * papers))  # the whole graph does not fit with the safety margin: blocks do
    result = embed_graph(demo_citations["train"], tmp_path / "blocks", method="fastrp", config="demo", dimension=8,
                         memory_limit=str(limit))
    run = json.loads((tmp_path / "blocks" / "embed_graph_run.json").read_text())
    assert run["block_size"] == memory_plan.fitting_block_rows(papers, edges, 8, limit, toy_costs) is not None
    whole = embed_graph(demo_citations["train"], tmp_path / "whole", method="fastrp", config="demo", dimension=8)
    assert np.array_equal(read_embeddings_matrix(result["embeddings_path"]),
                          read_embeddings_matrix(whole["embeddings_path"]))


def test_committed_table_refuses_a_1tb_graph_and_names_a_setting_that_fits():
    """plan_memory from the command line, with the measured table: S2ORC's graph at 4096-d, whose PBG run
    with one partition holds ~1 TB, on a 24 GB machine (this one)."""
    costs = memory_plan.load_costs()
    assert memory_plan.measured(costs, "fastrp", "fastrp_blocks", "pbg", "prone", "index", "knn")
    graph = ["--papers", "52600000", "--edges", "463000000", "--dimension", "4096", "--memory_limit", "24GB"]
    assert memory_plan.pbg_estimate(52_600_000, 463_000_000, 4096, 1, costs).peak_bytes > 0.8 * 2 ** 40
    proc = run_front_end("cli_graph.py", "plan_memory", *graph, "--method", "pbg", "--partitions", "1", timeout=120)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    named = re.search(r"num_partitions=(\d+)", proc.stderr)
    assert named, proc.stderr
    ok = run_front_end("cli_graph.py", "plan_memory", *graph, "--method", "pbg", "--partitions", named.group(1),
                       timeout=120)
    assert ok.returncode == 0 and f"pbg --num_partitions {named.group(1)}" in ok.stdout, ok.stderr


@pytest.mark.slow  # trains PBG (one epoch on the demo graph)
def test_embed_graph_pbg_memory_limit_picks_the_partitions(toy_costs, demo_citations, tmp_path):
    papers, edges = graph_counts(demo_citations["train"], demo_citations["test"])
    dimension = 16
    # between what 4 partitions need and what 2 (= 1: both halves held) need, with the safety margin
    two = memory_plan.pbg_estimate(papers, edges, dimension, 2, toy_costs).peak_bytes * memory_plan.SAFETY
    four = memory_plan.pbg_estimate(papers, edges, dimension, 4, toy_costs).peak_bytes * memory_plan.SAFETY
    limit = int((two + four) / 2)
    result = embed_graph(demo_citations["train"], tmp_path, method="pbg", config="demo", dimension=dimension,
                         test_edges=demo_citations["test"], overrides="num_epochs=1", memory_limit=str(limit),
                         random_baseline=False)
    assert sorted(p.name for p in (tmp_path / "graph").glob("entity_count_paper_id_*.txt")) == \
        [f"entity_count_paper_id_{p}.txt" for p in range(4)]
    assert result["metrics"]["trained"]["count"] > 0
    below_one = int(memory_plan.pbg_estimate(papers, edges, dimension, 1, toy_costs).peak_bytes * 0.99)
    with pytest.raises(InputError, match=r"pbg --num_partitions 1 needs .* more than --memory_limit .*; use "):
        embed_graph(demo_citations["train"], tmp_path / "one", method="pbg", config="demo", dimension=dimension,
                    overrides="entities.paper_id.num_partitions=1", memory_limit=str(below_one))


def test_edges_not_counted_yet_check_the_same_peak_and_say_so(toy_costs):
    """An S2ORC-layout corpus before its citations stage: no peak model counts edges, the disk assumes ~10 a paper."""
    papers = 10_000_000
    counted = memory_plan.check_graph_memory("pbg", papers, 55_000_000, 128, "100GB")
    unknown = memory_plan.check_graph_memory("pbg", papers, None, 128, "100GB")
    assert unknown.peak_bytes == counted.peak_bytes == 200 * MIB + 100.0 * papers + 1000.0 * papers
    assert memory_plan.expected_edges(papers, toy_costs) == 100_000_000
    assert unknown.disk_bytes == 100_000_000 * memory_plan.PBG_EDGE_BYTES + 3 * papers * 128 * 4
    with pytest.raises(InputError) as refused:
        memory_plan.check_graph_memory("pbg", papers, None, 128, "5GB")
    assert str(refused.value) == ("pbg --num_partitions 1 needs ~10.4 GiB at 10,000,000 papers / edges not counted "
                                  "yet / 128-d, more than --memory_limit 5GB (5.0 GiB); use "
                                  "-p entities.paper_id.num_partitions=8 (peak ~3.5 GiB)")


def test_link_prediction_of_bounded_fastrp_is_planned_as_pbg_s_evaluator(toy_costs, demo_citations, tmp_path):
    """--test_edges: PBG's evaluator loads the config's partitions whatever --block_size bounds."""
    papers = 10_000_000
    one = memory_plan.check_link_prediction_memory(papers, None, 128, 1, "100GB")
    assert one.peak_bytes == memory_plan.pbg_estimate(papers, 1, 128, 1, toy_costs).peak_bytes
    with pytest.raises(InputError) as refused:
        memory_plan.check_link_prediction_memory(papers, None, 128, 1, "5GB")
    assert str(refused.value) == (
        "link prediction on --test_edges: PBG's evaluator over 1 partition(s) needs ~10.4 GiB at 10,000,000 papers / "
        "128-d, more than --memory_limit 5GB (5.0 GiB); evaluate with -p entities.paper_id.num_partitions=8 "
        "(peak ~3.5 GiB) or leave out --test_edges")
    train, test = demo_citations["train"], demo_citations["test"]
    papers, edges = graph_counts(train, test)
    blocks = memory_plan.fastrp_block_estimate(papers, edges, 8, 64, toy_costs).peak_bytes
    evaluation = memory_plan.pbg_estimate(papers, edges, 8, 1, toy_costs).peak_bytes
    assert blocks < evaluation
    limit = str(int((blocks + evaluation) / 2))  # the blocks fit, the evaluation does not
    with pytest.raises(InputError, match=r"^link prediction on --test_edges: PBG's evaluator over 1 partition"):
        embed_graph(train, tmp_path / "refused", method="fastrp", config="demo", dimension=8, block_size=64,
                    test_edges=test, memory_limit=limit)
    assert not (tmp_path / "refused" / "embeddings.h5").exists()
