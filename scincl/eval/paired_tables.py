"""Arms compared in pairs over seeds (issue 40): one row per run, per-arm mean ± std, paired differences with their
95 % CI, t-test and power. Pure functions of the runs' scores (no file is read here; ``paired_runs.py`` reads and
writes ``runs.csv``).

A run's row (:data:`RUN_COLUMNS`, the columns of ``runs.csv``): its arm, triplets and seed, cite and co-cite MAP and
nDCG as ``results.json`` holds them (×100, 2 decimals) and ``avg``, the mean of those four (the paper's CITE column,
Table 1; docs/results.md's "Avg. (over 4 of 12 metrics present)" on hep-th). The paired difference of two arms is
taken seed by seed (both arms of a seed trained on the same query papers); its test is
:func:`scincl.eval.study_tables.paired_test` (``scipy.stats.ttest_rel``, two-sided).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.eval.report import mean_std_cell
from scincl.eval.study_tables import number_or_na, p_value_text, paired_test

# runs.csv: one row per run (issue 40's column names)
RUN_COLUMNS = ("arm", "triplets", "seed", "cite_map", "cite_ndcg", "cocite_map", "cocite_ndcg", "avg")
# the four metrics: runs.csv column -> (results.json task, metric) and the table's header
METRICS = {"cite_map": ("cite", "map", "cite MAP"), "cite_ndcg": ("cite", "ndcg", "cite nDCG"),
           "cocite_map": ("co-cite", "map", "co-cite MAP"), "cocite_ndcg": ("co-cite", "ndcg", "co-cite nDCG")}
ALPHA = 0.05  # two-sided
TARGET_POWER = 0.8
# Avg: the effect the paired pages give the power for, docs/results.md section 8.3's SciNCL - SPECTER-like at 1,000
# triplets (+0.30): the value experiments/hepth_powered.py pre-registered as its EFFECT (tests/pipeline/test_paired.py)
REFERENCE_EFFECT = 0.3

Run = Dict[str, object]  # one runs.csv row: RUN_COLUMNS -> value


def run_row(arm: str, triplets: int, seed: int, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """The runs.csv row of one run from its ``results.json`` scores of one split (``{task: {metric: value}}``)."""
    row: Run = {"arm": arm, "triplets": int(triplets), "seed": int(seed)}
    for column, (task, metric, _) in METRICS.items():
        value = scores.get(task, {}).get(metric)
        if value is None:
            raise InputError(f"{arm} seed {seed} ({triplets} triplets): no {task} {metric} in its scores")
        row[column] = float(value)
    # four values of 2 decimals: their mean has at most 4, so the rounding only removes float noise
    row["avg"] = round(float(np.mean([row[c] for c in METRICS])), 4)
    return row


# ---------------------------------------------------------------------- statistics
def paired_power(effect: float, std: float, n: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired t-test (``n`` pairs, differences with sample std ``std``) to detect a true mean
    difference ``effect``: the noncentral t distribution with df n - 1 and noncentrality effect / (std / sqrt(n))."""
    from scipy import stats

    if n < 2 or not std > 0:
        return math.nan
    df, shift = n - 1, effect / (std / math.sqrt(n))
    critical = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift))


def detectable_effect(std: float, n: int, power: float = TARGET_POWER, alpha: float = ALPHA) -> float:
    """The smallest true mean difference the two-sided paired t-test detects with ``power`` (the inverse of
    :func:`paired_power` in the effect)."""
    from scipy.optimize import brentq

    if n < 2 or not std > 0:
        return math.nan
    high = std  # doubled until the power passes the target (nan: scipy's noncentral t gives out, 2 seeds or so)
    while (reached := paired_power(high, std, n, alpha)) < power:
        high *= 2
    if math.isnan(reached):
        return math.nan
    return float(brentq(lambda effect: paired_power(effect, std, n, alpha) - power, 0.0, high))


@dataclass(frozen=True)
class Comparison:
    """``second - first`` seed by seed: the differences, their mean, std, 95 % CI, t-test and power."""

    seeds: Tuple[int, ...]
    diffs: Tuple[float, ...]
    mean: float
    std: float
    ci: Tuple[float, float]
    t: float
    df: int
    p: float


def compare(first: Mapping[int, float], second: Mapping[int, float]) -> Optional[Comparison]:
    """The paired comparison of two arms' per-seed values on the seeds both have (``None``: no common seed)."""
    from scipy import stats

    seeds = tuple(sorted(set(first) & set(second)))
    if not seeds:
        return None
    test = paired_test([first[s] for s in seeds], [second[s] for s in seeds])
    diffs = tuple(test["diffs"])
    n, mean = len(diffs), float(np.mean(diffs))
    std = float(np.std(diffs, ddof=1)) if n > 1 else math.nan
    half = float(stats.t.ppf(1 - ALPHA / 2, n - 1) * std / math.sqrt(n)) if n > 1 else math.nan
    return Comparison(seeds, diffs, mean, std, (mean - half, mean + half), test["t"], test["df"], test["p"])


# ---------------------------------------------------------------------- tables
def by_arm(runs: Sequence[Run]) -> Dict[Tuple[str, int], Dict[int, Run]]:
    """``{(arm, triplets): {seed: row}}`` (a run given twice is an error)."""
    cells: Dict[Tuple[str, int], Dict[int, Run]] = {}
    for run in runs:
        cell = cells.setdefault((str(run["arm"]), int(run["triplets"])), {})
        if int(run["seed"]) in cell:
            raise InputError(f"{run['arm']} at {run['triplets']} triplets, seed {run['seed']}: two runs")
        cell[int(run["seed"])] = run
    return cells


def arm_table(runs: Sequence[Run], labels: Mapping[str, str], expected: Mapping[int, Sequence[int]]) -> str:
    """Markdown: mean ± std (sample std over seeds) of the four metrics and the Avg per arm and budget; ``expected``:
    the seeds asked per budget (the seeds column says how many are in)."""
    header = ["arm", "triplets", "seeds"] + [h for _, _, h in METRICS.values()] + ["Avg (4 metrics)"]
    lines = ["| " + " | ".join(header) + " |", "|---|---:|---|" + "---|" * (len(METRICS) + 1)]
    for (arm, triplets), cell in sorted(by_arm(runs).items(), key=lambda item: (item[0][1], _order(labels, item[0][0]))):
        seeds = expected.get(triplets, ())
        count = f"{len(cell)}" + (f" of {len(seeds)}" if seeds and len(cell) != len(seeds) else "")
        values = [mean_std_cell([float(r[c]) for r in cell.values()]) for c in [*METRICS, "avg"]]
        lines.append("| " + " | ".join([labels.get(arm, arm), f"{triplets:,}", count] + values) + " |")
    return "\n".join(lines) + "\n"


def comparison_table(runs: Sequence[Run], comparisons: Sequence[Tuple[str, str, int, str]], labels: Mapping[str, str],
                     effect: float) -> str:
    """Markdown: one row per ``(second, first, triplets, role)`` of ``comparisons``: ``second - first`` on the per-seed
    Avg, its mean ± std, 95 % CI, paired t, df, p, the power to detect a true ``effect`` at the observed std, and the
    effect detectable with 80 % power (two-sided, alpha 0.05). A comparison without a common seed is left out."""
    cells = by_arm(runs)
    lines = ["| comparison (Avg, second minus first) | triplets | role | seeds | Δ Avg mean ± std | 95 % CI | paired t "
             f"| df | p | power for {effect:+.1f} | effect with 80 % power |",
             "|---|---:|---|---:|---|---|---:|---:|---:|---:|---:|"]
    for second, first, triplets, role in comparisons:
        result = compare(*({s: float(r["avg"]) for s, r in cells.get((arm, triplets), {}).items()}
                           for arm in (first, second)))
        if result is None:
            continue
        n = len(result.seeds)
        lines.append("| " + " | ".join([
            f"{labels.get(second, second)} − {labels.get(first, first)}", f"{triplets:,}", role, str(n),
            mean_std_cell(list(result.diffs)),
            f"[{number_or_na(result.ci[0], '+.2f')}, {number_or_na(result.ci[1], '+.2f')}]",
            number_or_na(result.t, ".2f"), str(result.df), p_value_text(result.p),
            number_or_na(100 * paired_power(effect, result.std, n), ".0f", " %"),
            number_or_na(detectable_effect(result.std, n), ".2f")]) + " |")
    return "\n".join(lines) + "\n"


def all_pairs(arms: Sequence[str], triplets: int) -> List[Tuple[str, str, int, str]]:
    """Every later arm minus every earlier one at one budget (the default comparisons of a paired grid)."""
    return [(arms[j], arms[i], triplets, "") for i in range(len(arms)) for j in range(i + 1, len(arms))]


def _order(labels: Mapping[str, str], arm: str) -> int:
    return list(labels).index(arm) if arm in labels else len(labels)

