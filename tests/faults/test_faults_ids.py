"""Issue 41, class 1: one form for every paper id, so the leakage guard cannot be fooled.

Ids written with surrounding whitespace (``" 280951694 "``) are the same papers as ``"280951694"`` in every
reader (id lists, corpus records of every format, mappings, triplets, groups, qrels, SciDocs metadata); an id
that cannot be one (empty, whitespace or a control character inside) is refused with one line naming the file
and line (or counted as ``bad_paper_id`` in a corpus); a list of evaluation / excluded ids of which none occur
in the corpus is refused, and one of which few occur is a warning with counts in the stats and the leakage report.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from scincl.corpus.layouts import write_layout
from scincl.errors import InputError
from scincl.graph.stage import get_citations, get_cocitations
from scincl.io import read_id_list, read_json
from scincl.leakage import LeakageError, guard_training, leakage_report, read_evaluation_ids
from scincl.triples.specter_like import get_specter_like_triples
from tests.conftest import run_front_end


def _padded(ids, path: Path) -> Path:
    path.write_text(json.dumps([f" {i} " for i in ids]))
    return path


@pytest.fixture(scope="module")
def demo_ids(demo_corpus, tmp_path_factory):
    """The demo's evaluation ids, as given and padded with spaces, and the leaky/clean citations + triplets."""
    root = tmp_path_factory.mktemp("ids")
    ids = read_id_list(demo_corpus.scidocs_paper_ids_path)
    padded = _padded(ids, root / "padded.json")
    get_citations(str(demo_corpus.s2orc_metadata_dir), str(root / "leaky"), workers=1)
    get_specter_like_triples(root / "leaky" / "citations.tsv", root / "leaky" / "train_triples.csv",
                             triples_count=300, seed=0)
    get_citations(str(demo_corpus.s2orc_metadata_dir), str(root / "clean"), workers=1,
                  excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path))
    nodes = set((root / "leaky" / "citations.tsv").read_text().split())
    return {"root": root, "ids": ids, "padded": padded, "in_graph": nodes & set(ids)}


def test_padded_ids_exclude_the_same_papers_as_the_clean_list(demo_corpus, demo_ids, tmp_path):
    """The issue's example: `get_citations --excluded_paper_ids` with " 280951694 " ids drops the same edges."""
    get_citations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "padded"), workers=1,
                  excluded_paper_ids=str(demo_ids["padded"]))
    clean = demo_ids["root"] / "clean"
    assert (tmp_path / "padded" / "citations.tsv").read_bytes() == (clean / "citations.tsv").read_bytes()
    stats = read_json(tmp_path / "padded" / "citations.stats.json")
    assert stats["edges_dropped"] == read_json(clean / "citations.stats.json")["edges_dropped"]
    assert stats["edges_dropped"]["citing_excluded"] > 0
    assert stats["id_lists"]["excluded_paper_ids"] == {"listed": len(demo_ids["ids"]),
                                                       "in_corpus": len(demo_ids["ids"]), "warning": None}
    get_cocitations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "cocited"), workers=1,
                    excluded_paper_ids=str(demo_ids["padded"]))
    pairs = (tmp_path / "cocited" / "cocitations.tsv").read_text().split()
    assert pairs and not set(demo_ids["ids"]) & set(pairs)


def test_padded_ids_do_not_fool_the_training_guard(demo_ids, tmp_path):
    """`train --excluded_paper_ids` with padded ids on leaky triplets is refused before any model loads."""
    import cli_pipeline

    leaky = demo_ids["root"] / "leaky"
    assert read_evaluation_ids(demo_ids["padded"]) == set(demo_ids["ids"])
    with pytest.raises(LeakageError, match="in the graph.*in the triplets"):
        cli_pipeline.train(str(leaky / "train_triples.csv"), "unused.jsonl", str(tmp_path / "model"),
                           excluded_paper_ids=str(demo_ids["padded"]), citations_path=str(leaky / "citations.tsv"))
    report = leakage_report(read_evaluation_ids(demo_ids["padded"]), triplets=leaky / "train_triples.csv",
                            citations=[leaky / "citations.tsv"])
    assert report.in_graph == len(demo_ids["in_graph"]) > 0 and report.in_triplets > 0


def test_run_specter_with_padded_scidocs_paper_ids_removes_them_from_the_graph(demo_corpus, demo_ids, tmp_path):
    """`run_specter --scidocs_paper_ids` (padded): the citations stage drops their edges (killed after it)."""
    proc = run_front_end("cli_pipeline.py", "run_specter", tmp_path / "run", "--corpus_dir",
                         demo_corpus.s2orc_metadata_dir, "--scidocs_paper_ids", demo_ids["padded"], "--workers", "1",
                         kill_at="citations:after", timeout=300)
    assert proc.returncode == -9, proc.stderr[-2000:]
    stats = read_json(next((tmp_path / "run").rglob("citations.stats.json")))
    assert stats["edges_dropped"]["citing_excluded"] > 0 and stats["edges_dropped"]["cited_excluded"] > 0
    assert stats["id_lists"]["excluded_paper_ids"]["in_corpus"] == len(demo_ids["ids"])
    edges = (next((tmp_path / "run").rglob("citations.stats.json")).parent).glob("citations*.tsv")
    nodes = {node for path in edges for line in path.read_text().split("\n") for node in line.split("\t") if node}
    assert nodes and not nodes & set(demo_ids["ids"])


def test_a_list_of_which_no_id_is_in_the_corpus_is_refused_and_few_is_a_warning(demo_corpus, demo_ids, tmp_path,
                                                                                 caplog):
    (tmp_path / "none.json").write_text(json.dumps(["W1", "W2", "W3"]))
    with pytest.raises(InputError, match="none of the 3 excluded paper ids occurs in the corpus"):
        get_citations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "none"), workers=1,
                      excluded_paper_ids=str(tmp_path / "none.json"))
    assert not (tmp_path / "none").exists()
    with pytest.raises(InputError, match="none of the 3 included paper ids"):
        get_citations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "none"), workers=1,
                      included_paper_ids=str(tmp_path / "none.json"))
    few = demo_ids["ids"][:2] + [f"x{i}" for i in range(10)]
    (tmp_path / "few.json").write_text(json.dumps(few))
    get_citations(str(demo_corpus.s2orc_metadata_dir), str(tmp_path / "few"), workers=1,
                  excluded_paper_ids=str(tmp_path / "few.json"))
    coverage = read_json(tmp_path / "few" / "citations.stats.json")["id_lists"]["excluded_paper_ids"]
    assert coverage["listed"] == 12 and coverage["in_corpus"] == 2 and "only 2 of the 12" in coverage["warning"]
    assert "only 2 of the 12 excluded paper ids" in caplog.text
    # the leakage report of a run trained from that graph says so too
    get_specter_like_triples(tmp_path / "few" / "citations.tsv", tmp_path / "few" / "t.csv", triples_count=50, seed=0)
    report = guard_training(tmp_path / "few.json", tmp_path / "few" / "t.csv",
                            citations=[tmp_path / "few" / "citations.tsv"])
    assert report["in_corpus"] == 2 and "only 2 of the 12 evaluation papers" in report["warning"]


@pytest.mark.parametrize("item, message", [
    ("", "item 1: an empty paper id"), ("  ", "item 1: an empty paper id"),
    ("12 34", "item 1: paper id '12 34' holds whitespace"), ("12\x0034", "holds whitespace or a control character"),
    (1.5, "item 1: 1.5 is not a paper id"), (None, "item 1: None is not a paper id"),
])
def test_an_id_list_item_that_cannot_be_an_id_is_one_line(tmp_path, item, message):
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(["1", item]))
    with pytest.raises(InputError, match=message):
        read_id_list(path)
    with pytest.raises(InputError, match="is not a paper id|empty paper id|holds whitespace"):
        read_evaluation_ids(path)


def test_duplicates_after_canonicalisation_and_comma_lists(tmp_path):
    from scincl.corpus.shards import load_id_set

    path = tmp_path / "ids.json"
    path.write_text(json.dumps(["7", " 7"]))
    with pytest.raises(InputError, match="item 1: duplicate paper id '7'"):
        read_id_list(path)
    assert load_id_set(" 7 , 8,https://openalex.org/W9") == {"7", "8", "W9"}
    assert load_id_set([7, " 8 "]) == {"7", "8"}
    with pytest.raises(InputError, match="holds whitespace"):
        load_id_set("7,8 9")


def _s2orc(root: Path, records) -> Path:
    root.mkdir(parents=True)
    with gzip.open(root / "metadata_0.jsonl.gz", "wt") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    return root


def test_s2orc_records_ids_are_canonical_and_bad_ones_counted(tmp_path):
    shards = _s2orc(tmp_path / "s2orc", [
        {"paper_id": " a ", "outbound_citations": [" b", "c "]}, {"paper_id": "b", "outbound_citations": ["c"]},
        {"paper_id": "c d", "outbound_citations": ["a"]}, {"paper_id": "e", "outbound_citations": ["a", "x\ty"]},
        {"paper_id": 5, "outbound_citations": [6, " a"]}])
    (tmp_path / "six.json").write_text('[" 6"]')
    get_citations(str(shards), str(tmp_path / "out"), workers=1, excluded_paper_ids=str(tmp_path / "six.json"))
    assert (tmp_path / "out" / "citations.tsv").read_text() == "a\tb\na\tc\nb\tc\n5\ta\n"
    stats = read_json(tmp_path / "out" / "citations.stats.json")
    assert stats["skipped_by_reason"] == {"bad_paper_id": 1, "bad_outbound_citations": 1}
    assert any(":3" in example and "'c d'" in example for example in stats["skip_examples"])
    with pytest.raises(InputError, match=r"metadata_0.jsonl.gz:3, field 'paper_id': paper id 'c d' holds whitespace"):
        get_citations(str(shards), str(tmp_path / "strict"), workers=1, strict=True)


@pytest.mark.parametrize("corpus_format", ["plain", "s2ag", "openalex"])
def test_every_corpus_format_matches_padded_ids(demo_corpus, demo_ids, tmp_path, corpus_format):
    """The same padded list excludes the same papers in every format (its ids mapped to the format's own)."""
    mapping = write_layout(demo_corpus.s2orc_metadata_dir, tmp_path / corpus_format, corpus_format)
    padded = [f"  {mapping[i]}\t" if corpus_format != "openalex" else f" https://openalex.org/{mapping[i]} "
              for i in demo_ids["ids"] if i in mapping]
    (tmp_path / "ids.json").write_text(json.dumps(padded))
    get_citations(str(tmp_path / corpus_format), str(tmp_path / "out"), workers=1, corpus_format=corpus_format,
                  excluded_paper_ids=str(tmp_path / "ids.json"))
    stats = read_json(tmp_path / "out" / "citations.stats.json")
    # plain and S2AG corpora name only papers with edges; OpenAlex and S2ORC every paper
    assert len(padded) >= stats["id_lists"]["excluded_paper_ids"]["in_corpus"] >= len(demo_ids["in_graph"]) > 0
    nodes = set((tmp_path / "out" / "citations.tsv").read_text().split())
    assert nodes and not nodes & {mapping[i] for i in demo_ids["ids"] if i in mapping}


def test_plain_s2ag_and_openalex_records_with_bad_ids_are_counted(tmp_path):
    from scincl.corpus.plain import read_texts as plain_texts
    from scincl.corpus.s2ag import read_references as s2ag_references
    from scincl.corpus.shards import ReadStats

    (tmp_path / "papers.jsonl").write_text('{"paper_id": " a "}\n{"paper_id": "b\\u0007"}\n{"paper_id": 3}\n')
    stats = ReadStats()
    assert [row[1] for row in plain_texts(tmp_path / "papers.jsonl", stats=stats)] == ["a", "3"]
    assert stats.skipped == {"bad_paper_id": 1}
    (tmp_path / "cites").write_text('{"citingcorpusid": " 1", "citedcorpusid": 2}\n'
                                    '{"citingcorpusid": "1 2", "citedcorpusid": 3}\n')
    stats = ReadStats()
    assert [row[1:] for row in s2ag_references(tmp_path / "cites", stats=stats)] == [("1", ["2"])]
    assert stats.skipped == {"bad_paper_id": 1}
    (tmp_path / "citations.tsv").write_text("a\tb\x01\n")
    from scincl.corpus.records import iter_tsv_lines

    with pytest.raises(InputError, match=r"citations.tsv:1: paper id 'b\\x01' holds whitespace or a control"):
        list(iter_tsv_lines(tmp_path / "citations.tsv", strict=True))


def test_triplets_groups_mappings_qrels_and_scidocs_metadata_read_canonical_ids(tmp_path):
    from scincl.corpus.id_mapping import mapping_from_file
    from scincl.corpus.s2orc_mappings import read_mapping
    from scincl.io import iter_triples_csv
    from scincl.model.data import iter_metadata, read_training_rows
    from scincl.scidocs_io import read_class_labels, read_qrels, read_scidocs_metadata

    (tmp_path / "t.csv").write_text("query_paper_id,positive_id,negative_id\n 1 ,2, 3\n4,5 6,7\n")
    rows = iter_triples_csv(tmp_path / "t.csv")
    assert next(rows) == ("1", "2", "3")
    with pytest.raises(InputError, match=r"t.csv:3: paper id '5 6' holds whitespace"):
        next(rows)
    (tmp_path / "g.jsonl").write_text('{"query_paper_id": " 1", "positives": [" 2"], "negatives": [3]}\n'
                                      '{"query_paper_id": "4", "positives": [""], "negatives": ["5"]}\n')
    with pytest.raises(InputError, match=r"g.jsonl:2, field 'positives': an empty paper id"):
        read_training_rows(tmp_path / "g.jsonl")
    (tmp_path / "g.jsonl").write_text('{"query_paper_id": " 1", "positives": [" 2"], "negatives": [3]}\n')
    assert read_training_rows(tmp_path / "g.jsonl").rows == [("1", ["2"], ["3"])]
    (tmp_path / "m.json").write_text(json.dumps({" s1 ": " 10 ", "s2": "https://openalex.org/W2"}))
    assert mapping_from_file(tmp_path / "m.json") == read_mapping(str(tmp_path / "m.json")) == {"s1": "10", "s2": "W2"}
    (tmp_path / "meta.jsonl").write_text('{"paper_id": " 9 ", "title": "t"}\n{"paper_id": "9", "title": "u"}\n')
    with pytest.raises(InputError, match=r"meta.jsonl:2, field 'paper_id': duplicate paper_id '9'"):
        list(iter_metadata(tmp_path / "meta.jsonl"))
    (tmp_path / "qrels").write_text("q1 0 p\x1b1 1\n")
    with pytest.raises(InputError, match=r"qrels:1, field 'pid': paper id 'p\\x1b1' holds"):
        read_qrels(tmp_path / "qrels")
    (tmp_path / "test.csv").write_text("pid,class_label\n 5 ,1\n")
    assert read_class_labels(tmp_path / "test.csv") == {"5": 1}
    (tmp_path / "paper_metadata_mag_mesh.json").write_text(json.dumps({" 5 ": {"paper_id": " 5", "title": "x"}}))
    assert read_scidocs_metadata(tmp_path / "paper_metadata_mag_mesh.json")["5"]["paper_id"] == "5"


def test_a_mapping_value_that_is_a_huge_list_is_one_short_line(tmp_path):
    """A mapping whose value is a list of thousands of ids is named in one short line, not quoted whole twice."""
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"s2": list(range(3000))}))
    result = run_front_end("cli_s2orc.py", "get_s2orc_paper_ids_from_mapping", "--mapping_path", str(mapping),
                           "--output_path", str(tmp_path / "ids.json"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "id 's2' maps to [0, 1, 2, 3, 4, 5, ...]: [0, 1, 2, 3, 4, 5, ...] is not a paper id" in result.stderr
    assert len(result.stderr) < 300


def test_an_error_line_keeps_both_ends_of_a_message_too_long_to_read():
    error = InputError("a" * 400 + "b" * 5000 + " the end", path="p.json")
    assert len(str(error)) < 700 and str(error).startswith("p.json: aaaa") and str(error).endswith("b the end")
