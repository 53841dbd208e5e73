"""FAISS index: exactness against numpy, normalisation, id mapping, errors, and the CLI commands."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from scincl.knn import ann
from scincl.errors import InputError
from scincl.io import read_id_list, write_embeddings_h5, write_id_list
from tests.conftest import run_front_end


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((500, 24)).astype(np.float32)


def numpy_topk(queries: np.ndarray, base: np.ndarray, k: int, metric: str):
    if metric == "l2":
        scores = -((queries[:, None, :] - base[None, :, :]) ** 2).sum(-1)
    else:
        scores = queries @ base.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    values = np.take_along_axis(scores, order, axis=1)
    return (-values if metric == "l2" else values), order


@pytest.mark.parametrize("metric", ["l2", "inner_product"])
def test_flat_topk_equals_numpy_brute_force(vectors, metric):
    index = ann.build_index(vectors, "Flat", metric=metric, batch_size=128)
    assert index.ntotal == 500
    distances, indices = ann.knn_search(index, vectors[:60], k=15, batch_size=7, show_progress=False)
    expected_d, expected_i = numpy_topk(vectors[:60], vectors, 15, metric)
    assert distances.dtype == np.float32 and indices.dtype == np.int64
    assert distances.shape == indices.shape == (60, 15)
    np.testing.assert_array_equal(indices, expected_i)
    np.testing.assert_allclose(distances, expected_d, rtol=1e-4, atol=1e-3)


def test_normalized_inner_product_is_cosine_ranking(vectors):
    scaled = vectors * np.random.default_rng(1).uniform(0.1, 10.0, size=(len(vectors), 1)).astype(np.float32)
    original = scaled.copy()
    index = ann.build_index(scaled, "Flat", metric="inner_product", do_normalize=True)
    np.testing.assert_array_equal(scaled, original)  # the caller's array is not normalised in place
    distances, indices = ann.knn_search(index, scaled[:40], k=10, normalize=True, show_progress=False)
    unit = scaled / np.linalg.norm(scaled, axis=1, keepdims=True)
    cosine_d, cosine_i = numpy_topk(unit[:40], unit, 10, "inner_product")
    np.testing.assert_array_equal(indices, cosine_i)
    np.testing.assert_allclose(distances, cosine_d, atol=1e-5)
    assert np.allclose(distances[:, 0], 1.0, atol=1e-5)  # each vector is its own nearest (cosine 1)
    # "cosine" is the same as inner product + normalisation
    _, cos_i = ann.knn_search(ann.build_index(scaled, "Flat", metric="cosine"), scaled[:40], 10, normalize=True,
                              show_progress=False)
    np.testing.assert_array_equal(cos_i, cosine_i)


def test_ivf_factory_trains_on_seeded_sample_and_is_exact_with_full_probe(vectors):
    index = ann.build_index(vectors, "IVF8,Flat", metric="l2", train_sample_size=400, seed=3)
    assert index.is_trained and index.ntotal == 500
    ann.set_search_parameter(index, "nprobe", 8)  # probe every list -> exhaustive
    _, indices = ann.knn_search(index, vectors[:20], k=5, show_progress=False)
    np.testing.assert_array_equal(indices, numpy_topk(vectors[:20], vectors, 5, "l2")[1])


def test_gpu_request_without_gpu_falls_back_to_cpu(vectors, caplog):
    caplog.set_level(logging.INFO, logger="scincl.knn.ann")
    index = ann.build_index(vectors, "Flat", device=0)
    assert not ann.is_gpu_index(index) or ann.gpu_available()
    if not ann.gpu_available():
        assert "has no GPU; using CPU" in caplog.text


def test_write_read_roundtrip_and_errors(vectors, tmp_path):
    index = ann.build_index(vectors, "Flat")
    ids = [f"p{i}" for i in range(len(vectors))]
    path = tmp_path / "flat.faiss"
    ann.write_index(index, path, ids, build_info={"string_factory": "Flat"})
    loaded, loaded_ids = ann.read_index(path)
    assert loaded_ids == ids and loaded.ntotal == 500
    assert ann.read_index_config(path)["string_factory"] == "Flat"
    with pytest.raises(InputError, match=r"k=501 is larger than the index \(500 vectors\)"):
        ann.knn_search(loaded, vectors[:2], k=501)
    with pytest.raises(InputError, match="k must be at least 1"):
        ann.knn_search(loaded, vectors[:2], k=0)
    with pytest.raises(InputError, match="queries have dimension 3 but the index has dimension 24"):
        ann.knn_search(loaded, np.zeros((2, 3), np.float32), k=1)
    with pytest.raises(InputError, match="499 paper ids for an index of 500 rows"):
        ann.write_index(index, tmp_path / "bad.faiss", ids[:-1])
    with pytest.raises(InputError, match="could not parse index string"):
        ann.build_index(vectors, "NoSuchIndex42")
    with pytest.raises(InputError, match="embeddings is empty"):
        ann.build_index(np.zeros((0, 4), np.float32))


def test_select_rows_subset_order_unknown_and_empty():
    ids = ["a", "b", "c", "d"]
    rows, kept = ann.select_rows(ids, ["c", "a", "c"])
    assert rows.tolist() == [2, 0] and kept == ["c", "a"]
    with pytest.raises(InputError, match=r"2 of 3 include_paper_ids have no embedding \(e.g. 'x', 'y'\)"):
        ann.select_rows(ids, ["a", "x", "y"])
    rows, kept = ann.select_rows(ids, ["a", "x"], allow_unknown_ids=True)
    assert kept == ["a"]
    with pytest.raises(InputError, match="subset is empty"):
        ann.select_rows(ids, [])
    with pytest.raises(InputError, match="item 1: duplicate paper id .a. .first at item 0."):
        ann.select_rows(["a", "a"])


def test_drop_self_matches():
    indices = np.array([[5, 1, 2], [3, 4, 9]])
    distances = np.array([[1.0, 0.5, 0.4], [0.9, 0.8, 0.1]], dtype=np.float32)
    d, i = ann.drop_self_matches(distances, indices, np.array([1, 7]), k=2)
    assert i.tolist() == [[5, 2], [3, 4]]  # row 0 drops itself; row 1 (self absent) drops the farthest
    np.testing.assert_allclose(d, [[1.0, 0.4], [0.9, 0.8]])


# ----------------------------------------------------------------------------------- CLI

@pytest.fixture(scope="module")
def embeddings_dir(tmp_path_factory, vectors):
    d = tmp_path_factory.mktemp("emb")
    write_embeddings_h5(d / "embeddings.h5", vectors)
    write_id_list(d / "entity_names_paper_id_0.json", [f"p{i}" for i in range(len(vectors))])
    return d


def test_cli_build_faiss_subset_and_get_knn(python_exe, repo_root, embeddings_dir, vectors, tmp_path):
    subset = [f"p{i}" for i in (7, 3, 100, 42, 0, 250, 499, 12)]
    write_id_list(tmp_path / "subset.json", subset)
    index_path = tmp_path / "idx" / "Flat.faiss"
    proc = run_front_end("cli_graph.py", "build_faiss", embeddings_dir / "embeddings.h5", index_path,
                         "--string_factory", "Flat", "--include_paper_ids", tmp_path / "subset.json", "--do_normalize",
                         "--batch_size", 3, "--workers", 1, "--device", -1)
    assert proc.returncode == 0, proc.stderr
    index, ids = ann.read_index(index_path)
    assert ids == subset  # row i of the index is the i-th id of the subset
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for row, pid in enumerate(ids):
        np.testing.assert_allclose(index.reconstruct(row), unit[int(pid[1:])], atol=1e-6)
    config = json.loads((tmp_path / "idx" / "Flat.faiss.faiss_config.json").read_text())
    assert config["do_normalize"] is True and config["ntotal"] == 8

    out = tmp_path / "knn"
    proc = run_front_end("cli_graph.py", "get_knn", index_path, out, "--k", 3)
    assert proc.returncode == 0, proc.stderr
    knn_ids = np.load(out / "knn_ids.npy")
    knn_indices = np.load(out / "knn_indices.npy")
    distances = np.load(out / "knn_distances.npy")
    assert read_id_list(out / "knn_query_ids.json") == subset
    assert knn_ids.shape == knn_indices.shape == distances.shape == (8, 3)
    sub = unit[[int(p[1:]) for p in subset]]
    sims = sub @ sub.T
    np.fill_diagonal(sims, -np.inf)  # self excluded
    expected = np.argsort(-sims, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(knn_indices, expected)
    assert knn_ids.tolist() == [[subset[j] for j in row] for row in expected]
    assert np.all(np.diff(distances, axis=1) <= 1e-6)

    proc = run_front_end("cli_graph.py", "get_knn", index_path, out, "--k", 8)  # 8 + self > 8 rows
    assert proc.returncode == 2
    assert "k=8 (+1 for the query itself) is larger than the index (8 vectors)" in proc.stderr


def test_cli_build_faiss_errors(python_exe, repo_root, embeddings_dir, tmp_path):
    write_id_list(tmp_path / "short_ids.json", ["p0", "p1"])
    write_id_list(tmp_path / "unknown.json", ["p1", "nope"])
    write_id_list(tmp_path / "empty.json", [])
    emb = embeddings_dir / "embeddings.h5"
    cases = [
        (["--paper_ids", tmp_path / "short_ids.json"], "500 embedding rows but 2 paper ids"),
        (["--include_paper_ids", tmp_path / "unknown.json"], "1 of 2 include_paper_ids have no embedding (e.g. 'nope')"),
        (["--include_paper_ids", tmp_path / "empty.json"], "the paper id subset is empty"),
    ]
    for extra, message in cases:
        proc = run_front_end("cli_graph.py", "build_faiss", emb, tmp_path / "x.faiss", *extra)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("cli_graph.py: error:")
        assert message in proc.stderr
    assert not (tmp_path / "x.faiss").exists()


def test_build_index_workers_leave_the_shared_openmp_thread_count_alone(vectors):
    """faiss and torch share one OpenMP runtime: --workers must not change torch's threads afterwards.

    Each count is compared with its own value before: an earlier test that set torch's threads
    (torch.set_num_threads) leaves faiss's OpenMP count where it was, so the two may differ at the start.
    """
    import faiss
    import torch

    before, faiss_before = torch.get_num_threads(), faiss.omp_get_max_threads()
    with ann.faiss_threads(1):
        assert faiss.omp_get_max_threads() == 1
    ann.build_index(vectors, workers=1)
    assert torch.get_num_threads() == before
    assert faiss.omp_get_max_threads() == faiss_before
