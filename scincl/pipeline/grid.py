"""The one runner of the real-corpus experiments: a base recipe x rows x seeds -> runs -> pages.

An experiment kind (``experiment_kinds.KINDS``) only builds a :class:`Grid`: its rows (an arm, the recipe changes
of the row, its label) and its page (a :data:`~scincl.eval.experiment_pages.Report` of the rows' runs: the mean ±
std table, the budget curve's paired tests, the sweeps' plots, the collision and graph studies' steps).
:func:`run_grid` runs every cell through :meth:`~scincl.pipeline.real_corpus.CorpusPlan.run_arm` (``base`` rows:
``run_base``, one evaluation), records wall times in ``timings.json`` and has the page written
(``scincl/eval/experiment_pages.py``); :func:`plan_text` lists the same cells' plans without running them
(``--dry_run``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Hashable, List, Optional, Sequence, Tuple

from scincl.eval.experiment_pages import Report, RowRuns, write_tables
from scincl.pipeline.layout import precision_key
from scincl.pipeline.timings import Timings
from scincl.settings.arms import BASE

if TYPE_CHECKING:
    from scincl.pipeline.real_corpus import CorpusPlan
    from scincl.settings.recipe import Recipe


@dataclass(frozen=True)
class Row:
    """One row of an experiment's table: an arm trained (or ``base``) with the experiment's recipe plus ``changes``."""

    label: str  # the table's first column
    arm: str  # an ARMS name (scincl/settings/arms.py), or BASE
    changes: Dict[str, Any] = field(default_factory=dict)  # Recipe fields that differ from the experiment's recipe
    timing: str = BASE  # timings.json key: "<timing>/seed_<s>" per trained run, "<timing>" for a base row
    group: Optional[Hashable] = None  # rows of one group run seed by seed (every row's seed 0 first); None: alone
    id: str = ""  # the run's name in runs.csv (the paired kind)


@dataclass(frozen=True)
class Grid:
    """One experiment as data: where its page goes, its rows and how they are reported."""

    folder: str  # below OUTPUT_DIR/<corpus>
    title: str
    rows: Sequence[Row]
    report: Report  # the page from the rows' runs
    name: str = "results.md"
    timings: str = "timings.json"
    rewrite_after_each_run: bool = False  # a long grid's page is readable (marked partial) while it runs
    budget_varies: bool = False  # the rows differ in triplets: the page says "the table's triplets"
    seeds: Optional[Tuple[int, ...]] = None  # the seeds the page names when not the experiment's (no trained rows)


def row_recipe(recipe: Recipe, row: Row) -> Recipe:
    """The recipe of one row: the experiment's with the row's changes."""
    return dataclasses.replace(recipe, **row.changes) if row.changes else recipe


def run_order(rows: Sequence[Row], seeds: Sequence[int]) -> List[Tuple[int, Optional[int]]]:
    """(row index, seed) in running order: groups in order of first appearance; in a group, its base rows
    (one cell each, seed ``None``), then its trained rows seed by seed."""
    groups: Dict[Hashable, List[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(("row", i) if row.group is None else ("group", row.group), []).append(i)
    order: List[Tuple[int, Optional[int]]] = []
    for members in groups.values():
        order += [(i, None) for i in members if rows[i].arm == BASE]
        order += [(i, seed) for seed in seeds for i in members if rows[i].arm != BASE]
    return order


def plan_text(rep: CorpusPlan, grid: Grid, recipe: Recipe, seeds: Sequence[int], split: str) -> str:
    """What :func:`run_grid` would run, without running or writing anything (``--dry_run``): one line per cell in
    running order with how many of the stages it adds to the plan (the shared ones with its first cell) are done
    (:func:`~scincl.pipeline.runner.reuse_decision`: outputs and completion markers as the runner checks them) and
    the first one that would run, with why; then the totals. The report's own steps (plots, the collision and
    graph studies' scores) are not listed."""
    from scincl.pipeline.runner import waiting_stages

    recipes = [row_recipe(recipe, row) for row in grid.rows]
    seen: set = set()
    lines, done, total, cells, recipe_dirs = [], 0, 0, 0, {}
    for i, seed in run_order(grid.rows, seeds):
        row = grid.rows[i]
        if row.arm == BASE:
            where, stages = rep.base_dir(split, recipes[i]), rep.base_stages(split, recipes[i])
        else:
            where = rep.run_dir(row.arm, seed, recipes[i], split)
            stages = rep.arm_stages(row.arm, seed, recipes[i], split)
        new = [stage for stage in stages if stage.name not in seen]
        seen.update(stage.name for stage in new)
        waiting = waiting_stages(new)
        done, total, cells = done + len(new) - len(waiting), total + len(new), cells + 1
        folder = where.relative_to(rep.out)
        if row.arm == BASE:
            name = str(folder)
        else:  # runs/<split>/<recipe>/<arm>/seed_<s>: the recipe's folder named once, by its number
            number = recipe_dirs.setdefault(folder.parent.parent, len(recipe_dirs) + 1)
            name = f"{folder.relative_to(folder.parent.parent)} [{number}]"
        line = f"  {name}: {len(new) - len(waiting)} of {len(new)} stages done"
        if waiting:
            stage, why = (text.replace(f"{where}/", "").replace(f"{folder}/", "").replace(f"{rep.out}/", "")
                          for text in waiting[0])
            line += f"; next: {stage} ({why})"
        lines.append(line)
    head = (f"Plan of {grid.folder} on {rep.corpus.name} ({split}): {cells} cells "
            f"({len(grid.rows)} rows x {len(seeds)} seeds, base rows once), {total} stages, {done} done, "
            f"{total - done} to run")
    recipes_text = [f"  [{number}] {folder}/" for folder, number in recipe_dirs.items()]
    return "\n".join([head, *recipes_text, *lines])


def row_runs(rep: CorpusPlan, grid: Grid, recipe: Recipe, seeds: Sequence[int], split: str) -> List[RowRuns]:
    """Each row of ``grid`` with its recipe and run dirs, one per seed (none for a base row until it has run)."""
    results = []
    for row in grid.rows:
        changed = row_recipe(recipe, row)
        runs = [] if row.arm == BASE else [rep.run_dir(row.arm, s, changed, split) for s in seeds]
        results.append(RowRuns(row.label, row.arm, changed, runs, row.id))
    return results


def run_grid(rep: CorpusPlan, grid: Grid, recipe: Recipe, seeds: Sequence[int], split: str) -> Path:
    """Run (or reuse) every cell of ``grid``, then write its page; returns the page file."""
    exp = rep.out / grid.folder
    timings = Timings(exp / grid.timings)
    results = row_runs(rep, grid, recipe, seeds, split)

    def write() -> Path:
        table, plots = grid.report(exp, results, split)
        return write_tables(exp, grid.title, recipe, table, grid.seeds or seeds, precision_key(recipe),
                            rep.eval_max_sequence_length, name=grid.name, plots=plots, budget_varies=grid.budget_varies)

    for i, seed in run_order(grid.rows, seeds):
        row, changed = grid.rows[i], results[i].recipe
        if row.arm == BASE:
            results[i] = dataclasses.replace(results[i], runs=[timings.run(row.timing, rep.run_base, split, changed)])
            continue
        timings.run(f"{row.timing}/seed_{seed}", rep.run_arm, row.arm, seed, changed, split)
        if grid.rewrite_after_each_run:
            write()
    return write()
