"""The ``paired`` experiment kind (issue 40): arms trained on the same query papers, seed by seed, compared in pairs.

Rows: the base encoder, each arm of the experiment at its recipe, then each ``--variants`` change (``field=value``)
of every arm but the first (the reference: SPECTER-like's triplets do not depend on k+, so its run is not repeated).
All trained rows form one group, so the runner (``grid.run_order``) trains every row of one seed before the next
seed: an interrupted experiment leaves complete pairs. Every arm of a seed reads the same query papers
(``CorpusPlan.queries``: one sample per seed and count, shared by all arms).

A run is named in the tables and files by its arm id: the arm, plus the parts of its recipe's directory name that
differ from the experiment's (``scincl_kp25`` for SciNCL with k+ 25). Its files (``runs.csv``, the tables,
``relations.md``, the docs' copies) are ``scincl/eval/paired_runs.py``'s, from the cells listed here.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.paired_runs import Cell, paired_report
from scincl.pipeline.grid import BASE, Grid, Row, RowRuns
from scincl.pipeline.layout import recipe_key
from scincl.settings.arms import ARM_NAMES
from scincl.settings.recipe import Recipe

GROUP = "paired"  # every trained row in one group: seed by seed


def arm_id(arm: str, recipe: Recipe, row_recipe: Recipe) -> str:
    """``arm``, plus the parts of the row's recipe key that the experiment's recipe key lacks (``scincl_kp25``)."""
    own = set(recipe_key(recipe).split("_"))
    return "_".join([arm, *(part for part in recipe_key(row_recipe).split("_") if part not in own)])


def paired_grid(rep, recipe: Recipe, split: str, arms: Sequence[str], variants: Sequence[Dict[str, Any]],
                seeds: Sequence[int]) -> Grid:
    """The grid of a paired experiment: base, ``arms``, then each variant of ``arms[1:]`` (module docstring)."""
    if len(arms) < 2:
        raise InputError(f"a paired experiment compares at least two arms, got {', '.join(arms)}")
    rows = [Row(ARM_NAMES[BASE], BASE)]
    for changes in [{}, *variants]:
        for arm in arms if not changes else arms[1:]:
            name = arm_id(arm, recipe, dataclasses.replace(recipe, **changes))
            label = ARM_NAMES.get(arm, arm) + (f", {name[len(arm) + 1:]}" if name != arm else "")
            rows.append(Row(label, arm, dict(changes), timing=f"t{recipe.triplets}/{name}", group=GROUP))
    return Grid(f"paired_{split}/{recipe_key(recipe)}",
                f"Arms on the same query papers, seed by seed, on {rep.corpus.name} ({split} queries)", rows,
                report=functools.partial(paired_runs, recipe, tuple(seeds)), rewrite_after_each_run=True)


def grid_runs(recipe: Recipe, results: Sequence[RowRuns], seeds: Sequence[int]) -> List[Cell]:
    """(arm id, triplets, seed, run dir) of every trained cell of a paired grid, finished or not."""
    return [(arm_id(r.row.arm, recipe, r.recipe), r.recipe.triplets, seed, run)
            for r in results if r.row.arm != BASE for seed, run in zip(seeds, r.runs)]


def paired_runs(recipe: Recipe, seeds: Sequence[int], exp: Path, rep, results: List[RowRuns],
                split: str) -> Tuple[str, Sequence[str]]:
    """The grid's cells, each row's label and its first seed's triplets, handed to ``scincl/eval/paired_runs.py``
    (``runs.csv``, the tables, ``relations.md``)."""
    trained = [r for r in results if r.row.arm != BASE]
    labels = {arm_id(r.row.arm, recipe, r.recipe): r.row.label for r in trained}
    first = {r.row.label: r.runs[0] / "train_triples.csv" for r in trained if r.runs}
    return paired_report(exp, grid_runs(recipe, results, seeds), labels, recipe.triplets, seeds, first,
                         rep.citations_train, split), []
