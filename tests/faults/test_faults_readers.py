"""Issue 41, class 4: the readers agree with each other (same input, same outcome, counted skips naming the reason).

- a citing paper found twice (two shards, or twice in one) gives its edges once in ``get_citations``, counted as
  ``duplicate_paper_id`` exactly as ``get_papers`` counts it, for any ``--workers``;
- an S2ORC record whose title or abstract is not a string is a counted ``invalid_record`` skip, as in the plain
  reader (it was written through as ``"title": 12345``);
- a dangling symlink among the shards is a counted ``unreadable_shard`` with a warning, as an unreadable shard is
  (it was dropped without a word), in the S2ORC and S2AG layouts.
"""
from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from scincl.graph.stage import get_citations
from scincl.io import read_json


def _shard(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(record) + "\n" for record in records)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_paper_found_twice_gives_its_edges_once_and_is_counted_as_get_papers_counts_it(tmp_path, workers):
    from scincl.commands.s2orc import get_papers

    _shard(tmp_path / "m" / "metadata_0.jsonl.gz", [{"paper_id": "a", "outbound_citations": ["b", "c"]},
                                                    {"paper_id": "b", "outbound_citations": ["c"]},
                                                    {"paper_id": "a", "outbound_citations": ["d"]}])
    _shard(tmp_path / "m" / "metadata_1.jsonl.gz", [{"paper_id": "c", "outbound_citations": ["a"]},
                                                    {"paper_id": " b", "outbound_citations": ["a", "c"]}])
    get_citations(str(tmp_path / "m"), str(tmp_path / "out"), workers=workers)
    assert (tmp_path / "out" / "citations.tsv").read_text() == "a\tb\na\tc\nb\tc\nc\ta\n"  # first copies only
    stats = read_json(tmp_path / "out" / "citations.stats.json")
    get_papers(str(tmp_path / "m"), str(tmp_path / "papers.jsonl"), workers=workers)
    papers = read_json(tmp_path / "papers.jsonl.stats.json")
    assert stats["counted"]["duplicate_paper_id"] == papers["counted"]["duplicate_paper_id"] == 2
    assert stats["citing_papers"] == papers["papers"] == 3


def test_a_hash_shared_by_two_distinct_ids_drops_nothing():
    from scincl.graph.duplicates import later_copies

    assert later_copies({0: {0: "a", 2: "x"}, 1: {1: "a", 3: "y"}}) == {1: {1}}
    assert later_copies({0: {0: "x"}, 1: {0: "y"}}) == {}  # same hash, other ids: both kept


def test_a_title_or_abstract_that_is_not_a_string_is_skipped_in_every_format(tmp_path):
    from scincl.commands.s2orc import get_papers

    records = [{"paper_id": "a", "title": 12345}, {"paper_id": "b", "title": "B", "abstract": ["x", "y"]},
               {"paper_id": "c", "title": "C", "abstract": None}]
    _shard(tmp_path / "s2orc" / "metadata_0.jsonl.gz", records)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    outcomes = {}
    for corpus_format in ("s2orc", "plain"):
        out = tmp_path / f"{corpus_format}.jsonl"
        get_papers(str(tmp_path / corpus_format), str(out), corpus_format=corpus_format, workers=1)
        stats = read_json(Path(f"{out}.stats.json"))
        outcomes[corpus_format] = (out.read_text(), stats["papers"], stats["skipped_by_reason"])
    assert outcomes["s2orc"] == outcomes["plain"]
    assert outcomes["s2orc"][1:] == (1, {"invalid_record": 2})
    with pytest.raises(Exception, match=r"metadata_0.jsonl.gz:1, field 'title': invalid record \(title is a int"):
        get_papers(str(tmp_path / "s2orc"), str(tmp_path / "strict.jsonl"), workers=1, strict=True)


def test_a_dangling_symlink_among_the_shards_is_counted_with_a_warning(tmp_path, caplog):
    _shard(tmp_path / "m" / "metadata_0.jsonl.gz", [{"paper_id": "a", "outbound_citations": ["b"]}])
    (tmp_path / "m" / "metadata_1.jsonl.gz").symlink_to(tmp_path / "gone" / "metadata_1.jsonl.gz")
    with caplog.at_level(logging.WARNING):
        get_citations(str(tmp_path / "m"), str(tmp_path / "out"), workers=1)
    stats = read_json(tmp_path / "out" / "citations.stats.json")
    assert stats["skipped_by_reason"] == {"unreadable_shard": 1} and stats["edges"] == 1
    assert "metadata_1.jsonl.gz: file not found" in caplog.text
    # the S2AG layout: a dangling citations file
    s2ag = tmp_path / "s2ag"
    _shard(s2ag / "papers" / "part0.gz", [{"corpusid": 1, "title": "A"}, {"corpusid": 2, "title": "B"}])
    _shard(s2ag / "citations" / "part0.gz", [{"citingcorpusid": 1, "citedcorpusid": 2}])
    (s2ag / "citations" / "part1.gz").symlink_to(tmp_path / "gone" / "part1.gz")
    get_citations(str(s2ag), str(tmp_path / "out_s2ag"), workers=1, corpus_format="s2ag")
    stats = read_json(tmp_path / "out_s2ag" / "citations.stats.json")
    assert stats["skipped_by_reason"] == {"unreadable_shard": 1} and stats["edges"] == 1
