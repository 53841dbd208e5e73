"""Corpus adapters (scincl/corpus/): S2AG, OpenAlex and plain layouts read as the S2ORC records.

Hand-written fixtures cover each format's rules (extensionless gzip, null corpusids, missing
abstracts, works in several partitions, references outside the snapshot); the demo corpus written
in every layout must give the S2ORC layout's edges and texts after id mapping.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import cli_s2orc
from scincl.corpus import check_format, detect_format, open_corpus, write_papers
from scincl.corpus.layouts import write_layout
from scincl.corpus.records import abstract_from_inverted_index
from scincl.errors import InputError
from scincl.graph.citations import extract_citations, read_citations_tsv
from scincl.graph.cocitations import read_cocitations_tsv
from scincl.io import read_jsonl, read_json
from tests.conftest import run_front_end


def _gz(path: Path, rows, raw: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = b"".join(r if raw else json.dumps(r).encode() + b"\n" for r in rows)
    path.write_bytes(gzip.compress(body, mtime=0))


@pytest.fixture()
def s2ag_release(tmp_path):
    """Papers 1..4; 3 has no abstracts record; citations of 1 come in two runs; two null-id records."""
    root = tmp_path / "s2ag"
    _gz(root / "papers" / "part0", [{"corpusid": 1, "title": "One"}, {"corpusid": 2, "title": "Two"}])
    _gz(root / "papers" / "part1", [{"corpusid": 3, "title": "Three"}, {"corpusid": 4, "title": "Four"}])
    _gz(root / "abstracts" / "a0", [{"corpusid": 4, "abstract": "Abs four"}, {"corpusid": 1, "abstract": "Abs one"},
                                    {"corpusid": 2, "abstract": "Abs two"}])
    _gz(root / "citations" / "c0", [
        {"citingcorpusid": 1, "citedcorpusid": 2}, {"citingcorpusid": 1, "citedcorpusid": 3},
        {"citingcorpusid": 1, "citedcorpusid": None}, {"citingcorpusid": 4, "citedcorpusid": 2},
        {"citingcorpusid": 4, "citedcorpusid": 3}, {"citingcorpusid": None, "citedcorpusid": 1},
        {"citingcorpusid": 1, "citedcorpusid": 4}, {"citingcorpusid": 1, "citedcorpusid": 2}])
    _gz(root / "citations" / "c1", [{"citingcorpusid": 2, "citedcorpusid": 3}])
    return root


def _work(wid, title, refs, abstract, date="2026-01-01"):
    prefix = "https://openalex.org/"
    index = None if abstract is None else {w: [i] for i, w in enumerate(abstract.split())}
    return {"id": prefix + wid, "title": title, "display_name": title, "referenced_works": [prefix + r for r in refs],
            "abstract_inverted_index": index, "updated_date": date}


@pytest.fixture()
def openalex_snapshot(tmp_path):
    """W1..W3; W2 is updated in a newer partition (new title, new reference); W9 is outside the snapshot."""
    works = tmp_path / "openalex" / "data" / "works"
    _gz(works / "updated_date=2026-01-01" / "part_000.gz", [
        _work("W1", "One", ["W2", "W9"], "alpha beta"), _work("W2", "Two old", ["W1"], "old text")])
    _gz(works / "updated_date=2026-01-02" / "part_000.gz", [
        _work("W2", "Two", ["W1", "W3"], "gamma delta", "2026-01-02"), _work("W3", "Three", [], None, "2026-01-02")])
    (works / "manifest").write_text("{}")
    return tmp_path / "openalex"


@pytest.fixture()
def plain_corpus(tmp_path):
    root = tmp_path / "plain"
    _gz(root / "papers.jsonl.gz", [{"paper_id": "a", "title": "A", "abstract": "x"},
                                   {"paper_id": "b", "title": "B", "abstract": None}])
    root.joinpath("citations.tsv").write_text("# citing\tcited\na\tb\na\tc\nb\ta\n")
    return root


def test_detect_format_and_errors(s2ag_release, openalex_snapshot, plain_corpus, demo_corpus, tmp_path):
    assert detect_format(s2ag_release) == "s2ag"
    assert detect_format(openalex_snapshot) == "openalex"
    assert detect_format(openalex_snapshot / "data" / "works") == "openalex"
    assert detect_format(plain_corpus) == "plain"
    assert detect_format(demo_corpus.s2orc_metadata_dir) == "s2orc"
    assert detect_format(demo_corpus.s2orc_metadata_dir.parent) == "s2orc"  # the folder holding metadata/
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"cannot tell the corpus format; pass --corpus_format, one of: s2orc"):
        detect_format(tmp_path / "empty")
    both = tmp_path / "both"
    _gz(both / "papers.jsonl.gz", [{"paper_id": "a"}])
    _gz(both / "papers" / "p0", [{"corpusid": 1}])
    (both / "citations").mkdir()
    with pytest.raises(InputError, match=r"ambiguous corpus format \(looks like s2ag and plain\); "
                                         r"pass --corpus_format s2ag\|plain"):
        detect_format(both)
    with pytest.raises(InputError, match=r"unknown --corpus_format 'mag'; one of: s2orc, s2ag, openalex, plain"):
        check_format("mag")


def test_s2ag_references_and_join(s2ag_release, tmp_path):
    corpus = open_corpus(s2ag_release, "s2ag")
    summary = extract_citations(corpus.reference_files, tmp_path / "c", read_references=corpus.read_references)
    assert list(read_citations_tsv(tmp_path / "c" / "citations.tsv")) == [
        ("1", "2"), ("1", "3"), ("4", "2"), ("4", "3"), ("1", "4"), ("1", "2"), ("2", "3")]
    assert summary["skipped_by_reason"] == {"null_citedcorpusid": 1, "null_citingcorpusid": 1}
    assert summary["counted"] == {"citing_paper_split_runs": 1}  # paper 1 comes back after paper 4
    for buckets in (1, 3):
        out = tmp_path / f"papers{buckets}.jsonl"
        stats = write_papers(corpus, out, workers=2, buckets=buckets)
        rows = sorted(read_jsonl(out), key=lambda r: r["paper_id"])
        assert rows == [{"paper_id": "1", "title": "One", "abstract": "Abs one"},
                        {"paper_id": "2", "title": "Two", "abstract": "Abs two"},
                        {"paper_id": "3", "title": "Three", "abstract": ""},
                        {"paper_id": "4", "title": "Four", "abstract": "Abs four"}]
        assert stats["papers"] == 4 and stats["counted"] == {"abstract_missing": 1}


def test_openalex_newest_partition_and_references(openalex_snapshot, tmp_path):
    corpus = open_corpus(openalex_snapshot)
    assert corpus.format == "openalex"
    summary = extract_citations(corpus.reference_files, tmp_path / "c", read_references=corpus.read_references)
    assert list(read_citations_tsv(tmp_path / "c" / "citations.tsv")) == [("W1", "W2"), ("W2", "W1"), ("W2", "W3")]
    assert summary["counted"] == {"reference_outside_corpus": 1, "superseded_by_newer_partition": 1}
    assert summary["papers_read"] == 3
    stats = write_papers(corpus, tmp_path / "p.jsonl.gz")
    assert read_jsonl(tmp_path / "p.jsonl.gz") == [
        {"paper_id": "W1", "title": "One", "abstract": "alpha beta"},
        {"paper_id": "W2", "title": "Two", "abstract": "gamma delta"},
        {"paper_id": "W3", "title": "Three", "abstract": ""}]
    assert stats["counted"] == {"abstract_inverted_index_null": 1, "superseded_by_newer_partition": 1}
    cli_s2orc.get_metadata_id_mapping(str(openalex_snapshot), str(tmp_path / "pos.json"), workers=2)
    assert read_json(tmp_path / "pos.json") == {"updated_date=2026-01-01/part_000.gz": [["W1", 0]],
                                                "updated_date=2026-01-02/part_000.gz": [["W2", 0], ["W3", 1]]}


def test_abstract_from_inverted_index():
    assert abstract_from_inverted_index({"b": [1, 3], "a": [0], "c": [2]}) == "a b c b"
    assert abstract_from_inverted_index(None) is None
    assert abstract_from_inverted_index({}) == ""


def test_plain_corpus_cli_commands(plain_corpus, tmp_path):
    cli_s2orc.get_citations(str(plain_corpus), str(tmp_path / "c"), workers=1)
    assert list(read_citations_tsv(tmp_path / "c" / "citations.tsv")) == [("a", "b"), ("a", "c"), ("b", "a")]
    assert read_json(tmp_path / "c" / "citations.stats.json")["corpus_format"] == "plain"
    cli_s2orc.get_cocitations(str(plain_corpus), str(tmp_path / "cc.tsv"), workers=1)
    assert list(read_cocitations_tsv(tmp_path / "cc.tsv")) == [("b", "c", 1), ("c", "b", 1)]
    cli_s2orc.get_papers(str(plain_corpus), str(tmp_path / "p.jsonl"), workers=1)
    assert [r["paper_id"] for r in read_jsonl(tmp_path / "p.jsonl")] == ["a", "b"]
    assert read_json(tmp_path / "p.jsonl.stats.json")["papers"] == 2
    cli_s2orc.get_inbound_citations_count(str(plain_corpus), str(tmp_path / "in.json"), workers=1)
    assert read_json(tmp_path / "in.json") == {"a": 1, "b": 1, "c": 1}  # from the corpus's own references
    cli_s2orc.get_metadata_id_mapping(str(plain_corpus), str(tmp_path / "pos.json"), workers=1)
    assert read_json(tmp_path / "pos.json") == {"papers.jsonl.gz": [["a", 0], ["b", 1]]}


def test_bad_lines_are_counted_or_strict(tmp_path):
    root = tmp_path / "s2ag"
    _gz(root / "papers" / "p0", [b'{"corpusid": 1, "title": "One"}\n', b'{"corpusid": \n',
                                 b'{"title": "no id"}\n'], raw=True)
    (root / "citations").mkdir()
    corpus = open_corpus(root)
    stats = write_papers(corpus, tmp_path / "p.jsonl")
    assert stats["papers"] == 1 and stats["skipped_by_reason"] == {"invalid_record": 1, "malformed_json": 1}
    with pytest.raises(InputError, match=r"p0:2: malformed JSON"):
        write_papers(corpus, tmp_path / "p2.jsonl", strict=True)
    proc = run_front_end("cli_s2orc.py", "get_papers", root, tmp_path / "p3.jsonl", "--strict")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"cli_s2orc.py: error: {root / 'papers' / 'p0'}:2: malformed JSON (Input data was truncated)")
    _gz(root / "papers" / "p0", [b'{"title": "no id"}\n'], raw=True)
    with pytest.raises(InputError, match=r"p0:1: invalid record \(Object missing required field `corpusid`\)"):
        write_papers(corpus, tmp_path / "p4.jsonl", strict=True)


@pytest.fixture(scope="module")
def demo_layouts(demo_corpus, tmp_path_factory):
    """The 600-paper demo corpus written in every layout, with the S2ORC -> corpus id maps."""
    out = tmp_path_factory.mktemp("layouts")
    return {fmt: (out / fmt, write_layout(demo_corpus.s2orc_metadata_dir, out / fmt, fmt))
            for fmt in ("s2ag", "openalex", "plain")}


def _texts(path):
    return {r["paper_id"]: (r["title"] or "", " ".join((r["abstract"] or "").split())) for r in read_jsonl(path)}


@pytest.mark.parametrize("fmt", ["s2ag", "openalex", "plain"])
def test_demo_layouts_give_the_s2orc_edges_and_texts(fmt, demo_corpus, demo_layouts, tmp_path):
    """Same edges (references outside the corpus: kept by plain, counted and dropped by s2ag/openalex)."""
    root, id_map = demo_layouts[fmt]
    back = {v: k for k, v in id_map.items()}
    cli_s2orc.get_citations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "ref"), workers=1)
    cli_s2orc.get_citations(str(root), str(tmp_path / fmt), workers=2, corpus_format=fmt)
    ref = list(read_citations_tsv(tmp_path / "ref" / "citations.tsv"))
    outside = [(a, b) for a, b in ref if b not in id_map]
    got = [(back[a], back.get(b, b)) for a, b in read_citations_tsv(tmp_path / fmt / "citations.tsv")]
    stats = read_json(tmp_path / fmt / "citations.stats.json")
    if fmt == "plain":
        assert sorted(got) == sorted(ref)
    else:
        assert sorted(got) == sorted(set(ref) - set(outside))
        dropped = stats["skipped_by_reason"] if fmt == "s2ag" else stats["counted"]
        assert dropped == {"null_citedcorpusid" if fmt == "s2ag" else "reference_outside_corpus": len(outside)}
    assert len(ref) > 2000 and len(outside) > 100
    cli_s2orc.get_papers(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "ref.jsonl"), workers=1)
    cli_s2orc.get_papers(str(root), str(tmp_path / f"{fmt}.jsonl.gz"), workers=2)
    ref_texts = _texts(tmp_path / "ref.jsonl")
    got_texts = {back[k]: v for k, v in _texts(tmp_path / f"{fmt}.jsonl.gz").items()}
    assert len(ref_texts) == 600 and got_texts == ref_texts


def test_outputs_do_not_depend_on_workers(demo_layouts, tmp_path):
    for fmt in ("s2ag", "openalex"):
        root, _ = demo_layouts[fmt]
        for workers in (1, 2):
            cli_s2orc.get_citations(str(root), str(tmp_path / f"{fmt}{workers}"), workers=workers, test_ratio=0.2)
            cli_s2orc.get_cocitations(str(root), str(tmp_path / f"{fmt}{workers}" / "co.tsv"), workers=workers)
            cli_s2orc.get_papers(str(root), str(tmp_path / f"{fmt}{workers}" / "p.jsonl.gz"), workers=workers)
        for name in ("citations.train.tsv", "citations.test.tsv", "co.tsv", "p.jsonl.gz"):
            assert (tmp_path / f"{fmt}1" / name).read_bytes() == (tmp_path / f"{fmt}2" / name).read_bytes()


def test_get_metadata_reads_any_format(s2ag_release, openalex_snapshot, tmp_path):
    from scincl.triples.metadata import get_metadata

    (tmp_path / "ids.json").write_text('["1", "3", "7"]')
    stats = get_metadata(tmp_path / "ids.json", tmp_path / "m.jsonl", s2orc_metadata_dir=s2ag_release, workers=2)
    assert read_jsonl(tmp_path / "m.jsonl") == [{"paper_id": "1", "title": "One", "abstract": "Abs one"},
                                                {"paper_id": "3", "title": "Three", "abstract": ""}]
    assert (stats["found"], stats["missing"], stats["empty_abstracts"]) == (2, 1, 1)
    (tmp_path / "w.json").write_text('["W2"]')
    get_metadata(tmp_path / "w.json", tmp_path / "w.jsonl", s2orc_metadata_dir=openalex_snapshot,
                 corpus_format="openalex")
    assert read_jsonl(tmp_path / "w.jsonl") == [{"paper_id": "W2", "title": "Two", "abstract": "gamma delta"}]


def test_make_demo_writes_each_layout(tmp_path):
    proc = run_front_end("cli_s2orc.py", "make_demo", tmp_path / "d", "--papers", 400, "--corpus_format", "s2ag")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"demo corpus written to {tmp_path / 'd'} (s2ag layout: {tmp_path / 'd' / 's2ag'})"
    assert detect_format(tmp_path / "d" / "s2ag") == "s2ag"
    assert sorted(p.name for p in (tmp_path / "d" / "s2ag" / "papers").iterdir()) == [
        f"20260101_000000_{i:05d}_demo_papers" for i in range(4)]
    id_map = read_json(tmp_path / "d" / "s2ag" / "id_map.json")
    held_out = read_json(tmp_path / "d" / "scidocs_paper_ids.json")
    assert len(id_map) == 400 and all(pid in id_map for pid in held_out)


def _scidocs(root: Path, ids) -> Path:
    root.mkdir(parents=True)
    (root / "paper_metadata_view_cite_read.json").write_text(json.dumps({i: {"title": i} for i in ids}))
    return root


def test_scidocs_id_mapping_from_external_ids_and_files(tmp_path):
    from scincl.corpus.id_mapping import scidocs_id_mapping

    sha = "b9e9170b78921cde0ea8d77bb22a8d3578d5b722"
    s2ag = tmp_path / "s2ag"
    _gz(s2ag / "papers" / "p0", [
        {"corpusid": 7, "url": f"https://www.semanticscholar.org/paper/{sha}", "externalids": {"ArXiv": None}},
        {"corpusid": 8, "externalids": {"ArXiv": "hep-th/0001002", "DOI": "10.1/x"}},
        {"corpusid": 9, "externalids": {"ArXiv": "hep-ph/0001002"}}])
    (s2ag / "citations").mkdir()
    scidocs = _scidocs(tmp_path / "scidocs", [sha, "10.1/x", "0001002", "hep-ph/0001002", "unknown"])
    mapping, counts = scidocs_id_mapping(scidocs, s2ag)
    assert mapping == {sha: "7", "10.1/x": "8", "hep-ph/0001002": "9"}  # "0001002" is in two archives
    assert (counts["mapped"], counts["unmapped"], counts["ambiguous"]) == (3, 2, 1)
    assert counts["ambiguous_examples"] == {"0001002": ["8", "9"]} and counts["papers_read"] == 3
    works = tmp_path / "oa" / "data" / "works" / "updated_date=2026-01-01"
    _gz(works / "part_000.gz", [{"id": "https://openalex.org/W5", "doi": "https://doi.org/10.1/x",
                                 "ids": {"openalex": "https://openalex.org/W5", "pmid": "https://pubmed.ncbi.nlm.nih.gov/42"},
                                 "locations": [{"landing_page_url": "http://arxiv.org/abs/hep-th/0001002"}]}])
    mapping, _ = scidocs_id_mapping(_scidocs(tmp_path / "sd2", ["10.1/x", "42", "0001002", "W5"]), tmp_path / "oa")
    assert mapping == {"10.1/x": "W5", "42": "W5", "0001002": "W5", "W5": "W5"}
    (tmp_path / "maps.json").write_text(json.dumps({"openalex": {sha: "https://openalex.org/W5", "x": "W1"}}))
    cli_s2orc.get_scidocs_id_mapping(str(scidocs), str(tmp_path / "m.json"), mapping_path=str(tmp_path / "maps.json"),
                                     mapping_key="openalex")
    assert read_json(tmp_path / "m.json") == {sha: "W5"}
    assert read_json(tmp_path / "m.json.stats.json")["mapped"] == 1
    with pytest.raises(InputError, match=r"maps.json: no mapping named 'corpusid' \(keys: openalex\)"):
        scidocs_id_mapping(scidocs, mapping_path=tmp_path / "maps.json", mapping_key="corpusid")


def test_cocitations_of_edge_list_formats_use_whole_reference_lists(s2ag_release, tmp_path):
    """Paper 1's citations come in two runs ([2, 3], then [4, 2]): its pairs still include (3, 4)."""
    for buckets in (1, 3):
        from scincl.graph.regroup import corpus_cocitations

        stats = corpus_cocitations(open_corpus(s2ag_release), tmp_path / f"co{buckets}.tsv", workers=2,
                                   buckets=buckets)
        assert list(read_cocitations_tsv(tmp_path / f"co{buckets}.tsv")) == [
            ("2", "3", 2), ("2", "4", 1), ("3", "2", 2), ("3", "4", 1), ("4", "2", 1), ("4", "3", 1)]
        assert (stats["papers_read"], stats["regroup_buckets"]) == (3, buckets)
        assert stats["skipped_by_reason"] == {"null_citedcorpusid": 1, "null_citingcorpusid": 1}
def test_run_specter_corpus_dir_alias_and_k_scale_flags(tmp_path):
    from scincl.pipeline.scincl_plan import settings_from_flags

    s = settings_from_flags(str(tmp_path), {"corpus_dir": "c", "corpus_format": "s2ag", "scidocs_dir": "d"})
    assert (s.corpus_dir, s.s2orc_metadata_dir, s.corpus_format, s.demo) == ("c", "c", "s2ag", False)
    assert settings_from_flags(str(tmp_path), {"s2orc_metadata_dir": "m"}).corpus_dir == "m"
    with pytest.raises(InputError, match=r"--corpus_dir c and --s2orc_metadata_dir m differ; give one"):
        settings_from_flags(str(tmp_path), {"corpus_dir": "c", "s2orc_metadata_dir": "m"})
    with pytest.raises(InputError, match=r"unknown --corpus_format 'mag'"):
        settings_from_flags(str(tmp_path), {"corpus_dir": "c", "corpus_format": "mag"})
    with pytest.raises(InputError, match=r"--k_scale corpus sizes k\+ and k-hard itself; drop --hard_negatives_k_max"):
        settings_from_flags(str(tmp_path), {"corpus_dir": "c", "k_scale": "corpus", "hard_negatives_k_max": 50})
    assert settings_from_flags(str(tmp_path), {"corpus_dir": "c", "k_scale": "corpus"}).k_scale == "corpus"
