"""Citation-based samplers: SPECTER-like triples, co-citation noise sampling, relation pairs."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy.stats import chisquare

from scincl.errors import InputError
from scincl.io import iter_triples_csv, read_jsonl
from scincl.triples.citation_graph import Csr, build_citation_graph
from scincl.triples.cocitation import get_cocitation_triples, noise_sample_block
from scincl.triples.pairs import get_pairs
from scincl.triples.specter_like import get_specter_like_triples

# q cites a..e; a cites x, b cites y and c; c cites q (a cycle back); z is cited by nobody's citations
HAND_EDGES = [("q", t) for t in "abcde"] + [("a", "x"), ("b", "y"), ("b", "c"), ("c", "q"), ("z", "a"),
                                                 ("f", "q"), ("g", "z"), ("h", "g"), ("h", "f"),
                                                 ("m", "n"), ("o", "s")]


def write_tsv(path, edges):
    path.write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    return path


def test_specter_like_semantics_on_a_hand_graph(tmp_path):
    cits = write_tsv(tmp_path / "citations.tsv", HAND_EDGES)
    out = get_specter_like_triples(cits, tmp_path / "t.csv", seed=0)
    rows = list(iter_triples_csv(out))
    assert {r[0] for r in rows} == {"q"}  # only q has 5 positives
    assert sorted(p for _, p, _ in rows) == list("abcde")
    negatives = [n for _, _, n in rows]
    assert set(negatives[3:]) == {"x", "y"}  # hard: citations of citations, not cited by q, not q itself
    assert not set(negatives[:3]) & set("abcdeq")  # easy: random, never cited by q
    assert len(set(negatives)) == 5


def test_specter_like_bidirectional_and_counts(tmp_path):
    cits = write_tsv(tmp_path / "citations.tsv", HAND_EDGES)
    out = get_specter_like_triples(cits, tmp_path / "b.csv", bidirectional=True, triples_per_query=6,
                                   easy_positives_count=6, easy_negatives_count=4, hard_negatives_count=2)
    rows = list(iter_triples_csv(out))
    # undirected: q's neighbours are a..e and f (f cites q): exactly 6 positives
    assert sorted(p for q, p, _ in rows if q == "q") == list("abcdef")
    with pytest.raises(InputError, match="only 6 SPECTER-like triples can be made"):
        get_specter_like_triples(cits, tmp_path / "c.csv", bidirectional=True, triples_per_query=6,
                                 easy_positives_count=6, easy_negatives_count=4, hard_negatives_count=2,
                                 triples_count=12, override=True)
    with pytest.raises(InputError, match="must equal --triples_per_query"):
        get_specter_like_triples(cits, tmp_path / "d.csv", easy_negatives_count=1)


def test_noise_distribution_frequencies_match_expected_probabilities():
    # one query (node 0) co-cited with nodes 1..4 (counts 1, 2, 4, 8); nodes 5..9 have citation counts
    n = 10
    counts = np.array([1, 2, 4, 8], dtype=float)
    cocit = Csr.from_edges(np.zeros(4, dtype=np.int64), np.arange(1, 5), n, data=counts)
    citation_counts = np.array([3, 9, 9, 9, 9, 1, 2, 4, 8, 16], dtype=float)
    queries = np.zeros(20000, dtype=np.int64)
    pos, neg, ok = noise_sample_block(queries, cocit, citation_counts ** 0.75, 1, 1, 0.75,
                                      np.random.default_rng(0))
    assert ok.all()
    observed_pos = np.bincount(pos[:, 0], minlength=n)[1:5]
    expected_pos = counts ** 0.75 / (counts ** 0.75).sum() * len(queries)
    assert chisquare(observed_pos, expected_pos).pvalue > 0.01
    # negatives: never the query or a co-cited paper; P ~ citation_count^0.75 over the rest
    assert set(np.unique(neg)) <= set(range(5, 10))
    w = citation_counts[5:] ** 0.75
    assert chisquare(np.bincount(neg[:, 0], minlength=n)[5:], w / w.sum() * len(queries)).pvalue > 0.01


def test_cocitation_groups_and_triples(tmp_path):
    # r1..r3 each cite a, b, c; r1 also cites d: a is co-cited with b, c (3x) and d (1x)
    edges = ([(r, t) for r in ("r1", "r2", "r3") for t in "abc"] + [("r1", "d"), ("r4", "d"), ("r4", "e")]
             + [("r5", t) for t in "fghij"])
    cits = write_tsv(tmp_path / "c.tsv", edges)
    stats = get_cocitation_triples(cits, output_path=tmp_path / "t.csv", groups_output_path=tmp_path / "g.jsonl",
                                   positives_count=2, negatives_count=2, seed=1)
    groups = {g["query"]: g for g in read_jsonl(tmp_path / "g.jsonl")}
    assert set(groups) == set("abcdfghij")  # e is co-cited with d only; r1..r5 with nothing
    assert set(groups["a"]["positives"]) <= {"b", "c", "d"} and len(set(groups["a"]["positives"])) == 2
    for q, g in groups.items():  # negatives are cited papers outside the query's co-citations
        assert not set(g["negatives"]) & set(groups[q]["positives"]) and q not in g["negatives"]
    assert stats["triples"] == 18 and stats["queries_without_enough_cocitations"] == 6
    assert len(list(iter_triples_csv(tmp_path / "t.csv"))) == 18


def test_pairs_relations_union_intersection_and_balance(tmp_path):
    # dc: 8 edges; cc: (a,b),(a,c),(b,c) via r1 and (a,b) via r2; bc: (r1,r2) share a, b; a, r1, r2 share b
    edges = [("r1", "a"), ("r1", "b"), ("r1", "c"), ("r2", "a"), ("r2", "b"), ("a", "b"), ("u", "v"), ("v", "w")]
    cits = write_tsv(tmp_path / "c.tsv", edges)
    stats = get_pairs(cits, tmp_path / "p.csv", relations="dc,cc,bc", negatives="none", seed=0)
    assert (stats["pairs_dc"], stats["pairs_cc"], stats["pairs_bc"]) == (8, 3, 3)
    assert stats["pairs_per_relation"] == 3 and stats["pairs"] == 9  # each relation contributes equally
    with open(tmp_path / "p.csv") as fh:
        assert next(csv.reader(fh)) == ["query_paper_id", "positive_id"]
    stats = get_pairs(cits, tmp_path / "u.csv", relations="dc|cc,cc&dc", negatives="random", seed=0)
    assert stats["pairs_expr_dc|cc"] == 10 and stats["pairs_expr_cc&dc"] == 1  # (a,b) is both
    rows = list(iter_triples_csv(tmp_path / "u.csv"))
    assert len(rows) == 2 and all(len({q, p, n}) == 3 for q, p, n in rows)
    with pytest.raises(InputError, match="cannot read 'dc|xx'"):
        get_pairs(cits, tmp_path / "x.csv", relations="dc|xx")


def test_pairs_hard_negatives_are_two_hops_away(tmp_path):
    # a small component (q-a-x/y, b-q-z) plus 30 isolated edges: a random non-neighbour of a
    # component query would almost never be one of its 2-hop papers
    edges = [("q", "a"), ("a", "x"), ("a", "y"), ("b", "q"), ("b", "z")]
    edges += [(f"i{k:02d}", f"j{k:02d}") for k in range(30)]
    cits = write_tsv(tmp_path / "c.tsv", edges)
    stats = get_pairs(cits, tmp_path / "h.csv", relations="dc", negatives="hard", seed=0)
    undirected = {(a, b) for a, b in edges} | {(b, a) for a, b in edges}
    neighbours = {}
    for a, b in undirected:
        neighbours.setdefault(a, set()).add(b)
    rows = list(iter_triples_csv(tmp_path / "h.csv"))
    assert len(rows) == len(edges) == stats["pairs"]
    in_component = 0
    for q, p, n in rows:
        assert (q, p) in undirected and (q, n) not in undirected and n not in (q, p)
        two_hop = set().union(*(neighbours[m] for m in neighbours[q])) - neighbours[q] - {q, p}
        if two_hop:  # the property: a neighbour of a neighbour that is not itself a neighbour
            in_component += 1
            assert n in two_hop, (q, p, n, sorted(two_hop))
    assert in_component == 5
    # isolated edges have no 2-hop paper: those (and only those) fall back to a random non-neighbour
    assert stats["hard_negative_fallbacks_to_random"] == 30
