"""BigGraph stage: configs, TSV import round trip, training quality on the demo corpus, export,
edge utilities and graph retrieval (real torchbiggraph + CLI runs, no mocks)."""
from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.graph import biggraph
from scincl.graph.edges import extract_ids_in_graph, get_largest_connected_subgraph, make_edges_bidirectional
from scincl.io import read_embeddings_h5, read_id_list
from tests.conftest import run_front_end

PAPER_CONFIGS = ["s2orc_768d_dot", "s2orc_512d_dot", "s2orc_128d_dot", "s2orc_128d_cos", "s2orc_full",
                 "s2orc_without_scidocs", "s2orc_with_specter_without_scidocs", "cocitations_768d_dot"]


# ------------------------------------------------------------------------------ configs

@pytest.mark.parametrize("name", PAPER_CONFIGS + ["demo"])
def test_bundled_configs_validate_with_paper_settings(name):
    config = biggraph.parse_config(biggraph.load_config_dict(name))
    assert list(config.entities) == ["paper_id"]
    assert config.relations[0].lhs == config.relations[0].rhs == "paper_id"
    assert config.margin == 0.15  # paper
    if name != "demo":
        assert (config.lr, config.num_epochs) == (0.1, 20)
        assert config.dimension == {"512d": 512, "128d": 128}.get(name.split("_")[1], 768)
        assert config.comparator == ("cos" if name.endswith("_cos") else "dot")
        assert config.relations[0].name == ("cocited_with" if name.startswith("cocitations") else "cites")
    expected_edge_paths = 1 if name == "s2orc_full" else 2
    assert len(config.edge_paths) == expected_edge_paths


def test_config_paths_from_environment_and_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("BIGGRAPH_DATA_DIR", str(tmp_path / "g"))
    monkeypatch.setenv("BIGGRAPH_CHECKPOINT_PATH", str(tmp_path / "ck"))
    config = biggraph.load_config_dict("biggraph_configs/s2orc_768d_dot.py", ["num_epochs=3", "dimension=16"])
    assert config["entity_path"] == str(tmp_path / "g")
    assert config["edge_paths"] == [str(tmp_path / "g" / "train_partitioned"), str(tmp_path / "g" / "test_partitioned")]
    assert config["checkpoint_path"] == str(tmp_path / "ck")
    assert (config["num_epochs"], config["dimension"]) == (3, 16)
    monkeypatch.setenv("BIGGRAPH_NUM_MACHINES", "2")
    monkeypatch.setenv("BIGGRAPH_INIT_METHOD", "tcp://head:30050")
    monkeypatch.setenv("BIGGRAPH_NUM_PARTITIONS", "8")
    full = biggraph.parse_config(biggraph.load_config_dict("s2orc_full"))
    assert (full.num_machines, full.distributed_init_method, full.entities["paper_id"].num_partitions) == \
        (2, "tcp://head:30050", 8)
    with pytest.raises(InputError, match="Can't parse override: no_such_key=1"):
        biggraph.load_config_dict("demo", "no_such_key=1")
    with pytest.raises(InputError, match="not of the form key=value"):
        biggraph.load_config_dict("demo", ["num_epochs"])
    with pytest.raises(InputError, match="no BigGraph config file or bundled config named 'nope'"):
        biggraph.resolve_config_path("nope")


def test_cli_collects_repeated_p_overrides():
    from cli_graph import COMMANDS
    from scincl.cli import read_argv

    argv = ["demo", "-p", "num_epochs=3", "dimension=8", "--rank", "1", "-p", "lr=0.5", "--p=margin=0.1"]
    assert read_argv(COMMANDS["train_biggraph"], argv)[0] == ["demo", "--rank", "1", "--overrides",
                                                              "num_epochs=3 dimension=8 lr=0.5 margin=0.1"]


# ------------------------------------------------------------------------------- import

def test_import_round_trips_every_edge_into_partitions(tmp_path):
    rng = np.random.default_rng(0)
    train = [(f"p{a}", f"p{b}") for a, b in rng.integers(0, 80, size=(400, 2))]
    test = [(f"p{a}", f"q{b}") for a, b in rng.integers(0, 90, size=(50, 2))]  # q*: only in the test file
    train_path = tmp_path / "citations.train.tsv.gz"
    with gzip.open(train_path, "wt") as fh:
        fh.writelines(f"{a}\t{b}\n" for a, b in train)
    test_path = tmp_path / "citations.test.tsv"
    test_path.write_text("# held-out edges\n" + "".join(f"{a}\t{b}\n" for a, b in test))  # comments skipped
    config = biggraph.with_output_dir(biggraph.load_config_dict("demo", "entities.paper_id.num_partitions=3"),
                                      tmp_path / "out")
    manifest = biggraph.import_edges(config, train_path, test_path, seed=5)
    assert manifest["edges"] == [400, 50]
    nodes = {x for edge in train + test for x in edge}
    assert manifest["entities"] == len(nodes)
    names = [n for part in range(3) for n in read_id_list(tmp_path / "out" / "graph" / f"entity_names_paper_id_{part}.json")]
    assert sorted(names) == sorted(nodes)
    assert Counter(biggraph.read_imported_edges(config, config["edge_paths"][0])) == Counter(train)
    assert Counter(biggraph.read_imported_edges(config, config["edge_paths"][1])) == Counter(test)
    # same inputs: reused; other inputs: refused without override; with override: re-imported
    assert biggraph.import_edges(config, train_path, test_path, seed=5) == manifest
    other = tmp_path / "other.tsv"
    other.write_text("a\tb\nb\tc\n")
    with pytest.raises(InputError, match="holds an import of other edge files"):
        biggraph.import_edges(config, other)
    assert biggraph.import_edges(config, other, override=True)["edges"] == [2]
    assert Counter(biggraph.read_imported_edges(config, config["edge_paths"][0])) == Counter([("a", "b"), ("b", "c")])


def test_import_rejects_malformed_and_empty_files(tmp_path):
    config = biggraph.with_output_dir(biggraph.load_config_dict("demo"), tmp_path / "out")
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nlonely\n")
    with pytest.raises(InputError, match=r"bad.tsv:2: expected two ids \(citing<TAB>cited\), got 1 column"):
        biggraph.import_edges(config, bad)
    empty = tmp_path / "empty.tsv"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty.tsv: no edges in file"):
        biggraph.import_edges(config, empty)
    with pytest.raises(InputError, match="edge file not found"):
        biggraph.import_edges(config, tmp_path / "missing.tsv")


# ------------------------------------------------------------------- training quality

def test_demo_training_beats_random_embeddings_on_link_prediction(demo_biggraph):
    trained, random = demo_biggraph["metrics"]["trained"], demo_biggraph["metrics"]["random"]
    assert trained["count"] == random["count"] > 300
    assert trained["mrr"] > 2.5 * random["mrr"]
    assert trained["hits@10"] > 2.5 * random["hits@10"]
    assert trained["auc"] > random["auc"] + 0.15
    assert trained["mean_rank"] < 0.7 * random["mean_rank"]
    assert trained["loss"] < random["loss"]
    table = (demo_biggraph["dir"] / "link_prediction.md").read_text().splitlines()
    assert table[0] == "| embeddings | loss | mean rank | MRR | Hits@1 | Hits@10 | Hits@50 | AUC | test edges |"
    assert table[2].startswith(f"| trained | {trained['loss']:.4f} | {trained['mean_rank']:.4f} | {trained['mrr']:.4f} |")
    run = json.loads((demo_biggraph["dir"] / "biggraph_run.json").read_text())
    assert len(run["train_loss_per_epoch"]) == run["config"]["num_epochs"] == 15
    assert run["train_loss_per_epoch"][-1] < run["train_loss_per_epoch"][0]


def test_demo_embeddings_put_same_topic_papers_nearer(demo_biggraph, demo_corpus, demo_citations):
    out = demo_biggraph["dir"]
    embeddings = read_embeddings_h5(out / "embeddings.h5")
    ids = read_id_list(out / "entity_names_paper_id_0.json")
    graph_ids = {x for path in demo_citations.values() for line in path.read_text().splitlines() for x in line.split("\t")}
    assert embeddings.shape == (len(ids), 32) and sorted(ids) == sorted(graph_ids)
    topics = json.loads(demo_corpus.topics_path.read_text())
    rows = [i for i, pid in enumerate(ids) if pid in topics]
    assert len(rows) > 500
    unit = embeddings[rows] / np.linalg.norm(embeddings[rows], axis=1, keepdims=True)
    sims = unit @ unit.T
    topic = np.array([topics[ids[i]].split("/")[0] for i in rows])
    same = topic[:, None] == topic[None, :]
    np.fill_diagonal(same, False)
    different = topic[:, None] != topic[None, :]
    assert sims[same].mean() > sims[different].mean() + 0.15
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argsort(-sims, axis=1)[:, :10]
    purity = (topic[nearest] == topic[:, None]).mean()
    chance = np.mean([(topic == t).mean() for t in topic])
    assert purity > 4 * chance


def test_export_npy_from_checkpoint_dir_equals_h5(demo_biggraph, python_exe, repo_root, tmp_path):
    out = demo_biggraph["dir"]
    proc = run_front_end("cli_graph.py", "export_embeddings", out / "checkpoints", tmp_path, "--export_format", "npy")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "embeddings.npy"), read_embeddings_h5(out / "embeddings.h5"))
    assert read_id_list(tmp_path / "entity_names_paper_id_0.json") == read_id_list(out / "entity_names_paper_id_0.json")
    proc = run_front_end("cli_graph.py", "export_embeddings", tmp_path, tmp_path / "x")
    assert proc.returncode == 2 and "no config.json in BigGraph checkpoint directory" in proc.stderr


def test_graph_retrieval_trained_beats_random(demo_biggraph, demo_citations, python_exe, repo_root, tmp_path):
    out = demo_biggraph["dir"]
    proc = run_front_end("cli_graph.py", "evaluate_graph_retrieval", out / "embeddings.h5", demo_citations["test"],
                         "--output_path", tmp_path / "trained.json")
    assert proc.returncode == 0, proc.stderr
    trained = json.loads((tmp_path / "trained.json").read_text())
    from scincl.eval.graph_retrieval import evaluate_graph_retrieval
    from scincl.io import write_embeddings_h5

    embeddings = read_embeddings_h5(out / "embeddings.h5")
    write_embeddings_h5(tmp_path / "random.h5", np.random.default_rng(0).standard_normal(embeddings.shape))
    random = evaluate_graph_retrieval(tmp_path / "random.h5", demo_citations["test"],
                                      paper_ids_path=out / "entity_names_paper_id_0.json")
    assert trained["pairs"] == random["pairs"] and trained["skipped_pairs"] == 0
    assert trained["metrics"]["queries"] == random["metrics"]["queries"] > 200
    assert trained["metrics"]["map"] > 2 * random["metrics"]["map"]
    assert trained["metrics"]["ndcg@10"] > 2 * random["metrics"]["ndcg@10"]


# --------------------------------------------------------------------------- edge utilities

def test_make_edges_bidirectional(tmp_path):
    src = tmp_path / "cocitations.tsv"
    src.write_text("a\tb\nb\ta\nc\tc\n# comment\na\td\n")
    counts = make_edges_bidirectional(src, tmp_path / "bi.tsv")
    assert (tmp_path / "bi.tsv").read_text() == "a\tb\nb\ta\nb\ta\na\tb\nc\tc\na\td\nd\ta\n"
    assert counts == {"input_edges": 4, "output_edges": 7, "self_loops": 1, "duplicates_dropped": 0}
    counts = make_edges_bidirectional(src, tmp_path / "bi.dedup.tsv.gz", deduplicate=True)
    with gzip.open(tmp_path / "bi.dedup.tsv.gz", "rt") as fh:
        assert fh.read() == "a\tb\nb\ta\nc\tc\na\td\nd\ta\n"
    assert counts["duplicates_dropped"] == 2


def test_largest_connected_subgraph_and_ids(tmp_path):
    src = tmp_path / "citations.tsv"
    # components: {a,b,c,d} (4 nodes, direction ignored), {x,y,z} (3), {k,l} (2)
    src.write_text("x\ty\na\tb\nk\tl\nc\tb\nz\ty\nd\tc\n")
    counts = get_largest_connected_subgraph(src, tmp_path / "lcc.tsv")
    assert (tmp_path / "lcc.tsv").read_text() == "a\tb\nc\tb\nd\tc\n"
    assert counts == {"components": 3, "nodes": 9, "edges": 6, "kept_nodes": 4, "kept_edges": 3}
    get_largest_connected_subgraph(src, tmp_path / "second.tsv", largest_n=1)
    assert (tmp_path / "second.tsv").read_text() == "x\ty\nz\ty\n"
    with pytest.raises(InputError, match="largest_n=3 but the graph has 3 connected component"):
        get_largest_connected_subgraph(src, tmp_path / "none.tsv", largest_n=3)
    assert extract_ids_in_graph(tmp_path / "lcc.tsv", tmp_path / "ids.json") == 4
    assert read_id_list(tmp_path / "ids.json") == ["a", "b", "c", "d"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nonly_one\n")
    with pytest.raises(InputError, match="bad.tsv:2"):
        extract_ids_in_graph(bad, tmp_path / "x.json")


def test_config_validation_survives_typing_cache_eviction():
    """PBG recognised Optional[X] by identity; a long process evicts typing's cache (pbg_compat 3.)."""
    import typing

    from scincl.graph.pbg_compat import apply_patches
    from scincl.graph.pbg_config import load_config_dict, parse_config

    apply_patches()
    for i in range(300):  # more than typing's 128-entry LRU cache
        typing.Optional[type(f"Evict{i}", (), {})]
    assert parse_config(load_config_dict("demo")).dimension == 32


def tiny_edges(path: Path) -> Path:
    """A 40-paper, 40-edge citation TSV at ``path``: the smallest graph PBG trains here (seconds)."""
    path.write_text("".join(f"p{i}\tp{(i * 7 + 1) % 40}\n" for i in range(40)))
    return path


def test_retraining_over_preserved_epoch_snapshots_starts_over(tmp_path):
    """A rebuilt graph stage (--override) trains from scratch even where PBG kept ``epoch_N/``
    snapshots (``checkpoint_preservation_interval``, as the real-corpus configs set): a stale
    snapshot made the retraining fail with "File exists" when PBG hard-linked the new one into it."""
    edges = tiny_edges(tmp_path / "edges.tsv")
    out = tmp_path / "graph"
    overrides = ["num_epochs=2", "dimension=8", "checkpoint_preservation_interval=1", "workers=1"]
    first = biggraph.train_biggraph("demo", train_edges=edges, overrides=overrides, output_dir=out,
                                    random_baseline=False)
    checkpoints = Path(first["checkpoint_path"])
    assert sorted(p.name for p in checkpoints.glob("epoch_*")) == ["epoch_1", "epoch_2"]
    again = biggraph.train_biggraph("demo", train_edges=edges, overrides=overrides, output_dir=out,
                                    random_baseline=False, override=True)
    assert Path(again["embeddings_path"]).exists()
    assert (checkpoints / "checkpoint_version.txt").read_text().strip() == "2"  # 2 epochs x 1 chunk, not resumed


def test_training_in_one_process_gives_the_same_bytes_whatever_it_started_before(tmp_path):
    """PBG's worker is seeded from its place in the training's own pool, not from the process's history: PBG's
    workers were seeded from their multiprocessing identity, a count of every process the parent had started, so a
    graph trained again after another pool (cli_pipeline.py trains it after the citations stage's pool, a resumed
    run without) had other bytes."""
    import multiprocessing

    edges = tiny_edges(tmp_path / "edges.tsv")
    overrides = ["num_epochs=2", "dimension=8", "workers=1"]
    trained = []
    for name in ("first", "after_a_pool"):
        graph = biggraph.train_biggraph("demo", train_edges=edges, overrides=overrides, output_dir=tmp_path / name,
                                        random_baseline=False)
        trained.append(Path(graph["embeddings_path"]).read_bytes())
        with multiprocessing.get_context("spawn").Pool(2) as pool:  # moves the process's identity counter
            assert pool.map(abs, [-1, -2]) == [1, 2]
    assert trained[0] == trained[1]
    assert read_embeddings_h5(tmp_path / "first" / "embeddings.h5").shape == (40, 8)


def test_a_partitioned_graph_trains_to_the_same_bytes_twice(tmp_path):
    """Several partitions: PBG orders each epoch's buckets with an unseeded ``random.Random()``, so two trainings
    with one worker and the same seed differed; the order is now drawn from the seed (pbg_compat patch 4)."""
    edges = tiny_edges(tmp_path / "edges.tsv")
    overrides = ["num_epochs=2", "dimension=8", "workers=1", "entities.paper_id.num_partitions=2"]
    trained = [Path(biggraph.train_biggraph("demo", train_edges=edges, overrides=overrides, output_dir=tmp_path / name,
                                            random_baseline=False)["embeddings_path"]).read_bytes()
               for name in ("first", "second")]
    assert trained[0] == trained[1]
    assert read_embeddings_h5(tmp_path / "first" / "embeddings.h5").shape == (40, 8)
