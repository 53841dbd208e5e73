"""Issue 44: ``cli_pipeline.py evaluate_scirepeval`` against the official protocol, on synthetic tasks (one per type)
in the official evaluator's local layout, each metric recomputed here with sklearn / pytrec_eval called directly."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.eval.scirepeval.data import document_texts
from scincl.eval.scirepeval.evaluate import evaluate_scirepeval, few_shot_scores
from scincl.eval.scirepeval.tasks import TASKS, TASKS_BY_NAME, select_tasks
from tests.conftest import run_front_end
from tests.eval.conftest import SYNTHETIC_TASKS, read_split, write_scirepeval_tasks

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, toy_bert):
    """Every synthetic task evaluated through the CLI, as a user runs it."""
    root = tmp_path_factory.mktemp("scirepeval")
    data = write_scirepeval_tasks(root / "data")
    done = run_front_end("cli_pipeline.py", "evaluate_scirepeval", str(toy_bert), str(root / "out"),
                         "--tasks", ",".join(SYNTHETIC_TASKS), "--data_dir", str(data), "--nofew_shot", check=True)
    results = json.loads((root / "out" / "results.json").read_text())
    return {"data": data, "out": root / "out", "results": results, "stdout": done.stdout, "stderr": done.stderr}


def _vectors(path):
    """The embeddings file read with json alone: id -> float32 vector."""
    with open(path) as fh:
        rows = [json.loads(line) for line in fh]
    return {r["paper_id"]: np.asarray(r["embedding"], dtype=np.float32) for r in rows}


def _xy(vectors, labels):
    ids = [i for i in labels if i in vectors]
    return np.stack([vectors[i] for i in ids]), np.array([labels[i] for i in ids])


def _supervised_inputs(evaluated, name):
    task = TASKS_BY_NAME[name]
    vectors = _vectors(evaluated["results"]["tasks"][name]["embeddings"])
    folder = evaluated["data"] / "scirepeval_test" / task.test_config
    return _xy(vectors, read_split(folder / "train.csv")) + _xy(vectors, read_split(folder / "test.csv"))


def test_binary_classification_equals_sklearn_linearsvc_grid(evaluated):
    from sklearn.metrics import f1_score
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    x_train, y_train, x_test, y_test = _supervised_inputs(evaluated, "Biomimicry")
    svm = GridSearchCV(LinearSVC(loss="squared_hinge", random_state=42), cv=3, param_grid={"C": np.logspace(-2, 2, 5)})
    expected = round(100 * f1_score(y_test, svm.fit(x_train, y_train).predict(x_test)), 2)
    assert evaluated["results"]["tasks"]["Biomimicry"]["metrics"]["f1"] == pytest.approx(expected, abs=0.01)


def test_multilabel_classification_equals_one_vs_rest_linearsvc_grid(evaluated):
    from sklearn.metrics import f1_score
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    x_train, y_train, x_test, y_test = _supervised_inputs(evaluated, "Fields of study")
    assert y_train.shape[1] == 3  # multi-hot labels
    svm = OneVsRestClassifier(GridSearchCV(LinearSVC(max_iter=10000, loss="hinge"), cv=3,
                                           param_grid={"C": np.logspace(-2, 2, 5)}))
    expected = round(100 * f1_score(y_test, svm.fit(x_train, y_train).predict(x_test), average="macro"), 2)
    assert evaluated["results"]["tasks"]["Fields of study"]["metrics"]["f1_macro"] == pytest.approx(expected, abs=0.01)


def test_regression_equals_linearsvr_grid_and_kendalls_tau(evaluated):
    from scipy.stats import kendalltau
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVR

    x_train, y_train, x_test, y_test = _supervised_inputs(evaluated, "Citation Count")
    svr = GridSearchCV(LinearSVR(random_state=42), cv=3, param_grid={"C": np.logspace(-4, 2, 7)})
    expected = round(100 * kendalltau(y_test, svr.fit(x_train, y_train.astype(float)).predict(x_test))[0], 2)
    assert evaluated["results"]["tasks"]["Citation Count"]["metrics"]["kendalltau"] == pytest.approx(expected, abs=0.01)


def test_few_shot_single_label_equals_linearsvc_on_the_stratified_folds(evaluated):
    import math

    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    x_train, y_train, x_test, y_test = _supervised_inputs(evaluated, "Biomimicry")
    arrays = {"train": (x_train, y_train), "test": (x_test, y_test)}
    result = few_shot_scores(TASKS_BY_NAME["Biomimicry"], arrays, 16, 100)  # the official 16-shot setting
    folds = StratifiedKFold(n_splits=math.ceil(len(x_train) / 16)).split(x_train, y_train)
    values = [round(100 * f1_score(y_test, LinearSVC(loss="squared_hinge", random_state=42).fit(
        x_train[rows], y_train[rows]).predict(x_test)), 2) for _, rows in folds]
    assert result["runs"] == len(values) == 2 and result["metrics"]["f1"] == pytest.approx(np.mean(values), abs=0.01)
    too_large = few_shot_scores(TASKS_BY_NAME["Biomimicry"], arrays, 64, 50)
    assert too_large["absent"] == "the train split has 20 papers, not more than the sample size 64"


def test_few_shot_multi_label_equals_seeded_positive_samples_and_the_one_vs_rest_grid(evaluated):
    from sklearn.metrics import f1_score
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    x_train, y_train, x_test, y_test = _supervised_inputs(evaluated, "Fields of study")
    arrays = {"train": (x_train, y_train), "test": (x_test, y_test)}
    result = few_shot_scores(TASKS_BY_NAME["Fields of study"], arrays, 5, 3)  # 5-shot, 3 of its 100 runs
    values = []
    for k in range(3):
        np.random.seed(42 + k)
        rows = set()
        for label in range(y_train.shape[1]):
            rows.update(np.random.choice(np.where(y_train[:, label] == 1)[0], 5, replace=False).tolist())
        rows = list(rows)
        svm = OneVsRestClassifier(GridSearchCV(LinearSVC(max_iter=10000, loss="hinge"), cv=3,
                                               param_grid={"C": np.logspace(-2, 2, 5)}))
        values.append(round(100 * f1_score(y_test, svm.fit(x_train[rows], y_train[rows]).predict(x_test),
                                           average="macro"), 2))
    assert result["metrics"]["f1_macro"] == pytest.approx(np.mean(values), abs=0.01)
    assert "fewer than the sample size 10" in few_shot_scores(TASKS_BY_NAME["Fields of study"], arrays, 10, 50)["absent"]


def _qrels(path):
    qrels = {}
    with open(path) as fh:
        for line in fh:
            row = json.loads(line)
            qrels.setdefault(row["query_id"], {}).setdefault(row["cand_id"], int(row["score"]))
    return qrels


@pytest.mark.parametrize("name", ["RELISH", "NFCorpus", "SciDocs Cite"])
def test_proximity_and_search_equal_pytrec_eval_on_negative_euclidean_distance(evaluated, name):
    import pytrec_eval

    task = TASKS_BY_NAME[name]
    vectors = _vectors(evaluated["results"]["tasks"][name]["embeddings"])
    qrels = _qrels(evaluated["data"] / "scirepeval_test" / task.test_config / "test_qrel.jsonl")
    run = {q: {c: -float(np.linalg.norm(vectors[c].astype(np.float64) - vectors[q])) for c in cands}
           for q, cands in qrels.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(task.metrics)).evaluate(run)
    for metric in task.metrics:
        expected = round(100 * float(np.mean([m[metric] for m in per_query.values()])), 2)
        assert evaluated["results"]["tasks"][name]["metrics"][metric] == pytest.approx(expected, abs=0.01), metric


def test_reviewer_matching_equals_pytrec_eval_on_the_top3_cosine_mean(evaluated):
    import pytrec_eval

    name = "Paper-Reviewer Matching"
    vectors = _vectors(evaluated["results"]["tasks"][name]["embeddings"])
    folder = evaluated["data"] / "scirepeval_test"
    reviewers = {json.loads(line)["r_id"]: json.loads(line)["papers"]
                 for line in (folder / "reviewers" / "reviewer_metadata.jsonl").read_text().splitlines()}
    hard = _qrels(folder / "paper_reviewer_matching" / "test_hard_qrel.jsonl")

    def cosine(a, b):
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    run = {q: {r: float(np.mean(sorted((cosine(vectors[p], vectors[q]) for p in reviewers[r]), reverse=True)[:3]))
               for r in cands} for q, cands in hard.items()}
    for split in ("hard", "soft"):
        qrels = _qrels(folder / "paper_reviewer_matching" / f"test_{split}_qrel.jsonl")
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "P_10"}).evaluate(run)
        for metric in ("P_5", "P_10"):
            expected = round(100 * float(np.mean([m[metric] for m in per_query.values()])), 2)
            assert evaluated["results"]["tasks"][name]["metrics"][f"{split}_{metric}"] == pytest.approx(expected,
                                                                                                         abs=0.01)


def test_results_table_groups_and_embeddings(evaluated):
    results = evaluated["results"]
    assert set(results["tasks"]) == set(SYNTHETIC_TASKS) and not results["absent"]
    assert len(results["not_asked"]) == len(TASKS) - len(SYNTHETIC_TASKS)
    scidocs_cite = results["tasks"]["SciDocs Cite"]
    assert scidocs_cite["score"] == pytest.approx(np.mean(list(scidocs_cite["metrics"].values())), abs=0.01)
    in_train = [results["tasks"][n]["score"] for n in ("Fields of study", "Citation Count")]
    assert results["averages"]["in-train"] == {"value": round(float(np.mean(in_train)), 2), "tasks": 2, "of": 7}
    assert results["averages"]["scidocs"]["tasks"] == 1
    table = (evaluated["out"] / "results.md").read_text()
    assert "| Model | In-Train | Out-of-Train | SciDocs | Average |" in table
    assert f"(2 of 7 tasks)" in table and "| In-Train | Search | adhoc_search | absent: not asked for | n/a |" in table
    assert table.splitlines()[4] in evaluated["stdout"]  # the CLI prints the table
    # the embeddings are the embed format, one file per metadata config, texts "title [SEP] abstract"
    documents = [json.loads(line) for line in
                 (evaluated["data"] / "scirepeval" / "biomimicry" / "evaluation.jsonl").read_text().splitlines()]
    vectors = _vectors(evaluated["out"] / "embeddings" / "biomimicry.jsonl")
    assert list(vectors) == [d["doc_id"] for d in documents] and vectors[documents[0]["doc_id"]].shape == (32,)


def test_texts_join_the_present_fields_with_the_separator():
    search, relish = TASKS_BY_NAME["Search"], TASKS_BY_NAME["RELISH"]
    assert document_texts(TASKS_BY_NAME["Biomimicry"], [{"doc_id": 1, "title": "T", "abstract": "A"},
                                                        {"doc_id": 2, "title": "U", "abstract": None}],
                          "[SEP]") == {"1": "T [SEP] A", "2": "U"}
    rows = [{"doc_id": "q", "query": "a query", "candidates": [{"doc_id": "c", "title": "T", "abstract": "A",
                                                                "venue": "V", "year": 2020}]}]
    assert document_texts(search, rows, "[SEP]") == {"q": "a query", "c": "T [SEP] A [SEP] V [SEP] 2020"}
    rows = [{"doc_id": "q", "query": {"doc_id": "q", "title": "Q"}, "candidates": [{"doc_id": "q", "title": "X"}]}]
    assert document_texts(relish, rows, "</s>") == {"q": "Q"}  # an id seen first as query keeps its text


def test_missing_label_file_no_embedding_and_empty_task_each_give_one_line(evaluated, toy_bert, tmp_path, caplog):
    """In this process (the ``evaluated`` fixture runs the CLI): each problem is one warning record."""
    import logging

    data = tmp_path / "data"
    shutil.copytree(evaluated["data"], data)
    (data / "scirepeval_test" / "biomimicry" / "test.csv").unlink()  # a missing label file
    (data / "scirepeval_test" / "relish" / "test_qrel.jsonl").write_text("")  # an empty task
    with open(data / "scirepeval_test" / "cite_count" / "test.csv", "a") as fh:
        fh.write("no-such-paper,3.5\n")  # an id with no embedding
    with caplog.at_level(logging.INFO):
        evaluate_scirepeval(str(toy_bert), str(tmp_path / "out"), tasks="Biomimicry,RELISH,Citation Count",
                            data_dir=str(data))
    lines = [r.getMessage() for r in caplog.records if "SciRepEval" in r.getMessage() and r.levelno == logging.WARNING]
    assert len(lines) == 3 and all("\n" not in line for line in lines), caplog.text[-3000:]
    assert any("Biomimicry: absent: no file" in line and "test.csv" in line for line in lines)
    assert any("RELISH: absent: no labelled rows in the test split" in line for line in lines)
    assert any("Citation Count: 1 of 21 test papers have no embedding (e.g. no-such-paper)" in line for line in lines)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(results["absent"]) == {"Biomimicry", "RELISH"} and "Citation Count" in results["tasks"]
    assert results["tasks"]["Citation Count"]["metrics"] == evaluated["results"]["tasks"]["Citation Count"]["metrics"]
    assert results["tasks"]["Citation Count"]["counts"]["test"]["without_embedding"] == 1


def test_nothing_to_evaluate_and_unknown_tasks_are_one_line_errors(toy_bert, tmp_path):
    with pytest.raises(InputError, match="no SciRepEval task could be evaluated"):
        evaluate_scirepeval(str(toy_bert), str(tmp_path / "out"), tasks="DRSM", data_dir=str(tmp_path))
    done = run_front_end("cli_pipeline.py", "evaluate_scirepeval", str(toy_bert), str(tmp_path / "out"),
                         "--tasks", "Biomimikry", "--data_dir", str(tmp_path))
    assert done.returncode != 0 and "--tasks: unknown task 'biomimikry'" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_task_selection():
    assert select_tasks("all") == TASKS and len(TASKS) == 22
    assert [t.name for t in select_tasks("scidocs cite, Biomimicry")] == ["Biomimicry", "SciDocs Cite"]
    assert [t.name for t in select_tasks(("DRSM", "MeSH"))] == ["DRSM", "MeSH"]
    assert {t.group for t in TASKS} == {"in-train", "out-of-train", "scidocs"}
