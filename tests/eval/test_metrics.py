"""Metrics of scincl.eval.metrics against hand-computed values (ties, misses, edge cases)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scincl.eval import metrics as M


def test_average_precision_counts_unretrieved_relevant_as_misses():
    # ranks 1 and 3 relevant, a third relevant document never retrieved: (1/1 + 2/3) / 3
    assert M.average_precision([1, 0, 1, 0], n_relevant=3) == pytest.approx((1 + 2 / 3) / 3)
    assert M.average_precision([0, 0], n_relevant=0) == 0.0
    # graded relevance counts as relevant from grade 1 (trec_eval relevance_level)
    assert M.average_precision([2, 1], n_relevant=2) == pytest.approx(1.0)


def test_average_precision_at_k_divides_by_min_relevant_k():
    # top-2 cut: only rank 1 counts, denominator min(3, 2) = 2
    assert M.average_precision([1, 0, 1], n_relevant=3, k=2) == pytest.approx(0.5)


def test_ndcg_full_depth_and_cut_with_ideal_from_all_judged():
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert M.ndcg([0, 1, 1], judged_relevance=[1, 1, 1, 0]) == pytest.approx(dcg / ideal)
    assert M.ndcg([0, 1, 1], judged_relevance=[1, 1, 1, 0], k=2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # graded gains: ideal puts the grade-2 document first
    assert M.ndcg([1, 2], judged_relevance=[2, 1]) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert M.ndcg([0, 0], judged_relevance=[0, 0]) == 0.0


def test_precision_recall_rr_hits():
    ranked = [0, 1, 0, 1, 1]
    assert M.precision_at_k(ranked, 2) == 0.5
    assert M.precision_at_k([1], 3) == pytest.approx(1 / 3)  # missing ranks are not relevant
    assert M.recall_at_k(ranked, n_relevant=4, k=4) == 0.5
    assert M.recall_at_k(ranked, n_relevant=0, k=4) == 0.0
    assert M.reciprocal_rank(ranked) == 0.5
    assert M.reciprocal_rank(ranked, k=1) == 0.0
    assert M.reciprocal_rank([0, 0]) == 0.0
    assert M.hits_at_k(ranked, 1) == 0.0 and M.hits_at_k(ranked, 2) == 1.0


def test_f1_macro_and_binary():
    y_true, y_pred = [0, 0, 1, 1], [0, 1, 1, 1]
    # class 0: P=1 R=.5 -> 2/3; class 1: P=2/3 R=1 -> .8
    assert M.f1(y_true, y_pred) == pytest.approx((2 / 3 + 0.8) / 2)
    assert M.f1(y_true, y_pred, average="binary") == pytest.approx(0.8)


def test_kendall_tau_with_and_without_ties():
    assert M.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)  # 5 concordant, 1 discordant
    # tau-b with a tie in y: (C - D) / sqrt((n0 - n1)(n0 - n2)) = (5 - 0) / sqrt(6 * 5)
    assert M.kendall_tau([1, 2, 3, 4], [1, 2, 2, 4]) == pytest.approx(5 / math.sqrt(30))


def test_trec_order_ties_by_id_descending_after_float32():
    ids = ["a", "b", "c", "d"]
    # b and a tie; c and d differ only below float32 precision, so they tie too -> id descending
    scores = [0.5, 0.5, 0.9, 0.9 + 1e-9]
    assert [ids[i] for i in M.trec_order(ids, scores)] == ["d", "c", "b", "a"]
    assert [ids[i] for i in M.trec_order(ids, [0.1, 0.3, 0.2, -1.0])] == ["b", "c", "a", "d"]


def test_percent_rounds_like_the_official_suite():
    assert M.percent(0.123456) == 12.35
    assert M.percent(1.0) == 100.0
    assert isinstance(M.percent(np.float64(0.5)), float)
