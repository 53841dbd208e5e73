"""SciRepEval task data: from a local folder (``--data_dir``) or from the Hugging Face hub through ``datasets``.

The official evaluator (``evaluation/evaluator.py``, ``eval_datasets.py``, ``reviewer_matching.py``) reads each
task's labelled examples either from the hub (``load_dataset("allenai/scirepeval_test", config)``) or from a local
directory holding ``train.csv`` + ``test.csv`` (classification, regression), ``test_qrel.jsonl`` (proximity,
search) or ``test_hard_qrel.jsonl`` + ``test_soft_qrel.jsonl`` (paper-reviewer matching), the reviewers' papers
as ``reviewer_metadata.jsonl``, and the documents to embed from ``load_dataset("allenai/scirepeval", config,
split="evaluation")`` or a local JSON-lines file. ``--data_dir`` is that local layout, one folder per Hugging Face
config of the two datasets::

    DATA_DIR/scirepeval/<meta config>/evaluation.jsonl       documents (split "evaluation" of allenai/scirepeval)
    DATA_DIR/scirepeval_test/<test config>/train.csv, test.csv          classification and regression labels
    DATA_DIR/scirepeval_test/<test config>/test_qrel.jsonl               proximity and search relevance
    DATA_DIR/scirepeval_test/paper_reviewer_matching/test_hard_qrel.jsonl, test_soft_qrel.jsonl
    DATA_DIR/scirepeval_test/reviewers/reviewer_metadata.jsonl           {"r_id", "papers"}

(README "Evaluate on SciRepEval" writes it from the hub on a machine with internet.) Rows: documents
``{"doc_id", "title", "abstract", ...}``, or for proximity and search ``{"doc_id", "query", "candidates"}`` with
``query`` a text (search) or a document, ``candidates`` documents; labels ``paper_id,label`` (a multi-label row's
label is a JSON list, multi-hot, as the hub's ``fos`` config holds it); qrels ``{"query_id", "cand_id", "score"}``.
Ids are compared as strings.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional

from scincl.eval.scirepeval.tasks import META_REPO, REVIEWER_MATCHING, REVIEWERS_CONFIG, TEST_REPO, Task

META_SPLIT = "evaluation"  # the split of allenai/scirepeval that holds the documents to embed (SimpleDataset)
META_FILE = f"{META_SPLIT}.jsonl"
SUPERVISED_FILES = {"train": "train.csv", "test": "test.csv"}  # evaluator.py SupervisedEvaluator.evaluate
QREL_FILES = {"test": "test_qrel.jsonl"}  # evaluator.py IREvaluator.evaluate
REVIEWER_QREL_FILES = {"test_hard": "test_hard_qrel.jsonl", "test_soft": "test_soft_qrel.jsonl"}  # reviewer_matching.py
REVIEWER_METADATA_FILE = "reviewer_metadata.jsonl"


class TaskAbsent(Exception):
    """A task's data cannot be had (a missing file, no hub access, no rows): the task is reported absent."""


def label_files(task: Task) -> Mapping[str, str]:
    """The labelled-example files of ``task`` by split."""
    if task.supervised:
        return SUPERVISED_FILES
    return REVIEWER_QREL_FILES if task.name == REVIEWER_MATCHING else QREL_FILES


def _read_jsonl(path: Path) -> List[Dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TaskAbsent(f"{path}:{line_no}: not JSON ({exc.msg})") from None
    return rows


def _label(value: str) -> Any:
    """A CSV label cell: a JSON list (multi-hot) or number when it parses as one, else the text (a class name)."""
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, TypeError):
        return value
    return parsed if isinstance(parsed, (list, int, float)) and not isinstance(parsed, bool) else value


def _read_labels_csv(path: Path) -> List[Dict[str, Any]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"paper_id", "label"} <= set(reader.fieldnames):
            raise TaskAbsent(f"{path}: expected the columns paper_id,label, found {reader.fieldnames}")
        return [{"paper_id": row["paper_id"], "label": _label(row["label"])} for row in reader]


class LocalData:
    """Task data from ``--data_dir`` (the module docstring's layout)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir)

    def _file(self, repo_folder: str, config: str, name: str) -> Path:
        path = self.root / repo_folder / config / name
        if not path.is_file():
            raise TaskAbsent(f"no file {path}")
        return path

    def documents(self, task: Task) -> List[Dict[str, Any]]:
        return _read_jsonl(self._file("scirepeval", task.meta_config, META_FILE))

    def labelled(self, task: Task) -> Dict[str, List[Dict[str, Any]]]:
        out = {}
        for split, name in label_files(task).items():
            path = self._file("scirepeval_test", task.test_config, name)
            out[split] = _read_labels_csv(path) if name.endswith(".csv") else _read_jsonl(path)
        return out

    def reviewers(self) -> List[Dict[str, Any]]:
        return _read_jsonl(self._file("scirepeval_test", REVIEWERS_CONFIG, REVIEWER_METADATA_FILE))

    def where(self, task: Task) -> str:
        return str(self.root)


class HubData:
    """Task data from the Hugging Face hub (``datasets.load_dataset``; the ``datasets`` cache is reused offline)."""

    @staticmethod
    def _load(repo: str, config: str, split: Optional[str] = None) -> Any:
        import datasets

        try:
            return datasets.load_dataset(repo, config, split=split)
        except Exception as exc:  # offline, no such config, a broken download: the task is absent
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise TaskAbsent(f"cannot load {repo} {config} from the Hugging Face hub ({first}); pass --data_dir") \
                from None

    def documents(self, task: Task) -> Iterable[Dict[str, Any]]:
        return self._load(META_REPO, task.meta_config, META_SPLIT)

    def labelled(self, task: Task) -> Dict[str, List[Dict[str, Any]]]:
        splits = self._load(TEST_REPO, task.test_config)
        missing = [split for split in label_files(task) if split not in splits]
        if missing:
            raise TaskAbsent(f"{TEST_REPO} {task.test_config} has no split {', '.join(missing)}")
        return {split: list(splits[split]) for split in label_files(task)}

    def reviewers(self) -> List[Dict[str, Any]]:
        return list(self._load(TEST_REPO, REVIEWERS_CONFIG, "metadata"))

    def where(self, task: Task) -> str:
        return f"{META_REPO} {task.meta_config} + {TEST_REPO} {task.test_config}"


def document_texts(task: Task, rows: Iterable[Mapping[str, Any]], sep_token: str) -> Dict[str, str]:
    """doc id -> text, as ``eval_datasets.SimpleDataset`` / ``IRDataset`` form them.

    A document's text is its present ``task.fields`` (default title, abstract) joined by ``f" {sep_token} "``
    (``" [SEP] "`` for BERT tokenizers) and stripped; a field that is missing or empty is left out. Proximity and
    search rows are ``{"doc_id", "query", "candidates"}``: the queries come first (a text query is the title of
    a document with the row's ``doc_id``), then the candidates; an id already seen keeps its first text.
    """
    ordered: List[Mapping[str, Any]] = []
    if task.ir_format:
        candidates: List[Mapping[str, Any]] = []
        for row in rows:
            query = row.get("query")
            ordered.append({"title": query, "doc_id": row.get("doc_id")} if isinstance(query, str) else query or {})
            candidates.extend(row.get("candidates") or [])
        ordered.extend(candidates)
    else:
        ordered = list(rows)
    texts: Dict[str, str] = {}
    for document in ordered:
        if document.get("doc_id") is None or str(document["doc_id"]) in texts:
            continue
        parts = [str(document[field]) for field in task.fields if document.get(field)]
        texts[str(document["doc_id"])] = f" {sep_token} ".join(parts).strip()
    return texts


def iter_qrels(rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple]:
    """``(query_id, cand_id, relevance)`` of qrel rows, ids as strings, relevance as int (pytrec_eval's qrels)."""
    for row in rows:
        yield str(row["query_id"]), str(row["cand_id"]), int(row["score"])
