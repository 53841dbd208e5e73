"""Recommendation and evaluation (issue 43, deliverable 4; MP-BERT4CR §5.3, Table 3): Recall@10 / MAP@10 by
hand, the candidate pool without the citing paper, augmented abstracts from training contexts only, and
``cli_pipeline.py evaluate_citation_recommendation`` on the demo (MB4R, BM25, a document-encoder row)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from scincl.citrec.evaluate import augmented_pieces, cosine_scores, format_table, scores_metrics
from scincl.citrec.sampling import PaperText
from tests.conftest import run_front_end


def test_recall_and_map_at_10_by_hand_in_table_3_buckets():
    scores = np.array([np.arange(20, 0, -1, dtype=float)] * 3)  # candidate 0 ranks first, 19 last
    positives = [[2], [0, 14], [11]]  # ranks 3; 1 and 15; 12 (outside the top 10)
    cells = scores_metrics(scores, positives)
    assert cells["positive = 1"] == {"contexts": 2, "recall": pytest.approx(50.0), "map": pytest.approx(100 / 3 / 2)}
    assert cells["positive ≥ 2"] == {"contexts": 1, "recall": pytest.approx(50.0), "map": pytest.approx(50.0)}
    assert cells["positive ≥ 1"]["contexts"] == 3
    assert cells["positive ≥ 1"]["recall"] == pytest.approx((1 + 1 / 2 + 0) / 3 * 100) and \
        cells["positive ≥ 1"]["map"] == pytest.approx((1 / 3 + 1 / 2) / 3 * 100)
    table = format_table({"X": cells})
    assert table.splitlines()[2] == "| X | 50.00 | 16.67 | 50.00 | 27.78 | 50.00 | 50.00 |"
    # the citing paper is never its own candidate
    ranked = cosine_scores(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.9, 0.1]]), excluded=[0])
    assert ranked[0, 0] == -np.inf and ranked[0, 1] > 0


def test_augmented_abstracts_hold_training_contexts_only():
    texts = {"c": PaperText(["Abstract of c."], ["Body."]), "d": PaperText([], ["First.", "Second."])}
    training = [{"cited_ids": ["c"], "sentences": ["Before.", "We cite c [1].", "After."]}]
    assert augmented_pieces(["c", "d"], texts, training) == [["Abstract of c.", "Before. We cite c [1]. After."],
                                                            ["First. Second."]]


def test_evaluate_cli_prints_table_3_for_mb4r_bm25_and_an_encoder(demo_contexts, demo_mb4r, demo_tiny_bert, tmp_path):
    out = tmp_path / "eval"
    done = run_front_end("cli_pipeline.py", "evaluate_citation_recommendation", demo_contexts, out,
                         "--model_dirs", demo_mb4r, "--scincl_model_dir", demo_tiny_bert, check=True)
    rows = [line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines()[2:]]
    assert rows == ["MB4R_mpt-src-tgt", "BM25", "SciNCL", "test contexts"]
    assert done.stdout.splitlines()[0].startswith("| method | positive = 1 Recall | positive = 1 MAP | positive ≥ 1")
    data = json.loads((out / "results.json").read_text())
    split = json.loads((demo_mb4r / "split.json").read_text())
    assert data["training_contexts"] > data["test_contexts"] > 0 and data["candidates"] == 300
    results = data["results"]
    for method in results.values():
        assert method["positive ≥ 1"]["contexts"] == method["positive = 1"]["contexts"] + method["positive ≥ 2"]["contexts"]
        assert all(0 <= method[b][m] <= 100 for b in method for m in ("recall", "map") if method[b][m] is not None)
    # BM25 on augmented abstracts finds the cited papers far above chance (10 of 299 candidates: ~3 %)
    assert results["BM25"]["positive ≥ 1"]["recall"] > 15
    from scincl.io import read_jsonl

    contexts = read_jsonl(demo_contexts / "contexts.jsonl.gz")
    test_papers = set(split["test"])
    assert data["training_contexts"] == sum(c["citing_paper_id"] not in test_papers for c in contexts)
    again = run_front_end("cli_pipeline.py", "evaluate_citation_recommendation", demo_contexts, out,
                          "--model_dirs", demo_mb4r, "--scincl_model_dir", demo_tiny_bert, check=True)
    assert again.stdout == done.stdout and "reusing it" in again.stderr
    none = run_front_end("cli_pipeline.py", "evaluate_citation_recommendation", demo_contexts, tmp_path / "x")
    assert none.returncode == 2 and "give --split_path or at least one --model_dirs" in none.stderr
