"""Issue 30: ProNE / FastRP embed_graph on the demo citation graph — PBG's output files, usable by
build_faiss and the kNN miner, deterministic, rebuilt on a changed setting, better than random at
link prediction under PBG's protocol; and the equations checked against dense computations."""
from __future__ import annotations

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.graph.embed import embed_graph
from scincl.graph.embedders import EMBEDDERS, fastrp, prone
from scincl.graph.embedders.adjacency import Graph
from scincl.graph.embedders.settings import parse_settings
from scincl.io import read_embeddings_matrix, read_id_list

METHODS = sorted(EMBEDDERS)
DIM = 16


@pytest.fixture(scope="module")
def embedded(demo_citations, tmp_path_factory):
    """Each method once on the demo split (config demo: dot comparator, PBG's negatives)."""
    out = {}
    for method in METHODS:
        directory = tmp_path_factory.mktemp(f"embed_{method}")
        result = embed_graph(demo_citations["train"], directory, method=method, config="demo",
                             test_edges=demo_citations["test"], dimension=DIM)
        out[method] = (directory, result)
    return out


@pytest.mark.parametrize("method", METHODS)
def test_outputs_are_pbg_export_and_feed_faiss_and_miner(embedded, method, tmp_path):
    from scincl.knn.papers import build_faiss
    from scincl.io import iter_triples_csv, write_id_list
    from scincl.triples.knn_miner import get_knn_triples

    directory, result = embedded[method]
    ids = read_id_list(directory / "entity_names_paper_id_0.json")
    vectors = read_embeddings_matrix(directory / "embeddings.h5")
    assert vectors.shape == (len(ids), DIM) and len(set(ids)) == len(ids)
    assert np.isfinite(vectors).all() and (np.linalg.norm(vectors, axis=1) > 0).all()
    index = build_faiss(str(directory / "embeddings.h5"), str(tmp_path / "Flat.faiss"), do_normalize=True)
    assert read_id_list(index["paper_ids_path"]) == ids
    write_id_list(tmp_path / "queries.json", ids[:20])
    path = get_knn_triples(tmp_path / "triples.csv", directory / "entity_names_paper_id_0.json",
                           directory / "embeddings.h5", query_papers=str(tmp_path / "queries.json"),
                           easy_positives_k_min=0, easy_positives_k_max=5, hard_negatives_k_min=20,
                           hard_negatives_k_max=25, ann_index_path=tmp_path / "Flat.faiss", show_progress=False)
    triples = list(iter_triples_csv(path))
    assert len(triples) == 20 * 5 and {q for q, _, _ in triples} <= set(ids[:20])


@pytest.mark.parametrize("method", METHODS)
def test_link_prediction_beats_random(embedded, method):
    metrics = embedded[method][1]["metrics"]
    trained, random = metrics["trained"], metrics["random"]
    assert trained["count"] == random["count"] > 50
    assert trained["mrr"] > random["mrr"] + 0.1
    assert trained["auc"] > 0.7 > random["auc"]


@pytest.mark.parametrize("method", METHODS)
def test_deterministic_reused_and_rebuilt_on_a_changed_setting(embedded, method, demo_citations, tmp_path):
    directory, _ = embedded[method]
    first = read_embeddings_matrix(directory / "embeddings.h5")
    again = embed_graph(demo_citations["train"], tmp_path, method=method, config="demo", dimension=DIM)
    assert np.array_equal(read_embeddings_matrix(again["embeddings_path"]), first)  # same seed, same bytes
    assert embed_graph(demo_citations["train"], tmp_path, method=method, config="demo", dimension=DIM)["reused"]
    changed = "theta=1.0" if method == "prone" else "normalization_strength=-0.5"
    with pytest.raises(InputError, match="setting settings differs"):
        embed_graph(demo_citations["train"], tmp_path, method=method, config="demo", dimension=DIM, settings=changed)
    rebuilt = embed_graph(demo_citations["train"], tmp_path, method=method, config="demo", dimension=DIM,
                          settings=changed, override=True)
    assert not np.allclose(read_embeddings_matrix(rebuilt["embeddings_path"]), first)
    other_seed = embed_graph(demo_citations["train"], tmp_path / "seed1", method=method, config="demo",
                             dimension=DIM, seed=1)
    assert not np.allclose(read_embeddings_matrix(other_seed["embeddings_path"]), first)


def test_settings_are_range_checked_and_typed(tmp_path):
    assert parse_settings(fastrp.FastRPSettings, "iteration_weights=0,1,2 normalize_powers=false") == \
        fastrp.FastRPSettings(iteration_weights=(0.0, 1.0, 2.0), normalize_powers=False)
    with pytest.raises(InputError, match="normalization_strength"):
        parse_settings(fastrp.FastRPSettings, "normalization_strength=3")
    with pytest.raises(InputError, match="no setting 'beta'"):
        parse_settings(fastrp.FastRPSettings, "beta=-0.5")
    with pytest.raises(InputError, match="mu"):
        parse_settings(prone.ProNESettings, "mu=2.5")
    with pytest.raises(InputError, match="pbg takes its settings"):
        embed_graph(str(tmp_path / "x.tsv"), str(tmp_path / "out"), method="pbg", settings="theta=1")


def _ring_with_chords(n: int = 12) -> Graph:
    import scipy.sparse as sp

    edges = [(i, (i + 1) % n) for i in range(n)] + [(0, 6), (3, 9), (1, 5)]
    rows, cols = zip(*(edges + [(b, a) for a, b in edges]))
    adjacency = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, n))
    return Graph(ids=np.array([f"p{i}" for i in range(n)]), adjacency=adjacency)


def test_prone_propagation_is_the_papers_band_pass_filter():
    """ProNE §3.2: D^-1 A (I - g(L)) R with g(lambda) = exp(-1/2 [(lambda - mu)^2 - 1] theta), L = I - D^-1 A."""
    from scipy.linalg import expm

    graph = _ring_with_chords()
    n = graph.adjacency.shape[0]
    transition = graph.adjacency.toarray() / graph.degrees[:, None]
    laplacian = np.eye(n) - transition
    settings = prone.ProNESettings(chebyshev_order=30, mu=0.2, theta=0.5)
    filtered = expm(-0.5 * settings.theta * ((laplacian - settings.mu * np.eye(n)) @ (laplacian - settings.mu * np.eye(n))
                                             - np.eye(n)))
    r = np.random.default_rng(0).standard_normal((n, 4))
    expected = transition @ (r - filtered @ r)
    assert np.allclose(prone.propagate(graph, r, settings), expected, atol=1e-8)  # float64 in, float64 out
    assert np.allclose(prone.propagate(graph, r.astype(np.float32), settings), expected, atol=1e-4)


def test_prone_orthogonalize_is_the_thin_svd():
    m = np.random.default_rng(1).standard_normal((30, 5))
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    got = prone.orthogonalize(m)
    assert np.allclose(np.abs(got), np.abs(u * np.sqrt(s)), atol=1e-8)


def test_fastrp_is_algorithm_1():
    """N = sum_i a_i (D^-1 A)^i L R, L = diag((d_i / 2m)^beta), each power row-normalised (FastRP Alg. 1)."""
    graph = _ring_with_chords()
    settings = fastrp.FastRPSettings(iteration_weights=(0.5, 0.0, 2.0), normalization_strength=-0.5)
    n, dim = graph.adjacency.shape[0], 8
    transition = graph.adjacency.toarray() / graph.degrees[:, None]
    degrees = graph.degrees
    r = np.diag((degrees / degrees.sum()) ** -0.5) @ fastrp.projection(n, dim, 0.0, seed=3).toarray()
    powers = [transition @ r, transition @ transition @ r, transition @ transition @ transition @ r]
    unit = [p / np.linalg.norm(p, axis=1, keepdims=True).clip(1e-30) for p in powers]
    expected = 0.5 * unit[0] + 2.0 * unit[2]
    assert np.allclose(fastrp.embed(graph, dim, settings, seed=3), expected, atol=1e-5)
    blocked = fastrp.FastRPSettings(iteration_weights=(0.5, 0.0, 2.0), normalization_strength=-0.5, column_block=3)
    assert np.allclose(fastrp.embed(graph, dim, blocked, seed=3), expected, atol=1e-5)  # row norms over all blocks
    r_entries = fastrp.projection(10_000, 4, 0.0, seed=0).toarray()
    s = np.sqrt(10_000)
    assert set(np.unique(r_entries)) <= {-np.sqrt(s), 0.0, np.sqrt(s)}
    assert abs((r_entries != 0).mean() - 1 / s) < 0.003  # very sparse: density 1/s


def test_run_specter_graph_method_builds_the_graph_stage_with_it(demo_citations, tmp_path):
    import shutil

    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan

    flags = {"scidocs_dir": str(tmp_path), "s2orc_metadata_dir": "m", "base_model_name_or_path": "bert",
             "graph_method": "fastrp", "graph_method_settings": "normalization_strength=-0.5",
             "biggraph_overrides": "dimension=16"}
    plan = SciNCLPlan(settings_from_flags(str(tmp_path / "run"), flags))
    graph = {s.name: s for s in plan.stages()}["graph"]
    assert graph.settings["graph_method"] == "fastrp" and "embed_graph_run.json" in {p.name for p in graph.outputs}
    for split in ("train", "test"):
        getattr(plan.p, f"citations_{split}").parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(demo_citations[split], getattr(plan.p, f"citations_{split}"))
    graph.run()
    assert read_embeddings_matrix(plan.p.graph_embeddings).shape[1] == 16
    assert (plan.p.graph_dir / "link_prediction.json").exists()
    with pytest.raises(InputError, match="normalization_strength"):
        settings_from_flags(str(tmp_path / "bad"), {**flags, "graph_method_settings": "normalization_strength=4"})
    with pytest.raises(InputError, match="graph_method"):
        settings_from_flags(str(tmp_path / "bad"), {**flags, "graph_method": "node2vec"})


def test_graph_method_choices_are_pbg_then_the_registered_embedders():
    """--graph_method's choices are settings data (scincl/settings/choices.py), the embedders a registry: the same
    names in the same order, so a new embedder is also a new choice."""
    from scincl.graph.embed import GRAPH_METHODS
    from scincl.settings.choices import GRAPH_METHODS as CHOICES

    assert GRAPH_METHODS is CHOICES and CHOICES == ("pbg", *EMBEDDERS)
