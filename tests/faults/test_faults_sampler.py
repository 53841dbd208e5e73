"""Issue 41, class 9: every sampling path of the kNN miner checked against a brute-force reference.

``get_knn_triples`` runs on 60 papers with random 8-d graph vectors; the reference ranks every paper's neighbours
by a float64 dot product (the miner's ``inner_product`` without normalisation; the vectors are drawn so that no
two similarities of a query are closer than 1e-4, so float32 search cannot reorder them). Each strategy of
Appendix A.7 and each band shape (count = width, wider than the count, starting at n_1, ending at n_{N-1}, every
slot of both roles), both backends (FAISS, exact) and both k scales are checked: a band's ids must be the
reference ranks ``(k_min, k_max]`` (all of them, in order, when the band is as wide as its count; drawn inside it,
covering both ends over the queries, when wider), so a sampler that shifts its neighbour columns by one fails.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

from scincl.io import write_embeddings_h5, write_id_list
from scincl.triples.knn_miner import get_knn_triples

N, DIM = 60, 8


def _separated_vectors() -> np.ndarray:
    for seed in range(100):
        vectors = np.random.default_rng(seed).normal(size=(N, DIM)).astype(np.float32)
        sims = np.sort(vectors.astype(np.float64) @ vectors.T.astype(np.float64), axis=1)
        if np.diff(sims, axis=1).min() > 1e-4:
            return vectors
    raise AssertionError("no well-separated vectors")


VECTORS = _separated_vectors()
SIMS = VECTORS.astype(np.float64) @ VECTORS.T.astype(np.float64)
IDS = [f"p{i:02d}" for i in range(N)]
ROW = {pid: i for i, pid in enumerate(IDS)}
# RANKS[q] = the rows of n_1 .. n_{N-1} of query q, nearest first (the query itself left out)
RANKS = np.array([[r for r in np.argsort(-SIMS[q], kind="stable") if r != q] for q in range(N)])


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> Tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sampler_graph")
    write_id_list(root / "ids.json", IDS)
    write_embeddings_h5(root / "emb.h5", VECTORS)
    return root / "ids.json", root / "emb.h5"


def mine(graph, tmp_path: Path, **flags) -> Dict[int, Tuple[List[int], List[int]]]:
    """``{query row: (positive rows, negative rows)}`` of get_knn_triples' CSV (slot order within each list)."""
    ids, embeddings = graph
    flags = {"ann_metric": "inner_product", "ann_normalize_embeddings": False, "show_progress": False, **flags}
    out = get_knn_triples(tmp_path / "t.csv", ids, embeddings, **flags)
    mined: Dict[int, Tuple[List[int], List[int]]] = {}
    with open(out) as fh:
        for row in csv.DictReader(fh):
            positives, negatives = mined.setdefault(ROW[row["query_paper_id"]], ([], []))
            positives.append(ROW[row["positive_id"]])
            negatives.append(ROW[row["negative_id"]])
    assert len(mined) == N
    return mined


def band_of(query: int, k_min: int, k_max: int) -> List[int]:
    """The reference rows n_{k_min+1} .. n_{k_max} of ``query``."""
    return list(RANKS[query, k_min:k_max])


def check_band(mined, role: int, columns: slice, k_min: int, k_max: int) -> None:
    """Every query's ``columns`` of ``role`` (0 positives, 1 negatives) are the band: in order when it is as wide as
    the count; else distinct members of it, and over all queries both of its ends are drawn."""
    count = columns.stop - columns.start
    ranks_drawn = set()
    for query, rows in mined.items():
        drawn = rows[role][columns]
        band = band_of(query, k_min, k_max)
        if k_max - k_min == count:
            assert drawn == band, (query, drawn, band)
        else:
            assert len(set(drawn)) == count and set(drawn) <= set(band), (query, drawn, band)
        ranks_drawn.update(band.index(r) for r in drawn)
    assert ranks_drawn == set(range(k_max - k_min)) if k_max - k_min > count else True


@pytest.mark.parametrize("backend", ["faiss", "exact"])
def test_knn_bands_as_wide_as_their_count_are_exactly_the_reference_ranks(graph, tmp_path, backend):
    mined = mine(graph, tmp_path, ann_backend=backend, triples_per_query=5, easy_positives_count=5,
                 easy_positives_k_max=10, easy_negatives_count=3, easy_negatives_strategy="knn",
                 easy_negatives_k_min=56, easy_negatives_k_max=59, hard_negatives_count=2, hard_negatives_k_max=42)
    check_band(mined, 0, slice(0, 5), 5, 10)
    check_band(mined, 1, slice(0, 3), 56, 59)  # the band that ends at the last neighbour
    check_band(mined, 1, slice(3, 5), 40, 42)


@pytest.mark.parametrize("backend", ["faiss", "exact"])
def test_knn_bands_wider_than_their_count_draw_inside_the_reference_band(graph, tmp_path, backend):
    mined = mine(graph, tmp_path, ann_backend=backend, triples_per_query=5, easy_positives_count=5,
                 easy_positives_k_min=3, easy_positives_k_max=15, easy_negatives_count=2,
                 easy_negatives_strategy="knn", easy_negatives_k_min=0, easy_negatives_k_max=4,
                 hard_negatives_count=3, hard_negatives_k_min=30, hard_negatives_k_max=59)
    check_band(mined, 0, slice(0, 5), 3, 15)
    check_band(mined, 1, slice(0, 2), 0, 4)  # starts at n_1
    check_band(mined, 1, slice(2, 5), 30, 59)  # ends at n_{N-1}


def test_every_slot_of_both_roles_draws_from_its_own_band(graph, tmp_path):
    mined = mine(graph, tmp_path, triples_per_query=6,
                 easy_positives_count=1, easy_positives_k_min=0, easy_positives_k_max=2,
                 medium_positives_count=2, medium_positives_strategy="knn", medium_positives_k_min=4,
                 medium_positives_k_max=6, hard_positives_count=3, hard_positives_strategy="knn",
                 hard_positives_k_min=8, hard_positives_k_max=20,
                 easy_negatives_count=2, easy_negatives_strategy="knn", easy_negatives_k_min=50,
                 easy_negatives_k_max=58, medium_negatives_count=1, medium_negatives_strategy="knn",
                 medium_negatives_k_min=30, medium_negatives_k_max=31, hard_negatives_count=3,
                 hard_negatives_k_min=24, hard_negatives_k_max=27)
    check_band(mined, 0, slice(0, 1), 0, 2)
    check_band(mined, 0, slice(1, 3), 4, 6)
    check_band(mined, 0, slice(3, 6), 8, 20)
    check_band(mined, 1, slice(0, 2), 50, 58)
    check_band(mined, 1, slice(2, 3), 30, 31)
    check_band(mined, 1, slice(3, 6), 24, 27)


def test_the_corpus_k_scale_draws_from_the_bands_it_computes(graph, tmp_path):
    from scincl.triples.k_scale import corpus_k

    bands = corpus_k(N, 3, 1)
    mined = mine(graph, tmp_path, k_scale="corpus", triples_per_query=3, easy_positives_count=3,
                 easy_negatives_count=2, hard_negatives_count=1, easy_negatives_strategy="random_without_knn")
    check_band(mined, 0, slice(0, 3), bands["easy_positives_k_min"], bands["easy_positives_k_max"])
    check_band(mined, 1, slice(2, 3), bands["hard_negatives_k_min"], bands["hard_negatives_k_max"])


def test_random_strategies_against_the_reference(graph, tmp_path):
    """random: never the query, distinct; random_without_knn: never one of n_1 .. n_K (K = the widest kNN band)."""
    mined = mine(graph, tmp_path, triples_per_query=4, easy_positives_count=4, easy_positives_k_max=4,
                 easy_negatives_count=2, easy_negatives_strategy="random", hard_negatives_count=2,
                 hard_negatives_strategy="random_without_knn", hard_negatives_k_max=4, medium_negatives_count=0)
    check_band(mined, 0, slice(0, 4), 0, 4)
    drawn_random = set()
    for query, (_, negatives) in mined.items():
        assert query not in negatives and len(set(negatives[:2])) == 2 and len(set(negatives[2:])) == 2
        assert not set(negatives[2:]) & set(band_of(query, 0, 4))  # K = 4: the widest band using the kNN matrix
        drawn_random.update(negatives)
    assert len(drawn_random) > N // 2  # drawn across the corpus, not from a fixed few


@pytest.mark.parametrize("strategy", ["random_sorted", "random_without_knn_sorted"])
def test_sorted_random_with_the_whole_pool_is_the_reference_extremes(graph, tmp_path, strategy):
    """With ``random_sorted_sample_n`` = the whole pool the draw is deterministic: negatives are the least similar
    papers, positives the most similar ones (outside n_1 .. n_K for the *_without_knn* variant)."""
    knn_k = 6
    pool = N - 1 - (knn_k if strategy == "random_without_knn_sorted" else 0)
    mined = mine(graph, tmp_path, triples_per_query=2, easy_positives_count=2, easy_positives_strategy=strategy,
                 easy_positives_k_max=knn_k, easy_negatives_count=1, easy_negatives_strategy=strategy,
                 easy_negatives_k_max=knn_k, hard_negatives_count=1,
                 hard_negatives_k_min=knn_k - 1, hard_negatives_k_max=knn_k, random_sorted_sample_n=pool)
    for query, (positives, negatives) in mined.items():
        skip = knn_k if strategy == "random_without_knn_sorted" else 0
        assert positives == band_of(query, skip, skip + 2), query  # most similar first
        assert negatives[0] == RANKS[query, -1], query  # the least similar
        assert negatives[1] == RANKS[query, knn_k - 1], query


def test_range_against_the_reference_threshold(graph, tmp_path):
    """range: the papers above the threshold, the count farthest of them (farthest first)."""
    threshold = next(t for t in np.linspace(0.5, 3.0, 251)
                     if np.abs(SIMS - t).min() > 1e-3 and ((SIMS > t).sum(axis=1) - 1).min() >= 3)
    mined = mine(graph, tmp_path, triples_per_query=2, easy_positives_count=2, easy_positives_strategy="range",
                 easy_positives_range=float(threshold), min_range_results_count=0, range_fallback_to_random=False,
                 easy_negatives_count=1, easy_negatives_strategy="random", hard_negatives_count=1,
                 hard_negatives_k_max=3)
    for query, (positives, _) in mined.items():
        within = [r for r in RANKS[query] if SIMS[query, r] > threshold]
        assert positives == within[::-1][:2], (query, positives, within)


def test_kmeans_draws_one_paper_from_each_cluster_of_its_band(graph, tmp_path):
    """kmeans: the i-th draw is a member of the i-th cluster of the band (k_min, k_max] of the query's cluster order
    (the clusters as the miner builds them: cluster_corpus over the same vectors and seed)."""
    from scincl.triples.miner import cluster_corpus

    clusters = cluster_corpus(VECTORS, 8, metric="inner_product", seed=0)
    mined = mine(graph, tmp_path, triples_per_query=3, easy_positives_count=3, easy_positives_k_max=3,
                 easy_negatives_count=3, easy_negatives_strategy="kmeans", easy_negatives_k_min=2,
                 easy_negatives_k_max=5, k_means_clusters=8, hard_negatives_count=0)
    for query, (_, negatives) in mined.items():
        band = list(clusters.cluster_order[clusters.assignment[query], 2:5])
        assert [clusters.assignment[r] for r in negatives] == band and query not in negatives, query
