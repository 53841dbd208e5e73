"""The paired comparison's statistics and tables (scincl/eval/paired_tables.py), on hand-made scores."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.eval.paired_tables import (all_pairs, arm_table, compare, comparison_table, detectable_effect,
                                       paired_power, run_row)


def _scores(cite_map, cite_ndcg, cocite_map, cocite_ndcg):
    return {"cite": {"map": cite_map, "ndcg": cite_ndcg}, "co-cite": {"map": cocite_map, "ndcg": cocite_ndcg},
            "co-view": {"map": 1.0, "ndcg": 1.0}}  # a task outside the four never enters avg


def _rows(markdown: str) -> list:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]


def test_a_runs_row_holds_the_four_metrics_and_their_mean():
    row = run_row("scincl", 1000, 3, _scores(56.53, 76.12, 50.17, 72.06))
    assert row == {"arm": "scincl", "triplets": 1000, "seed": 3, "cite_map": 56.53, "cite_ndcg": 76.12,
                   "cocite_map": 50.17, "cocite_ndcg": 72.06, "avg": 63.72}
    with pytest.raises(InputError, match="scincl seed 3 .1000 triplets.: no co-cite ndcg"):
        run_row("scincl", 1000, 3, {"cite": {"map": 1.0, "ndcg": 1.0}, "co-cite": {"map": 1.0}})


def test_compare_gives_the_paired_t_test_and_its_confidence_interval():
    first = {3: 60.0, 4: 61.0, 5: 62.0, 9: 50.0}
    second = {3: 60.25, 4: 61.75, 5: 63.25}  # seed 9 has no pair: left out
    result = compare(first, second)
    assert result.seeds == (3, 4, 5) and result.diffs == (0.25, 0.75, 1.25) and result.df == 2
    # mean 0.75, sd 0.5: t = 0.75 / (0.5 / sqrt 3) = 2.598; 95 % CI = 0.75 ± t(0.975, 2) 0.5 / sqrt 3 (t 4.303)
    assert (result.mean, result.std) == pytest.approx((0.75, 0.5))
    assert result.t == pytest.approx(2.598, abs=1e-3) and result.p == pytest.approx(0.1217, abs=1e-4)
    assert result.ci == pytest.approx((0.75 - 1.2421, 0.75 + 1.2421), abs=1e-4)
    assert compare({1: 1.0}, {2: 1.0}) is None


def test_power_matches_a_simulation_of_the_paired_t_test():
    from scipy import stats

    effect, std, n = 0.3, 0.42, 20
    rng = np.random.default_rng(0)
    diffs = rng.normal(effect, std, size=(20000, n))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / math.sqrt(n))
    simulated = float(np.mean(np.abs(t) > stats.t.ppf(0.975, n - 1)))
    assert paired_power(effect, std, n) == pytest.approx(simulated, abs=0.01)
    assert 0.85 < paired_power(effect, std, n) < 0.87  # docs/results.md 8.6: 86 % at the std of 8.3's 1,000 triplets
    assert paired_power(0.3, 0.42, 3) == pytest.approx(0.118, abs=0.002)  # the "about 12 %" with 3 seeds
    # the effect detectable with 80 % power is where the power curve crosses 0.8
    assert paired_power(detectable_effect(std, n), std, n) == pytest.approx(0.8, abs=1e-6)
    assert detectable_effect(0.42, 20) == pytest.approx(0.277, abs=1e-3)
    assert math.isnan(paired_power(0.3, 0.0, 20)) and math.isnan(detectable_effect(0.5, 1))


def test_tables_give_each_arm_and_each_comparison_with_partial_counts():
    runs = [run_row("specter_like", 1000, s, _scores(60.0, 70.0, 50.0, 60.0 + s)) for s in (3, 4, 5)]
    runs += [run_row("scincl", 1000, s, _scores(61.0 + s, 70.0, 50.0, 60.0 + 2 * s)) for s in (3, 4, 5)]
    runs += [run_row("scincl_kp25", 1000, s, _scores(60.0, 70.0, 50.0, 60.0)) for s in (3, 4)]
    labels = {"specter_like": "SPECTER-like", "scincl": "SciNCL", "scincl_kp25": "SciNCL k+ 25"}
    arms = _rows(arm_table(runs, labels, {1000: [3, 4, 5]}))
    assert arms[0] == ["SPECTER-like", "1,000", "3", "60.00 ± 0.00", "70.00 ± 0.00", "50.00 ± 0.00", "64.00 ± 1.00",
                       "61.00 ± 0.25"]
    assert [a[:3] for a in arms[1:]] == [["SciNCL", "1,000", "3"], ["SciNCL k+ 25", "1,000", "2 of 3"]]
    table = comparison_table(runs, all_pairs(list(labels), 1000), labels, effect=0.3)
    assert "| power for +0.3 |" in table
    rows = _rows(table)
    assert [r[0] for r in rows] == ["SciNCL − SPECTER-like", "SciNCL k+ 25 − SPECTER-like", "SciNCL k+ 25 − SciNCL"]
    # per-seed Avg differences (SciNCL - SPECTER-like): 62.50 - 60.75, 63.25 - 61.00, 64.00 - 61.25 = 1.75, 2.25, 2.75;
    # mean 2.25, sd 0.5, t = 2.25 / (0.5 / sqrt 3) = 7.794, df 2: two-sided p = 1 - t / sqrt(2 + t^2);
    # 95 % CI 2.25 ± 4.303 * 0.5 / sqrt 3
    t = 2.25 / (0.5 / math.sqrt(3))
    assert rows[0][:9] == ["SciNCL − SPECTER-like", "1,000", "", "3", "2.25 ± 0.50", "[+1.01, +3.49]", f"{t:.2f}", "2",
                           f"{1 - t / math.sqrt(2 + t * t):.3f}"]
    assert rows[0][9] == f"{100 * paired_power(0.3, 0.5, 3):.0f} %" and float(rows[0][10]) > 0.5
    assert rows[1][3] == "2"  # only the seeds both arms have
    assert _rows(comparison_table(runs, [("scincl", "specter_like", 6840, "x")], labels, 0.3)) == []


def test_a_p_below_a_thousandth_reads_as_such_not_as_zero():
    from scincl.eval.study_tables import p_value_text

    assert [p_value_text(p) for p in (0.00035, 0.001, 0.4208, None, float("nan"))] == [
        "< 0.001", "0.001", "0.421", "n/a", "n/a"]
