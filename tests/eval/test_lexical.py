"""Lexical encoders (TF-IDF, BM25): weights against a hand computation, sparse embedding files, and
`evaluate --model_dir tfidf` scoring sparse vectors exactly as the dense evaluator would."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from scincl.eval.lexical import LexicalEncoder, embed_lexical, lexical_embeddings
from scincl.eval.qrel_tasks import evaluate_qrel_task
from scincl.io import read_embeddings_jsonl

# three toy papers: "the" and "of" are English stop words and never become terms
TOY = ["the apple banana", "apple apple cherry", "durian of durian"]


def test_tfidf_weights_equal_a_hand_computation():
    encoder = LexicalEncoder("tfidf").fit(TOY)
    assert sorted(encoder.vocabulary) == ["apple", "banana", "cherry", "durian"]
    vectors = encoder.encode(TOY).toarray()
    col = encoder.vocabulary
    idf = {t: math.log(4 / (1 + df)) + 1 for t, df in (("apple", 2), ("banana", 1), ("cherry", 1), ("durian", 1))}
    # paper 2: apple tf 2 -> 1 + ln 2 (sublinear), cherry tf 1 -> 1; then l2
    apple, cherry = (1 + math.log(2)) * idf["apple"], 1.0 * idf["cherry"]
    norm = math.hypot(apple, cherry)
    assert vectors[1, col["apple"]] == pytest.approx(apple / norm, abs=1e-12)
    assert vectors[1, col["cherry"]] == pytest.approx(cherry / norm, abs=1e-12)
    assert vectors[2, col["durian"]] == pytest.approx(1.0)  # one term: the unit vector
    # cosine of papers 1 and 2 share only "apple"
    p1 = math.hypot(idf["apple"], idf["banana"])
    assert vectors[0] @ vectors[1] == pytest.approx(idf["apple"] / p1 * apple / norm, abs=1e-12)


def test_bm25_weights_equal_a_hand_computation():
    encoder = LexicalEncoder("bm25").fit(TOY)
    vectors = encoder.encode(TOY).toarray()
    col = encoder.vocabulary
    k1, b, n, avgdl = 1.2, 0.75, 3, (2 + 3 + 2) / 3  # document lengths in terms after stop words

    def weight(tf, df, length):
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))

    apple, cherry = weight(2, 2, 3), weight(1, 1, 3)
    norm = math.hypot(apple, cherry)
    assert vectors[1, col["apple"]] == pytest.approx(apple / norm, abs=1e-12)
    assert vectors[1, col["cherry"]] == pytest.approx(cherry / norm, abs=1e-12)
    # fitted elsewhere: idf and avgdl from the fit collection, unknown terms dropped
    other = LexicalEncoder("bm25").fit(TOY[:2]).encode(["cherry kiwi"]).toarray()
    assert other.sum() == pytest.approx(1.0) and other.shape[1] == 3


def test_sparse_qrel_scores_equal_dense_ones_and_files_round_trip(tmp_path):
    ids = ["q", "a", "b", "c", "d"]
    texts = ["graph node citation", "graph node edge", "citation network", "protein folding", "graph citation"]
    sparse, dim = lexical_embeddings("tfidf", ids, texts)
    dense = {pid: row.toarray().ravel() for pid, row in sparse.items()}
    qrels = {"q": {"a": 1, "b": 0, "c": 0, "d": 1}}
    assert evaluate_qrel_task(qrels, sparse) == evaluate_qrel_task(qrels, dense)
    # a, d share two terms with q and rank first: MAP 1
    assert evaluate_qrel_task(qrels, sparse)["map"] == 100.0

    metadata = tmp_path / "papers.jsonl"
    metadata.write_text("".join(json.dumps({"paper_id": p, "title": t, "abstract": ""}) + "\n"
                                for p, t in zip(ids, texts)))
    out = embed_lexical("tfidf", metadata, tmp_path / "tfidf.jsonl")
    back = read_embeddings_jsonl(out, dtype=np.float64)
    assert list(back) == ids and back["q"].shape == (1, dim)
    assert np.allclose(back["d"].toarray().ravel(), dense["d"])
    assert embed_lexical("tfidf", metadata, out) == out  # same papers and settings: reused


def test_evaluate_tfidf_on_the_demo_scidocs_dir(demo_corpus, tmp_path):
    from scincl.eval.evaluate import run_evaluation

    result = run_evaluation(demo_corpus.scidocs_dir, tmp_path / "eval", val_or_test="test", model_dirs=["tfidf"],
                            n_jobs=1)
    scores = result["scores"]["test"]
    assert {"cite", "co-cite", "mag"} <= set(scores)
    # words carry the demo topics: far above the ~17 % MAP of a random ranking of 5 positives among 30
    assert scores["cite"]["map"] > 40 and scores["mag"]["f1"] > 40, scores
    recorded = json.loads((tmp_path / "eval" / "results.json.made_by.json").read_text())
    assert recorded["settings"]["models"] == ["tfidf"]
