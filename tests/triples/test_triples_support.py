"""Support commands: collisions, oracle SciDocs triples, metadata extraction, and the demo-corpus CLI chain."""
from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.io import iter_triples_csv, read_id_list, read_jsonl, write_triples_csv
from scincl.corpus.shards import iter_papers, list_metadata_shards
from scincl.triples.collisions import collision_counts, count_collisions_in_files
from scincl.triples.metadata import get_metadata
from scincl.triples.scidocs_oracle import get_scidocs_triples
from tests.conftest import run_front_end


def test_collision_counts_directed_and_symmetric(tmp_path):
    # q1: x positive and negative (directed); {q1,y} positive one way, negative the other (symmetric)
    q = np.array([1, 1, 1, 2, 3])
    p = np.array([10, 10, 2, 5, 6])
    n = np.array([10, 7, 8, 1, 3])
    counts = collision_counts(q, p, n)
    assert counts["collisions"] == 1 and counts["collision_triples"] == 2  # (1,10) in two triples
    assert counts["symmetric_collisions"] == 2  # {1,10} and {1,2}
    assert counts["self_pairs"] == 1  # (3, 6, 3)
    a = write_triples_csv(tmp_path / "a.csv", [("q", "x", "y")]) and tmp_path / "a.csv"
    b = write_triples_csv(tmp_path / "b.csv", [("q", "z", "x")]) and tmp_path / "b.csv"
    report = count_collisions_in_files([a, b])
    assert report[str(a)]["collisions"] == 0 and report[str(b)]["collisions"] == 0
    assert report["all files"]["collisions"] == 1  # x: positive of q in a, negative of q in b


@pytest.fixture()
def hand_scidocs(tmp_path):
    root = tmp_path / "scidocs"
    (root / "cite").mkdir(parents=True)
    (root / "cite" / "test.qrel").write_text(
        "q1 0 p1 1\nq1 0 n1 0\nq1 0 p2 1\nq1 0 n2 0\nq1 0 n3 0\nq2 0 p3 1\nq2 0 n4 0\n")
    (root / "mag").mkdir()
    (root / "mag" / "test.csv").write_text("pid,class_label\n" + "".join(f"m{i},{i % 3}\n" for i in range(12)))
    (root / "recomm").mkdir()
    (root / "recomm" / "test.csv").write_text(
        'pid,clicked_pid,similar_papers_avail_at_time\nr1,c1,"s1,c1,s2"\nr1,c2,"c2,s3"\n')
    return root


def test_oracle_scidocs_triples(hand_scidocs, tmp_path):
    counts = get_scidocs_triples(hand_scidocs, tmp_path / "o.csv", seed=0)
    rows = list(iter_triples_csv(tmp_path / "o.csv"))
    assert [r for r in rows if r[0] in ("q1", "q2")] == [("q1", "p1", "n1"), ("q1", "p2", "n2"), ("q2", "p3", "n4")]
    assert [r for r in rows if r[0] == "r1"] == [("r1", "c1", "s1"), ("r1", "c2", "s2")]
    mag = [r for r in rows if r[0].startswith("m")]
    assert len(mag) == counts["test_mag"] == 2  # balanced: mean of the ranking tasks (3 cite, 2 recomm) -> 2
    for q, p, n in mag:
        assert int(q[1:]) % 3 == int(p[1:]) % 3 and int(q[1:]) % 3 != int(n[1:]) % 3 and q != p
    all_pairs = get_scidocs_triples(hand_scidocs, tmp_path / "all.csv", tasks="mag",
                                    sample_classification_triples=0)
    assert all_pairs["test_mag"] == 3 * 4 * 3  # every ordered same-label pair of 3 classes x 4 papers
    with pytest.raises(InputError, match="unknown SciDocs task"):
        get_scidocs_triples(hand_scidocs, tmp_path / "x.csv", tasks="cite,foo")


def test_metadata_same_output_for_any_worker_count(demo_corpus, tmp_path):
    shards = list_metadata_shards(demo_corpus.s2orc_metadata_dir)
    ids = [r["paper_id"] for r in iter_papers(shards[0])][:40] + [r["paper_id"] for r in iter_papers(shards[-1])][:40]
    write_triples_csv(tmp_path / "t.csv", [(ids[i], ids[i + 1], ids[(i + 2) % 80]) for i in range(0, 80, 2)]
                      + [(ids[0], ids[1], "not-a-paper")])
    one = get_metadata(tmp_path / "t.csv", tmp_path / "m1.jsonl.gz", demo_corpus.s2orc_metadata_dir, workers=1)
    two = get_metadata(tmp_path / "t.csv", tmp_path / "m2.jsonl.gz", demo_corpus.s2orc_metadata_dir, workers=2)
    assert (tmp_path / "m1.jsonl.gz").read_bytes() == (tmp_path / "m2.jsonl.gz").read_bytes()
    assert one == two and one["missing"] == 1 and one["found"] == 80
    records = read_jsonl(tmp_path / "m1.jsonl.gz")
    assert sorted(records[0]) == ["abstract", "paper_id", "title"] and {r["paper_id"] for r in records} == set(ids)


def test_cli_chain_on_the_demo_corpus(demo_corpus, tmp_path):
    """citations -> SPECTER-like triples -> metadata -> ids -> collisions, as a user runs them."""
    with open(tmp_path / "citations.tsv", "w") as fh:
        for shard in list_metadata_shards(demo_corpus.s2orc_metadata_dir):
            for rec in iter_papers(shard):
                for ref in rec.get("outbound_citations") or []:
                    fh.write(f"{rec['paper_id']}\t{ref}\n")
    run = partial(run_front_end, "cli_triples.py")
    done = run("get_specter_like_triples", tmp_path / "citations.tsv", tmp_path / "triples.csv",
               "--query_papers", 100, "--triples_count", 400, "--seed", 0)
    assert done.returncode == 0, done.stderr
    triples = list(iter_triples_csv(tmp_path / "triples.csv"))
    assert len(triples) == 400 and len({q for q, _, _ in triples}) == 80
    done = run("get_metadata", tmp_path / "triples.csv", tmp_path / "train_metadata.jsonl.gz",
               "--s2orc_metadata_dir", demo_corpus.s2orc_metadata_dir, "--workers", 2)
    assert done.returncode == 0, done.stderr
    papers = {r["paper_id"] for r in read_jsonl(tmp_path / "train_metadata.jsonl.gz")}
    stats = json.loads((tmp_path / "train_metadata.jsonl.gz.stats.json").read_text())
    assert papers <= {x for t in triples for x in t} and stats["found"] + stats["missing"] == stats["needed"]
    done = run("extract_ids_from_triples", tmp_path / "triples.csv", tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(read_id_list(tmp_path / "query_s2orc_paper_ids.json")) == 80
    done = run("count_collisions", tmp_path / "triples.csv")
    assert done.returncode == 0 and "| triples | queries | collisions |" in done.stdout
    assert f"| {tmp_path / 'triples.csv'} | 400 | 80 | 0 |" in done.stdout
    done = run("get_metadata", tmp_path / "missing.csv", tmp_path / "m.jsonl", "--s2orc_metadata_dir", tmp_path)
    assert done.returncode == 2 and done.stderr.strip().endswith("missing.csv: file not found")
