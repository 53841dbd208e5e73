"""The one query-selection module: --query_papers forms, the eligible-query rule, seeded samples."""
from __future__ import annotations

import json

import pytest

from scincl.errors import InputError
from scincl.leakage import write_edges_without
from scincl.triples.queries import (QuerySpec, citation_adjacency, eligible_for_every_arm, is_eligible_query,
                                    parse_query_papers, sample_eligible_queries, sample_query_ids)


def test_query_papers_forms_from_the_command_line_and_python(tmp_path):
    ids = tmp_path / "q.json"
    ids.write_text(json.dumps(["b", "a"]))
    assert parse_query_papers(None) == parse_query_papers("all") == parse_query_papers(" ALL ") == QuerySpec("all")
    assert parse_query_papers("7") == parse_query_papers(7) == QuerySpec("count", count=7)
    assert parse_query_papers("0.25") == QuerySpec("ratio", ratio=0.25)
    assert parse_query_papers(str(ids)) == QuerySpec("ids", ids=["b", "a"], source=str(ids))
    assert parse_query_papers(["x", "y", "x"]) == QuerySpec("ids", ids=["x", "y"])  # duplicates dropped
    assert QuerySpec("ratio", ratio=0.25).wanted(10) == 2 and QuerySpec("all").wanted(10) is None
    with pytest.raises(InputError, match=r"--query_papers 11: choose between 1 and the corpus size 10"):
        QuerySpec("count", count=11).wanted(10)
    with pytest.raises(InputError, match=r"choose between 1 and the 10 papers of the graph"):
        QuerySpec("count", count=0).wanted(10, "the {n} papers of the graph")
    for bad, message in ((1.5, r"ratio must be in \(0, 1\], got 1.5"), (True, "must be a count, a ratio"),
                         ([], "the query paper list is empty")):
        with pytest.raises(InputError, match=message):
            parse_query_papers(bad)


def test_eligible_query_needs_five_cited_and_two_uncited_citations_of_citations():
    adjacency = {"q": {"a", "b", "c", "d", "e"}, "a": {"x", "b"}, "b": {"q"}, "c": {"y"}}
    assert is_eligible_query("q", adjacency)            # second hop {x, y} minus cited and q
    adjacency["c"] = {"a"}
    assert not is_eligible_query("q", adjacency)        # second hop {x} only
    assert not is_eligible_query("a", adjacency) and not is_eligible_query("unknown", adjacency)


def test_queries_eligible_for_every_arm_need_both_graphs_a_text_and_no_exclusion():
    edges = [("q", c) for c in "abcde"] + [("a", "x"), ("c", "y"), ("q", "q"), ("r", "q")]
    assert citation_adjacency(edges)["q"] == set("abcde")  # the self-citation is dropped
    assert citation_adjacency(edges, bidirectional=True)["q"] == set("abcder")  # linked either way
    everything = set("qr")
    assert eligible_for_every_arm(edges, False, everything, everything, set()) == ["q"]
    assert eligible_for_every_arm(edges, False, {"r"}, everything, set()) == []  # not in the graphs
    assert eligible_for_every_arm(edges, False, everything, {"r"}, set()) == []  # no text
    assert eligible_for_every_arm(edges, False, everything, everything, {"q"}) == []  # a SciDocs paper


def test_hidden_edges_are_left_out_of_the_written_citations(tmp_path):
    edges = tmp_path / "all.tsv"
    edges.write_text("q\ta\t1\na\tq\nq\tb\n")
    kept, removed = write_edges_without(edges, tmp_path / "out.tsv", {("q", "a"), ("a", "q")})
    assert (kept, removed) == (1, 2) and (tmp_path / "out.tsv").read_text() == "q\tb\n"
    assert not (tmp_path / "out.tmp").exists()


def test_seeded_query_samples():
    ids = [f"p{i:03d}" for i in range(200)]
    ten = sample_query_ids(ids, 0.1, seed=4)
    assert len(ten) == 20 and ten == sorted(ten) and ten != sample_query_ids(ids, 0.1, seed=5)
    three = sample_eligible_queries(ids, 3, seed=1, where="hepth")
    assert len(three) == 3 and three == sorted(three) == sample_eligible_queries(ids, 3, seed=1, where="hepth")
    with pytest.raises(InputError, match="201 queries wanted but only 200 papers are eligible for every arm on hepth"):
        sample_eligible_queries(ids, 201, seed=1, where="hepth")
