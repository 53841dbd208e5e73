"""The files of the ``paired`` experiment kind (issue 40), from its runs' folders: ``runs.csv``, the per-arm and paired
tables, ``relations.md``, and the docs' copies of the finished runs.

The grid (which arms, which seeds, where each run lives) is ``scincl/pipeline/experiment_kinds.py`` paired_rows'; it
hands over its rows' runs, each trained row named by its arm id (:func:`paired_cells`: (arm id, triplets, seed, run
folder)). The report (rewritten after every run) is ``runs.csv``
(``paired_tables.py`` RUN_COLUMNS), the per-arm and paired tables computed from it, and how each row's triplets of the
first seed relate to their query in the citation graph (``relations.md``, computed once). ``collect_runs``
(``scincl/pipeline/experiment_kinds.py``) lists a paired experiment's runs; :func:`collect_copies` copies the
finished ones' ``results.json``, ``per_query.json`` and ``recipe.json`` into a folder of the docs
(``<arm id>/t<triplets>/seed_<s>/``) and writes its ``runs.csv`` from those copies; :func:`docs_text` renders the docs'
tables from that ``runs.csv``.
"""
from __future__ import annotations

import csv
import logging
import shutil
from pathlib import Path
from typing import List, Mapping, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.experiment_pages import Page, RowRuns, partial_note, run_scores
from scincl.eval.paired_tables import (REFERENCE_EFFECT, RUN_COLUMNS, Run, all_pairs, arm_table, comparison_table,
                                       run_row)
from scincl.eval.study_reports import triplet_relations
from scincl.settings.experiment import experiment_data

logger = logging.getLogger(__name__)

RUNS_CSV = "runs.csv"
RELATIONS = "relations.md"  # the first seed's triplets against the citation graph, per row (computed once)
RUN_FILES = ("results.json", "per_query.json", "recipe.json")  # what collect_runs copies of a finished run
Cell = Tuple[str, int, int, Path]  # (arm id, triplets, seed, run folder) of one trained cell, finished or not


def paired_cells(rows: Sequence[RowRuns], seeds: Sequence[int]) -> List[Cell]:
    """(arm id, triplets, seed, run folder) of every trained cell of a paired grid's rows, finished or not."""
    return [(r.id, r.recipe.triplets, seed, run) for r in rows if r.trained for seed, run in zip(seeds, r.runs)]


def paired_report(triplets: int, seeds: Sequence[int], citations: Path, exp: Path, rows: Sequence[RowRuns],
                  split: str) -> Page:
    """``exp/runs.csv`` and the tables of the runs finished so far (every later arm minus every earlier one, in the
    rows' order), then :func:`relations_once` of each trained row's first-seed triplets (``citations``: the training
    citation graph's TSV)."""
    trained = [r for r in rows if r.trained]
    cells = paired_cells(rows, seeds)
    runs = [run_row(name, count, seed, scores) for name, count, seed, run in cells
            if (scores := run_scores(run, split, missing_ok=True)) is not None]
    write_runs_csv(exp / RUNS_CSV, runs)
    labels = {r.id: r.label for r in trained}
    text = paired_text(runs, labels, all_pairs(list(labels), triplets), {triplets: seeds})
    first = {r.label: r.runs[0] / "train_triples.csv" for r in trained if r.runs}
    return partial_note(len(runs), len(cells)) + text + relations_once(exp, citations, first), []


def relations_once(exp: Path, citations: Path, first_triples: Mapping[str, Path]) -> str:
    """How each row's triplets of the first seed (a row's label -> its triplets) relate to their query
    (:func:`~scincl.eval.study_reports.triplet_relations`), computed once all of them exist and kept in
    ``exp/relations.md`` (the tables are rewritten after every run); "" before."""
    path = exp / RELATIONS
    if not path.exists() and first_triples and all(Path(p).exists() for p in first_triples.values()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(triplet_relations(citations, first_triples))
    return "\n" + path.read_text() if path.exists() else ""


def paired_text(runs: Sequence[Run], labels: Mapping[str, str], comparisons: Sequence[Tuple[str, str, int, str]],
                expected: Mapping[int, Sequence[int]], effect: float = REFERENCE_EFFECT) -> str:
    """The per-arm table, then the paired comparisons (power for ``effect``, the kind's reference effect by default)."""
    return arm_table(runs, labels, expected) + "\n" + comparison_table(runs, comparisons, labels, effect)


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


def collect_copies(dest: Path, cells: Sequence[Cell], part_files: Sequence[Tuple[Path, int]], split: str) -> Path:
    """Copy the finished runs of ``cells`` to ``dest/<arm id>/t<triplets>/seed_<s>/`` (a copy made before stays), each
    part's files that exist (``timings.json``, ``results.md``, ``relations.md``; (file, the part's triplets)) to
    ``dest/<name>_t<triplets><suffix>``, then write ``dest/runs.csv`` from the copies; returns its path."""
    copied = sum(copy_run(run, dest / name / f"t{triplets}" / f"seed_{seed}") for name, triplets, seed, run in cells)
    for path, triplets in part_files:
        if path.exists():
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / f"{path.stem}_t{triplets}{path.suffix}")
    logger.info("%d finished runs copied to %s", copied, dest)
    return write_runs_csv(dest / RUNS_CSV, runs_of_tree(dest, split))


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
    return f"Runs in: {status}.\n\n" + paired_text(runs, study.LABELS, study.COMPARISONS, expected, study.EFFECT)
