"""Issue 45: the index and kNN stages over a candidate pool read only the pool's rows of the graph
embeddings (in blocks): rows outside the pool are never read (here they are NaN, which any read would
reject), and the index built from the file in chunks equals the one built from the rows in memory."""
from __future__ import annotations

import numpy as np

from scincl.io import iter_triples_csv, read_id_list, write_embeddings_h5, write_id_list
from scincl.knn import ann
from scincl.knn.papers import build_faiss
from scincl.triples.knn_miner import get_knn_triples


def test_pool_index_and_mining_read_only_the_pool(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n, pool_size, dim = 3000, 700, 8
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    pool_rows = np.sort(rng.choice(n, pool_size, replace=False))
    poisoned = np.full_like(vectors, np.nan)
    poisoned[pool_rows] = vectors[pool_rows]
    ids = [f"P{i}" for i in range(n)]
    write_embeddings_h5(tmp_path / "embeddings.h5", poisoned)
    write_id_list(tmp_path / "ids.json", ids)
    pool = [ids[r] for r in pool_rows[::-1]]  # index order = the include list's order
    write_id_list(tmp_path / "pool.json", pool)
    monkeypatch.setattr(ann, "READ_CHUNK_ROWS", 64)  # several chunks
    built = build_faiss(str(tmp_path / "embeddings.h5"), str(tmp_path / "pool.faiss"), paper_ids=str(tmp_path / "ids.json"),
                        include_paper_ids=str(tmp_path / "pool.json"))
    assert built["rows"] == pool_size and read_id_list(built["paper_ids_path"]) == pool
    index, _ = ann.read_index(tmp_path / "pool.faiss")
    expected = ann.build_index(vectors[pool_rows[::-1]])
    assert np.array_equal(ann.index_to_cpu(index).reconstruct_n(0, pool_size), expected.reconstruct_n(0, pool_size))
    write_id_list(tmp_path / "queries.json", pool[:10])
    path = get_knn_triples(tmp_path / "triples.csv", tmp_path / "ids.json", tmp_path / "embeddings.h5",
                           query_papers=str(tmp_path / "queries.json"), include_paper_ids=str(tmp_path / "pool.json"),
                           easy_positives_k_min=0, easy_positives_k_max=5, hard_negatives_k_min=40,
                           hard_negatives_k_max=45, ann_index_path=tmp_path / "mine.faiss", show_progress=False)
    triples = list(iter_triples_csv(path))
    assert len(triples) == 10 * 5 and {p for t in triples for p in t} <= set(pool)
