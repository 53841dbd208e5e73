"""The exact kNN backend (--ann_backend exact): same bands and top-k sets as faiss' flat index on
tie-free data, the documented tie rule (ascending row) where there are ties, the miner's output."""
from __future__ import annotations

import numpy as np
import pytest

from scincl.knn.exact import ExactKnn, exact_order
from scincl.triples import strategies as st

BANDS = [(20, 25), (96, 100)]


def _int_vectors(n: int, d: int, high: int, seed: int) -> np.ndarray:
    """Integer-valued float32 vectors: every dot product is exact in float32 (faiss and torch agree)."""
    return np.random.default_rng(seed).integers(-high, high + 1, size=(n, d)).astype(np.float32)


def _faiss_neighbours(x: np.ndarray, rows: np.ndarray, k: int, metric: str) -> np.ndarray:
    import faiss

    index = faiss.IndexFlatIP(x.shape[1]) if metric == "inner_product" else faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    return st.drop_self(rows, index.search(x[rows], k + 1)[1])


def _reference(x: np.ndarray, rows: np.ndarray, k: int, metric: str) -> np.ndarray:
    """Top-k of every query by the documented rule: score descending, ties by ascending row, self excluded."""
    x64 = x.astype(np.float64)
    out = []
    for r in rows:
        s = x64 @ x64[r] if metric == "inner_product" else -((x64 - x64[r]) ** 2).sum(axis=1)
        s[r] = -np.inf
        out.append(exact_order(s)[:k])
    return np.array(out)


def _check_format(got: np.ndarray, ref: np.ndarray, bands) -> None:
    """Bands in rank order, the whole row the same set as the reference top-k."""
    for lo, hi in bands:
        np.testing.assert_array_equal(got[:, lo:hi], ref[:, lo:hi])
    np.testing.assert_array_equal(np.sort(got, axis=1), np.sort(ref, axis=1))


@pytest.mark.parametrize("metric", ["inner_product", "l2"])
def test_exact_bands_equal_faiss_flat_on_tie_free_rows(metric):
    x = _int_vectors(1200, 8, 1000, seed=0)  # dot products < 2^24: exact, and rarely tied
    rows = np.arange(0, 1200, 7)
    k = 100
    knn = ExactKnn(x, metric=metric, bands=BANDS)
    got = st.drop_self(rows, knn.search(rows, k + 1))
    ref = _reference(x, rows, k, metric)
    _check_format(got, ref, BANDS)
    faiss_nn = _faiss_neighbours(x, rows, k, metric)
    assert knn.tie_rows <= 3  # integer data: a few queries have tied neighbours near a boundary
    tie_free = np.array([not _has_window_tie(x, r, k, metric) for r in rows])
    assert tie_free.sum() >= len(rows) - 3
    for lo, hi in BANDS:
        np.testing.assert_array_equal(got[tie_free, lo:hi], faiss_nn[tie_free, lo:hi])
    np.testing.assert_array_equal(np.sort(got[tie_free], axis=1), np.sort(faiss_nn[tie_free], axis=1))


def _has_window_tie(x, r, k, metric) -> bool:
    ref_scores = x.astype(np.float64) @ x[r].astype(np.float64) if metric == "inner_product" else \
        -((x.astype(np.float64) - x[r]) ** 2).sum(axis=1)
    ref_scores[r] = -np.inf
    s = np.sort(ref_scores)[::-1][: k + 1]
    edges = [(19, 26), (95, 101)]
    return any(len(np.unique(s[a:b])) < len(s[a:b]) for a, b in edges)


def test_ties_are_ranked_by_ascending_row():
    x = _int_vectors(600, 4, 1, seed=1)  # entries in {-1, 0, 1}: massive ties
    rows = np.arange(0, 600, 5)
    k = 100
    knn = ExactKnn(x, bands=BANDS)
    got = st.drop_self(rows, knn.search(rows, k + 1))
    _check_format(got, _reference(x, rows, k, "inner_product"), BANDS)
    assert knn.tie_rows == len(rows)  # every row went through the exact tie-breaking path


def test_block_size_and_full_corpus_k_do_not_change_the_result():
    x = np.random.default_rng(2).standard_normal((300, 16)).astype(np.float32)
    rows = np.arange(300)
    one_block = ExactKnn(x, bands=[(3, 8)]).search(rows, 51)
    tiny_blocks = ExactKnn(x, bands=[(3, 8)], block_entries=700).search(rows, 51)  # 2 queries per product
    np.testing.assert_array_equal(one_block, tiny_blocks)
    assert (one_block[:, 0] == rows).all()
    everything = st.drop_self(rows, ExactKnn(x, bands=[(290, 299)]).search(rows, 300))  # k = N - 1
    ref = _reference(x, rows, 299, "inner_product")
    np.testing.assert_array_equal(everything[:, 290:299], ref[:, 290:299])
    with pytest.raises(ValueError, match="k=300 neighbours requested but the corpus has 300 rows"):
        ExactKnn(x).search(rows[:2], 301)


def test_get_knn_triples_exact_backend_writes_the_faiss_triples(tmp_path):
    from scincl.io import write_embeddings_h5, write_id_list
    from scincl.triples.knn_miner import get_knn_triples

    x = _int_vectors(900, 8, 1000, seed=3)
    ids = [f"p{i}" for i in range(len(x))]
    write_embeddings_h5(tmp_path / "emb.h5", x)
    write_id_list(tmp_path / "ids.json", ids)
    common = dict(graph_paper_ids_path=tmp_path / "ids.json", graph_embeddings_path=tmp_path / "emb.h5",
                  query_papers=200, easy_positives_k_min=20, easy_positives_k_max=25, hard_negatives_k_min=398,
                  hard_negatives_k_max=400, seed=0, show_progress=False)
    faiss_out = get_knn_triples(tmp_path / "faiss.csv", ann_backend="faiss", **common)
    exact_out = get_knn_triples(tmp_path / "exact.csv", ann_backend="exact", **common)
    faiss_rows = faiss_out.read_text().splitlines()
    exact_rows = exact_out.read_text().splitlines()
    assert len(exact_rows) == 1 + 200 * 5
    differing = [i for i, (a, b) in enumerate(zip(faiss_rows, exact_rows)) if a != b]
    # only queries whose band edges hold tied similarities may differ (faiss breaks ties arbitrarily)
    assert len(differing) <= 10, differing[:5]
    from scincl.errors import InputError

    with pytest.raises(InputError, match="--ann_backend 'annoy' is not supported; use one of faiss, exact"):
        get_knn_triples(tmp_path / "x.csv", ann_backend="annoy", **common)
