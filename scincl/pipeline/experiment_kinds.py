"""The real-corpus experiments of ``docs/results.md`` (``cli_pipeline.py run_experiment NAME`` / ``reproduce KIND``).

Every experiment is a base recipe x rows x seeds: an experiment is data (``experiments/<name>.py`` returns
:class:`~scincl.settings.experiment.Experiment` fields), its kind a row generator (:data:`KINDS`) that returns the
:class:`~scincl.pipeline.grid.Grid` (rows: an arm and the recipe changes of the row; where the page goes; the page's
report from ``scincl/eval``) which :func:`~scincl.pipeline.grid.run_grid` runs (each cell one cached run):

- ``main``: base vs SPECTER-like vs SciNCL vs continuous co-citation, one row per arm, mean ± std over seeds (paper
  Table 1 layout), plus how each arm's triplets relate to the citation graph;
- ``tuning``: recipe variants (pooling, learning rate, budget, ...) of the trained arms on val;
- ``k_pos`` / ``k_hard``: SciNCL's sampling sweeps (paper Figs. 2-3) on val, with plots;
- ``losses``: triplet vs InfoNCE vs CoSENT vs AnglE on SciNCL triplets (val);
- ``budget`` (issue 17): SPECTER-like vs SciNCL per triplet budget, budget by budget (every seed and arm of the
  smallest first), the page rewritten after every run with paired t-tests per budget;
- ``paired`` (issue 40): arms (and ``--variants`` of all but the first) on the same query papers, seed by seed
  (an interrupted experiment leaves complete pairs), every pair tested, ``runs.csv``;
- ``collisions``: positive/negative collisions vs the k+ .. k-hard margin (paper Fig. 5; no trained rows);
- ``graph``: link prediction of the graph embeddings (64/128-d, dot vs cos) and the graph embeddings alone as a
  retriever (OpenMSD Table 7 style; the text rows are the main runs that exist).

Each writes ``<OUTPUT_DIR>/<corpus>/<folder>/results.md`` (tables) plus PNG plots where they apply, and
``timings.json`` (wall seconds per step on this machine). The pages are ``scincl/eval``'s; the collision and graph
studies' steps are ``study_steps``'; a kind's defaults are data of ``scincl/settings/experiment.py`` and ``arms.py``.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from scincl.errors import InputError
from scincl.eval.experiment_pages import mean_std_page
from scincl.eval.paired_runs import paired_report
from scincl.eval.study_reports import budget_report, main_page, sweep_report
from scincl.io import PathLike
from scincl.pipeline.grid import Grid, Row, plan_text, run_grid
from scincl.pipeline.layout import recipe_key
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.pipeline.study_steps import collision_steps, graph_steps
from scincl.settings.arms import (ARM_NAMES, ARMS, BASE, BUDGET_ARMS, DEFAULT_ARMS, DEFAULT_SPLIT, DEFAULT_SPLITS,
                                  TUNING_ARMS, corpus_spec)
from scincl.settings.experiment import (COLLISION_K_POS, COLLISION_QUERIES, GRAPH_COMPARATORS, Experiment,
                                        load_definitions, make_experiment, variant_changes, with_changes)
from scincl.settings.recipe import Recipe, recipe_fields
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND
from scincl.triples.margins import DEFAULT_HARD_NEGATIVES_K

logger = logging.getLogger(__name__)
BASE_ROW = Row(ARM_NAMES[BASE], BASE)  # the encoder without fine-tuning: one evaluation, shared by every seed


def main_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Base vs the trained arms at equal budget (paper Table 1 rows, "w/o leakage"), seed by seed."""
    rows = [BASE_ROW] + [Row(ARM_NAMES[arm], arm, timing=arm, group="arms") for arm in exp.arms or DEFAULT_ARMS]
    return Grid(f"main_{split}/{recipe_key(recipe)}", f"Main comparison on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(main_page, rep.citations_train))


def tuning_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Recipe variants (``field=value``, e.g. ``pooling=cls``) of the trained arms, on val; a variant with
    another pooling gets its own base row."""
    rows = [Row(f"{ARM_NAMES[BASE]} ({recipe.pooling_strategy} pooling)", BASE)]
    for variant in ("default",) + tuple(exp.variants):
        changes = {} if variant == "default" else variant_changes(recipe, variant)
        changed = dataclasses.replace(recipe, **changes)
        if changed.pooling_strategy != recipe.pooling_strategy:
            rows.append(Row(f"{ARM_NAMES[BASE]} ({changed.pooling_strategy} pooling)", BASE, changes,
                            timing=f"base_{changed.pooling_strategy}"))
        rows += [Row(f"{arm}: {variant}", arm, changes, timing=f"{recipe_key(changed)}/{arm}")
                 for arm in exp.arms or TUNING_ARMS]
    return Grid(f"tuning_{split}", f"Recipe variants on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(mean_std_page, "arm: variant"))


def sweep_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """SciNCL with k+ (``k_pos``) or k-hard (``k_hard``) varied, the rest of the recipe fixed; plots."""
    family = exp.kind
    rows = []
    for value in required_values(exp, f"the {family} sweep needs --values, e.g. --values 10,25,50"):
        changes = recipe_fields({family: int(value)})  # k_pos: easy_positives_k_max
        changed = dataclasses.replace(recipe, **changes)
        if changed.k_pos + POSITIVES_BAND > changed.k_hard - HARD_NEGATIVES_BAND:
            logger.warning("%s=%d: positives overlap the hard negatives (k+ %d, k-hard %d)", family, value,
                           changed.k_pos, changed.k_hard)
        rows.append(Row(f"{family} = {value}", "scincl", changes, timing=f"{family}={value}"))
    return Grid(f"sweep_{split}", f"SciNCL {family} sweep on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(sweep_report, family, exp.values), name=f"results_{family}.md",
                timings=f"timings_{family}.json")


def loss_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The same SciNCL triplets trained with each loss (triplet / InfoNCE / CoSENT / AnglE): mining is
    deterministic in (seed, k+, k-hard, queries), so every loss sees the same triplets."""
    rows = [BASE_ROW] + [Row(loss, "scincl", {"loss": loss}, timing=loss) for loss in exp.losses]
    return Grid(f"losses_{split}", f"Loss functions on SciNCL triplets, {rep.corpus.name} ({split} queries)", rows,
                functools.partial(mean_std_page, "loss"))


def budget_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """SPECTER-like vs SciNCL at each triplet budget (``runs/<split>/t<budget>_.../<arm>/seed_<s>``, shared with the
    other kinds' runs at that budget): each budget complete across seeds before the next one."""
    needs = "the budget curve needs --values (triplets per run), e.g. --values 1000,2500,6840"
    budgets, arms = sorted(required_values(exp, needs)), exp.arms or BUDGET_ARMS
    if len(arms) != 2:
        raise InputError(f"the budget curve compares two arms, got {', '.join(arms)}")
    rows = [BASE_ROW] + [Row(ARM_NAMES.get(arm, arm), arm, {"triplets": budget}, timing=f"t{budget}/{arm}",
                             group=budget) for budget in budgets for arm in arms]
    return Grid(f"budget_{split}/" + recipe_key(recipe).split("_", 1)[1],  # the recipe without its budget
                f"Budget curve on {rep.corpus.name} ({split} queries): {', '.join(f'{b:,}' for b in exp.values)} "
                "triplets", rows, functools.partial(budget_report, exp.values, exp.seeds, arms),
                rewrite_after_each_run=True, budget_varies=True)


def paired_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The arms on the same query papers, then each ``--variants`` change of every arm but the first (the reference:
    SPECTER-like's triplets do not depend on k+, so its run is not repeated), all in one group: every row of a seed
    before the next seed. A run is named by its arm id: the arm plus the parts of its recipe's key that the
    experiment's lacks (``scincl_kp25``)."""
    arms = exp.arms or BUDGET_ARMS
    if len(arms) < 2:
        raise InputError(f"a paired experiment compares at least two arms, got {', '.join(arms)}")
    rows = [BASE_ROW]
    for changes in [{}, *(variant_changes(recipe, variant) for variant in exp.variants)]:
        for arm in arms if not changes else arms[1:]:
            name = arm_id(arm, recipe, dataclasses.replace(recipe, **changes))
            label = ARM_NAMES.get(arm, arm) + (f", {name[len(arm) + 1:]}" if name != arm else "")
            rows.append(Row(label, arm, dict(changes), timing=f"t{recipe.triplets}/{name}", group="paired", id=name))
    return Grid(f"paired_{split}/{recipe_key(recipe)}",
                f"Arms on the same query papers, seed by seed, on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(paired_report, recipe.triplets, exp.seeds, rep.citations_train),
                rewrite_after_each_run=True)


def arm_id(arm: str, recipe: Recipe, row_recipe: Recipe) -> str:
    """``arm``, plus the parts of the row's recipe key that the experiment's recipe key lacks (``scincl_kp25``)."""
    own = set(recipe_key(recipe).split("_"))
    return "_".join([arm, *(part for part in recipe_key(row_recipe).split("_") if part not in own)])


def collision_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Collisions vs k-hard for each k+ of COLLISION_K_POS and the recipe's (Fig. 5): no trained rows, one search per
    k+, on at most COLLISION_QUERIES query papers."""
    queries = min(COLLISION_QUERIES, len(rep.eligible_queries(recipe.graph_dim)))
    report = functools.partial(collision_steps, rep, sorted({*COLLISION_K_POS, recipe.easy_positives_k_max}),
                               list(exp.values or DEFAULT_HARD_NEGATIVES_K), queries, recipe)
    return Grid("collisions", f"Collisions vs margin on {rep.corpus.name} ({queries} queries x 5 triplets)", [],
                report, seeds=(0,))


def graph_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Link prediction per graph variant, held-out-citation retrieval, graph alone on the SciDocs queries,
    beside the text encoders: the base encoder and the main comparison's runs of this recipe that exist."""
    text_runs = {"base encoder (text only)": rep.run_base(split, recipe)}
    for arm in ARMS:
        group = rep.run_dir(arm, 0, recipe, split).parent
        if any(group.glob("seed_*/results.json")):
            text_runs[f"{arm} (text encoder)"] = group
    report = functools.partial(graph_steps, rep, exp.graph_dims, GRAPH_COMPARATORS, recipe, text_runs)
    return Grid("graph", f"Citation-graph embeddings on {rep.corpus.name}", [], report, seeds=(0,))


def required_values(exp: Experiment, needs: str) -> Tuple[int, ...]:
    """``exp.values``, which the sweeps and the budget curve need (``needs``: the error line otherwise)."""
    if not exp.values:
        raise InputError(needs)
    return exp.values


# experiment kind -> the builder of its grid (a registry, not an if-chain; in the order of the docs)
KINDS: Dict[str, Callable[[CorpusPlan, Experiment, Recipe, str], Grid]] = {
    "main": main_rows, "tuning": tuning_rows, "k_pos": sweep_rows, "k_hard": sweep_rows, "losses": loss_rows,
    "collisions": collision_rows, "graph": graph_rows, "budget": budget_rows, "paired": paired_rows}
# experiment kinds whose grid is planned from finished stages (the rows depend on them)
READS_WHILE_PLANNING = {"collisions": "the number of eligible query papers",
                        "graph": "the base encoder's evaluation"}


def experiment_grid(exp: Experiment, output_dir: PathLike = "results", data_dir: PathLike = "../shared/data",
                    workers: Optional[int] = None, create: bool = True) -> Tuple[CorpusPlan, Grid, Recipe, str]:
    """The corpus plan, grid, recipe and split of one experiment (nothing is run, except the stages a kind of
    :data:`READS_WHILE_PLANNING` reads; ``create``: the output folder is made)."""
    rep = CorpusPlan(corpus_spec(exp.corpus, data_dir), Path(output_dir) / exp.corpus,
                     eval_max_sequence_length=exp.eval_max_sequence_length, workers=workers,
                     cocitation_min_count=exp.cocitation_min_count, create=create)
    recipe, split = exp.full_recipe(), exp.split or DEFAULT_SPLITS.get(exp.kind, DEFAULT_SPLIT)
    return rep, KINDS[exp.kind](rep, exp, recipe, split), recipe, split


def run_experiment(exp: Experiment, output_dir: PathLike = "results", data_dir: PathLike = "../shared/data",
                   workers: Optional[int] = None, dry_run: bool = False) -> Union[Path, str]:
    """Run one experiment (every step through the stage runner) and write its tables; returns the table file.
    ``dry_run``: nothing is run or written; returns the plan (:func:`scincl.pipeline.grid.plan_text`)."""
    if dry_run and exp.kind in READS_WHILE_PLANNING:
        raise InputError(f"--dry_run: the {exp.kind} experiment needs finished stages to plan its rows "
                         f"({READS_WHILE_PLANNING[exp.kind]}); run it without --dry_run")
    rep, grid, recipe, split = experiment_grid(exp, output_dir, data_dir, workers, create=not dry_run)
    return (plan_text if dry_run else run_grid)(rep, grid, recipe, exp.seeds, split)


def run_experiments(experiments: Sequence[Experiment], output_dir: PathLike = "results",
                    data_dir: PathLike = "../shared/data", workers: Optional[int] = None,
                    dry_run: bool = False) -> Optional[str]:
    """Run experiments in order (:func:`run_experiment`), every one's corpus checked before the first one runs;
    ``dry_run``: their plans (``cli_pipeline.py reproduce`` / ``run_experiment``'s output), nothing run."""
    for exp in experiments:
        corpus_spec(exp.corpus, data_dir)
    plans = [run_experiment(exp, output_dir, data_dir, workers, dry_run) for exp in experiments]
    return "\n\n".join(map(str, plans)) + "\n(--dry_run: nothing was run)" if dry_run else None


def checked(exp: Experiment) -> Experiment:
    """``exp`` once its loss names are the trainer's (the settings cannot import the losses)."""
    from scincl.model.losses import LOSS_NAMES

    for loss in exp.losses + ((str(exp.recipe["loss"]),) if "loss" in exp.recipe else ()):
        if loss not in LOSS_NAMES:
            raise InputError(f"unknown loss {loss!r}: choose from {', '.join(LOSS_NAMES)}")
    return exp


def experiment_from_flags(kind: str, **flags: Any) -> Experiment:
    """An :class:`Experiment` from ``reproduce``'s flags (lists may be comma-separated strings)."""
    return checked(make_experiment(with_changes({"kind": kind}, flags, "reproduce")))


def load_experiments(path_or_name: PathLike, changes: Optional[Dict[str, Any]] = None) -> List[Experiment]:
    """The experiments of a definition module (``experiments/<name>.py`` or a path to one: its ``get_experiment()``,
    :func:`~scincl.settings.experiment.load_definitions`), each with ``changes`` (command-line flags) applied."""
    return [checked(make_experiment(with_changes(d, changes or {}, "run_experiment")))
            for d in load_definitions(path_or_name)]
