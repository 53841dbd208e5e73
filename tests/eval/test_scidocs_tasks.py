"""SciDocs tasks: qrel tasks vs pytrec-eval-terrier, classification, recommendation, full-pool retrieval."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest

from scincl.eval.classification import C_GRID, ClassificationData, evaluate_classification_task, fit_and_score, \
    lightning_available
from scincl.eval.qrel_tasks import evaluate_qrel_task
from scincl.eval.recomm import PaperFeatures, ranking_metrics, train_ranker
from scincl.eval.retrieval import citation_recommendation_buckets, full_pool_retrieval, relevant_ranks
from scincl.scidocs_io import RecommClick
from scincl.errors import InputError


# ------------------------------------------------------------------------------- qrel tasks

def _official_per_query(qrels, embeddings):
    """The official pipeline: run file with str(np.round(-L2, 5)) scores, evaluated by pytrec_eval."""
    import pytrec_eval

    lines = []
    for qid, candidates in qrels.items():
        if qid not in embeddings:
            continue
        for pid in candidates:
            if pid in embeddings:
                score = -np.linalg.norm(np.array(embeddings[qid]) - np.array(embeddings[pid]))
                lines.append(f"{qid} 0 {pid} 0 {str(np.round(score, 5))} n/a")
    run = pytrec_eval.parse_run(io.StringIO("\n".join(lines)))
    qrel = pytrec_eval.parse_qrel(io.StringIO("\n".join(f"{q} 0 {p} {r}" for q, c in qrels.items() for p, r in c.items())))
    return pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg"}).evaluate(run)


def _random_task(seed: int, n_papers: int = 400, n_queries: int = 80, grid: int = 3):
    rng = np.random.default_rng(seed)
    ids = [f"p{i:04d}" for i in range(n_papers)]
    # coarse integer embeddings -> many exactly tied distances; float64 like the official loader
    embeddings = {p: rng.integers(0, grid, size=4).astype(np.float64) for p in ids}
    qrels = {}
    for q in range(n_queries):
        qid = ids[q]
        candidates = [c for c in rng.choice(ids[n_queries:], 30, replace=False)]
        qrels[qid] = {c: int(rel) for c, rel in zip(candidates, rng.permutation([1] * 5 + [0] * 25))}
    for pid in rng.choice(ids, n_papers // 8, replace=False):  # some queries and candidates lose embeddings
        embeddings.pop(pid)
    return qrels, embeddings


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_qrel_task_matches_pytrec_eval_on_random_data_with_ties(seed):
    qrels, embeddings = _random_task(seed)
    official = _official_per_query(qrels, embeddings)
    ours = evaluate_qrel_task(qrels, embeddings)
    assert ours["queries"] == len(official)
    assert ours["dropped_queries"] == len(qrels) - len(official) > 0
    assert ours["missing_candidates"] > 0
    for metric in ("map", "ndcg"):
        expected = np.round(100 * np.mean([v[metric] for v in official.values()]), 2)
        assert ours[metric] == pytest.approx(expected, abs=1e-9)


def test_qrel_task_per_query_values_match_pytrec_eval():
    from scincl.eval.qrel_tasks import candidate_scores, trec_map_ndcg

    qrels, embeddings = _random_task(5, n_queries=40)
    official = _official_per_query(qrels, embeddings)
    for qid, expected in official.items():
        pids = list(qrels[qid])
        valid = np.array([[p in embeddings for p in pids]])
        cands = np.array([[embeddings.get(p, np.zeros(4)) for p in pids]])
        scores = candidate_scores(np.array([embeddings[qid]]), cands, valid)
        order = np.array([[sorted(pids).index(p) for p in pids]])
        got = trec_map_ndcg(scores, order, np.array([[qrels[qid][p] for p in pids]]), valid)
        assert got["map"][0] == pytest.approx(expected["map"], abs=1e-12)
        assert got["ndcg"][0] == pytest.approx(expected["ndcg"], abs=1e-12)


def test_qrel_task_hand_computed_ties_and_missing_candidate():
    emb = {"q": np.array([0.0, 0.0]), "a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]),
           "c": np.array([3.0, 0.0])}
    # a and b tie at distance 1: trec_eval puts b (larger id) first; c is far; d has no embedding
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 1}, "missing_query": {"a": 1}}
    result = evaluate_qrel_task(qrels, emb)
    # ranking b, a, c: relevant at ranks 2 and 3, 3 relevant judged -> AP = (1/2 + 2/3) / 3
    assert result["map"] == round(100 * (0.5 + 2 / 3) / 3, 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert result["ndcg"] == round(100 * dcg / idcg, 2)
    assert (result["queries"], result["dropped_queries"], result["missing_candidates"]) == (1, 1, 1)


# ---------------------------------------------------------------------------- classification

def _write_labels(path, pids, labels):
    path.write_text("pid,class_label\n" + "".join(f"{p},{l}\n" for p, l in zip(pids, labels)))
    return path


def _separable_task(tmp_path, n_per_class=30, classes=3, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.eye(classes, dim) * 10
    emb, rows = {}, {"train": ([], []), "test": ([], [])}
    for c in range(classes):
        for i in range(n_per_class):
            pid = f"c{c}_{i}"
            emb[pid] = centers[c] + rng.normal(scale=0.5, size=dim)
            split = "train" if i < 2 * n_per_class // 3 else "test"
            rows[split][0].append(pid)
            rows[split][1].append(c)
    return (emb, _write_labels(tmp_path / "train.csv", *rows["train"]),
            _write_labels(tmp_path / "test.csv", *rows["test"]))


@pytest.mark.parametrize("backend", ["sklearn", "lightning"])
def test_classification_separable_toy_set_is_perfect(tmp_path, backend):
    if backend == "lightning" and not lightning_available():
        pytest.skip("sklearn-contrib-lightning not installed")
    emb, train_csv, test_csv = _separable_task(tmp_path)
    result = evaluate_classification_task(train_csv, test_csv, emb, backend=backend)
    assert result["f1"] == 100.0
    assert result["backend"] == backend
    assert result["C"] in set(C_GRID.tolist())
    assert (result["train"], result["eval"], result["missing_embeddings"]) == (60, 30, 0)


def test_classification_missing_embedding_is_a_zero_vector_predicting_lowest_label(tmp_path):
    emb, train_csv, test_csv = _separable_task(tmp_path)
    for pid in ("c1_25", "c2_25"):  # test papers of classes 1 and 2 lose their embeddings
        emb.pop(pid)
    result = evaluate_classification_task(train_csv, test_csv, emb, backend="sklearn")
    assert result["missing_embeddings"] == 2
    # zero vectors score 0 for every class -> argmax picks label 0: two class-0 false positives
    y_true = [0] * 10 + [1] * 10 + [2] * 10
    y_pred = [0] * 10 + [1] * 5 + [0] + [1] * 4 + [2] * 5 + [0] + [2] * 4
    from sklearn.metrics import f1_score
    assert result["f1"] == round(100 * f1_score(y_true, y_pred, average="macro"), 2)


def test_classification_grid_search_prefers_smaller_c_on_ties():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(5, 0.1, (12, 2)), rng.normal(-5, 0.1, (12, 2))])
    y = np.array([0] * 12 + [1] * 12)
    data = ClassificationData(x, y, 0)
    # every C separates these points perfectly: accuracy ties everywhere, the smallest C wins
    assert fit_and_score(data, data, backend="sklearn")["C"] == C_GRID[0]


def test_classification_unknown_label_is_a_clear_error(tmp_path):
    emb, train_csv, _ = _separable_task(tmp_path)
    bad = _write_labels(tmp_path / "bad.csv", ["c0_0", "c1_0"], [0, 7])
    with pytest.raises(InputError, match=r"bad\.csv.*unknown class label 7"):
        evaluate_classification_task(train_csv, bad, emb, backend="sklearn")


# ---------------------------------------------------------------------------- recommendation

class _CosineScorer:
    """A fixed ranker: the cosine feature (column 3) — makes the ranking metrics hand-checkable."""

    def __init__(self):
        import torch

        self.param = torch.nn.Parameter(torch.zeros(1))

    def parameters(self):
        return iter([self.param])

    def __call__(self, features):
        return features[:, 3:4]


def test_recommendation_metrics_are_propensity_weighted():
    emb = {"q": np.array([1.0, 0.0]), "best": np.array([1.0, 0.1]), "mid": np.array([1.0, 1.0]),
           "far": np.array([-1.0, 0.0]), "tie": np.array([1.0, 1.0])}
    features = PaperFeatures({}, emb)
    clicks = [RecommClick("q", "best", ["mid", "best", "far"]),  # clicked at position 2, ranked first
              RecommClick("q", "far", ["far", "mid", "best"]),  # clicked at position 1, two papers above
              RecommClick("q", "mid", ["tie", "mid"])]  # tie with "tie": ranked_above = 0.5
    propensities = [2.0, 1.0, 1.0]  # rescaled to mean 1: [1.5, .75, .75]
    got = ranking_metrics(_CosineScorer(), clicks, features, propensities)
    weights = np.array([1 / 0.75, 1 / 1.5, 1 / 0.75])
    ndcg = np.array([1.0, 1 / math.log2(4), 1 / math.log2(2.5)])
    p1 = np.array([1.0, 0.0, 0.0])
    assert got["adj-NDCG"] == round(100 * float(weights @ ndcg / weights.sum()), 2)
    assert got["adj-P@1"] == round(100 * float(weights @ p1 / weights.sum()), 2)
    assert got["ndcg"] == round(100 * float(ndcg.mean()), 2)
    assert got["clicks"] == 3


def _ranker_pairs(n, seed, flip=False):
    """(clicked, other) feature pairs whose clicked paper has the higher cosine (column 3) - or the lower."""
    rng = np.random.default_rng(seed)
    pos, neg = rng.uniform(0, 1, (n, 11)).astype(np.float32), rng.uniform(0, 1, (n, 11)).astype(np.float32)
    high, low = rng.uniform(0.6, 1.0, n), rng.uniform(-1.0, 0.4, n)
    pos[:, 3], neg[:, 3] = (low, high) if flip else (high, low)
    return pos, neg


def _ranker_accuracy(model, pairs):
    import torch

    with torch.no_grad():
        return float((model(torch.from_numpy(pairs[0])) > model(torch.from_numpy(pairs[1]))).float().mean())


def _margin_loss(model, pairs):
    import torch

    with torch.no_grad():
        pos, neg = model(torch.from_numpy(pairs[0])), model(torch.from_numpy(pairs[1]))
        return float(torch.clamp(0.1 - (pos - neg), min=0).mean())


@pytest.mark.usefixtures("one_torch_thread")
def test_recomm_ranker_learns_the_click_feature_and_is_seeded():
    import torch

    train, held_out = _ranker_pairs(600, 0), _ranker_pairs(300, 1)
    propensities = [0.4, 0.3, 0.2, 0.1, 0.1]
    model = train_ranker(train, None, propensities, device="cpu")
    assert not model.training
    assert _ranker_accuracy(model, held_out) >= 0.95  # the untrained scorer is at chance
    again = train_ranker(train, None, propensities, device="cpu")
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name  # seed 7 (official config): the same ranker every run


@pytest.mark.usefixtures("one_torch_thread")
def test_recomm_ranker_keeps_the_epoch_with_the_lowest_validation_loss(caplog):
    # validation clicks prefer the *lower* cosine: training makes them worse epoch by epoch
    train, val = _ranker_pairs(600, 0), _ranker_pairs(200, 2, flip=True)
    with caplog.at_level("INFO", logger="scincl.eval.recomm"):
        model = train_ranker(train, val, [0.4, 0.3, 0.2, 0.1, 0.1], device="cpu")
    logged = [float(r.getMessage().rsplit(" ", 1)[1]) for r in caplog.records if "validation loss" in r.getMessage()]
    assert len(logged) == 5 and logged[-1] > min(logged)  # the last epoch is not the best one
    weight = 0.1 / 0.22  # the loss is divided by the last rescaled propensity (module docstring)
    assert _margin_loss(model, val) / weight == pytest.approx(min(logged), abs=1e-5)


def test_recommendation_features_follow_the_official_reader():
    papers = {"q": {"title": "Graph neural networks", "authors": ["a1", "a2"], "references": ["r1", "r2"],
                    "cited_by": ["c1"], "year": 2015},
              "x": {"title": "Graph networks", "authors": ["a2"], "references": ["r2", "r3", "q"],
                    "cited_by": ["c1", "c2", "c3"], "year": 2005}}
    feats = PaperFeatures(papers, {"q": np.array([1.0, 0.0]), "x": np.array([0.0, 2.0])}).pair("q", "x")
    expected = [0.5, 0.0, 2 / 3, 0.0, 1 / 3, 1 / 4, 1.0, 0.0, 0.75, 0.5, math.log(4) / 10]
    np.testing.assert_allclose(feats, expected, rtol=1e-6)


# ---------------------------------------------------------------------------- full-pool retrieval

def test_full_pool_retrieval_hand_computed():
    ids = ["q", "a", "b", "c", "d"]
    emb = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.8, 0.3], [-1.0, 0.0]])
    # cosine ranking of q (self excluded): a, c, b, d -> relevant b at rank 3, c at rank 2, "zz" not in pool
    result = full_pool_retrieval(["q", "absent"], {"q": {"b", "c", "zz"}, "absent": {"a"}}, ids, emb, k=2)
    assert result["queries"] == 1.0
    assert result["map"] == round(100 * (1 / 2 + 2 / 3) / 3, 2)
    assert result["map@2"] == round(100 * (1 / 2) / 2, 2)
    assert result["ndcg@2"] == round(100 * (1 / math.log2(3)) / (1 + 1 / math.log2(3)), 2)
    assert result["recall@2"] == round(100 / 3, 2)
    assert result["precision@2"] == 50.0
    assert result["mrr"] == 50.0
    assert result["hits@2"] == 100.0


def test_full_pool_retrieval_gpu_path_degrades_to_cpu():
    rng = np.random.default_rng(3)
    ids = [str(i) for i in range(40)]
    emb = rng.normal(size=(40, 6)).astype(np.float32)
    relevant = {str(i): {str((i * 7 + 1) % 40), str((i * 3 + 2) % 40)} for i in range(10)}
    cpu = full_pool_retrieval(list(relevant), relevant, ids, emb, metric="l2")
    assert full_pool_retrieval(list(relevant), relevant, ids, emb, metric="l2", device="cuda") == cpu


@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
def test_full_pool_retrieval_torch_scorer_on_cpu_matches_numpy(metric):
    # any torch device other than the literal "cpu" (numpy's path) takes the torch scorer: "cpu:0" runs it here
    rng = np.random.default_rng(5)
    ids = [str(i) for i in range(60)]
    emb = rng.normal(size=(60, 5)).astype(np.float32)
    relevant = {str(i): {str((i * 7 + 1) % 60), str((i * 11 + 3) % 60)} for i in range(20)}
    numpy_ranks = [(r.query_id, r.ranks.tolist()) for r in
                   relevant_ranks(list(relevant), relevant, ids, emb, metric=metric, show_progress=False)]
    torch_ranks = [(r.query_id, r.ranks.tolist()) for r in
                   relevant_ranks(list(relevant), relevant, ids, emb, metric=metric, show_progress=False,
                                  device="cpu:0")]
    assert torch_ranks == numpy_ranks and len(numpy_ranks) == 20
    ranked = [(q, sorted(range(60), key=lambda j: -_score(emb, int(q), j, metric) if j != int(q) else np.inf))
              for q, _ in numpy_ranks]
    for (q, ranks), (_, order) in zip(torch_ranks, ranked):  # ranks = positions in an independent ranking
        assert ranks == sorted(order.index(int(p)) + 1 for p in relevant[q] if p != q)


def _score(emb, q, j, metric):
    a, b = emb[q].astype(np.float64), emb[j].astype(np.float64)
    if metric == "cosine":
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    return a @ b if metric == "dot" else -np.sum((a - b) ** 2)


def test_full_pool_retrieval_ties_and_l2_and_self():
    ids = ["q", "x", "y"]
    emb = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # x and y tie in L2 distance: pool order decides
    assert full_pool_retrieval(["q"], {"q": {"y"}}, ids, emb, metric="l2")["mrr"] == 50.0
    # without self-exclusion the query ranks itself first (distance 0)
    assert full_pool_retrieval(["q"], {"q": {"x"}}, ids, emb, metric="l2", exclude_self=False)["mrr"] == 50.0


def test_citation_recommendation_buckets():
    rng = np.random.default_rng(0)
    ids = [str(i) for i in range(50)]
    emb = rng.normal(size=(50, 8))
    relevant = {"0": {"1"}, "2": {"3", "4"}, "5": {"6", "7", "8"}}
    buckets = citation_recommendation_buckets(list(relevant), relevant, ids, emb)
    assert [buckets[b]["queries"] for b in ("1", ">=1", ">=2")] == [1.0, 3.0, 2.0]
    single = full_pool_retrieval(["0"], relevant, ids, emb)
    assert buckets["1"]["recall@10"] == single["recall@10"]
    assert buckets["1"]["map@10"] == single["map@10"]


def test_scidocs_dir_with_recomm_is_evaluated_end_to_end(tmp_path):
    import json

    from scincl.eval.scidocs import EmbeddingFiles, evaluate_scidocs
    from scincl.io import write_embeddings_jsonl

    rng = np.random.default_rng(1)
    ids = [f"p{i}" for i in range(120)]
    vectors = rng.normal(size=(len(ids), 8))
    emb = dict(zip(ids, vectors))
    (tmp_path / "recomm").mkdir()
    for split, n in (("train", 150), ("val", 40), ("test", 60)):
        lines = ["pid,clicked_pid,similar_papers_avail_at_time"]
        for _ in range(n):
            query, *shown = rng.choice(ids, 6, replace=False)
            clicked = max(shown, key=lambda p: float(emb[query] @ emb[p] / np.linalg.norm(emb[p])))
            lines.append(f'{query},{clicked},"{",".join(shown)}"')
        (tmp_path / "recomm" / f"{split}.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "recomm" / "propensity_scores.json").write_text(json.dumps({"scores": [0.4, 0.3, 0.2, 0.1, 0.1]}))
    (tmp_path / "paper_metadata_recomm.json").write_text(json.dumps(
        {p: {"paper_id": p, "title": f"paper {p}", "authors": [], "references": [], "cited_by": [], "year": 2010}
         for p in ids}))
    (tmp_path / "cite").mkdir()
    (tmp_path / "cite" / "test.qrel").write_text("p0 0 p1 1\np0 0 p2 0\n")
    write_embeddings_jsonl(tmp_path / "emb.jsonl", ids, vectors.astype(np.float32))

    result = evaluate_scidocs(tmp_path, EmbeddingFiles(tmp_path / "emb.jsonl"), device="cpu")
    recomm = result["scores"]["test"]["recomm"]
    assert set(recomm) == {"adj-NDCG", "adj-P@1"}
    assert recomm["adj-P@1"] > 40  # 5 shown papers: chance is 20%
    assert result["details"]["test"]["recomm"]["clicks"] == 60
    assert set(result["scores"]["test"]) == {"cite", "recomm"}
    assert set(result["absent"]["test"]) == {"mag", "mesh", "co-view", "co-read", "co-cite"}


def test_qrel_task_without_any_embedded_query_is_reported_not_scored():
    result = evaluate_qrel_task({"q": {"a": 1}}, {"a": np.ones(2)})
    assert result["queries"] == 0 and result["dropped_queries"] == 1 and math.isnan(result["map"])
