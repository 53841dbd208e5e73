"""Issue 45: FastRP in bounded memory (``embed_graph --method fastrp --block_size ROWS``) gives the
same float32 bytes as the in-memory code, on graphs split into several blocks of rows (and column
groups of the in-memory ``column_block``); the on-disk graph is the in-memory one row for row."""
from __future__ import annotations

import json

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.graph.embed import embed_graph
from scincl.graph.embedders.adjacency import read_graph, row_normalized
from scincl.graph.embedders.disk_graph import build_disk_graph, row_blocks
from scincl.graph.embedders.fastrp import FastRPSettings, embed
from scincl.graph.embedders.fastrp_bounded import embed_bounded
from scincl.io import read_embeddings_matrix
from tests.conftest import run_front_end

BLOCK = 500  # rows per block: the 3,000-paper graph below needs 7 blocks


@pytest.fixture(scope="module")
def skewed_graph(tmp_path_factory):
    """3,000 papers, 20,000 citations with a heavy-tailed in-degree, repeats, both directions, self loops,
    and test-only papers (isolated nodes)."""
    rng = np.random.default_rng(7)
    n, m = 3000, 20000
    citing = rng.integers(0, n, m)
    cited = np.minimum(n - 1, (rng.random(m) ** 3 * n).astype(int))
    cited[:50] = citing[:50]  # self loops: dropped
    citing[50:100], cited[50:100] = cited[100:150], citing[100:150]  # the reverse of other edges
    directory = tmp_path_factory.mktemp("skewed")
    train, test = directory / "train.tsv", directory / "test.tsv"
    train.write_text("".join(f"W{a:05d}\tW{b:05d}\n" for a, b in zip(citing, cited)))
    test.write_text("".join(f"W{a:05d}\tT{b}\n" for a, b in zip(citing[:40], range(40))))
    return train, test


def test_disk_graph_is_the_in_memory_transition_matrix_row_for_row(skewed_graph, tmp_path):
    train, test = skewed_graph
    graph = read_graph(train, [test])
    transition = row_normalized(graph.adjacency)
    disk = build_disk_graph(train, tmp_path, BLOCK, [test])
    assert disk.ids.to_list() == list(graph.ids) and disk.nnz == graph.adjacency.nnz
    assert np.array_equal(disk.degrees(), graph.degrees)
    inverse = disk.inverse_degrees()
    for start, stop in row_blocks(disk.n, BLOCK):
        rows, expected = disk.transition_rows(start, stop, inverse), transition[start:stop]
        assert np.array_equal(rows.indptr, expected.indptr)
        assert np.array_equal(rows.indices, expected.indices)  # same order inside each row: columns descending
        assert np.array_equal(rows.data.view(np.int32), expected.data.view(np.int32))


@pytest.mark.parametrize("dimension, settings", [
    (40, FastRPSettings(normalization_strength=-0.5, column_block=16)),  # 3 column groups, the last one partial
    (24, FastRPSettings(iteration_weights=(1.0, 0.5, 0.25), normalize_powers=False, column_block=64)),
])
def test_bounded_fastrp_equals_in_memory_bit_for_bit(skewed_graph, tmp_path, dimension, settings):
    train, test = skewed_graph
    expected = embed(read_graph(train, [test]), dimension, settings, seed=3)
    disk = build_disk_graph(train, tmp_path / "graph", BLOCK, [test])
    got = embed_bounded(disk, dimension, settings, seed=3, block_rows=BLOCK, work_dir=tmp_path)
    values = got.read(0, got.rows)
    assert values.dtype == np.float32 and values.shape == expected.shape
    assert np.array_equal(values.view(np.int32), expected.view(np.int32))
    assert np.abs(values).sum() > 0


@pytest.mark.parametrize("export_format", ["h5", "npy"])
def test_embed_graph_block_size_writes_the_same_files(skewed_graph, tmp_path, export_format):
    train, test = skewed_graph
    evaluated = export_format == "h5"  # link prediction once: it is the slow part
    common = dict(method="fastrp", config="demo", test_edges=test if evaluated else None, dimension=20,
                  export_format=export_format, settings="column_block=8", random_baseline=False)
    whole = embed_graph(train, tmp_path / "whole", **common)
    blocks = embed_graph(train, tmp_path / "blocks", block_size=BLOCK, **common)
    expected, got = (read_embeddings_matrix(r["embeddings_path"]) for r in (whole, blocks))
    assert np.array_equal(got.view(np.int32), expected.view(np.int32))  # the isolated test papers' noise too
    assert (tmp_path / "blocks" / "entity_names_paper_id_0.json").read_bytes() == \
        (tmp_path / "whole" / "entity_names_paper_id_0.json").read_bytes()
    if evaluated:  # link prediction ran on the blocked output (PBG's evaluation itself differs from run to run)
        assert blocks["metrics"]["trained"]["count"] == whole["metrics"]["trained"]["count"] == 40
    run = json.loads((tmp_path / "blocks" / "embed_graph_run.json").read_text())
    assert run["block_size"] == BLOCK and run["papers"] == len(expected)
    assert not list((tmp_path / "blocks").glob(".embed_blocks.*"))  # the temporary folder is gone


def test_block_size_from_the_command_line_and_refused_for_other_methods(demo_citations, tmp_path):
    proc = run_front_end("cli_graph.py", "embed_graph", demo_citations["train"], tmp_path / "cli", "--method",
                         "fastrp", "--config", "demo", "--dimension", "8", "--block_size", "64", timeout=300)
    assert proc.returncode == 0, proc.stderr
    memory = embed_graph(demo_citations["train"], tmp_path / "memory", method="fastrp", config="demo", dimension=8)
    assert np.array_equal(read_embeddings_matrix(tmp_path / "cli" / "embeddings.h5"),
                          read_embeddings_matrix(memory["embeddings_path"]))
    with pytest.raises(InputError, match="--block_size needs --method fastrp"):
        embed_graph(demo_citations["train"], tmp_path / "prone", method="prone", config="demo", block_size=64)
