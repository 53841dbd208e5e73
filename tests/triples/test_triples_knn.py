"""SciNCL kNN triple mining: exact neighbour bands, strategies, determinism, errors, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.io import iter_triples_csv, read_id_list, read_json, write_embeddings_h5, write_id_list
from scincl.triples import strategies as st
from scincl.triples.collisions import collision_counts
from scincl.triples.miner import make_config
from scincl.triples.knn_miner import get_knn_triples
from scincl.triples.margins import collision_sweep
from scincl.triples.miner import Corpus, cluster_corpus, mine_knn_triples
from tests.conftest import run_command

ARC_PAPERS = 100


def arc_ids(n: int = ARC_PAPERS):
    return [f"p{i:03d}" for i in range(n)]


@pytest.fixture(scope="module")
def arc_graph(tmp_path_factory):
    """Unit vectors on an arc: paper 0's neighbours by cosine are exactly 1, 2, 3, ... (99's: 98, 97, ...)."""
    root = tmp_path_factory.mktemp("arc")
    theta = np.arange(ARC_PAPERS) * (np.pi / 200)
    emb = np.stack([np.cos(theta), np.sin(theta)], axis=1).astype(np.float32)
    write_embeddings_h5(root / "embeddings.h5", emb)
    write_id_list(root / "entity_names_paper_id_0.json", arc_ids())
    write_id_list(root / "queries.json", ["p000", "p099"])
    return root


def arc_triples(root: Path, out: Path, **kwargs):
    defaults = dict(query_papers=str(root / "queries.json"), easy_positives_k_min=20, easy_positives_k_max=25,
                    hard_negatives_k_min=58, hard_negatives_k_max=60, show_progress=False)
    defaults.update(kwargs)
    path = get_knn_triples(out, root / "entity_names_paper_id_0.json", root / "embeddings.h5",
                           ann_index_path=out.parent / "arc.faiss", override=True, **defaults)
    return list(iter_triples_csv(path))


def test_exact_neighbour_bands_and_easy_negatives_outside_knn(arc_graph, tmp_path):
    triples = arc_triples(arc_graph, tmp_path / "t.csv")
    assert len(triples) == 10
    by_query = {}
    for q, p, n in triples:
        by_query.setdefault(q, ([], []))[0].append(p)
        by_query[q][1].append(n)
    # positives n_21..n_25, hard negatives n_59, n_60 (paper: n_{k-c+1} .. n_k, the query excluded)
    assert by_query["p000"][0] == ["p021", "p022", "p023", "p024", "p025"]
    assert by_query["p099"][0] == ["p078", "p077", "p076", "p075", "p074"]
    assert by_query["p000"][1][3:] == ["p059", "p060"]
    assert by_query["p099"][1][3:] == ["p040", "p039"]
    # easy negatives (random_without_knn) lie beyond n_60 and are distinct
    easy0 = [int(x[1:]) for x in by_query["p000"][1][:3]]
    easy99 = [99 - int(x[1:]) for x in by_query["p099"][1][:3]]
    assert min(easy0) > 60 and min(easy99) > 60
    assert len(set(easy0)) == 3 and len(set(easy99)) == 3


def test_other_strategies_by_name(arc_graph, tmp_path):
    out = tmp_path / "s.csv"
    wide = arc_triples(arc_graph, out, easy_positives_k_min=10, easy_positives_k_max=30)
    ranks = [int(p[1:]) for q, p, _ in wide if q == "p000"]
    assert len(set(ranks)) == 5 and all(10 < r <= 30 for r in ranks)  # interval wider than c: sampled
    sorted_neg = arc_triples(arc_graph, out, easy_negatives_strategy="random_without_knn_sorted",
                             random_sorted_sample_n=39)
    # 39 = every paper outside n_1..n_60: the 3 least similar are the farthest on the arc
    assert [n for q, _, n in sorted_neg if q == "p000"][:3] == ["p099", "p098", "p097"]
    # similarity threshold: cos > cos(30 steps) keeps n_1..n_29 (+ the query); the farthest two of them
    ranged = arc_triples(arc_graph, out, hard_negatives_strategy="range", hard_negatives_range=float(
        np.cos(29.5 * np.pi / 200)), min_range_results_count=0)
    assert [n for q, _, n in ranged if q == "p000"][3:] == ["p029", "p028"]


def test_kmeans_negatives_come_from_clusters_ranked_inside_the_band(arc_graph, tmp_path):
    clustered = arc_triples(arc_graph, tmp_path / "k.csv", easy_negatives_strategy="kmeans", easy_negatives_k_min=2,
                            easy_negatives_k_max=5, k_means_clusters=10)
    assert len(clustered) == 10 and all(n != q for q, _, n in clustered)
    # the clusters of the arc are contiguous runs of papers: rank them by the distance of their mean
    # position to the query's cluster (own cluster = rank 1); each of the 3 easy (k-means) negatives
    # of a query (its first 3; the last 2 are the hard n_59, n_60) has a cluster rank in (2, 5]
    theta = np.arange(ARC_PAPERS) * (np.pi / 200)
    vectors = np.stack([np.cos(theta), np.sin(theta)], axis=1).astype(np.float32)
    assignment = cluster_corpus(vectors, 10, seed=0).assignment
    centre = {c: np.mean(np.flatnonzero(assignment == c)) for c in set(assignment.tolist())}
    ranks_by_query = {}
    for q, _, n in clustered:
        own = assignment[int(q[1:])]
        ranking = sorted(centre, key=lambda c: (abs(centre[c] - centre[own]), c))
        ranks_by_query.setdefault(q, []).append(ranking.index(assignment[int(n[1:])]) + 1)
    # 3 negatives from 3 clusters of ranks 3, 4, 5: one from each
    assert {q: sorted(r[:3]) for q, r in ranks_by_query.items()} == {"p000": [3, 4, 5], "p099": [3, 4, 5]}


def test_include_paper_ids_limits_the_corpus(arc_graph, tmp_path):
    subset = [f"p{i:03d}" for i in range(0, ARC_PAPERS, 2)] + ["not-in-graph"]
    rows = arc_triples(arc_graph, tmp_path / "sub.csv", include_paper_ids=subset, query_papers=["p000"],
                       easy_positives_k_min=5, easy_positives_k_max=10, hard_negatives_k_min=28,
                       hard_negatives_k_max=30)
    assert [p for _, p, _ in rows] == ["p012", "p014", "p016", "p018", "p020"]  # n_6..n_10 among even papers
    assert [n for _, _, n in rows][3:] == ["p058", "p060"]
    assert all(int(n[1:]) % 2 == 0 and int(n[1:]) > 60 for _, _, n in rows[:3])
    with pytest.raises(InputError, match=r"arc.faiss: the existing index was made differently: it holds 50 papers, "
                                         r"not the 10 of this corpus .*; pass --override to rebuild it"):
        get_knn_triples(tmp_path / "other.csv", arc_graph / "entity_names_paper_id_0.json",
                        arc_graph / "embeddings.h5", ann_index_path=tmp_path / "arc.faiss",
                        include_paper_ids=subset[:10], hard_negatives_k_min=3, hard_negatives_k_max=5,
                        easy_positives_k_min=0, easy_positives_k_max=5)  # bands that fit 10 papers (checked first)


def test_index_built_for_another_id_set_is_refused_then_rebuilt_with_override(arc_graph, tmp_path):
    """Issue 16: an --ann_index_path built for a subset was reused for the whole graph (fewer triples)."""
    subset = [f"p{i:03d}" for i in range(20)]
    arc_triples(arc_graph, tmp_path / "sub.csv", include_paper_ids=subset, query_papers=["p000"],
                easy_positives_k_min=2, easy_positives_k_max=7, hard_negatives_k_min=12, hard_negatives_k_max=14)
    args = dict(ann_index_path=tmp_path / "arc.faiss", query_papers=str(arc_graph / "queries.json"),
                show_progress=False, easy_positives_k_min=20, easy_positives_k_max=25, hard_negatives_k_min=58,
                hard_negatives_k_max=60)
    ids, emb = arc_graph / "entity_names_paper_id_0.json", arc_graph / "embeddings.h5"
    with pytest.raises(InputError, match="it holds 20 papers, not the 100 of this corpus"):
        get_knn_triples(tmp_path / "all.csv", ids, emb, **args)
    assert not (tmp_path / "all.csv").exists()
    path = get_knn_triples(tmp_path / "all.csv", ids, emb, override=True, **args)
    assert len(list(iter_triples_csv(path))) == 10  # every query of the whole graph (2 queries x 5)
    assert len(read_id_list(str(tmp_path / "arc.faiss") + ".paper_ids.json")) == 100
    assert get_knn_triples(tmp_path / "all.csv", ids, emb, **args) == path  # same inputs and settings: reused
    with pytest.raises(InputError, match=r"all.csv: exists but was made differently: setting seed differs "
                                         r"\(made with 0, now 1\); pass --override to rebuild it"):
        get_knn_triples(tmp_path / "all.csv", ids, emb, seed=1, **args)


def test_index_with_other_normalisation_is_not_reused(arc_graph, tmp_path):
    ids, emb = arc_graph / "entity_names_paper_id_0.json", arc_graph / "embeddings.h5"
    arc_triples(arc_graph, tmp_path / "t.csv")  # builds arc.faiss normalised (the default)
    with pytest.raises(InputError, match="do_normalize True, not False"):
        get_knn_triples(tmp_path / "n.csv", ids, emb, ann_index_path=tmp_path / "arc.faiss",
                        ann_normalize_embeddings=False, query_papers=str(arc_graph / "queries.json"),
                        show_progress=False, easy_positives_k_min=20, easy_positives_k_max=25,
                        hard_negatives_k_min=58, hard_negatives_k_max=60)


def test_drop_self_handles_query_not_first_or_absent():
    raw = np.array([[7, 1, 2, 3], [1, 7, 2, 3], [1, 2, 3, 4]])
    queries = np.array([7, 7, 7])
    assert st.drop_self(queries, raw.copy()).tolist() == [[1, 2, 3], [1, 2, 3], [1, 2, 3]]


def test_random_without_knn_never_returns_a_knn_member():
    rng = np.random.default_rng(0)
    n_corpus, n_queries = 300, 400
    queries = rng.integers(0, n_corpus, n_queries)
    knn = np.stack([rng.permutation(np.setdiff1d(np.arange(n_corpus), [q]))[:250] for q in queries])
    out = st.random_rows(queries, n_corpus, 10, np.random.default_rng(1), exclude=knn)
    assert out.shape == (n_queries, 10) and (out >= 0).all()
    assert not st.rows_contain(out, knn).any()
    assert (out != queries[:, None]).all()
    assert all(len(set(row)) == 10 for row in out.tolist())
    with pytest.raises(st.NotEnoughCandidates, match="fewer than 60"):
        st.random_rows(queries, n_corpus, 60, rng, exclude=knn)  # only 49 papers left outside


def _clustered(n=1500, d=16, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(15, d)) * 3
    return (centres[rng.integers(0, 15, n)] + rng.normal(size=(n, d))).astype(np.float32)


def _brute_force(x):
    def search(rows, k):
        return np.argsort(-(x[rows] @ x.T), axis=1, kind="stable")[:, :k]
    return search


def test_no_self_pairs_and_no_collisions_with_a_large_margin():
    x = _clustered()
    queries = np.arange(len(x))
    nn = st.drop_self(queries, _brute_force(x)(queries, 1001))
    sweep = {r["k_hard_negatives"]: r for r in collision_sweep(queries, nn, len(x), [10], [12, 1000], seed=0)}
    assert sweep[1000]["self_pairs"] == 0 and sweep[12]["self_pairs"] == 0
    assert sweep[1000]["collisions"] == 0 and sweep[1000]["symmetric_collisions"] == 0
    assert sweep[12]["symmetric_collisions"] > 0  # margin 2: kNN asymmetry makes a pair both positive and negative
    config = make_config(easy_positives_k_min=0, easy_positives_k_max=5, hard_negatives_k_min=98,
                         hard_negatives_k_max=100, easy_negatives_strategy="random")
    mined = mine_knn_triples(queries, Corpus(len(x)), config, _brute_force(x), seed=3, show_progress=False)
    counts = collision_counts(mined.query_rows, mined.positive_rows, mined.negative_rows)
    assert counts["self_pairs"] == 0 and counts["triples"] == 5 * len(x)


def test_same_seed_same_bytes_for_any_worker_count(tmp_path):
    x = _clustered(n=2300)  # > 2 blocks of queries
    ids = [f"w{i}" for i in range(len(x))]
    write_embeddings_h5(tmp_path / "e.h5", x)
    write_id_list(tmp_path / "ids.json", ids)
    outputs = []
    for workers in (1, 2):
        out = get_knn_triples(tmp_path / f"w{workers}.csv", tmp_path / "ids.json", tmp_path / "e.h5",
                              ann_index_path=tmp_path / "idx.faiss", hard_negatives_k_min=198,
                              hard_negatives_k_max=200, workers=workers, seed=7, gzip=True, show_progress=False)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    other_seed = get_knn_triples(tmp_path / "s8.csv", tmp_path / "ids.json", tmp_path / "e.h5",
                                 ann_index_path=tmp_path / "idx.faiss", hard_negatives_k_min=198,
                                 hard_negatives_k_max=200, seed=8, gzip=True, show_progress=False)
    assert other_seed.read_bytes() != outputs[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(query_papers=["p000", "nope1", "nope2"]), "2 of 3 query papers are not in the index"),
    (dict(hard_negatives_k_max=200, hard_negatives_k_min=198), "hard_negatives_k_max=200 is beyond the index"),
    (dict(query_papers=[]), "query paper list is empty"),
    (dict(easy_negatives_count=2), "negatives counts must add up to --triples_per_query=5"),
    (dict(easy_negatives_strategy="nearest"), "'nearest' is unknown"),
    (dict(easy_positives_k_min=20, easy_positives_k_max=22), "holds 2 neighbours, fewer than the count 5"),
    # 100 papers, 98 neighbours excluded: one paper is left for 3 easy negatives; the error says what to change
    # (issue 41: before the index is built)
    (dict(hard_negatives_k_min=96, hard_negatives_k_max=98), r"--easy_negatives_strategy random_without_knn: only "
     r"1 papers to draw 3 distinct random ones from .*or --k_scale corpus to size the bands"),
])
def test_bad_inputs_are_clear_errors(arc_graph, tmp_path, kwargs, message):
    with pytest.raises(InputError, match=message):
        arc_triples(arc_graph, tmp_path / "bad.csv", **kwargs)


def test_cli_writes_triples_and_reports_bad_input(arc_graph, tmp_path, python_exe):
    out = tmp_path / "cli.csv"
    base = [python_exe, "cli_triples.py", "get_knn_triples", str(out),
            "--graph_paper_ids_path", str(arc_graph / "entity_names_paper_id_0.json"),
            "--graph_embeddings_path", str(arc_graph / "embeddings.h5"),
            "--easy_positives_k_min", "20", "--easy_positives_k_max", "25",
            "--hard_negatives_k_min", "58", "--hard_negatives_k_max", "60", "--gzip", "--seed", "1"]
    done = run_command(base + ["--query_papers", "0.1"])
    assert done.returncode == 0, done.stderr
    rows = list(iter_triples_csv(tmp_path / "cli.csv.gz"))
    assert len(rows) == 50 and len({q for q, _, _ in rows}) == 10
    assert json.loads((tmp_path / "cli.csv.gz.args.json").read_text())["stats"]["triples"] == 50
    assert (tmp_path / "cli.csv.gz.faiss").exists() and (tmp_path / "cli.csv.gz.faiss.paper_ids.json").exists()
    bad = run_command(base + ["--override", "--hard_negatives_k_max", "500"])
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == (
        "cli_triples.py: error: --hard_negatives_k_max=500 is beyond the index: it holds 100 papers, "
        "so a query has at most 99 neighbours")


def test_get_knn_triples_and_run_specter_share_one_normalisation_default():
    import inspect

    import cli_triples
    from scincl.settings.run import RunSettings, RunSpec
    from scincl.triples.config import DEFAULT_ANN_NORMALIZE_EMBEDDINGS
    from scincl.triples.knn_miner import get_knn_triples

    assert DEFAULT_ANN_NORMALIZE_EMBEDDINGS is True  # the original README's build_faiss --do_normalize
    for function in (get_knn_triples, cli_triples.get_knn_triples):
        assert inspect.signature(function).parameters["ann_normalize_embeddings"].default is True
    assert RunSettings(RunSpec()).ann_do_normalize is True


def test_one_sampler_for_every_triples_source(arc_graph, tmp_path):
    """sources.sampler: the kNN source's call with a built config and search writes get_knn_triples' triplets and
    record; the SPECTER-like source's call samples cited papers; an unknown source is one error line."""
    from scincl.triples.knn_miner import KnnSearch, args_path
    from scincl.triples.miner import make_config
    from scincl.triples.sources import sampler

    bands = dict(easy_positives_k_min=20, easy_positives_k_max=25, hard_negatives_k_min=58, hard_negatives_k_max=60)
    path = sampler("knn")(tmp_path / "k.csv", arc_graph / "entity_names_paper_id_0.json",
                          arc_graph / "embeddings.h5", make_config(**bands), KnnSearch(),
                          query_papers=str(arc_graph / "queries.json"), ann_index_path=tmp_path / "arc.faiss",
                          show_progress=False)
    assert list(iter_triples_csv(path)) == arc_triples(arc_graph, tmp_path / "t.csv")
    made_by = lambda p: json.loads(args_path(p).read_text())["made_by"]["settings"]
    assert made_by(path) == made_by(tmp_path / "t.csv")  # one record, whichever call built the config
    citations = tmp_path / "citations.tsv"
    citations.write_text("".join(f"q\t{t}\n" for t in "abcde") + "a\tx\nb\ty\nm\tn\no\ts\nu\tv\n")
    specter = sampler("specter_like")(citations, tmp_path / "s.csv")
    assert sorted(p for _, p, _ in iter_triples_csv(specter)) == list("abcde")
    with pytest.raises(InputError, match="--triples_source 'cites': choose one of knn, specter_like"):
        sampler("cites")


def test_continuous_cocitation_searches_as_the_thesis_and_scincl_search_is_the_other_reading(tmp_path):
    # query q = (1, 0); a01..a30 lie on q's ray far out (cosine 1, L2 distance 10..39); b01..b30 lie on
    # the unit circle close to q (L2 distance ~ angle, cosine < 1). The thesis' unnormalised IndexFlatL2
    # ranks the b's first, SciNCL's normalised inner product (= cosine) the a's.
    import inspect

    from scincl.triples.config import CONTINUOUS_COCITATION_HARD_NEGATIVES_K, CONTINUOUS_COCITATION_POSITIVES_K
    from scincl.triples.continuous_cocitation import get_continuous_cocitation_triples

    ids = ["q"] + [f"a{k:02d}" for k in range(1, 31)] + [f"b{k:02d}" for k in range(1, 31)]
    theta = np.arange(1, 31) * 0.01
    emb = np.vstack([[1.0, 0.0], np.stack([10.0 + np.arange(1, 31), np.zeros(30)], axis=1),
                     np.stack([np.cos(theta), np.sin(theta)], axis=1)]).astype(np.float32)
    write_embeddings_h5(tmp_path / "e.h5", emb)
    write_id_list(tmp_path / "ids.json", ids)
    write_id_list(tmp_path / "q.json", ["q"])
    bands = dict(query_papers=str(tmp_path / "q.json"), easy_positives_k_min=0, easy_positives_k_max=5,
                 hard_negatives_k_min=8, hard_negatives_k_max=10, show_progress=False, override=True)
    thesis = get_continuous_cocitation_triples(tmp_path / "t.csv", tmp_path / "ids.json", tmp_path / "e.h5",
                                               ann_index_path=tmp_path / "l2.faiss", **bands)
    scincl = get_knn_triples(tmp_path / "s.csv", tmp_path / "ids.json", tmp_path / "e.h5",
                             ann_index_path=tmp_path / "ip.faiss", **bands)
    thesis_rows, scincl_rows = list(iter_triples_csv(thesis)), list(iter_triples_csv(scincl))
    assert [p for _, p, _ in thesis_rows] == ["b01", "b02", "b03", "b04", "b05"]  # nearest in L2
    assert [n for _, _, n in thesis_rows][3:] == ["b09", "b10"]
    assert {p for _, p, _ in scincl_rows} <= {f"a{k:02d}" for k in range(1, 31)}  # cosine 1: the ray
    recorded = json.loads(Path(f"{thesis}.args.json").read_text())
    assert (recorded["ann_metric"], recorded["ann_normalize_embeddings"]) == ("l2", False)
    defaults = {n: p.default for n, p in inspect.signature(get_continuous_cocitation_triples).parameters.items()}
    assert (defaults["easy_positives_k_max"], defaults["hard_negatives_k_max"]) == (25, 5000)  # thesis "CoCite 25-5000"
    assert (defaults["ann_metric"], defaults["ann_normalize_embeddings"]) == ("l2", False)  # IndexFlatL2
    assert (CONTINUOUS_COCITATION_POSITIVES_K, CONTINUOUS_COCITATION_HARD_NEGATIVES_K) == (25, 5000)
    with pytest.raises(InputError, match="--k_scale corpus scales SciNCL's k/N shares"):
        get_continuous_cocitation_triples(tmp_path / "x.csv", tmp_path / "ids.json", tmp_path / "e.h5", k_scale="corpus")


def test_collision_advisor_recommends_a_collision_free_row_on_the_demo(demo_biggraph, tmp_path):
    """`sweep_collision_margins` on the demo graph: the recommended row has no collision of either kind
    (the table's symmetric ones included), while the smallest margin of the grid has some."""
    import cli_triples
    from scincl.knn.papers import build_faiss
    from scincl.triples.margins import recommended_rows, row_collisions

    graph = demo_biggraph["dir"]
    build_faiss(str(graph / "embeddings.h5"), str(tmp_path / "index.faiss"), string_factory="Flat",
                metric="inner_product", do_normalize=True, paper_ids=str(graph / "entity_names_paper_id_0.json"),
                workers=1, override=True)
    printed = cli_triples.sweep_collision_margins(  # the text the command prints
        str(graph / "entity_names_paper_id_0.json"), str(graph / "embeddings.h5"), str(tmp_path / "index.faiss"),
        query_papers="all", positives_k=[25], hard_negatives_k=[27, 30, 50, 100, 250],
        output_path=str(tmp_path / "c.json"))
    rows = read_json(tmp_path / "c.json")
    assert rows[0]["symmetric_collisions"] > 0 and rows[0]["collisions"] == 0  # random_without_knn: only symmetric
    best = recommended_rows(rows)[25]
    assert row_collisions(best) == 0 and best["margin"] > rows[0]["margin"]
    smaller = [r for r in rows if r["margin"] < best["margin"]]
    assert all(row_collisions(r) > 0 for r in smaller)  # the smallest collision-free margin
    assert (f"--hard_negatives_k_min {best['k_hard_negatives'] - 2} --hard_negatives_k_max {best['k_hard_negatives']}"
            in printed.splitlines()[-1]) and "0 same-query + 0 symmetric collisions" in printed


@pytest.mark.parametrize("values, message", [
    ({"ann_batch_size": 0}, "--ann_batch_size 0: must be >= 1"),
    ({"ann_batch_size": 10.5}, "--ann_batch_size: expected an integer, got 10.5"),
    ({"faiss_nprobe": 0}, "--faiss_nprobe 0: must be >= 1"),
    ({"ann_metric": "manhattan"}, "--ann_metric 'manhattan': choose one of inner_product, l2, cosine"),
    ({"ann_normalize_embeddings": "no"}, "--ann_normalize_embeddings: expected true or false, got 'no'"),
])
def test_a_search_built_in_python_is_checked_like_its_flags(values, message):
    """KnnSearch is checked when built, by each field's type, range and choices (a batch of 0 reached the search)."""
    from scincl.triples.knn_miner import KnnSearch

    with pytest.raises(InputError) as err:
        KnnSearch(**values)
    assert message in str(err.value)
    assert KnnSearch(ann_device=0, faiss_nprobe=4).faiss_nprobe == 4
