"""The S2ORC stage: shard streaming, citation / co-citation extraction, id mappings, bad input, PBG import."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import h5py
import pytest

import cli_s2orc
from scincl.errors import InputError
from scincl.graph.citations import (
    extract_citations,
    normalize_batch,
    read_citations_tsv,
    split_train_test,
    train_test_assigner,
)
from scincl.graph.cocitations import (
    count_bibliographic_coupling,
    count_cocitations,
    read_cocitations_tsv,
    write_cocitations_tsv,
)
from scincl.io import write_jsonl
from scincl.corpus.shards import (
    ReadStats,
    iter_numbered_papers,
    iter_paper_references,
    iter_papers,
    iter_reference_batches,
    list_metadata_shards,
    map_shards,
)
from tests.conftest import run_front_end

# A hand-made corpus: paper -> outbound citations ("x" is outside the corpus; "b" lists "c" twice).
HAND_SHARDS = {
    "metadata_0.jsonl.gz": [("a", ["b", "c", "x"]), ("b", ["c", "c"]), ("c", []), ("d", ["a", "b", "c"])],
    "metadata_1.jsonl.gz": [("e", ["a", "d"]), ("f", None), ("g", ["a", "b"])],
    "metadata_10.jsonl.gz": [("h", ["e", "a"])],
}
BAD_LINES = [b'{"paper_id": "bad", "outbound_citations": [\n', b'{"title": "no id", "outbound_citations": ["a"]}\n',
             b'["a list"]\n']


def _record(pid, refs):
    return {"paper_id": pid, "title": f"Title {pid}", "abstract": None, "outbound_citations": refs,
            "inbound_citations": [], "has_outbound_citations": bool(refs)}


def _expected_edges(included=None, excluded=None):
    """Independent edge computation from HAND_SHARDS (shard order: 0, 1, 10)."""
    edges = []
    for name in ("metadata_0.jsonl.gz", "metadata_1.jsonl.gz", "metadata_10.jsonl.gz"):
        for pid, refs in HAND_SHARDS[name]:
            if (included and pid not in included) or (excluded and pid in excluded):
                continue
            for ref in dict.fromkeys(refs or []):
                if not (excluded and ref in excluded):
                    edges.append((pid, ref))
    return edges


@pytest.fixture()
def hand_corpus(tmp_path) -> Path:
    d = tmp_path / "metadata"
    for name, papers in HAND_SHARDS.items():
        write_jsonl(d / name, [_record(pid, refs) for pid, refs in papers])
    # metadata_1 gets three bad lines (lines 2-4) after its first record
    good = gzip.decompress((d / "metadata_1.jsonl.gz").read_bytes()).splitlines(keepends=True)
    (d / "metadata_1.jsonl.gz").write_bytes(gzip.compress(b"".join([good[0], *BAD_LINES, *good[1:]]), mtime=0))
    return d


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
    records = [_record(str(i), [str(i + 1)]) for i in range(3000)]
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


def test_reference_batches_typed_and_line_by_line_normalise_alike(tmp_path):
    clean = tmp_path / "metadata_0.jsonl.gz"  # one block that decodes typed: null, missing, a repeated id
    clean.write_bytes(gzip.compress(b'{"paper_id": "p", "outbound_citations": ["a", "b", "a"], "x": [1]}\n'
                                    b'{"paper_id": "q", "outbound_citations": null}\n{"paper_id": "r"}\n', mtime=0))
    odd = tmp_path / "metadata_1.jsonl.gz"  # int ids and a string instead of a list: decoded line by line
    odd.write_bytes(gzip.compress(b'{"paper_id": 5, "outbound_citations": [1, "2", 1]}\n'
                                  b'{"paper_id": "6", "outbound_citations": "x"}\n', mtime=0))
    stats = ReadStats()
    (typed,), (untyped,) = list(iter_reference_batches(clean, stats=stats)), list(iter_reference_batches(odd, stats=stats))
    assert typed.typed and list(typed.lines) == [1, 2, 3] and not untyped.typed and list(untyped.lines) == [1, 2]
    assert normalize_batch(typed, clean, stats=stats) == (["p", "q", "r"], [["a", "b"], [], []])
    assert normalize_batch(untyped, odd, stats=stats) == (["5"], [["1", "2"]])
    assert stats.skipped == {"bad_outbound_citations": 1} and stats.skip_examples == [
        f"{odd}:2: bad_outbound_citations"]
    with pytest.raises(InputError, match=r"metadata_1.jsonl.gz:2, field 'outbound_citations': 'outbound_citations' is not a list"):
        normalize_batch(untyped, odd, strict=True)


def test_split_is_one_seeded_draw_per_edge_in_file_order_of_each_shard(hand_corpus, tmp_path):
    shards = list_metadata_shards(hand_corpus)
    extract_citations(shards, tmp_path / "s", workers=2, test_ratio=0.4, seed=3)
    expected = {"train": [], "test": []}
    for shard in shards:  # independent rule: edges in file order, one draw each from the shard's stream
        is_test = train_test_assigner(0.4, seed=3, stream=shard.name)
        shard_edges = [(pid, ref) for pid, refs in HAND_SHARDS[shard.name] for ref in dict.fromkeys(refs or [])]
        for edge in shard_edges:
            expected["test" if is_test() else "train"].append(edge)
    for split in ("train", "test"):
        assert list(read_citations_tsv(tmp_path / "s" / f"citations.{split}.tsv")) == expected[split]
    assert {p for p, _ in expected["train"]} & {p for p, _ in expected["test"]}  # papers split across both


def _shard_ids(shard):
    return [r["paper_id"] for r in iter_papers(shard)]


def test_map_shards_keeps_shard_order_with_workers(hand_corpus):
    shards = list_metadata_shards(hand_corpus)
    assert map_shards(_shard_ids, shards, workers=2) == map_shards(_shard_ids, shards, workers=1) == [
        ["a", "b", "c", "d"], ["e", "f", "g"], ["h"]]


# ---------------------------------------------------------------------------------- citations

def test_get_citations_matches_independent_computation(hand_corpus, tmp_path, repo_root):
    out = tmp_path / "out"
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, out, "--workers", 2, check=True)
    assert list(read_citations_tsv(out / "citations.tsv")) == _expected_edges()
    lines = (out / "citations.tsv").read_text().splitlines()
    assert lines[0] == "a\tb" and all(line.count("\t") == 1 for line in lines)
    stats = json.loads((out / "citations.stats.json").read_text())
    assert stats["papers_read"] == 8 and stats["edges"] == len(_expected_edges()) == 13
    assert stats["skipped_lines"] == 3 and stats["skipped_by_reason"] == {
        "malformed_json": 1, "missing_paper_id": 1, "not_a_json_object": 1}

    ids = tmp_path / "ids"
    ids.mkdir()
    (ids / "inc.json").write_text(json.dumps(["a", "d", "e"]))
    (ids / "exc.json").write_text(json.dumps(["c", "e"]))
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "inc", "--included_paper_ids", ids / "inc.json",
                  check=True)
    assert list(read_citations_tsv(tmp_path / "inc" / "citations.tsv")) == _expected_edges(included={"a", "d", "e"})
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "exc" / "graph.tsv", "--excluded_paper_ids",
                  ids / "exc.json", "--workers", 1, check=True)
    exc_edges = list(read_citations_tsv(tmp_path / "exc" / "graph.tsv"))  # a .tsv output is the file itself
    assert exc_edges == _expected_edges(excluded={"c", "e"})
    assert not {"c", "e"} & {n for edge in exc_edges for n in edge}
    assert json.loads((tmp_path / "exc" / "graph.stats.json").read_text())["edges_dropped"] == {
        "cited_excluded": 4, "citing_excluded": 2}


def test_test_ratio_split_is_a_seeded_partition(hand_corpus, tmp_path, repo_root):
    full = _expected_edges()
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "s1", "--test_ratio", 0.3, "--seed", 5,
                  "--workers", 2, check=True)
    extract_citations(list_metadata_shards(hand_corpus), tmp_path / "s2", workers=1, test_ratio=0.3, seed=5)
    extract_citations(list_metadata_shards(hand_corpus), tmp_path / "s3", workers=1, test_ratio=0.3, seed=6)
    train = list(read_citations_tsv(tmp_path / "s1" / "citations.train.tsv"))
    test = list(read_citations_tsv(tmp_path / "s1" / "citations.test.tsv"))
    assert Counter(train) + Counter(test) == Counter(full) and train and test
    assert [e for e in full if e in set(train)] == train  # each split keeps shard/file order
    for name in ("citations.train.tsv", "citations.test.tsv"):  # same seed, any workers: same bytes
        assert (tmp_path / "s1" / name).read_bytes() == (tmp_path / "s2" / name).read_bytes()
    assert (tmp_path / "s1" / "citations.test.tsv").read_bytes() != (tmp_path / "s3" / "citations.test.tsv").read_bytes()
    assert not (tmp_path / "s1" / "citations.tsv").exists()
    stats = json.loads((tmp_path / "s1" / "citations.stats.json").read_text())
    assert stats["edges_by_split"] == {"train": len(train), "test": len(test)}
    in_memory = split_train_test(full, 0.3, seed=5)
    assert in_memory == split_train_test(full, 0.3, seed=5) and sum(map(len, in_memory)) == len(full)


def test_sample_n_nodes_of_all_but_one_node_drops_exactly_that_nodes_edges(hand_corpus, tmp_path):
    expected = _expected_edges()
    all_nodes = sorted({n for e in expected for n in e})
    cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=len(all_nodes) - 1,
                            seed=3)
    edges = list(read_citations_tsv(tmp_path / "o" / "citations.tsv"))
    candidates = [x for x in all_nodes if edges == [e for e in expected if x not in e]]
    assert len(candidates) >= 1, edges  # some single node (and only its edges) was left out
    assert 0 < len(expected) - len(edges) < len(expected)


def test_sample_n_nodes_keeps_edges_between_sampled_nodes(hand_corpus, tmp_path):
    cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=5, seed=1)
    edges = list(read_citations_tsv(tmp_path / "o" / "citations.tsv"))
    nodes = {n for e in edges for n in e}
    assert len(nodes) <= 5 and set(edges) <= set(_expected_edges())
    # the sample is an induced subgraph: every edge between two kept endpoints is kept
    assert edges == [e for e in _expected_edges() if set(e) <= nodes] and edges
    stats = json.loads((tmp_path / "o" / "citations.stats.json").read_text())
    assert stats["edges_dropped"]["not_in_node_sample"] == 13 - len(edges)
    # an existing output is reused for the same flags; made with others it is refused (issue 29: it was
    # reused); --override rebuilds it
    cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=5, seed=1)
    assert list(read_citations_tsv(tmp_path / "o" / "citations.tsv")) == edges
    with pytest.raises(InputError, match="setting sample_n_nodes differs"):
        cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1)
    cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, override=True)
    assert list(read_citations_tsv(tmp_path / "o" / "citations.tsv")) == _expected_edges()


def test_bad_input_gives_one_line_errors(hand_corpus, tmp_path, repo_root):
    (tmp_path / "empty").mkdir()
    proc = run_front_end("cli_s2orc.py", "get_citations", tmp_path / "empty", tmp_path / "o1")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"cli_s2orc.py: error: {tmp_path / 'empty'}: cannot tell the corpus format; pass --corpus_format, one of: "
        "s2orc (*.jsonl.gz shards")
    proc = run_front_end("cli_s2orc.py", "get_citations", tmp_path / "empty", tmp_path / "o1", "--corpus_format",
                         "s2orc")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"cli_s2orc.py: error: {tmp_path / 'empty'}: no S2ORC shards (*.jsonl.gz) in directory")
    (tmp_path / "ids.json").write_text('{"a": 1}')
    proc = run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "o2", "--excluded_paper_ids",
                         tmp_path / "ids.json")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"cli_s2orc.py: error: {tmp_path / 'ids.json'}: expected a JSON list of paper ids, got dict")
    proc = run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "o3", "--strict")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"cli_s2orc.py: error: {hand_corpus / 'metadata_1.jsonl.gz'}:2: malformed JSON")
    assert not (tmp_path / "o3" / "citations.tsv").exists()  # no half output


def test_strict_failure_inside_the_worker_pool_is_the_same_one_line_error(hand_corpus, tmp_path, repo_root):
    # the InputError is raised in a pool worker, pickled back and reported by the parent
    with pytest.raises(InputError, match=r"metadata_1\.jsonl\.gz:2: malformed JSON") as caught:
        cli_s2orc.get_citations(str(hand_corpus), str(tmp_path / "lib"), workers=3, strict=True)
    assert caught.value.path == str(hand_corpus / "metadata_1.jsonl.gz") and caught.value.line == 2
    proc = run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "o", "--strict", "--workers", "3")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"cli_s2orc.py: error: {hand_corpus / 'metadata_1.jsonl.gz'}:2: malformed JSON")
    assert not (tmp_path / "o" / "citations.tsv").exists() and not list(tmp_path.glob("o/.citations.parts.*"))


def test_citations_tsv_imports_into_biggraph(demo_corpus, tmp_path, repo_root):
    out = tmp_path / "graph"
    cli_s2orc.get_citations(str(demo_corpus.s2orc_metadata_dir), str(out), workers=2,
                            excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path))
    tsv = out / "citations.tsv"
    edges = list(read_citations_tsv(tsv))
    assert len(edges) > 1000
    config = tmp_path / "pbg_config.py"
    config.write_text(
        "def get_torchbiggraph_config():\n"
        f"    return dict(entity_path={str(tmp_path / 'entities')!r}, edge_paths=[{str(tmp_path / 'edges')!r}],\n"
        f"                checkpoint_path={str(tmp_path / 'ckpt')!r},\n"
        "                entities={'paper_id': {'num_partitions': 1}},\n"
        "                relations=[{'name': 'cites', 'lhs': 'paper_id', 'rhs': 'paper_id', 'operator': 'none'}],\n"
        "                dimension=8)\n")
    importer = Path(sys.executable).parent / "torchbiggraph_import_from_tsv"
    proc = subprocess.run([str(importer), "--lhs-col=0", "--rhs-col=1", str(config), str(tsv)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"Processed {len(edges)} edges in total" in proc.stdout
    names = json.loads((tmp_path / "entities" / "entity_names_paper_id_0.json").read_text())
    with h5py.File(tmp_path / "edges" / "edges_0_0.h5", "r") as f:
        lhs, rhs = f["lhs"][...], f["rhs"][...]
    assert Counter((names[a], names[b]) for a, b in zip(lhs, rhs)) == Counter(edges)


# ------------------------------------------------------------------------------- co-citations

def test_cocitation_and_coupling_counts_by_hand(tmp_path):
    lists = [["a", "b", "c"], ["b", "c", "c"], ["c", "a"], ["d"]]
    assert count_cocitations(lists) == {("a", "b"): 1, ("a", "c"): 2, ("b", "c"): 2}
    assert count_cocitations(lists, min_count=2) == {("a", "c"): 2, ("b", "c"): 2}
    assert count_bibliographic_coupling({"p": ["x", "y"], "q": ["y", "x", "z"], "r": ["z"], "s": []}) == {
        ("p", "q"): 2, ("q", "r"): 1}
    assert count_bibliographic_coupling([("p", ["x"]), ("q", ["x"])]) == {("p", "q"): 1}
    path = tmp_path / "cocit.tsv"
    assert write_cocitations_tsv(path, {("b", "c"): 2, ("a", "c"): 1}) == 4
    assert path.read_text() == "a\tc\t1\nb\tc\t2\nc\ta\t1\nc\tb\t2\n"
    assert list(read_cocitations_tsv(path)) == [("a", "c", 1), ("b", "c", 2), ("c", "a", 1), ("c", "b", 2)]
    path.write_text("a\tb\tmany\n")
    with pytest.raises(InputError, match=r"cocit.tsv:1, field 'count': count is not an integer"):
        list(read_cocitations_tsv(path))


def test_get_cocitations_cli(hand_corpus, tmp_path, repo_root):
    run_front_end("cli_s2orc.py", "get_cocitations", hand_corpus, tmp_path / "co", "--workers", 2, check=True)
    got = {(a, b): c for a, b, c in read_cocitations_tsv(tmp_path / "co" / "cocitations.tsv")}
    expected = {("b", "c"): 2, ("b", "x"): 1, ("c", "x"): 1, ("a", "b"): 2, ("a", "c"): 1, ("a", "d"): 1,
                ("a", "e"): 1}
    assert got == {**expected, **{(b, a): c for (a, b), c in expected.items()}}
    cli_s2orc.get_cocitations(str(hand_corpus), str(tmp_path / "co2.tsv"), workers=1, min_count=2)
    assert {(a, b) for a, b, _ in read_cocitations_tsv(tmp_path / "co2.tsv")} == {
        ("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")}
    stats = json.loads((tmp_path / "co2.stats.json").read_text())
    assert stats["pairs"] == 2 and stats["papers_read"] == 8


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
    assert list(read_citations_tsv(tmp_path / "cites" / "citations.tsv")) == _expected_edges(excluded={"c"})
