"""End to end: `cli_pipeline.py evaluate` and `compare_results` on the demo corpus's SciDocs dir.

Embeddings are made here without a model (TF-IDF + SVD of the metadata texts, and random vectors as
a floor), so these tests exercise the evaluator alone.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.eval.evaluate import run_evaluation
from scincl.io import write_embeddings_jsonl
from tests.conftest import run_front_end

TASKS = ("mag", "mesh", "co-view", "co-read", "cite", "co-cite")


def _papers(scidocs_dir):
    papers = {}
    for path in sorted(scidocs_dir.glob("paper_metadata_*.json")):
        papers.update(json.loads(path.read_text()))
    return papers


@pytest.fixture(scope="module")
def embeddings(demo_corpus, tmp_path_factory):
    """TF-IDF+SVD and random embeddings of every demo SciDocs paper, as SciDocs jsonl files."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    papers = _papers(demo_corpus.scidocs_dir)
    ids = sorted(papers)
    texts = [f"{papers[p].get('title') or ''} {papers[p].get('abstract') or ''}" for p in ids]
    tfidf = TruncatedSVD(64, random_state=0).fit_transform(TfidfVectorizer(sublinear_tf=True).fit_transform(texts))
    out = tmp_path_factory.mktemp("emb")
    files = {"tfidf": out / "tfidf.jsonl", "random": out / "random.jsonl"}
    write_embeddings_jsonl(files["tfidf"], ids, tfidf.astype(np.float32))
    write_embeddings_jsonl(files["random"], ids, np.random.default_rng(0).normal(size=(len(ids), 64)).astype(np.float32))
    return files


def test_evaluate_demo_dir_end_to_end(demo_corpus, embeddings, tmp_path):
    # held-out pairs for full-pool retrieval: the cite positives; link prediction metrics of the graph stage
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(line.split()[0] + "\t" + line.split()[2] + "\n"
                             for line in (demo_corpus.scidocs_dir / "cite" / "test.qrel").read_text().splitlines()
                             if line.split()[3] == "1"))
    link = tmp_path / "link_prediction.json"
    link.write_text(json.dumps({"test": {"mrr": 0.61, "hits@10": 0.83, "auc": 0.9}, "note": "text"}))
    out = tmp_path / "tfidf"
    proc = run_front_end("cli_pipeline.py", "evaluate", demo_corpus.scidocs_dir, out, "--embeddings", embeddings["tfidf"],
                         "--val_or_test", "both", "--retrieval_pairs", pairs, "--link_prediction_metrics", link)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    for split in ("val", "test"):
        scores = results["scores"][split]
        assert set(scores) == set(TASKS)  # recomm is absent, not 0
        for task in TASKS:
            for value in scores[task].values():
                assert 0 <= value <= 100 and round(value, 2) == value
        assert "recommendation not available" in results["absent"][split]["recomm"]
        assert results["average"][split]["metrics"] == 10
        assert results["details"][split]["mag"]["backend"] in ("lightning", "sklearn")
        assert results["details"][split]["cite"]["queries"] > 0
    retrieval = results["full_pool_retrieval"]
    assert retrieval["metrics"]["queries"] > 0 and 0 < retrieval["metrics"]["ndcg@10"] <= 100
    assert set(retrieval["citation_recommendation"]) == {"1", ">=1", ">=2"}
    assert results["link_prediction"]["metrics"] == {"test/mrr": 0.61, "test/hits@10": 0.83, "test/auc": 0.9}

    table = (out / "results.md").read_text()
    assert "| Model | MAG F1 | MeSH F1 | Co-View MAP |" in table
    assert "Avg. (over 10 of 12 metrics present)" in table
    assert "| n/a | n/a |" in table and "recomm: absent" in table
    assert f"| {results['scores']['test']['cite']['map']:.2f} |" in table

    # random embeddings are a floor: the text embeddings must beat them clearly
    random_out = tmp_path / "random"
    run_evaluation(demo_corpus.scidocs_dir, random_out, embeddings=[str(embeddings["random"])])
    floor = json.loads((random_out / "results.json").read_text())
    assert results["average"]["test"]["value"] > floor["average"]["test"]["value"] + 5

    # reruns are byte-identical; an existing results.json made from the same inputs is reused
    before = (out / "results.json").read_bytes()
    again = tmp_path / "again"
    run_evaluation(demo_corpus.scidocs_dir, again, val_or_test="both", embeddings=[str(embeddings["tfidf"])],
                   retrieval_pairs=str(pairs), link_prediction_metrics=str(link))
    assert (again / "results.json").read_bytes() == before
    (out / "results.md").unlink()
    assert run_evaluation(demo_corpus.scidocs_dir, out, val_or_test="both", embeddings=[str(embeddings["tfidf"])],
                          retrieval_pairs=str(pairs), link_prediction_metrics=str(link)) == results
    assert not (out / "results.md").exists()  # reused (same inputs and settings), not recomputed


def test_evaluate_several_runs_reports_mean_and_std(demo_corpus, embeddings, tmp_path):
    results = run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o",
                             embeddings=[str(embeddings["tfidf"]), str(embeddings["random"])])
    runs = [json.loads((tmp_path / "o" / "runs" / name / "results.json").read_text()) for name in ("tfidf", "random")]
    cite = [r["scores"]["test"]["cite"]["map"] for r in runs]
    assert results["scores"]["test"]["cite"]["map"] == round(float(np.mean(cite)), 2)
    assert results["std"]["test"]["cite"]["map"] == round(float(np.std(cite, ddof=1)), 2)
    table = (tmp_path / "o" / "results.md").read_text()
    assert "mean ± std over 2 runs" in table and f"{np.mean(cite):.2f} ± {np.std(cite, ddof=1):.2f}" in table


def test_evaluate_writes_every_querys_score_beside_results_json(demo_corpus, embeddings, tmp_path):
    from scincl.eval.metrics import percent
    from scincl.scidocs_io import QREL_TASKS, read_qrels

    results = run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o", val_or_test="both",
                             embeddings=[str(embeddings["tfidf"])])
    assert "per_query" not in json.loads((tmp_path / "o" / "results.json").read_text())  # its layout is unchanged
    saved = json.loads((tmp_path / "o" / "per_query.json").read_text())
    assert "in [0, 1]" in saved["unit"]
    for split in ("val", "test"):
        assert set(saved["per_query"][split]) == set(QREL_TASKS)  # co-view, co-read, cite, co-cite; not MAG/MeSH
        for task, folder in QREL_TASKS.items():
            queries = set(read_qrels(demo_corpus.scidocs_dir / folder / f"{split}.qrel"))
            for metric in ("map", "ndcg"):
                values = saved["per_query"][split][task][metric]
                assert len(values) == results["details"][split][task]["queries"] and set(values) <= queries
                assert all(0 <= v <= 1 for v in values.values())
                # the figure of results.json is recomputed from the per-query values exactly
                assert percent(float(np.mean(list(values.values())))) == results["scores"][split][task][metric]
    assert len(set(saved["per_query"]["test"]["cite"]["map"].values())) > 1  # real per-query values, not the mean

    several = tmp_path / "several"
    run_evaluation(demo_corpus.scidocs_dir, several, embeddings=[str(embeddings["tfidf"]), str(embeddings["random"])])
    for name in ("tfidf", "random"):
        run = json.loads((several / "runs" / name / "results.json").read_text())
        cite = json.loads((several / "runs" / name / "per_query.json").read_text())["per_query"]["test"]["cite"]["map"]
        assert percent(float(np.mean(list(cite.values())))) == run["scores"]["test"]["cite"]["map"]


def test_evaluate_bad_inputs_fail_with_one_clear_line(demo_corpus, embeddings, tmp_path):
    scidocs = tmp_path / "scidocs"
    shutil.copytree(demo_corpus.scidocs_dir, scidocs)
    qrel = scidocs / "cite" / "test.qrel"
    lines = qrel.read_text().splitlines()
    qrel.write_text("\n".join(lines + [lines[0]]) + "\n")
    proc = run_front_end("cli_pipeline.py", "evaluate", scidocs, tmp_path / "o", "--embeddings", embeddings["tfidf"])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("cli_pipeline.py: error: ")
    assert f"test.qrel:{len(lines) + 1}: duplicate qrel entry" in proc.stderr
    assert not (tmp_path / "o" / "results.json").exists()

    bad_dim = tmp_path / "bad_dim.jsonl"
    bad_dim.write_text('{"paper_id": "a", "embedding": [1, 2, 3]}\n{"paper_id": "b", "embedding": [1, 2]}\n')
    with pytest.raises(InputError, match=r"bad_dim\.jsonl:2, field 'embedding': embedding dimension 2 differs"):
        run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o2", embeddings=[str(bad_dim)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InputError, match=r"empty\.jsonl: no embeddings in file"):
        run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o3", embeddings=[str(empty)])
    with pytest.raises(InputError, match="either --model_dirs or --embeddings"):
        run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o4")
    with pytest.raises(InputError, match="--val_or_test must be one of"):
        run_evaluation(demo_corpus.scidocs_dir, tmp_path / "o5", val_or_test="dev", embeddings=[str(empty)])


def _fake_results(path, cite_map, mag_f1):
    path.mkdir(parents=True, exist_ok=True)
    scores = {"mag": {"f1": mag_f1}, "cite": {"map": cite_map, "ndcg": cite_map + 10}}
    (path / "results.json").write_text(json.dumps({"scores": {"test": scores}, "absent": {}, "details": {}}))


def test_compare_results_table_and_sweep_plots(demo_corpus, embeddings, tmp_path):
    run_evaluation(demo_corpus.scidocs_dir, tmp_path / "tfidf", embeddings=[str(embeddings["tfidf"])])
    for seed, (cite, mag) in enumerate([(60.0, 70.0), (62.0, 72.0)]):  # a model with two seeds
        _fake_results(tmp_path / "scincl" / f"seed{seed}", cite, mag)
    sweep = tmp_path / "sweep"
    for k, cite in [(5, 50.0), (20, 55.0), (500, 52.0)]:
        _fake_results(sweep / "k_pos" / str(k), cite, 70.0)
    for k, cite in [(100, 48.0), (1000, 51.0)]:
        for seed in range(2):
            _fake_results(sweep / "k_hard" / str(k) / f"seed{seed}", cite + seed, 70.0)
    for margin, collisions in [(0.0, 120), (0.5, 40), (1.0, 3)]:
        (sweep / "margin" / str(margin)).mkdir(parents=True)
        (sweep / "margin" / str(margin) / "collisions.json").write_text(json.dumps({"collisions": collisions}))

    out = tmp_path / "cmp"
    proc = run_front_end("cli_pipeline.py", "compare_results", tmp_path / "tfidf", tmp_path / "scincl",
                         "--names", "TF-IDF,SciNCL", "--output_dir", out, "--sweep_dir", sweep, "--metric", "cite/map")
    assert proc.returncode == 0, proc.stderr
    table = (out / "comparison.md").read_text()
    assert "| TF-IDF |" in table and "| SciNCL | 71.00 ± 1.41 | n/a | n/a |" in table
    for png in ("k_pos_cite_map.png", "k_hard_cite_map.png", "collisions_vs_margin.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "comparison.json").read_text())
    assert [row["runs"] for row in summary["rows"]] == [1, 2]

    proc = run_front_end("cli_pipeline.py", "compare_results", tmp_path / "nope", "--output_dir", out)
    assert proc.returncode == 2 and "results file or directory not found" in proc.stderr


def test_evaluate_model_dir_embeds_the_scidocs_metadata(demo_corpus, demo_tiny_bert, tmp_path):
    model = demo_tiny_bert
    out = tmp_path / "o"
    # in-process (the CLI path is covered above; this saves a second torch import)
    run_evaluation(demo_corpus.scidocs_dir, out, model_dirs=[str(model)], device="cpu", batch_size=64,
                   classifier_backend="sklearn")
    results = json.loads((out / "results.json").read_text())
    # one embeddings file per metadata file, as the official suite: MAG/MeSH papers vs ranking papers
    assert results["embeddings"]["classification"].endswith("mag_mesh.jsonl")
    assert results["embeddings"]["main"].endswith("view_cite_read.jsonl")
    n_lines = sum(1 for _ in open(out / "embeddings" / model.name / "mag_mesh.jsonl"))
    assert n_lines == len(json.loads((demo_corpus.scidocs_dir / "paper_metadata_mag_mesh.json").read_text()))
    assert set(results["scores"]["test"]) == set(TASKS)
    assert results["details"]["test"]["mesh"]["backend"] == "sklearn"


def test_model_dir_evaluation_embeds_with_the_requested_pooling(demo_corpus, demo_tiny_bert, tmp_path):
    """A checkpoint without a saved pooling (cls by default) is embedded with the pooling asked for,
    as run_specter does for the base encoder when training uses --pooling_strategy mean."""
    from scincl.eval.evaluate import embed_scidocs_metadata
    from scincl.model.embed import embed

    model = str(demo_tiny_bert)
    metadata = str(demo_corpus.scidocs_dir / "paper_metadata_mag_mesh.json")

    def vectors(path):
        return {row["paper_id"]: row["embedding"] for row in map(json.loads, open(path))}

    made = {}
    for pooling in (None, "mean"):
        files = embed_scidocs_metadata(model, demo_corpus.scidocs_dir, tmp_path / f"e_{pooling}", batch_size=64,
                                       device="cpu", override=False, max_sequence_length=32,
                                       pooling_strategy=pooling)
        made[pooling] = vectors(files.classification)
    for pooling in ("cls", "mean"):
        reference = vectors(embed(model, metadata, str(tmp_path / f"ref_{pooling}.jsonl"), batch_size=64,
                                  max_sequence_length=32, pooling_strategy=pooling, device="cpu"))
        assert made[None if pooling == "cls" else pooling] == reference
    some = next(iter(made["mean"]))
    assert made["mean"][some] != made[None][some]


def test_results_are_reused_only_for_the_same_embeddings_and_settings(demo_corpus, embeddings, tmp_path):
    """issue 16: an existing results.json is reused only when its record (runs, SciDocs files,
    settings) matches; other embeddings or another split are refused unless --override."""
    out = tmp_path / "o"
    first = run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(embeddings["tfidf"])])
    stamp = (out / "results.json").stat().st_mtime_ns
    assert run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(embeddings["tfidf"])]) == first
    assert (out / "results.json").stat().st_mtime_ns == stamp
    with pytest.raises(InputError, match="exists but was made differently: setting val_or_test differs"):
        run_evaluation(demo_corpus.scidocs_dir, out, val_or_test="val", embeddings=[str(embeddings["tfidf"])])
    moved = tmp_path / "tfidf_again.jsonl"  # the same content elsewhere is the same input
    shutil.copy(embeddings["tfidf"], moved)
    assert run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(moved)]) == first
    with pytest.raises(InputError, match="input random.jsonl differs from the one it was made from"):
        run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(embeddings["random"])])
    (out / "results.json.made_by.json").unlink()  # made before records existed: not trusted
    with pytest.raises(InputError, match="results.json: exists and has no made-by record \\(not made by evaluate\\)"):
        run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(embeddings["tfidf"])])
    other = run_evaluation(demo_corpus.scidocs_dir, out, embeddings=[str(embeddings["random"])], override=True)
    assert other["scores"]["test"]["cite"]["map"] < first["scores"]["test"]["cite"]["map"]
