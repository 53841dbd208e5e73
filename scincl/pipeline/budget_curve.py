"""The budget curve (issue 17): SciNCL vs SPECTER-like as the number of training triplets grows.

A grid (``scincl/pipeline/grid.py``) whose rows are the arms at each budget: every arm x seed x budget
is one cached run of :meth:`~scincl.pipeline.real_corpus.CorpusPlan.run_arm`
(``runs/<split>/t<budget>_.../<arm>/seed_<s>``), so a rerun retrains nothing and an interrupted curve
resumes where it stopped. Runs go budget by budget (all seeds and arms of the smallest budget first),
and the tables are rewritten after every run from whatever runs exist, so a partial curve is
readable at any time; cells with fewer seeds than asked are marked *partial*.

Tables (``budget_<split>/<recipe without its budget>/results.md``, ``scincl/eval/study_reports.py`` budget_report):
mean ± std of cite / co-cite MAP and nDCG and their Avg per arm and budget; per-seed paired differences
(SciNCL - SPECTER-like) with a paired t-test per budget (``scipy.stats.ttest_rel``); a plot of Avg vs
budget with both arms and the base encoder.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import List, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.study_reports import budget_report
from scincl.pipeline import grid
from scincl.pipeline.grid import BASE, Grid, Row, RowRuns
from scincl.pipeline.layout import recipe_key
from scincl.settings.arms import ARM_NAMES


def budget_row_list(budgets: Sequence[int], arms: Sequence[str]) -> List[Row]:
    """The base row, then each budget (smallest first) with its arms, run seed by seed: each budget complete
    across seeds before the next one."""
    return [Row(ARM_NAMES[BASE], BASE)] + [
        Row(ARM_NAMES.get(arm, arm), arm, {"triplets": budget}, timing=f"t{budget}/{arm}", group=budget)
        for budget in sorted(budgets) for arm in arms]


def run_order(budgets: Sequence[int], seeds: Sequence[int],
              arms: Sequence[str]) -> List[Tuple[int, int, str]]:
    """(budget, seed, arm) in the grid's running order (:func:`budget_row_list`)."""
    rows = budget_row_list(budgets, arms)
    return [(rows[i].changes["triplets"], seed, rows[i].arm) for i, seed in grid.run_order(rows, seeds)
            if rows[i].arm != BASE]


def budget_grid(rep, recipe, budgets: Sequence[int], seeds: Sequence[int], split: str,
                arms: Sequence[str]) -> Grid:
    """Every arm x seed x budget as a grid whose tables are rewritten after every run (partial cells marked)."""
    if len(arms) != 2:
        raise InputError(f"the budget curve compares two arms, got {', '.join(arms)}")
    return Grid(f"budget_{split}/" + recipe_key(recipe).split("_", 1)[1],  # the recipe without its budget
                f"Budget curve on {rep.corpus.name} ({split} queries): {', '.join(f'{b:,}' for b in budgets)} triplets",
                budget_row_list(budgets, arms), report=functools.partial(budget_runs, budgets, seeds, arms),
                rewrite_after_each_run=True, budget_varies=True)


def budget_runs(budgets: Sequence[int], seeds: Sequence[int], arms: Sequence[str], exp: Path, rep,
                results: List[RowRuns], split: str) -> Tuple[str, Sequence[str]]:
    """Tables + plot from the runs that exist now (partial cells marked): the base run and each (arm, budget)'s runs
    by seed, handed to ``scincl/eval/study_reports.py``."""
    base = next((r.runs[0] for r in results if r.row.arm == BASE and r.runs), None)
    cells = {(r.row.arm, r.recipe.triplets): dict(zip(seeds, r.runs)) for r in results if r.row.arm != BASE}
    return budget_report(exp, base, cells, budgets, seeds, arms, ARM_NAMES, split)
