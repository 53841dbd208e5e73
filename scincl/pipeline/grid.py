"""The one runner of the real-corpus experiments: a kind's :class:`Grid` (rows x seeds, a page) -> runs -> the page;
:func:`plan_text` lists its plan (``--dry_run``)."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple

from scincl.eval.experiment_pages import Report, RowRuns, write_tables
from scincl.io import read_json, write_json
from scincl.pipeline.layout import precision_key
from scincl.pipeline.runner import waiting_stages
from scincl.settings.arms import BASE

if TYPE_CHECKING:
    from scincl.pipeline.real_corpus import CorpusPlan
    from scincl.settings.recipe import Recipe


class Timings:
    """The wall seconds of each step of an experiment: ``timings.json`` beside its tables."""

    def __init__(self, path: Path, rep: CorpusPlan) -> None:
        self.path, self.rep = path, rep
        self.data: Dict[str, float] = read_json(path) if path.exists() else {}

    def run(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, timed when first run and whenever the plan ran a stage in it (not for a cached rerun)."""
        start, ran = time.time(), self.rep.ran
        result = fn(*args)
        if name not in self.data or self.rep.ran > ran:
            self.data[name] = round(time.time() - start, 1)
            write_json(self.path, self.data)
        return result


@dataclass(frozen=True)
class Row(RowRuns):
    """One row of an experiment's table (its label, arm or ``base``, recipe and, once planned, runs) and how it runs."""

    timing: str = BASE  # timings.json key: "<timing>/seed_<s>" per trained run, "<timing>" for a base row
    group: Optional[Hashable] = None  # rows of one group run seed by seed (every row's seed 0 first); None: alone


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


def run_order(rows: Sequence[Row], seeds: Sequence[int]) -> List[Tuple[int, Optional[int]]]:
    """(row index, seed) in running order: group by group, its base rows (seed ``None``), then its trained rows seed
    by seed."""
    groups: Dict[Hashable, List[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(("row", i) if row.group is None else ("group", row.group), []).append(i)
    order: List[Tuple[int, Optional[int]]] = []
    for members in groups.values():
        order += [(i, None) for i in members if rows[i].arm == BASE]
        order += [(i, seed) for seed in seeds for i in members if rows[i].arm != BASE]
    return order


def plan_text(rep: CorpusPlan, grid: Grid, seeds: Sequence[int], split: str) -> str:
    """What :func:`run_grid` would run (``--dry_run``): per cell, how many of the stages it adds are done and the next
    to run with why; the totals first."""
    seen: set = set()
    lines, to_run, recipe_dirs, order = [], 0, {}, run_order(grid.rows, seeds)
    for i, seed in order:
        row = grid.rows[i]
        where, stages = rep.cell(row.arm, seed, row.recipe, split)
        new = [stage for stage in stages if stage.name not in seen]
        seen.update(stage.name for stage in new)
        waiting = waiting_stages(new)
        to_run += len(waiting)
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
    head = (f"Plan of {grid.folder} on {rep.corpus.name} ({split}): {len(order)} cells "
            f"({len(grid.rows)} rows x {len(seeds)} seeds, base rows once), {len(seen)} stages, "
            f"{len(seen) - to_run} done, {to_run} to run")
    recipes_text = [f"  [{number}] {folder}/" for folder, number in recipe_dirs.items()]
    return "\n".join([head, *recipes_text, *lines])


def row_runs(rep: CorpusPlan, grid: Grid, seeds: Sequence[int], split: str) -> List[Row]:
    """The rows of ``grid`` with their run dirs, one per seed (a base row's once it has run)."""
    return [dataclasses.replace(row, runs=[rep.run_dir(row.arm, seed, row.recipe, split) for seed in seeds]
                                if row.trained else []) for row in grid.rows]


def run_grid(rep: CorpusPlan, grid: Grid, recipe: Recipe, seeds: Sequence[int], split: str) -> Path:
    """Run (or reuse) every cell of ``grid``, then write its page; returns the page file."""
    exp = rep.out / grid.folder
    timings = Timings(exp / grid.timings, rep)
    results = row_runs(rep, grid, seeds, split)

    def write() -> Path:
        table, plots = grid.report(exp, results, split)
        return write_tables(exp, grid.title, recipe, table, grid.seeds or seeds, precision_key(recipe),
                            rep.eval_max_sequence_length, name=grid.name, plots=plots, budget_varies=grid.budget_varies)

    for i, seed in run_order(grid.rows, seeds):
        row = grid.rows[i]
        name = row.timing if row.arm == BASE else f"{row.timing}/seed_{seed}"
        run_dir = timings.run(name, rep.run_cell, row.arm, seed, results[i].recipe, split)
        if row.arm == BASE:
            results[i] = dataclasses.replace(results[i], runs=[run_dir])
        elif grid.rewrite_after_each_run:
            write()
    return write()
