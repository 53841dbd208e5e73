"""Citation-based samplers: SPECTER-like triples, co-citation noise sampling, relation pairs."""
from __future__ import annotations

import csv
import threading

import numpy as np
import pytest
from scipy.stats import chisquare

from scincl.errors import InputError
from scincl.io import iter_triples_csv, read_jsonl
from scincl.triples.citation_graph import Csr, build_citation_graph
from scincl.triples import cocitation
from scincl.triples.cocitation import GroupSampler, get_cocitation_triples
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


def _toy_sampler(cocited_count, negatives_count, cocitation_counts, negative_weights, extra_edges=()):
    """Paper 0 = source s citing paper 1 = target t; t co-cited with papers 2.. (given counts)."""
    n = len(negative_weights)
    others = np.arange(2, 2 + len(cocitation_counts))
    src = np.concatenate([np.ones(len(others), dtype=np.int64), others])
    dst = np.concatenate([others, np.ones(len(others), dtype=np.int64)])
    counts = np.concatenate([cocitation_counts, cocitation_counts]).astype(float)
    cited = [(0, 1), *extra_edges]
    outbound = Csr.from_edges(np.array([a for a, _ in cited]), np.array([b for _, b in cited]), n)
    return GroupSampler(outbound=outbound, cocitations=Csr.from_edges(src, dst, n, data=counts),
                        negative_weights=np.asarray(negative_weights, dtype=float) ** 0.75,
                        cocited_count=cocited_count, negatives_count=negatives_count, power=0.75)


def test_groups_sampler_follows_the_three_quarter_power_laws_over_10k_draws():
    # t co-cited with papers 2..5 (counts 1, 2, 4, 8); negatives among 6..9 (citation counts 1, 2, 4, 8);
    # s (0) and t (1) have large citation counts but are never negatives (s itself; t is cited by s)
    counts = np.array([1, 2, 4, 8], dtype=float)
    sampler = _toy_sampler(1, 1, counts, [50, 50, 0, 0, 0, 0, 1, 2, 4, 8])
    draws = 10_000
    cocited, negatives = sampler.sample(np.zeros(draws, dtype=np.int64), np.ones(draws, dtype=np.int64),
                                        np.random.default_rng(0))
    expected = counts ** 0.75 / (counts ** 0.75).sum()  # eq. 1
    observed = np.bincount(cocited[:, 0], minlength=10)[2:6] / draws
    assert np.abs(observed - expected).max() < 0.015  # 10k draws: standard error < 0.005
    assert chisquare(observed * draws, expected * draws).pvalue > 0.001
    assert set(np.unique(negatives)) == {6, 7, 8, 9}  # eq. 2 support: never s, t or a co-cited paper
    observed = np.bincount(negatives[:, 0], minlength=10)[6:] / draws
    assert np.abs(observed - expected).max() < 0.015
    assert chisquare(observed * draws, expected * draws).pvalue > 0.001


def test_groups_sampler_takes_up_to_n_cocited_never_the_source_and_excludes_cited_negatives():
    # t co-cited with 2, 3 and with the source 0 itself; s cites t and 4: 4 is never a negative
    sampler = _toy_sampler(3, 2, np.array([1, 1]), [1, 1, 1, 1, 1, 1, 1], extra_edges=[(0, 4)])
    sampler.cocitations = Csr.from_edges(np.array([1, 1, 1, 2, 3, 0]), np.array([2, 3, 0, 1, 1, 1]), 7,
                                         data=np.array([1.0, 1.0, 5.0, 1.0, 1.0, 5.0]))
    cocited, negatives = sampler.sample(np.zeros(500, dtype=np.int64), np.ones(500, dtype=np.int64),
                                        np.random.default_rng(1))
    assert cocited.shape == (500, 3) and (cocited[:, 2] == -1).all()  # only 2 co-cited papers besides s
    assert {frozenset(row[:2]) for row in cocited.tolist()} == {frozenset({2, 3})}
    assert set(np.unique(negatives)) == {5, 6}  # not s (0), t (1), cited 4, co-cited 2, 3
    lonely = _toy_sampler(3, 1, np.array([], dtype=float), [1, 1, 1, 1])
    cocited, _ = lonely.sample(np.zeros(3, dtype=np.int64), np.ones(3, dtype=np.int64), np.random.default_rng(0))
    assert (cocited == -1).all()  # a target co-cited with nothing keeps an empty list


def test_cocitation_groups_one_per_edge_target_first_and_identical_for_any_workers(tmp_path, monkeypatch):
    # r1..r3 each cite a, b, c; r1 also cites d; r4 cites d, e; r5 cites f..j
    edges = ([(r, t) for r in ("r1", "r2", "r3") for t in "abc"] + [("r1", "d"), ("r4", "d"), ("r4", "e")]
             + [("r5", t) for t in "fghij"])
    cits = write_tsv(tmp_path / "c.tsv", edges)
    monkeypatch.setattr(cocitation, "EDGES_PER_BLOCK", 4)  # several blocks on a toy graph
    stats = get_cocitation_triples(cits, output_path=tmp_path / "t.csv", groups_output_path=tmp_path / "g.jsonl",
                                   negatives_count=2, seed=1, workers=1)
    groups = list(read_jsonl(tmp_path / "g.jsonl"))
    assert [(g["query_paper_id"], g["positives"][0]) for g in groups] == sorted(edges)  # one group per edge
    cocited_with = {}
    for r, _ in edges:
        refs = {t for s, t in edges if s == r}
        for t in refs:
            cocited_with.setdefault(t, set()).update(refs - {t})
    cited_by = {r: {t for s, t in edges if s == r} for r, _ in edges}
    for g in groups:
        s, (t, *cocited), negatives = g["query_paper_id"], g["positives"], g["negatives"]
        assert len(cocited) == min(3, len(cocited_with[t])) and set(cocited) <= cocited_with[t]
        assert len(negatives) == 2 and not set(negatives) & (cited_by[s] | {s} | set(cocited))
    assert stats["groups"] == 17 and stats["sources"] == 5 and stats["targets_without_cocitations"] == 0
    assert stats["groups_with_fewer_cocited"] == 1  # r4 -> e: e is co-cited with d only
    assert stats["triples"] == len(list(iter_triples_csv(tmp_path / "t.csv"))) == 17 * 4 - 2  # max(P, N) rows
    idle = threading.Event()  # workers=3 while another thread runs: the pool starts them from a forkserver
    for workers in (2, 3):
        if workers == 3:
            threading.Thread(target=idle.wait, daemon=True).start()
        get_cocitation_triples(cits, output_path=tmp_path / f"t{workers}.csv",
                               groups_output_path=tmp_path / f"g{workers}.jsonl.gz", negatives_count=2, seed=1,
                               workers=workers)
        assert (tmp_path / f"t{workers}.csv").read_bytes() == (tmp_path / "t.csv").read_bytes()
        assert list(read_jsonl(tmp_path / f"g{workers}.jsonl.gz")) == groups
    idle.set()
    get_cocitation_triples(cits, groups_output_path=tmp_path / "other.jsonl", negatives_count=2, seed=2)
    assert list(read_jsonl(tmp_path / "other.jsonl")) != groups
    with pytest.raises(InputError, match="--negatives_count >= 1"):
        get_cocitation_triples(cits, groups_output_path=tmp_path / "x.jsonl", negatives_count=0)


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
    # parts dc, cc (the union's relation types) and cc&dc, one pair each: the intersection has one
    assert (stats["pairs_drawn_dc"], stats["pairs_drawn_cc"], stats["pairs_drawn_cc&dc"]) == (1, 1, 1)
    rows = list(iter_triples_csv(tmp_path / "u.csv"))
    assert len(rows) == 3 and all(len({q, p, n}) == 3 for q, p, n in rows)
    with pytest.raises(InputError, match="cannot read 'dc|xx'"):
        get_pairs(cits, tmp_path / "x.csv", relations="dc|xx")


def _relation_counts(path, dc, cc):
    """Rows of a pairs CSV, and how many of them are direct citations / co-citations (unordered)."""
    with open(path) as fh:
        rows = [frozenset(r) for r in list(csv.reader(fh))[1:]]
    return len(rows), sum(r in dc for r in rows), sum(r in cc for r in rows)


def test_pairs_union_is_balanced_by_relation_type_as_openmsd(tmp_path):
    # OpenMSD §5: the union down-samples the over-represented type to the count of the smallest.
    # 12 citing papers with 4 references each among 30: 48 direct citations, many more co-citations
    rng = np.random.default_rng(0)
    edges = [(f"s{a}", f"p{b}") for a in range(12) for b in rng.choice(30, size=4, replace=False)]
    cits = write_tsv(tmp_path / "c.tsv", edges)
    dc = {frozenset(e) for e in edges}
    refs = {}
    for a, b in edges:
        refs.setdefault(a, []).append(b)
    cc = {frozenset((x, y)) for r in refs.values() for x in r for y in r if x != y}
    assert (len(dc), len(cc)) == (48, 69)
    stats = get_pairs(cits, tmp_path / "u.csv", relations="dc|cc", negatives="none", seed=0)
    assert stats["pairs_expr_dc|cc"] == 117 and stats["pairs_per_relation"] == 48
    assert _relation_counts(tmp_path / "u.csv", dc, cc) == (96, 48, 48)  # 48 of each type, not all 117
    # the union's parts are its relation types: the same pairs as the comma list
    get_pairs(cits, tmp_path / "l.csv", relations="dc,cc", negatives="none", seed=0)
    assert (tmp_path / "u.csv").read_bytes() == (tmp_path / "l.csv").read_bytes()
    stats = get_pairs(cits, tmp_path / "k.csv", relations="dc|cc", pairs_per_relation=10, negatives="none", seed=0)
    assert _relation_counts(tmp_path / "k.csv", dc, cc) == (20, 10, 10)


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
