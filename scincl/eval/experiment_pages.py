"""What a real-corpus experiment's folder shows of its finished runs: the one reader of a run's scores, the mean ± std
table of a grid's rows and the results page (``results.md``) around an experiment's tables.

The runs are planned and run by ``scincl/pipeline`` (``grid.py``), which hands over plain inputs: each table row's
runs (:class:`RowRuns`), the recipe, the page's title; the tables are rendered by ``study_tables.py`` (the Avg is
``report``'s one definition). A kind's page is a :data:`Report` of its rows' runs (this module's :func:`mean_std_page`,
``study_reports.py``, ``paired_runs.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.study_tables import Scores, mean_std_table
from scincl.io import read_json
from scincl.settings.arms import BASE
from scincl.settings.recipe import Recipe
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND

LabelledRuns = Sequence[Tuple[str, Sequence[Path]]]  # (a table row's label, its run folders: one per seed)
Page = Tuple[str, Sequence[str]]  # the Markdown of the tables, the names of the plots written beside it


@dataclass(frozen=True)
class RowRuns:
    """One row of an experiment's table with its runs, finished or not: one folder per seed (a ``base`` row: its one
    evaluation, once it has run)."""

    label: str  # the table's first column
    arm: str  # an arm of scincl/settings/arms.py, or BASE (the encoder without fine-tuning)
    recipe: Recipe  # the experiment's recipe with the row's changes
    runs: Sequence[Path] = ()
    id: str = ""  # the run's name in runs.csv (the paired kind: the arm plus its recipe's own parts)

    @property
    def trained(self) -> bool:
        return self.arm != BASE


# the page of an experiment from its rows' runs: (experiment folder, rows, split) -> Page (a kind binds its own
# parameters first, e.g. functools.partial(mean_std_page, "loss"))
Report = Callable[[Path, Sequence[RowRuns], str], Page]


def labelled(rows: Sequence[RowRuns]) -> LabelledRuns:
    """(label, run folders) of each row."""
    return [(row.label, row.runs) for row in rows]


def run_scores(run_dir: Path, split: str, missing_ok: bool = False) -> Optional[Scores]:
    """The scores of one run (its ``results.json``) on ``split``: the one reader of a run's scores.

    A run that has not finished (no ``results.json``, or no scores of ``split`` in it) gives ``None`` when
    ``missing_ok`` (the budget curve's tables, rewritten while it runs), else an :class:`InputError` naming it.
    """
    path = Path(run_dir) / "results.json"
    scores = read_json(path).get("scores", {}).get(split) if path.exists() else None
    if scores is None and not missing_ok:
        raise InputError(f"no {split} scores: the run has not finished", path=path)
    return scores


def mean_std_runs(rows: LabelledRuns, split: str, first_column: str = "arm") -> str:
    """The default table of a grid: one mean ± std row per labelled group of finished runs (sample std over seeds)."""
    return mean_std_table([(label, [run_scores(run, split) for run in runs]) for label, runs in rows], first_column)


def mean_std_page(first_column: str, exp_dir: Path, rows: Sequence[RowRuns], split: str) -> Page:
    """The default page: one mean ± std row per grid row (:func:`mean_std_runs`), no plot."""
    return mean_std_runs(labelled(rows), split, first_column), []


def partial_note(done: int, wanted: int) -> str:
    """The line above the tables of an experiment still running ("" once every run has finished)."""
    return "" if done == wanted else f"**Partial: {done} of {wanted} runs finished.**\n\n"


def write_tables(exp: Path, title: str, recipe: Recipe, table: str, seeds: Sequence[int], precision: str,
                 eval_max_sequence_length: int, name: str = "results.md", plots: Sequence[str] = (),
                 budget_varies: bool = False) -> Path:
    """Write ``exp/name``: the title, the recipe and budget the runs used, the table and plots; print it.

    ``precision``: the runs' precision key (``_bf16`` training, ``_ebf16`` embeddings, as resolved on this machine:
    ``scincl/pipeline/layout.py`` precision_key); ``eval_max_sequence_length``: the evaluation's tokens."""
    exp.mkdir(parents=True, exist_ok=True)
    triplets = ("Budget: the table's triplets per run (5 per query)" if budget_varies else
                f"Budget: {recipe.triplets} triplets per run (5 per query)")
    batch, epochs = recipe.per_device_train_batch_size, recipe.num_train_epochs
    steps = "" if budget_varies else f" ({-(-recipe.triplets // batch) * epochs} steps)"
    budget = (f"{triplets}, {epochs} epoch(s), batch {batch}{steps}, "
              f"{'bf16' if '_bf16' in precision else 'fp32'} training, "
              f"{'bf16' if '_ebf16' in precision else 'fp32'} evaluation embeddings, "
              f"{recipe.max_sequence_length} training tokens, {eval_max_sequence_length} evaluation tokens, "
              f"{recipe.pooling_strategy} pooling, lr {recipe.learning_rate:g}, {recipe.loss} loss, "
              f"k+ = {recipe.k_pos} (c+ = {POSITIVES_BAND}), "
              f"k-hard = {recipe.k_hard} (c- = {HARD_NEGATIVES_BAND}), graph "
              f"{recipe.graph_dim}-d; seeds "
              f"{', '.join(map(str, seeds))}. Encoder: {recipe.encoder_label()}.")
    body: List[str] = [f"# {title}", "", budget, "", table]
    body += [f"![{p}]({p})" for p in plots]
    path = exp / name
    path.write_text("\n".join(body) + "\n")
    print(path.read_text())
    return path
