"""Citation and co-citation extraction (scincl/graph/citations.py, cocitations.py) and their commands
(scincl/graph/stage.py: cli_s2orc.py get_citations / get_cocitations) on a hand-made S2ORC corpus
(tests/conftest.py: HAND_SHARDS), bad input, the PBG import of the output."""
from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path

import h5py
import pytest

from scincl.corpus.shards import ReadStats, iter_reference_batches, list_metadata_shards
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
from scincl.graph.stage import get_citations, get_cocitations
from tests.conftest import HAND_SHARDS, hand_corpus_edges, run_command, run_front_end


# ------------------------------------------------------------------------------------ reading references

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


# ---------------------------------------------------------------------------------- citations

def test_get_citations_matches_independent_computation(hand_corpus, tmp_path, repo_root):
    out = tmp_path / "out"
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, out, "--workers", 2, check=True)
    assert list(read_citations_tsv(out / "citations.tsv")) == hand_corpus_edges()
    lines = (out / "citations.tsv").read_text().splitlines()
    assert lines[0] == "a\tb" and all(line.count("\t") == 1 for line in lines)
    stats = json.loads((out / "citations.stats.json").read_text())
    assert stats["papers_read"] == 8 and stats["edges"] == len(hand_corpus_edges()) == 13
    assert stats["skipped_lines"] == 3 and stats["skipped_by_reason"] == {
        "malformed_json": 1, "missing_paper_id": 1, "not_a_json_object": 1}

    ids = tmp_path / "ids"
    ids.mkdir()
    (ids / "inc.json").write_text(json.dumps(["a", "d", "e"]))
    (ids / "exc.json").write_text(json.dumps(["c", "e"]))
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "inc", "--included_paper_ids", ids / "inc.json",
                  check=True)
    assert list(read_citations_tsv(tmp_path / "inc" / "citations.tsv")) == hand_corpus_edges(included={"a", "d", "e"})
    run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "exc" / "graph.tsv", "--excluded_paper_ids",
                  ids / "exc.json", "--workers", 1, check=True)
    exc_edges = list(read_citations_tsv(tmp_path / "exc" / "graph.tsv"))  # a .tsv output is the file itself
    assert exc_edges == hand_corpus_edges(excluded={"c", "e"})
    assert not {"c", "e"} & {n for edge in exc_edges for n in edge}
    assert json.loads((tmp_path / "exc" / "graph.stats.json").read_text())["edges_dropped"] == {
        "cited_excluded": 4, "citing_excluded": 2}


def test_test_ratio_split_is_a_seeded_partition(hand_corpus, tmp_path, repo_root):
    full = hand_corpus_edges()
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
    expected = hand_corpus_edges()
    all_nodes = sorted({n for e in expected for n in e})
    get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=len(all_nodes) - 1,
                            seed=3)
    edges = list(read_citations_tsv(tmp_path / "o" / "citations.tsv"))
    candidates = [x for x in all_nodes if edges == [e for e in expected if x not in e]]
    assert len(candidates) >= 1, edges  # some single node (and only its edges) was left out
    assert 0 < len(expected) - len(edges) < len(expected)


def test_sample_n_nodes_keeps_edges_between_sampled_nodes(hand_corpus, tmp_path):
    get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=5, seed=1)
    edges = list(read_citations_tsv(tmp_path / "o" / "citations.tsv"))
    nodes = {n for e in edges for n in e}
    assert len(nodes) <= 5 and set(edges) <= set(hand_corpus_edges())
    # the sample is an induced subgraph: every edge between two kept endpoints is kept
    assert edges == [e for e in hand_corpus_edges() if set(e) <= nodes] and edges
    stats = json.loads((tmp_path / "o" / "citations.stats.json").read_text())
    assert stats["edges_dropped"]["not_in_node_sample"] == 13 - len(edges)
    # an existing output is reused for the same flags; made with others it is refused (issue 29: it was
    # reused); --override rebuilds it
    get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, sample_n_nodes=5, seed=1)
    assert list(read_citations_tsv(tmp_path / "o" / "citations.tsv")) == edges
    with pytest.raises(InputError, match="setting sample_n_nodes differs"):
        get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1)
    get_citations(str(hand_corpus), str(tmp_path / "o"), workers=1, override=True)
    assert list(read_citations_tsv(tmp_path / "o" / "citations.tsv")) == hand_corpus_edges()


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
        get_citations(str(hand_corpus), str(tmp_path / "lib"), workers=3, strict=True)
    assert caught.value.path == str(hand_corpus / "metadata_1.jsonl.gz") and caught.value.line == 2
    proc = run_front_end("cli_s2orc.py", "get_citations", hand_corpus, tmp_path / "o", "--strict", "--workers", "3")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"cli_s2orc.py: error: {hand_corpus / 'metadata_1.jsonl.gz'}:2: malformed JSON")
    assert not (tmp_path / "o" / "citations.tsv").exists() and not list(tmp_path.glob("o/.citations.parts.*"))


def test_citations_tsv_imports_into_biggraph(demo_corpus, tmp_path, repo_root):
    out = tmp_path / "graph"
    get_citations(str(demo_corpus.s2orc_metadata_dir), str(out), workers=2,
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
    proc = run_command([importer, "--lhs-col=0", "--rhs-col=1", config, tsv], timeout=300, cwd=tmp_path)
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
    get_cocitations(str(hand_corpus), str(tmp_path / "co2.tsv"), workers=1, min_count=2)
    assert {(a, b) for a, b, _ in read_cocitations_tsv(tmp_path / "co2.tsv")} == {
        ("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")}
    stats = json.loads((tmp_path / "co2.stats.json").read_text())
    assert stats["pairs"] == 2 and stats["papers_read"] == 8
