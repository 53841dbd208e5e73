"""The ``paired`` experiment kind (issue 40): arms trained on the same query papers, seed by seed, compared in pairs.

Rows: the base encoder, each arm of the experiment at its recipe, then each ``--variants`` change (``field=value``)
of every arm but the first (the reference: SPECTER-like's triplets do not depend on k+, so its run is not repeated).
All trained rows form one group, so the runner (``grid.run_order``) trains every row of one seed before the next
seed: an interrupted experiment leaves complete pairs. Every arm of a seed reads the same query papers
(``CorpusPlan.queries``: one sample per seed and count, shared by all arms).

A run is named in the tables and files by its arm id: the arm, plus the parts of its recipe's directory name that
differ from the experiment's (``scincl_kp25`` for SciNCL with k+ 25). The report (rewritten after every run) is
``runs.csv`` (``scincl/eval/paired_tables.py`` RUN_COLUMNS), the per-arm and paired tables computed from it, and
how each row's triplets of the first seed relate to their query in the citation graph (``relations.md``).
``collect_runs`` (scincl/pipeline/experiment_commands.py) copies the finished runs' ``results.json``,
``per_query.json`` and ``recipe.json`` into a folder of the docs (``<arm id>/t<triplets>/seed_<s>/``) and writes
its ``runs.csv`` from those copies; :func:`docs_text` renders the docs' tables from that ``runs.csv``.
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import shutil
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.paired_tables import RUN_COLUMNS, Run, all_pairs, arm_table, comparison_table, run_row
from scincl.pipeline.experiment_tables import run_scores
from scincl.pipeline.grid import BASE, Grid, Row, RowRuns
from scincl.pipeline.layout import recipe_key
from scincl.settings.arms import ARM_NAMES
from scincl.settings.experiment import experiment_data
from scincl.settings.recipe import Recipe

RUNS_CSV = "runs.csv"
RELATIONS = "relations.md"  # the first seed's triplets against the citation graph, per row (computed once)
RUN_FILES = ("results.json", "per_query.json", "recipe.json")  # what collect_runs copies of a finished run
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
                report=functools.partial(paired_report, recipe, tuple(seeds)), rewrite_after_each_run=True)


def grid_runs(recipe: Recipe, results: Sequence[RowRuns], seeds: Sequence[int]) -> List[Tuple[str, int, int, Path]]:
    """(arm id, triplets, seed, run dir) of every trained cell of a paired grid, finished or not."""
    return [(arm_id(r.row.arm, recipe, r.recipe), r.recipe.triplets, seed, run)
            for r in results if r.row.arm != BASE for seed, run in zip(seeds, r.runs)]


def paired_report(recipe: Recipe, seeds: Sequence[int], exp: Path, rep, results: List[RowRuns],
                  split: str) -> Tuple[str, Sequence[str]]:
    """``exp/runs.csv`` and the tables of the runs finished so far (every later arm minus every earlier one)."""
    cells = grid_runs(recipe, results, seeds)
    runs = [run_row(name, triplets, seed, scores) for name, triplets, seed, run in cells
            if (scores := run_scores(run, split, missing_ok=True)) is not None]
    write_runs_csv(exp / RUNS_CSV, runs)
    labels = {arm_id(r.row.arm, recipe, r.recipe): r.row.label for r in results if r.row.arm != BASE}
    status = "" if len(runs) == len(cells) else f"**Partial: {len(runs)} of {len(cells)} runs finished.**\n\n"
    text = paired_text(runs, labels, all_pairs(list(labels), recipe.triplets), {recipe.triplets: seeds})
    return status + text + relations_once(exp, rep, results), []


def relations_once(exp: Path, rep, results: Sequence[RowRuns]) -> str:
    """How each row's triplets of the first seed relate to their query (``study_reports.triplet_relations``), computed
    once all of them exist and kept in ``exp/relations.md`` (the tables are rewritten after every run); "" before."""
    from scincl.pipeline.study_reports import triplet_relations

    path = exp / RELATIONS
    first = {r.row.label: r.runs[0] / "train_triples.csv" for r in results if r.row.arm != BASE and r.runs}
    if not path.exists() and first and all(p.exists() for p in first.values()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(triplet_relations(rep, first))
    return "\n" + path.read_text() if path.exists() else ""


def paired_text(runs: Sequence[Run], labels: Mapping[str, str], comparisons: Sequence[Tuple[str, str, int, str]],
                expected: Mapping[int, Sequence[int]]) -> str:
    """The per-arm table, then the paired comparisons (power for the kind's reference effect,
    ``experiments/hepth_powered.py`` EFFECT)."""
    effect = experiment_data("hepth_powered").EFFECT
    return (arm_table(runs, labels, expected) + "\n" + comparison_table(runs, comparisons, labels, effect))


# ---------------------------------------------------------------------- runs.csv and the docs' copies
def write_runs_csv(path: Path, runs: Sequence[Run]) -> Path:
    """``runs.csv``: one row per run (RUN_COLUMNS), ordered by triplets, seed, arm."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, RUN_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for run in sorted(runs, key=lambda r: (int(r["triplets"]), int(r["seed"]), str(r["arm"]))):
            writer.writerow({c: f"{run[c]:.2f}" if c.endswith(("_map", "_ndcg")) else run[c] for c in RUN_COLUMNS})
    return path


def read_runs_csv(path: Path) -> List[Run]:
    """The rows of a ``runs.csv`` (numbers as numbers); a file with other columns is an error."""
    with Path(path).open(newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != RUN_COLUMNS:
            raise InputError(f"expected the columns {','.join(RUN_COLUMNS)}", path=path)
        return [{c: (row[c] if c == "arm" else int(row[c]) if c in ("triplets", "seed") else float(row[c]))
                 for c in RUN_COLUMNS} for row in reader]


def copy_run(run_dir: Path, dest: Path) -> bool:
    """Copy a finished run's RUN_FILES into ``dest`` (byte copies); False when the run has not finished."""
    if not (run_dir / "results.json").exists():
        return False
    dest.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        if (run_dir / name).exists():
            shutil.copyfile(run_dir / name, dest / name)
    return True


def runs_of_tree(folder: Path, split: str) -> List[Run]:
    """The runs.csv rows of the copies under ``folder`` (``<arm id>/t<triplets>/seed_<s>/results.json``)."""
    runs = []
    for results in sorted(Path(folder).glob("*/t*/seed_*/results.json")):
        seed_dir = results.parent
        runs.append(run_row(seed_dir.parent.parent.name, int(seed_dir.parent.name[1:]), int(seed_dir.name[5:]),
                            run_scores(seed_dir, split)))
    return runs


def docs_text(runs_csv: Path) -> str:
    """The docs' tables of ``experiments/hepth_powered.py`` from its committed ``runs.csv``: how many runs are in, the
    per-arm table and the pre-registered comparisons (docs/results.md section 8.6)."""
    study = experiment_data("hepth_powered")
    runs = read_runs_csv(runs_csv)
    expected = {int(d["recipe"]["triplets"]): list(d["seeds"]) for d in study.get_experiment()}
    arms_of = {int(d["recipe"]["triplets"]): len(d["arms"]) + len(d.get("variants", ())) * (len(d["arms"]) - 1)
               for d in study.get_experiment()}
    counts = {t: sum(1 for r in runs if r["triplets"] == t) for t in expected}
    status = "; ".join(f"{t:,} triplets: {counts[t]} of {arms_of[t] * len(seeds)} runs "
                       f"({arms_of[t]} arms × seeds {seeds[0]}–{seeds[-1]})" for t, seeds in expected.items())
    if not runs:
        return f"Runs in: {status}. No run has finished yet.\n"
    return f"Runs in: {status}.\n\n" + paired_text(runs, study.LABELS, study.COMPARISONS, expected)
