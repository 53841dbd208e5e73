"""The one runner of the real-corpus experiments: a kind's :class:`Grid` (rows x seeds, a page) -> runs -> the page;
:func:`plan_text` lists its plan (``--dry_run``)."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple

from scincl.eval.experiment_pages import Report, RowRuns, write_tables
from scincl.io import read_json, write_json
from scincl.pipeline.layout import precision_key
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.pipeline.runner import waiting_stages
from scincl.settings.arms import BASE

TIMINGS = "timings.json"  # a grid's wall seconds per row and run, beside its page


def timed(rep: CorpusPlan, path: Path, name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; its wall seconds go to ``path`` (``timings.json``) under ``name`` when first run and whenever the
    plan ran one of its stages (a cached rerun keeps the time the work took)."""
    start, ran = time.time(), rep.ran
    result = fn(*args)
    times = read_json(path) if path.exists() else {}
    if name not in times or rep.ran > ran:
        write_json(path, {**times, name: round(time.time() - start, 1)})
    return result


@dataclasses.dataclass(frozen=True)
class Row(RowRuns):
    """One row of an experiment's table (its label, arm or ``base``, recipe and, once planned, runs) and how it runs."""

    timing: str = BASE  # timings.json key: "<timing>/seed_<s>" per trained run, "<timing>" for a base row
    group: Optional[Hashable] = None  # rows of one group run seed by seed (every row's seed 0 first); None: alone


@dataclasses.dataclass(frozen=True)
class Grid:
    """One experiment as data: where its page goes, its rows and how they are reported."""

    folder: str  # below OUTPUT_DIR/<corpus>
    title: str
    rows: Sequence[Row]
    report: Report  # the page from the rows' runs
    name: str = "results.md"
    timings: str = TIMINGS
    rewrite_after_each_run: bool = False  # a long grid's page is readable (marked partial) while it runs


def run_order(rows: Sequence[Row], seeds: Sequence[int]) -> List[Tuple[Row, Optional[int]]]:
    """(row, seed) in running order: group by group (in the order they first appear), its base rows (seed ``None``),
    then its trained rows seed by seed."""
    first: Dict[Hashable, int] = {}
    group = [first.setdefault(("row", i) if row.group is None else row.group, i) for i, row in enumerate(rows)]
    cells = [(group[i], position, i, seed) for i, row in enumerate(rows)
             for position, seed in (enumerate(seeds) if row.trained else [(-1, None)])]
    return [(rows[i], seed) for *_, i, seed in sorted(cells)]


def plan_text(rep: CorpusPlan, grid: Grid) -> str:
    """What :func:`run_grid` would run (``--dry_run``): the totals, each recipe folder once (numbered), then per cell
    how many of the stages it adds are done and the next to run with why."""
    recipes, lines, to_run, order = {}, [], 0, run_order(grid.rows, rep.exp.seeds)
    for row, seed in order:
        planned = len(rep.planned)  # a stage asked for again keeps its place: a cell's new stages come last
        folder = rep.cell(row.arm, seed, row.recipe, rep.exp.split).relative_to(rep.out)
        new = list(rep.planned.values())[planned:]
        waiting = waiting_stages(new)
        to_run += len(waiting)
        # a trained cell is runs/<split>/<recipe>/<arm>/seed_<s>: its recipe folder is listed once, by its number
        name = (f"{row.arm}/seed_{seed} [{recipes.setdefault(folder.parents[1], len(recipes) + 1)}]" if row.trained
                else folder)
        lines.append(f"  {name}: {len(new) - len(waiting)} of {len(new)} stages done")
        if waiting:
            lines[-1] += "; next: {} ({})".format(*(text.replace(f"{rep.out}/", "").replace(f"{folder}/", "")
                                                    for text in waiting[0]))
    head = (f"Plan of {grid.folder} on {rep.corpus.name} ({rep.exp.split}): {len(order)} cells "
            f"({len(grid.rows)} rows x {len(rep.exp.seeds)} seeds, base rows once), {len(rep.planned)} stages, "
            f"{len(rep.planned) - to_run} done, {to_run} to run")
    return "\n".join([head, *(f"  [{number}] {folder}/" for folder, number in recipes.items()), *lines])


def row_runs(rep: CorpusPlan, grid: Grid) -> List[Row]:
    """The rows of ``grid`` with their run dirs: a trained row's one per seed, a base row's one evaluation."""
    return [dataclasses.replace(row, runs=[rep.run_dir(row.arm, seed, row.recipe, rep.exp.split)
                                           for seed in (rep.exp.seeds if row.trained else [None])])
            for row in grid.rows]


def run_grid(rep: CorpusPlan, grid: Grid) -> Path:
    """Run (or reuse) every cell of ``grid``, then write its page; returns the page file."""
    exp, folder, rows, recipe = rep.exp, rep.out / grid.folder, row_runs(rep, grid), rep.exp.full_recipe()
    seeds = exp.seeds if grid.rows else (0,)  # a grid without rows (collisions, graph): its steps use seed 0
    budget_varies = len({row.recipe.triplets for row in rows}) > 1  # the page says "the table's triplets"

    def write() -> Path:
        table, plots = grid.report(folder, rows, exp.split)
        return write_tables(folder, grid.title, recipe, table, seeds, precision_key(recipe),
                            exp.eval_max_sequence_length, name=grid.name, plots=plots, budget_varies=budget_varies)

    for row, seed in run_order(grid.rows, exp.seeds):
        timed(rep, folder / grid.timings, row.timing if seed is None else f"{row.timing}/seed_{seed}", rep.run_cell,
              row.arm, seed, row.recipe, exp.split)
        if grid.rewrite_after_each_run and row.trained:
            write()
    return write()
