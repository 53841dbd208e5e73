"""Helpers of tests/eval: small synthetic SciRepEval tasks in the official evaluator's local layout (issue 44)."""
from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Dict, List

from scincl.model.tiny import TOY_TOPICS, toy_topic_corpus

# one task of each kind the protocol scores differently
SYNTHETIC_TASKS = ("Biomimicry", "Fields of study", "Citation Count", "RELISH", "NFCorpus", "SciDocs Cite",
                   "Paper-Reviewer Matching")


def _documents(prefix: str, seed: int, per_topic: int = 10) -> List[dict]:
    """Toy papers ``{doc_id, title, abstract, topic}`` (their words reveal one of four topics)."""
    return [{"doc_id": f"{prefix}-{p['paper_id']}", "title": p["title"], "abstract": p["abstract"], "topic": p["topic"]}
            for p in toy_topic_corpus(papers_per_topic=per_topic, seed=seed)]


def _write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _write_labels(folder: Path, documents: List[dict], label) -> None:
    """``train.csv`` (every other document) and ``test.csv`` with ``paper_id,label``."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", documents[0::2]), ("test", documents[1::2])):
        with open(folder / f"{split}.csv", "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["paper_id", "label"])
            for doc in rows:
                value = label(doc)
                writer.writerow([doc["doc_id"], json.dumps(value) if isinstance(value, list) else value])


def _qrels(queries: List[dict], candidates: List[dict], rnd: random.Random, per_query: int = 8) -> List[dict]:
    rows = []
    for query in queries:
        for cand in rnd.sample(candidates, per_query):
            rows.append({"query_id": query["doc_id"], "cand_id": cand["doc_id"],
                         "score": int(cand["topic"] == query["topic"]) + int(rnd.random() < 0.3)})
    return rows


def write_scirepeval_tasks(root: Path, seed: int = 0) -> Path:
    """Write :data:`SYNTHETIC_TASKS` under ``root`` in ``--data_dir``'s layout; returns ``root``."""
    rnd = random.Random(seed)
    meta, test = root / "scirepeval", root / "scirepeval_test"
    topics = sorted(TOY_TOPICS)

    docs = _documents("bio", seed)
    _write_jsonl(meta / "biomimicry" / "evaluation.jsonl", docs)
    _write_labels(test / "biomimicry", docs, lambda d: int(d["topic"] == topics[0]))

    docs = _documents("fos", seed + 1)
    _write_jsonl(meta / "fos" / "evaluation.jsonl", docs)
    _write_labels(test / "fos", docs, lambda d: [int(d["topic"] in topics[:2]), int(d["topic"] in topics[1:3]),
                                                 int(d["topic"] == topics[3])])

    docs = _documents("cc", seed + 2)
    _write_jsonl(meta / "cite_count" / "evaluation.jsonl", docs)
    _write_labels(test / "cite_count", docs, lambda d: round(10 * topics.index(d["topic"]) + rnd.random() * 5, 3))

    docs = _documents("relish", seed + 3)  # proximity: rows {doc_id, query: document, candidates: [documents]}
    queries, candidates = docs[:6], docs[6:]
    _write_jsonl(meta / "relish" / "evaluation.jsonl",
                 [{"doc_id": q["doc_id"], "query": q, "candidates": candidates} for q in queries])
    _write_jsonl(test / "relish" / "test_qrel.jsonl", _qrels(queries, candidates, rnd))

    docs = _documents("nf", seed + 4)  # ad-hoc search: the query is a text
    queries = [{"doc_id": f"nfq-{t}", "query": " ".join(TOY_TOPICS[t][:3]), "topic": t} for t in topics]
    _write_jsonl(meta / "nfcorpus" / "evaluation.jsonl",
                 [{"doc_id": q["doc_id"], "query": q["query"], "candidates": docs} for q in queries])
    _write_jsonl(test / "nfcorpus" / "test_qrel.jsonl", _qrels(queries, docs, rnd))

    docs = _documents("cite", seed + 5)  # SciDocs: plain documents (simple_format)
    _write_jsonl(meta / "scidocs_view_cite_read" / "evaluation.jsonl", docs)
    _write_jsonl(test / "scidocs_cite" / "test_qrel.jsonl", _qrels(docs[:5], docs[5:], rnd))

    docs = _documents("prm", seed + 6)  # reviewer matching: queries, and reviewers' papers, all plain documents
    queries, papers = docs[:5], docs[5:]
    reviewers = [{"r_id": f"r{i}", "papers": [p["doc_id"] for p in papers[i::7]], "topic": papers[i]["topic"]}
                 for i in range(7)]
    _write_jsonl(meta / "paper_reviewer_matching" / "evaluation.jsonl", docs)
    _write_jsonl(test / "reviewers" / "reviewer_metadata.jsonl", reviewers)
    for name in ("test_hard_qrel.jsonl", "test_soft_qrel.jsonl"):
        _write_jsonl(test / "paper_reviewer_matching" / name,
                     [{"query_id": q["doc_id"], "cand_id": r["r_id"], "score": int(rnd.random() < 0.4)}
                      for q in queries for r in reviewers])
    return root


def read_split(path: Path) -> Dict[str, object]:
    """``paper_id -> label`` of one of the generator's CSV files (a JSON list stays a list)."""
    with open(path, newline="") as fh:
        return {row["paper_id"]: json.loads(row["label"]) for row in csv.DictReader(fh)}
