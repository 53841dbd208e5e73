"""The bundled demo corpus: deterministic, in the real S2ORC / SciDocs formats, with a real topic signal."""
from __future__ import annotations

import csv
import gzip
import json
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from scincl.demo import FIELDS_OF_STUDY, make_demo

S2ORC_FIELDS = {
    "paper_id", "title", "authors", "abstract", "year", "arxiv_id", "acl_id", "pmc_id", "pubmed_id", "doi",
    "venue", "journal", "mag_id", "mag_field_of_study", "outbound_citations", "inbound_citations",
    "has_outbound_citations", "has_inbound_citations", "has_pdf_parse", "s2_url",
}
QREL_LINE = re.compile(r"^(\d+) 0 (\d+) ([01])$")


def _records(metadata_dir: Path) -> list:
    shards = sorted(metadata_dir.glob("metadata_*.jsonl.gz"), key=lambda p: int(p.name.split("_")[1].split(".")[0]))
    return [json.loads(line) for shard in shards for line in gzip.open(shard, "rt")]


def _qrels(path: Path) -> dict:
    out: dict = defaultdict(dict)
    for line in path.read_text().splitlines():
        m = QREL_LINE.match(line)
        assert m, f"bad qrel line {line!r} in {path}"
        qid, pid, rel = m.groups()
        assert pid not in out[qid], f"duplicate (qid, pid) {qid} {pid} in {path}"
        out[qid][pid] = int(rel)
    return out


@pytest.fixture(scope="module")
def records(demo_corpus):
    return _records(demo_corpus.s2orc_metadata_dir)


def test_same_seed_gives_identical_bytes_and_other_seed_differs(tmp_path):
    a = make_demo(tmp_path / "a", papers=300, seed=3)
    b = make_demo(tmp_path / "b", papers=300, seed=3)
    c = make_demo(tmp_path / "c", papers=300, seed=4)
    files_a = sorted(p.relative_to(a.root) for p in a.root.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b.root) for p in b.root.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) > 20
    for rel in files_a:
        assert (a.root / rel).read_bytes() == (b.root / rel).read_bytes(), rel
    assert (a.root / "topics.json").read_bytes() != (c.root / "topics.json").read_bytes()
    # gzip header carries no timestamp (mtime 0), so bytes do not depend on when they were written
    assert (a.s2orc_metadata_dir / "metadata_0.jsonl.gz").read_bytes()[4:8] == b"\x00\x00\x00\x00"


def test_s2orc_records_have_real_fields_and_consistent_citations(demo_corpus, records):
    manifest = json.loads(demo_corpus.manifest_path.read_text())
    assert len(records) == manifest["papers"] == 600
    assert len(list(demo_corpus.s2orc_metadata_dir.glob("metadata_*.jsonl.gz"))) == manifest["shards"] == 4
    by_id = {r["paper_id"]: r for r in records}
    assert len(by_id) == len(records), "paper ids must be unique"
    outside = 0
    for r in records:
        assert S2ORC_FIELDS <= set(r), S2ORC_FIELDS - set(r)
        assert isinstance(r["paper_id"], str) and r["paper_id"].isdigit()
        assert r["has_outbound_citations"] == bool(r["outbound_citations"])
        assert r["has_inbound_citations"] == bool(r["inbound_citations"])
        assert len(set(r["outbound_citations"])) == len(r["outbound_citations"])
        assert r["paper_id"] not in r["outbound_citations"]
        for q in r["outbound_citations"]:
            if q in by_id:
                assert r["paper_id"] in by_id[q]["inbound_citations"]
            else:
                outside += 1
        for p in r["inbound_citations"]:
            assert r["paper_id"] in by_id[p]["outbound_citations"]
    assert outside > 0, "some citations must point outside the corpus"
    assert manifest["citation_edges"] == sum(len(r["outbound_citations"]) for r in records)
    no_abstract = sum(r["abstract"] is None for r in records)
    assert 0 < no_abstract < len(records) * 0.2
    assert all(r["title"] for r in records)
    fields = Counter(f for r in records for f in (r["mag_field_of_study"] or []))
    assert set(fields) <= set(FIELDS_OF_STUDY) and len(fields) == 10


def test_pdf_parses_match_metadata(demo_corpus, records):
    with_pdf = {r["paper_id"] for r in records if r["has_pdf_parse"]}
    parses = [json.loads(line) for shard in sorted(demo_corpus.s2orc_pdf_parses_dir.glob("*.jsonl.gz"))
              for line in gzip.open(shard, "rt")]
    assert {p["paper_id"] for p in parses} == with_pdf
    assert all(re.fullmatch(r"[0-9a-f]{40}", p["_pdf_hash"]) for p in parses)
    assert len({p["_pdf_hash"] for p in parses}) == len(parses)


def test_topics_cover_every_paper_and_drive_citations_and_text(demo_corpus, records):
    topics = json.loads(demo_corpus.topics_path.read_text())
    assert set(topics) == {r["paper_id"] for r in records}
    assert all(re.fullmatch(r"[a-z_]+/[a-z]+", label) for label in topics.values())
    assert len(set(topics.values())) == 40  # 10 topics x 4 subtopics
    top = {pid: label.split("/")[0] for pid, label in topics.items()}
    edges = [(r["paper_id"], q) for r in records for q in r["outbound_citations"] if q in topics]
    same_topic = np.mean([top[a] == top[b] for a, b in edges])
    same_sub = np.mean([topics[a] == topics[b] for a, b in edges])
    assert 0.5 < same_topic < 0.95 and 0.3 < same_sub < same_topic  # structure plus noise

    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [r["title"] + " " + (r["abstract"] or "") for r in records]
    x = TfidfVectorizer().fit_transform(texts)
    sim = (x @ x.T).toarray()
    np.fill_diagonal(sim, -1)
    labels = [top[r["paper_id"]] for r in records]
    nn_agreement = np.mean([labels[i] == labels[j] for i, j in enumerate(sim.argmax(1))])
    assert 0.4 < nn_agreement < 0.95, nn_agreement  # chance is 0.1: learnable, not trivial


def test_scidocs_directory_follows_the_protocol(demo_corpus, records):
    scidocs = demo_corpus.scidocs_dir
    by_id = {r["paper_id"]: r for r in records}
    held_out = set(json.loads(demo_corpus.scidocs_paper_ids_path.read_text()))
    assert held_out <= set(by_id)
    view_meta = json.loads((scidocs / "paper_metadata_view_cite_read.json").read_text())
    for pid, meta in view_meta.items():
        assert meta["paper_id"] == pid and meta["title"] == by_id[pid]["title"]
        assert meta["abstract"] == by_id[pid]["abstract"]
    queries_by_task = {}
    for task in ("coview", "coread", "cite", "cocite"):
        split_queries = []
        for split in ("val", "test"):
            qrels = _qrels(scidocs / task / f"{split}.qrel")
            assert qrels
            for qid, cands in qrels.items():
                assert sorted(Counter(cands.values()).items()) == [(0, 25), (1, 5)]
                assert qid in held_out and qid in view_meta
                assert set(cands) <= set(view_meta) and not set(cands) & held_out
                positives = [p for p, rel in cands.items() if rel]
                if task == "cite":
                    assert set(positives) <= set(by_id[qid]["outbound_citations"])
                if task == "cocite":
                    for p in positives:  # some paper cites both the query and the positive
                        assert set(by_id[qid]["inbound_citations"]) & set(by_id[p]["inbound_citations"])
            split_queries.append(set(qrels))
        assert not split_queries[0] & split_queries[1]
        queries_by_task[task] = split_queries[0] | split_queries[1]
    assert len(set(map(frozenset, queries_by_task.values()))) == 1

    mag_meta = json.loads((scidocs / "paper_metadata_mag_mesh.json").read_text())
    topics = json.loads(demo_corpus.topics_path.read_text())
    for task, n_classes in (("mag", 10), ("mesh", 4)):
        seen = {}
        for split in ("train", "val", "test"):
            with open(scidocs / task / f"{split}.csv", newline="") as fh:
                rows = list(csv.reader(fh))
            assert rows[0] == ["pid", "class_label"]
            seen[split] = {pid: int(label) for pid, label in rows[1:]}
            assert set(seen[split]) <= set(mag_meta) and set(seen[split]) <= held_out
        assert not set(seen["train"]) & set(seen["test"]) and not set(seen["val"]) & set(seen["test"])
        train_counts = Counter(seen["train"].values())
        assert sorted(train_counts) == list(range(n_classes)) and min(train_counts.values()) >= 3
        if task == "mag":
            mag_train = seen["train"]
    fos = [f.lower().replace(" ", "_") for f in FIELDS_OF_STUDY]
    assert all(topics[pid].split("/")[0] == fos[label] for pid, label in mag_train.items())


def test_make_demo_cli(tmp_path, repo_root, python_exe):
    out = tmp_path / "cli_demo"
    proc = subprocess.run([python_exe, "cli_s2orc.py", "make_demo", str(out), "--papers", "250", "--seed", "1"],
                          cwd=repo_root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "demo_manifest.json").read_text())["papers"] == 250
    assert (out / "scidocs" / "cite" / "test.qrel").stat().st_size > 0
    bad = subprocess.run([python_exe, "cli_s2orc.py", "make_demo", str(tmp_path / "x"), "--papers", "10"],
                         cwd=repo_root, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == "cli_s2orc.py: error: the demo corpus needs at least 200 papers (got 10)"


def test_a_demo_too_small_for_scidocs_is_one_line_from_run_specter(tmp_path, repo_root, python_exe):
    """200 papers pass the size check but leave too few SciDocs queries: a user's error, not a traceback."""
    from scincl.errors import InputError

    with pytest.raises(InputError, match=r"^only \d of the 200 demo papers qualify as SciDocs queries \(10 needed\)"):
        make_demo(tmp_path / "lib", papers=200)
    proc = subprocess.run([python_exe, "cli_pipeline.py", "run_specter", str(tmp_path / "run"), "--demo_papers", "200"],
                          cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert re.search(r"cli_pipeline.py: error: .*only \d of the 200 demo papers qualify as SciDocs queries",
                     proc.stderr.strip().splitlines()[-1]), proc.stderr[-2000:]
