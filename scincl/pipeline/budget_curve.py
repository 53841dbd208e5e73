"""The budget curve (issue 17): SciNCL vs SPECTER-like as the number of training triplets grows.

Every arm x seed x budget is one cached run of :meth:`~scincl.pipeline.real_corpus.Reproduction.run_arm`
(``runs/<split>/t<budget>_.../<arm>/seed_<s>``), so a rerun retrains nothing and an interrupted curve
resumes where it stopped. Runs go budget by budget (all seeds and arms of the smallest budget first),
and the tables are rewritten after every run from whatever runs exist, so a partial curve is
readable at any time; cells with fewer seeds than asked are marked *partial*.

Tables (``budget_<split>/results.md``): mean ± std of cite / co-cite MAP and nDCG and their Avg per
arm and budget; per-seed paired differences (SciNCL - SPECTER-like) with a paired t-test per budget
(``scipy.stats.ttest_rel``); a plot of Avg vs budget with both arms and the base encoder.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.report import avg_label, run_average
from scincl.io import read_json
from scincl.pipeline import experiment_tables, grid
from scincl.pipeline.grid import BASE, Grid, Row, RowRuns

logger = logging.getLogger(__name__)

Scores = Dict[str, Dict[str, float]]  # task -> metric -> value (results.json "scores"[split])
BUDGET_ARMS = ("specter_like", "scincl")  # the pair the paired test compares: second minus first
ARM_DODGE = 1.04  # x factor between neighbouring arms on the plot's log axis (a display choice, 4 %)
# Paper Table 2 (SciNCL with 1 % / 10 % / 100 % of its 684k triplets, SciBERT, full SciDocs) is not
# drawn: its encoder, corpus and tasks differ, so only the direction of the gap is comparable.


def run_scores(run_dir: Path, split: str) -> Optional[Scores]:
    """The scores of one finished run (``None`` while it has not finished)."""
    path = Path(run_dir) / "results.json"
    if not path.exists():
        return None
    return read_json(path).get("scores", {}).get(split)


def metric_columns(runs: Sequence[Scores]) -> List[Tuple[str, str]]:
    """The (task, metric) pairs of the tables, in paper Table 1 order (as the main comparison)."""
    return experiment_tables.metric_columns([("", list(runs))])


def average(scores: Scores) -> float:
    """Avg of one run: ``eval/report.run_average`` (the one definition: the table metrics present)."""
    value, count = run_average(scores)
    if not count:
        raise InputError("a run has none of the table's metrics")
    return value


def paired_test(first: Sequence[float], second: Sequence[float]) -> Dict[str, Any]:
    """Per-seed differences ``second - first`` and a paired t-test (``nan`` below 2 pairs)."""
    import math

    from scipy import stats

    diffs = [b - a for a, b in zip(first, second)]
    if len(diffs) < 2:
        return {"diffs": diffs, "t": math.nan, "p": math.nan, "df": len(diffs) - 1}
    if len(set(diffs)) == 1:  # zero variance: t is infinite (or undefined for all-zero differences)
        return {"diffs": diffs, "t": math.nan, "p": math.nan, "df": len(diffs) - 1}
    result = stats.ttest_rel(second, first)
    return {"diffs": diffs, "t": float(result.statistic), "p": float(result.pvalue), "df": len(diffs) - 1}


def budget_tables(cells: Dict[Tuple[str, int], Dict[int, Scores]], base: Optional[Scores], seeds: Sequence[int],
                  budgets: Sequence[int], labels: Dict[str, str], arms: Sequence[str] = BUDGET_ARMS) -> str:
    """Markdown: mean ± std per arm and budget, then the paired differences per budget.

    ``cells[(arm, budget)]`` maps seed -> scores of the finished runs; a cell with fewer runs than
    ``seeds`` is marked partial, a cell without runs is left out.
    """
    from scincl.eval.report import mean_std_cell

    everything = [s for runs in cells.values() for s in runs.values()] + ([base] if base else [])
    columns = metric_columns(everything)
    header = ["arm", "triplets", "seeds"] + [f"{t} {m}" for t, m in columns] + [avg_label([run_average(r)[1] for r in everything])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    if base:
        lines.append("| " + " | ".join([labels.get("base", "base"), "0", "-"] + [
            mean_std_cell([base[t][m]]) if t in base and m in base[t] else "n/a" for t, m in columns]
            + [mean_std_cell([average(base)])]) + " |")
    for budget in budgets:
        for arm in arms:
            runs = cells.get((arm, budget), {})
            if not runs:
                continue
            done = [runs[s] for s in seeds if s in runs]
            count = f"{len(done)}" + ("" if len(done) == len(seeds) else f" of {len(seeds)} (partial)")
            lines.append("| " + " | ".join(
                [labels.get(arm, arm), f"{budget:,}", count]
                + [mean_std_cell([r[t][m] for r in done if t in r and m in r[t]]) for t, m in columns]
                + [mean_std_cell([average(r) for r in done])]) + " |")
    first, second = arms[0], arms[1]
    lines += ["", f"Paired differences {labels.get(second, second)} minus {labels.get(first, first)} "
              "(same seed = same query papers and training order), per budget; paired t-test on the "
              "per-seed Avg (scipy.stats.ttest_rel):", "",
              "| triplets | seeds | Δ Avg per seed | Δ Avg mean ± std | paired t | df | p | "
              + " | ".join(f"Δ {t} {m}" for t, m in columns) + " |",
              "|" + "---|" * (7 + len(columns))]
    for budget in budgets:
        a, b = cells.get((first, budget), {}), cells.get((second, budget), {})
        paired = [s for s in seeds if s in a and s in b]
        if not paired:
            continue
        test = paired_test([average(a[s]) for s in paired], [average(b[s]) for s in paired])
        per_seed = ", ".join(f"{d:+.2f} (seed {s})" for s, d in zip(paired, test["diffs"]))
        metric_diffs = [mean_std_cell([b[s][t][m] - a[s][t][m] for s in paired if t in a[s] and t in b[s]])
                        for t, m in columns]
        lines.append("| " + " | ".join([f"{budget:,}", str(len(paired)), per_seed, mean_std_cell(test["diffs"]),
                                        _fmt(test["t"], 2), str(test["df"]), _fmt(test["p"], 3)] + metric_diffs) + " |")
    return "\n".join(lines) + "\n"


def budget_plot(cells: Dict[Tuple[str, int], Dict[int, Scores]], base: Optional[Scores], budgets: Sequence[int],
                labels: Dict[str, str], path: Path, arms: Sequence[str] = BUDGET_ARMS) -> Optional[Path]:
    """Avg vs budget (mean ± std over the finished seeds) for each arm, the base encoder as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if not any(cells.values()):
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for position, arm in enumerate(arms):
        # each arm a little to the side of the budget (log x axis) so error bars do not overlap
        dodge = ARM_DODGE ** (position - (len(arms) - 1) / 2)
        xs, means, stds = [], [], []
        for budget in budgets:
            runs = cells.get((arm, budget), {})
            if runs:
                values = [average(r) for r in runs.values()]
                xs.append(budget * dodge)
                means.append(float(np.mean(values)))
                stds.append(float(np.std(values, ddof=1)) if len(values) > 1 else 0.0)
        if xs:
            ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, label=labels.get(arm, arm))
    if base:
        ax.axhline(average(base), color="grey", linestyle="--", label=labels.get("base", "base"))
    ax.set(xscale="log", xlabel="training triplets (5 per query)", ylabel="Avg (cite + co-cite MAP/nDCG)",
           title="Budget curve (mean ± std over seeds)")
    ax.set_xticks(list(budgets))
    ax.set_xticklabels([f"{b:,}" for b in budgets])
    ax.set_xticks([], minor=True)  # the log axis' minor labels (2×10³, ...) would overprint the budgets
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def budget_row_list(budgets: Sequence[int], arms: Sequence[str] = BUDGET_ARMS) -> List[Row]:
    """The base row, then each budget (smallest first) with its arms, run seed by seed: each budget complete
    across seeds before the next one."""
    from scincl.pipeline.real_corpus import ARM_NAMES

    return [Row(ARM_NAMES[BASE], BASE)] + [Row(ARM_NAMES.get(arm, arm), arm, {"triplets": budget}, timing=f"t{budget}/{arm}",
                                               group=budget) for budget in sorted(budgets) for arm in arms]


def run_order(budgets: Sequence[int], seeds: Sequence[int], arms: Sequence[str] = BUDGET_ARMS) -> List[Tuple[int, int, str]]:
    """(budget, seed, arm) in the grid's running order (:func:`budget_row_list`)."""
    rows = budget_row_list(budgets, arms)
    return [(rows[i].changes["triplets"], seed, rows[i].arm) for i, seed in grid.run_order(rows, seeds)
            if rows[i].arm != BASE]


def budget_grid(rep, recipe, budgets: Sequence[int], seeds: Sequence[int], split: str = "test",
                arms: Sequence[str] = BUDGET_ARMS) -> Grid:
    """Every arm x seed x budget as a grid whose tables are rewritten after every run (partial cells marked)."""
    if len(arms) != 2:
        raise InputError(f"the budget curve compares two arms, got {', '.join(arms)}")
    return Grid(f"budget_{split}/" + recipe.key().split("_", 1)[1],  # the recipe without its budget
                f"Budget curve on {rep.corpus.name} ({split} queries): {', '.join(f'{b:,}' for b in budgets)} triplets",
                budget_row_list(budgets, arms), report=functools.partial(budget_report, budgets, seeds, arms),
                rewrite_after_each_run=True, budget_varies=True)


def budget_report(budgets: Sequence[int], seeds: Sequence[int], arms: Sequence[str], exp: Path, rep,
                  results: List[RowRuns], split: str) -> Tuple[str, Sequence[str]]:
    """Tables + plot from the runs that exist now (partial cells marked)."""
    from scincl.pipeline.real_corpus import ARM_NAMES

    base = next((run_scores(r.runs[0], split) for r in results if r.row.arm == BASE and r.runs), None)
    cells = {(r.row.arm, r.recipe.triplets): {s: scores for s, run in zip(seeds, r.runs)
                                              if (scores := run_scores(run, split)) is not None}
             for r in results if r.row.arm != BASE}
    done = sum(len(runs) for runs in cells.values())
    wanted = len(budgets) * len(seeds) * len(arms)
    table = budget_tables(cells, base, seeds, budgets, ARM_NAMES, arms)
    plot = budget_plot(cells, base, budgets, ARM_NAMES, exp / "budget_avg.png", arms)
    status = "" if done == wanted else f"**Partial: {done} of {wanted} runs finished.**\n\n"
    return status + table, [plot.name] if plot else []


def _fmt(value: float, digits: int) -> str:
    import math

    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"
