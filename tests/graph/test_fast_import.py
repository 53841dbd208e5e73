"""The fast (polars) edge importer writes the same PyTorch-BigGraph storage as PBG's own importer."""
from __future__ import annotations

import random
from pathlib import Path

import h5py
import numpy as np
import pytest

from scincl.errors import InputError
from scincl.graph import biggraph
from scincl.graph.fast_import import partition_bounds, shuffled_order
from scincl.io import read_id_list
from tests.conftest import run_front_end


def _import(tmp_path: Path, name: str, importer: str, parts: int, train: Path, test: Path, seed: int):
    config = biggraph.with_output_dir(
        biggraph.load_config_dict("demo", f"entities.paper_id.num_partitions={parts}"), tmp_path / name)
    manifest = biggraph.import_edges(config, train, test, seed=seed, importer=importer)
    return config, manifest


def _storage(config) -> dict:
    """Entity names per partition and the (lhs, rhs, rel) columns of every bucket of every edge path."""
    root = Path(config["entity_path"])
    parts = config["entities"]["paper_id"]["num_partitions"]
    out = {"names": [read_id_list(root / f"entity_names_paper_id_{p}.json") for p in range(parts)],
           "counts": [int((root / f"entity_count_paper_id_{p}.txt").read_text()) for p in range(parts)]}
    for edge_path in config["edge_paths"]:
        for f in sorted(Path(edge_path).glob("edges_*.h5")):
            with h5py.File(f, "r") as hf:
                assert hf.attrs["format_version"] == 1
                out[f"{Path(edge_path).name}/{f.name}"] = {k: hf[k][:].tolist() for k in ("lhs", "rhs", "rel")}
    return out


@pytest.mark.parametrize("parts", [1, 4])
def test_fast_import_equals_pbg_import_on_the_demo_graph(tmp_path, demo_citations, parts):
    train, test = demo_citations["train"], demo_citations["test"]
    pbg_config, pbg_manifest = _import(tmp_path, "pbg", "pbg", parts, train, test, seed=3)
    fast_config, fast_manifest = _import(tmp_path, "fast", "fast", parts, train, test, seed=3)
    pbg, fast = _storage(pbg_config), _storage(fast_config)
    assert fast_manifest["edges"] == pbg_manifest["edges"] and fast_manifest["entities"] == pbg_manifest["entities"]
    assert fast_manifest["importer"] == "fast" and pbg_manifest["importer"] == "pbg"
    assert sum(pbg["counts"]) == pbg_manifest["entities"] > 500
    # same entities in the same rows of the same partitions; same bucket files with the same edge sequences
    assert fast["names"] == pbg["names"]
    assert fast == pbg
    assert len([k for k in fast if k.startswith("train_partitioned/")]) == parts * parts
    # another seed gives another shuffle
    other_config, _ = _import(tmp_path, "fast_seed4", "fast", parts, train, test, seed=4)
    assert _storage(other_config)["names"] != fast["names"]


def test_fast_import_trains_with_pbg_unchanged(tmp_path, demo_citations, one_torch_thread):
    config, manifest = _import(tmp_path, "fast", "fast", 2, demo_citations["train"], demo_citations["test"], 0)
    config = dict(config, num_epochs=1, workers=1)
    biggraph.train(config, seed=0)
    checkpoint = Path(config["checkpoint_path"])
    sizes = []
    for part in range(2):
        with h5py.File(checkpoint / f"embeddings_paper_id_{part}.v1.h5", "r") as hf:
            sizes.append(hf["embeddings"].shape)
    assert [s[0] for s in sizes] == [int((Path(config["entity_path"]) / f"entity_count_paper_id_{p}.txt")
                                         .read_text()) for p in range(2)]
    assert all(s[1] == config["dimension"] for s in sizes)
    assert sum(s[0] for s in sizes) == manifest["entities"]


def test_shuffle_and_partitions_follow_pbg():
    names = [f"n{i}" for i in range(1000)]
    random.seed(11)
    expected = list(names)
    random.shuffle(expected)
    order = shuffled_order(len(names), random.Random(11))
    assert [names[i] for i in order] == expected
    assert partition_bounds(10, 4) == [0, 3, 5, 8, 10]  # ceil(p / 4 * 10)
    assert partition_bounds(3, 4) == [0, 1, 2, 3, 3]


def test_fast_import_small_chunks_gzip_comments_and_errors(tmp_path):
    from torchbiggraph.converters.import_from_tsv import parse_config_partial

    from scincl.graph.fast_import import convert_edges

    rng = np.random.default_rng(1)
    edges = [(f"p{a}", f"p{b}") for a, b in rng.integers(0, 50, size=(300, 2))]
    plain = tmp_path / "e.tsv"
    plain.write_text("# a comment\n\n" + "".join(f"{a}\t{b}\t7\n" for a, b in edges))  # 3rd column ignored
    gz = tmp_path / "e.tsv.gz"
    import gzip

    with gzip.open(gz, "wt") as fh:
        fh.write(plain.read_text())
    a_config, a_manifest = _import(tmp_path, "a", "fast", 3, plain, None, seed=0)
    b_config, b_manifest = _import(tmp_path, "b", "pbg", 3, gz, None, seed=0)
    assert a_manifest["edges"] == b_manifest["edges"] == [300]
    assert _storage(a_config) == _storage(b_config)
    # batches of 16 edges (memory bound = chunk size): the same buckets
    c_config = biggraph.with_output_dir(biggraph.load_config_dict("demo", "entities.paper_id.num_partitions=3"),
                                        tmp_path / "chunked")
    entities, relations, entity_path, edge_paths, _ = parse_config_partial(c_config)
    assert convert_edges(entities, relations, entity_path, edge_paths[:1], [plain], seed=0, chunk_edges=16) == [300]
    assert _storage(dict(c_config, edge_paths=edge_paths[:1])) == _storage(dict(a_config, edge_paths=a_config["edge_paths"][:1]))

    from collections import Counter

    assert Counter(biggraph.read_imported_edges(a_config, a_config["edge_paths"][0])) == Counter(edges)

    # (test_graph.py checks the default importer's errors on bad and empty files)
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n# comment lines count\nlonely\n")
    with pytest.raises(InputError, match=r"bad.tsv:3: expected two ids"):
        convert_edges(entities, relations, entity_path, edge_paths[:1], [bad])
    with pytest.raises(InputError, match="--importer 'duckdb' is not one of fast, pbg"):
        biggraph.import_edges(c_config, plain, importer="duckdb")


def test_cli_import_edges_importer_flag(tmp_path):
    import json

    edges = tmp_path / "e.tsv"
    edges.write_text("a\tb\nb\tc\nc\ta\n")
    for importer in ("pbg", None):
        out = tmp_path / f"out_{importer}"
        proc = run_front_end("cli_graph.py", "import_edges", "demo", edges, "--output_dir", out,
                             *(["--importer", importer] if importer else []), timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        manifest = json.loads((out / "graph" / "import_manifest.json").read_text())
        assert (manifest["importer"], manifest["edges"], manifest["entities"]) == (importer or "fast", [3], 3)
    proc = run_front_end("cli_graph.py", "import_edges", "demo", edges, "--output_dir", tmp_path / "x",
                         "--importer", "nope", timeout=120)
    assert proc.returncode != 0
    assert "--importer 'nope' is not one of fast, pbg" in proc.stderr and "Traceback" not in proc.stderr
