"""`knn_for_papers` (the `cli_graph.py get_knn` logic): query subsets, self matches, nprobe, errors."""
from __future__ import annotations

import faiss
import numpy as np
import pytest

from scincl.knn import ann
from scincl.errors import InputError
from scincl.knn.papers import knn_for_papers
from scincl.io import write_embeddings_h5, write_id_list

N, DIM = 200, 8


@pytest.fixture(scope="module")
def papers():
    vectors = np.random.default_rng(1).standard_normal((N, DIM)).astype(np.float32)
    return [f"p{i:03d}" for i in range(N)], vectors


def exact_l2(queries: np.ndarray, base: np.ndarray, k: int) -> np.ndarray:
    distances = ((queries[:, None, :] - base[None, :, :]) ** 2).sum(-1)
    return np.argsort(distances, axis=1, kind="stable")[:, :k]


def test_query_subset_from_a_file_excludes_each_query_itself(papers, tmp_path):
    ids, vectors = papers
    index = ann.build_index(vectors, "Flat", metric="l2")
    wanted = ["p150", "p007", "p042"]
    write_id_list(tmp_path / "queries.json", wanted)
    result = knn_for_papers(index, ids, 4, query_paper_ids=tmp_path / "queries.json")
    assert result.query_ids == wanted and result.indices.shape == result.distances.shape == (3, 4)
    rows = [ids.index(q) for q in wanted]
    expected = exact_l2(vectors[rows], vectors, 5)[:, 1:]  # rank 1 is the query itself (distance 0)
    np.testing.assert_array_equal(result.indices, expected)
    assert not any(r in row for r, row in zip(rows, result.indices.tolist()))
    assert np.all(np.diff(result.distances, axis=1) >= 0)


def test_without_exclude_self_a_query_is_its_own_nearest_neighbour(papers, tmp_path):
    ids, vectors = papers
    index = ann.build_index(vectors, "Flat", metric="l2")
    write_id_list(tmp_path / "queries.json", ["p010", "p199"])
    result = knn_for_papers(index, ids, 3, query_paper_ids=tmp_path / "queries.json", exclude_self=False)
    assert result.indices[:, 0].tolist() == [10, 199]
    np.testing.assert_allclose(result.distances[:, 0], 0.0, atol=1e-5)
    np.testing.assert_array_equal(result.indices, exact_l2(vectors[[10, 199]], vectors, 3))
    # k = the whole index is allowed only when the query may be its own neighbour
    assert knn_for_papers(index, ids, N, query_paper_ids=tmp_path / "queries.json",
                          exclude_self=False).indices.shape == (2, N)
    with pytest.raises(InputError, match=rf"k={N} \(\+1 for the query itself\) is larger than the index"):
        knn_for_papers(index, ids, N, query_paper_ids=tmp_path / "queries.json")


def test_nprobe_is_set_on_the_ivf_index_and_all_lists_give_the_exact_answer(papers, tmp_path):
    ids, vectors = papers
    index = ann.build_index(vectors, "IVF4,Flat", metric="l2")
    write_embeddings_h5(tmp_path / "embeddings.h5", vectors)  # an IVF index does not hand its vectors back
    write_id_list(tmp_path / "entity_names_paper_id_0.json", ids)
    exact = exact_l2(vectors, vectors, 6)[:, 1:]
    one = knn_for_papers(index, ids, 5, nprobe=1, embeddings_path=tmp_path / "embeddings.h5")
    assert faiss.extract_index_ivf(index).nprobe == 1
    every = knn_for_papers(index, ids, 5, nprobe=4, embeddings_path=tmp_path / "embeddings.h5")
    assert faiss.extract_index_ivf(index).nprobe == 4
    np.testing.assert_array_equal(every.indices, exact)
    # one probed list of four misses some true neighbours (approximate search)
    assert (one.indices != exact).any()


def test_queries_from_an_embeddings_file_need_not_be_in_the_index(papers, tmp_path):
    ids, vectors = papers
    index = ann.build_index(vectors[:100], "Flat", metric="l2")
    write_embeddings_h5(tmp_path / "embeddings.h5", vectors)
    write_id_list(tmp_path / "entity_names_paper_id_0.json", ids)
    write_id_list(tmp_path / "queries.json", ["p120", "p003"])  # p120 is outside the index
    result = knn_for_papers(index, ids[:100], 2, query_paper_ids=tmp_path / "queries.json",
                            embeddings_path=tmp_path / "embeddings.h5")
    np.testing.assert_array_equal(result.indices[0], exact_l2(vectors[[120]], vectors[:100], 2)[0])
    np.testing.assert_array_equal(result.indices[1], exact_l2(vectors[[3]], vectors[:100], 3)[0, 1:])
    write_id_list(tmp_path / "empty.json", [])
    with pytest.raises(InputError, match="no query paper ids"):
        knn_for_papers(index, ids[:100], 2, query_paper_ids=tmp_path / "empty.json")
