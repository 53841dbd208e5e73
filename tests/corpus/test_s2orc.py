"""The S2ORC shards (scincl/corpus/shards.py) and the id-mapping commands of cli_s2orc.py (scincl/corpus/stage.py).

Citation and co-citation extraction on the same hand-made corpus: tests/graph/test_citations.py.
"""
from __future__ import annotations

import gzip
import json

import pytest

import cli_s2orc
from scincl.corpus.shards import (
    ReadStats,
    process_pool,
    iter_numbered_papers,
    iter_paper_references,
    iter_papers,
    list_metadata_shards,
    map_shards,
)
from scincl.errors import InputError
from scincl.graph.citations import read_citations_tsv
from tests.conftest import HAND_SHARDS, hand_corpus_edges, hand_record


# ------------------------------------------------------------------------------------ shards

def test_shards_are_listed_in_natural_order_and_bad_dirs_are_input_errors(hand_corpus, tmp_path):
    assert [p.name for p in list_metadata_shards(hand_corpus)] == list(HAND_SHARDS)
    with pytest.raises(InputError, match="S2ORC directory not found"):
        list_metadata_shards(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: no S2ORC shards \(\*\.jsonl\.gz\) in directory"):
        list_metadata_shards(tmp_path / "empty")


def test_iter_papers_counts_and_skips_bad_lines_or_fails_under_strict(hand_corpus):
    shard = hand_corpus / "metadata_1.jsonl.gz"
    stats = ReadStats()
    assert [r["paper_id"] for r in iter_papers(shard, stats=stats)] == ["e", "f", "g"]
    assert stats.lines == 6 and stats.papers == 3
    assert dict(stats.skipped) == {"malformed_json": 1, "missing_paper_id": 1, "not_a_json_object": 1}
    assert stats.skip_examples[0].startswith(f"{shard}:2: malformed_json")
    with pytest.raises(InputError) as err:
        list(iter_papers(shard, strict=True))
    assert str(err.value).startswith(f"{shard}:2: malformed JSON")
    shard.write_bytes(gzip.compress(b'{"paper_id": "e"}\n{"title": "x"}\n', mtime=0))
    with pytest.raises(InputError, match=r"metadata_1\.jsonl\.gz:2, field 'paper_id': record without 'paper_id'"):
        list(iter_papers(shard, strict=True))


def test_unreadable_and_truncated_shards(tmp_path):
    records = [hand_record(str(i), [str(i + 1)]) for i in range(3000)]
    full = gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in records), mtime=0)
    truncated = tmp_path / "metadata_0.jsonl.gz"
    truncated.write_bytes(full[: len(full) // 2])
    stats = ReadStats()
    read = list(iter_papers(truncated, stats=stats))
    assert 0 < len(read) < 3000 and stats.skipped["unreadable_shard"] == 1
    with pytest.raises(InputError, match="metadata_0.jsonl.gz: unreadable shard after line"):
        list(iter_papers(truncated, strict=True))
    not_gzip = tmp_path / "metadata_1.jsonl.gz"
    not_gzip.write_bytes(b"this is not gzip data")
    with pytest.raises(InputError, match="metadata_1.jsonl.gz: unreadable shard"):
        list(iter_papers(not_gzip, strict=True))
    # concatenated gzip members (e.g. `cat a.gz b.gz`) are one valid stream
    two = tmp_path / "metadata_2.jsonl.gz"
    two.write_bytes(full + gzip.compress(b'{"paper_id": "last"}\n'))
    assert sum(1 for _ in iter_papers(two, strict=True)) == 3001


def test_fast_reference_decoding_agrees_with_full_records(hand_corpus, tmp_path):
    odd = tmp_path / "metadata_9.jsonl.gz"  # int ids, a blank line, a missing field: fast path falls back
    odd.write_bytes(gzip.compress(b'{"paper_id": 5, "outbound_citations": [1, "2"]}\n\n{"paper_id": "6"}\n'
                                  b'{"paper_id": "7", "outbound_citations": ["5"], "abstract": "x"}', mtime=0))
    for shard in [*list_metadata_shards(hand_corpus), odd]:
        fast_stats, full_stats = ReadStats(), ReadStats()
        fast = [(n, pid, refs) for n, pid, refs in iter_paper_references(shard, stats=fast_stats)]
        full = [(n, r["paper_id"], r.get("outbound_citations")) for n, r in iter_numbered_papers(shard, stats=full_stats)]
        assert fast == full
        fast_dict, full_dict = fast_stats.to_dict(), full_stats.to_dict()
        where = lambda examples: [e.split(" (")[0] for e in examples]  # noqa: E731 (parser messages differ)
        assert where(fast_dict.pop("skip_examples")) == where(full_dict.pop("skip_examples"))
        assert fast_dict == full_dict
    assert fast == [(1, "5", [1, "2"]), (3, "6", None), (4, "7", ["5"])]


def _shard_ids(shard):
    return [r["paper_id"] for r in iter_papers(shard)]


def test_map_shards_keeps_shard_order_with_workers(hand_corpus):
    shards = list_metadata_shards(hand_corpus)
    assert map_shards(_shard_ids, shards, workers=2) == map_shards(_shard_ids, shards, workers=1) == [
        ["a", "b", "c", "d"], ["e", "f", "g"], ["h"]]


def _square_or_fail(value: int) -> int:
    if value == 3:
        raise ValueError("three")
    return value * value


def test_process_pool_workers_exit_after_each_pool_and_on_an_error():
    """Pools in a row each leave no worker behind (closed and joined, never terminated while idle: a terminated
    pool once left the co-citation sampler's parent waiting for a worker forever); a worker's error reaches the
    caller and the pool is gone afterwards too."""
    import multiprocessing

    for _ in range(10):
        with process_pool(2) as pool:
            assert list(pool.imap(_square_or_fail, [1, 2, 4])) == [1, 4, 16]
        assert multiprocessing.active_children() == []
    with pytest.raises(ValueError, match="three"):
        with process_pool(2) as pool:
            list(pool.imap(_square_or_fail, range(5)))
    assert multiprocessing.active_children() == []


# ------------------------------------------------------------------------------ id mappings

def test_id_mapping_commands_on_demo(demo_corpus, tmp_path):
    records = {json.loads(line)["paper_id"]: json.loads(line)
               for shard in list_metadata_shards(demo_corpus.s2orc_metadata_dir) for line in gzip.open(shard)}
    meta_dir = str(demo_corpus.s2orc_metadata_dir)
    cli_s2orc.get_inbound_citations_count(meta_dir, str(tmp_path / "inbound.json.gz"), workers=2)
    inbound = json.loads(gzip.decompress((tmp_path / "inbound.json.gz").read_bytes()))
    assert inbound == {pid: len(r["inbound_citations"]) for pid, r in records.items() if r["inbound_citations"]}

    cli_s2orc.get_metadata_id_mapping(meta_dir, str(tmp_path / "positions.json"), workers=1)
    positions = json.loads((tmp_path / "positions.json").read_text())
    lines = gzip.open(demo_corpus.s2orc_metadata_dir / "metadata_2.jsonl.gz").read().splitlines()
    assert sum(len(v) for v in positions.values()) == len(records)
    assert all(json.loads(lines[i])["paper_id"] == pid for pid, i in positions["metadata_2.jsonl.gz"])

    cli_s2orc.get_scidocs_title_mapping(str(demo_corpus.scidocs_dir), meta_dir, str(tmp_path / "titles.json"))
    titles = json.loads((tmp_path / "titles.json").read_text())
    scidocs_ids = set(json.loads((demo_corpus.scidocs_dir / "paper_metadata_view_cite_read.json").read_text()))
    assert len(titles) > 0.9 * len(scidocs_ids) and all(titles[k] == k for k in titles)

    cli_s2orc.get_pdf_hashes(str(demo_corpus.s2orc_pdf_parses_dir), str(tmp_path / "p2h.json"),
                             str(tmp_path / "h2p.json"), workers=2)
    p2h = json.loads((tmp_path / "p2h.json").read_text())
    h2p = json.loads((tmp_path / "h2p.json").read_text())
    assert set(p2h) == {pid for pid, r in records.items() if r["has_pdf_parse"]}
    assert {h: p for p, h in p2h.items()} == h2p


def test_mapping_merge_ids_and_specter_corpus(hand_corpus, tmp_path):
    (tmp_path / "api.json").write_text(json.dumps({"S1": {"corpusId": 101}, "S2": {"corpusId": "b"}}))
    (tmp_path / "titles.json").write_text(json.dumps({"S1": "zzz", "S3": "c", "S4": "d", "S9": "a", "S5": "e"}))
    cli_s2orc.get_s2orc_scidocs_mappings(f"{tmp_path / 'api.json'}", str(tmp_path / "titles.json"),
                                         str(tmp_path / "merged.json"))
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged == {"S1": "101", "S2": "b", "S3": "c", "S4": "d", "S5": "e", "S9": "a"}  # API wins over titles
    cli_s2orc.get_s2orc_paper_ids_from_mapping(str(tmp_path / "titles.json"), str(tmp_path / "ids.json"))
    assert json.loads((tmp_path / "ids.json").read_text()) == ["zzz", "c", "d", "a", "e"]

    # SPECTER triples in S2 ids; SciDocs paper S3 (-> c) is excluded, SPECTER papers are kept.
    (tmp_path / "triples.csv").write_text("query_paper_id,positive_id,negative_id\nS9,S4,S2\nS5,S9,S2\n")
    scidocs = tmp_path / "scidocs"
    scidocs.mkdir()
    (scidocs / "paper_metadata_view_cite_read.json").write_text(json.dumps(
        {"S3": {"paper_id": "S3", "title": "t"}, "S4": {"paper_id": "S4", "title": "u"}}))
    (tmp_path / "all_ids.json").write_text(json.dumps(list("abcdefgh")))
    cli_s2orc.get_specter_corpus(str(tmp_path / "all_ids.json"), str(hand_corpus), str(scidocs),
                                 str(tmp_path / "triples.csv"), str(tmp_path / "merged.json"), 0,
                                 str(tmp_path / "corpus"), str(tmp_path / "cites"), workers=1)
    read = lambda name: json.loads((tmp_path / "corpus" / name).read_text())  # noqa: E731
    assert read("query_s2orc_paper_ids.specter.json") == ["a", "e"]
    assert read("excluded_s2orc_paper_ids.json") == ["c"]  # S4 -> d is a SPECTER paper: kept
    assert read("s2orc_paper_ids.json") == ["a", "b", "d", "e", "f", "g", "h"]
    assert list(read_citations_tsv(tmp_path / "cites" / "citations.tsv")) == hand_corpus_edges(excluded={"c"})
