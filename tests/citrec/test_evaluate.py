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


def test_scincl_row_needs_a_model_trained_without_every_test_paper(tmp_path, monkeypatch):
    from scincl.citrec.evaluate import check_scincl_leakage
    from scincl.errors import InputError

    monkeypatch.chdir(tmp_path)  # the report names its ids file relative to where the training ran
    (tmp_path / "excluded.json").write_text(json.dumps(["a", "b"]))
    model = tmp_path / "model"
    model.mkdir()
    with pytest.raises(InputError, match="the SciNCL model has no leakage report"):
        check_scincl_leakage(str(model), {"a"})
    good = {"checked": True, "evaluation_paper_ids": "excluded.json", "evaluation_papers": 2, "in_graph": 0,
            "in_triplets": 0, "leaked": 0, "examples": []}
    for change, message in (({}, None), ({"in_graph": None}, "did not check both its graph and its triplets"),
                            ({"in_triplets": 1, "leaked": 1, "examples": ["a"]}, "trained with 1 evaluation papers"),
                            ({"evaluation_paper_ids": "gone.json"}, "evaluation ids gone.json are not found")):
        (model / "leakage_report.json").write_text(json.dumps({**good, **change}))
        if message is None:
            assert check_scincl_leakage(str(model), {"a", "b"})["leaked"] == 0
        else:
            with pytest.raises(InputError, match=message):
                check_scincl_leakage(str(model), {"a"})
    (model / "leakage_report.json").write_text(json.dumps(good))
    with pytest.raises(InputError, match=r"1 of the 3 test papers \(e.g. c\) were not among the evaluation papers"):
        check_scincl_leakage(str(model), {"a", "b", "c"})


def test_evaluate_cli_prints_table_3_for_mb4r_bm25_and_scincl(demo_contexts, demo_mb4r_triplet, demo_mb4r,
                                                              demo_scincl, demo_tiny_bert, tmp_path, caplog, capsys):
    from scincl.citrec.evaluate import evaluate_citation_recommendation
    from scincl.errors import InputError
    from scincl.io import read_jsonl
    from scincl.leakage import read_evaluation_ids

    out = tmp_path / "eval"
    models = f"{demo_mb4r_triplet.path},{demo_mb4r}"
    done = run_front_end("cli_pipeline.py", "evaluate_citation_recommendation", demo_contexts, out,
                         "--model_dirs", models, "--scincl_model_dir", demo_scincl, check=True)
    rows = [line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines()[2:]]
    assert rows == ["MB4R_triplet", "MB4R_mpt-src-tgt", "BM25", "SciNCL", "test contexts"]
    assert done.stdout.splitlines()[0].startswith("| method | positive = 1 Recall | positive = 1 MAP | positive ≥ 1")
    data = json.loads((out / "results.json").read_text())
    split = json.loads((demo_mb4r / "split.json").read_text())
    assert split == json.loads((demo_mb4r_triplet.path / "split.json").read_text())  # one split for every row
    assert data["training_contexts"] > data["test_contexts"] > 0 and data["candidates"] == 300
    results = data["results"]
    for method in results.values():
        assert method["positive ≥ 1"]["contexts"] == method["positive = 1"]["contexts"] + method["positive ≥ 2"]["contexts"]
        assert all(0 <= method[b][m] <= 100 for b in method for m in ("recall", "map") if method[b][m] is not None)
    # BM25 on augmented abstracts finds the cited papers far above chance (10 of 299 candidates: ~3 %)
    assert results["BM25"]["positive ≥ 1"]["recall"] > 15
    contexts = read_jsonl(demo_contexts / "contexts.jsonl.gz")
    test_papers = set(split["test"])
    assert data["training_contexts"] == sum(c["citing_paper_id"] not in test_papers for c in contexts)
    # the SciNCL row: trained without any test paper in its graph or triplets, so without any test context's citation
    report = data["scincl_leakage_report"]
    assert report["checked"] and report["leaked"] == 0 and report["in_graph"] == 0 and report["in_triplets"] == 0
    assert read_evaluation_ids(report["evaluation_paper_ids"]) == test_papers and report["edges_removed"] > 0
    graph_edges = {tuple(line.split("\t")[:2]) for line in
                   (demo_scincl.parent / "citations" / "citations.train.tsv").read_text().splitlines()}
    test_edges = {(c["citing_paper_id"], i) for c in contexts if c["citing_paper_id"] in test_papers
                  for i in c["cited_ids"]}
    assert graph_edges and test_edges and not test_edges & graph_edges
    assert not test_papers & {paper for edge in graph_edges for paper in edge}
    with caplog.at_level("INFO"):  # the same inputs and settings: reused, the same table printed
        evaluate_citation_recommendation(str(demo_contexts), str(out), models, scincl_model_dir=str(demo_scincl))
    assert "reusing it" in caplog.text and capsys.readouterr().out == done.stdout
    with pytest.raises(InputError, match="the SciNCL model has no leakage report"):  # an encoder never guarded
        evaluate_citation_recommendation(str(demo_contexts), str(tmp_path / "y"), str(demo_mb4r),
                                         scincl_model_dir=str(demo_tiny_bert))
    none = run_front_end("cli_pipeline.py", "evaluate_citation_recommendation", demo_contexts, tmp_path / "x")
    assert none.returncode == 2 and "give --split_path or at least one --model_dirs" in none.stderr
