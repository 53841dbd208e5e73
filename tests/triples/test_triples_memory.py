"""The triples stage reads only the corpus rows of the graph embeddings (issue 19).

At S2ORC scale the graph file is 52.6M x 768 float32 = 161 GB, the training corpus a small part of
it; reading the whole file made the stage run out of memory under the scripts' --mem=128G. Here a
graph file 10x larger than the corpus must not raise the stage's peak RSS by more than a fraction
of the rows it does not need (VmHWM of fresh processes, reset after the imports, against the same
run on a graph that holds only the corpus).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scincl.io import write_embeddings_h5, write_id_list
from tests.conftest import run_front_end

DIM = 512
CORPUS = 5_000
GRAPH = 10 * CORPUS  # 100 MB of float32 rows, 10 MB of them the corpus

CHILD = """
import json, sys
from pathlib import Path
from scincl.triples.knn_miner import get_knn_triples
ids, emb, corpus, out = sys.argv[1:5]
Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS (VmHWM) after the imports
get_knn_triples(out, ids, emb, query_papers=50, include_paper_ids=corpus, ann_index_path=out + ".faiss",
                hard_negatives_k_min=498, hard_negatives_k_max=500, workers=1, show_progress=False)
get_knn_triples(out + ".reuse.csv", ids, emb, query_papers=50, include_paper_ids=corpus,
                ann_index_path=out + ".faiss", hard_negatives_k_min=498, hard_negatives_k_max=500, workers=1,
                show_progress=False)  # the existing index: the path the pipeline's triples stage takes
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
print(json.dumps({"peak_rss_kb": int(status["VmHWM"].split()[0])}))
"""


def _graph(directory, rows, rng_rows):
    directory.mkdir()
    ids = [f"p{i}" for i in range(rows)]
    write_id_list(directory / "ids.json", ids)
    write_embeddings_h5(directory / "emb.h5", rng_rows[:rows])
    return directory


def _peak_rss_mb(graph_dir, corpus_path) -> float:
    out = graph_dir / "triples.csv"
    done = run_front_end("-c", CHILD, graph_dir / "ids.json", graph_dir / "emb.h5", corpus_path, out, timeout=300,
                         check=True)
    assert len(out.read_text().splitlines()) == 1 + 50 * 5
    return json.loads(done.stdout.strip().splitlines()[-1])["peak_rss_kb"] / 1024


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc to reset the peak RSS")
def test_triples_stage_memory_is_bounded_by_the_corpus_rows(tmp_path):
    rows = np.random.default_rng(0).standard_normal((GRAPH, DIM)).astype(np.float32)
    corpus_ids = [f"p{i}" for i in range(0, GRAPH, GRAPH // CORPUS)]  # spread over the whole file
    write_id_list(tmp_path / "corpus.json", corpus_ids)
    big = _graph(tmp_path / "big", GRAPH, rows)
    small = tmp_path / "small"  # a graph that holds only the corpus papers (same ids, same vectors)
    small.mkdir()
    write_id_list(small / "ids.json", corpus_ids)
    write_embeddings_h5(small / "emb.h5", rows[::GRAPH // CORPUS])
    del rows
    graph_mb = GRAPH * DIM * 4 / 2**20
    extra_mb = _peak_rss_mb(big, tmp_path / "corpus.json") - _peak_rss_mb(small, tmp_path / "corpus.json")
    # reading the whole file costs ~graph_mb more; reading corpus rows block-wise costs one block + the ids
    assert extra_mb < 0.4 * graph_mb, f"peak RSS {extra_mb:.0f} MB above the corpus-only run (graph {graph_mb:.0f} MB)"


@pytest.mark.parametrize("normalize", [True, False])
def test_the_pool_is_held_once_and_gives_the_row_by_row_vectors(normalize):
    """Issue 45: the kNN miner's pool is normalised in place (a block at a time), not held raw plus a normalised
    copy; every vector is the bytes the row-by-row normalisation gives."""
    from scincl.triples import knn_miner

    rng = np.random.default_rng(0)
    raw = rng.standard_normal((1000, 16), dtype=np.float32) * rng.random((1000, 1), dtype=np.float32) * 10
    raw[3] = 0.0  # a zero row stays zero
    pool = raw.copy()
    old = knn_miner.NORMALIZE_BLOCK_ROWS
    knn_miner.NORMALIZE_BLOCK_ROWS = 64  # several blocks
    try:
        graph = knn_miner.GraphCorpus(index=None, paper_ids=[str(i) for i in range(1000)], embeddings=pool,
                                      normalize=normalize, metric="inner_product")
    finally:
        knn_miner.NORMALIZE_BLOCK_ROWS = old
    assert graph.all_vectors() is pool  # no second copy
    rows = np.array([999, 3, 0, 64, 65, 500])
    expected = raw[rows].copy()
    if normalize:
        expected /= np.maximum(np.linalg.norm(expected, axis=1, keepdims=True), 1e-12)
    got = graph.vectors_of(rows)
    assert got.tobytes() == expected.tobytes() and not np.shares_memory(got, pool)
    assert not np.any(got[1])
