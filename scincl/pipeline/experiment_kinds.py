"""The real-corpus experiments of ``docs/results.md`` (``cli_pipeline.py run_experiment NAME`` / ``reproduce KIND``).

An experiment is data (``experiments/<name>.py`` returns :class:`Experiment` fields); its kind only
builds the rows of a :class:`~scincl.pipeline.grid.Grid`, which :func:`~scincl.pipeline.grid.run_grid`
runs (rows x seeds, each cell one cached run) and turns into ``results.md``:

- ``main``: base vs SPECTER-like vs SciNCL vs continuous co-citation, one row per arm, mean ± std
  over seeds (paper Table 1 layout), plus how each arm's triplets relate to the citation graph;
- ``tuning``: recipe variants (pooling, learning rate, budget, ...) of the trained arms on val;
- ``k_pos`` / ``k_hard``: SciNCL's sampling sweeps (paper Figs. 2-3) on val, with plots;
- ``losses``: triplet vs InfoNCE vs CoSENT vs AnglE on SciNCL triplets (val);
- ``budget``: SPECTER-like vs SciNCL per triplet budget, paired tests (``budget_curve``);
- ``paired``: arms (and ``--variants`` of all but the first) on the same query papers seed by seed, every pair
  tested, ``runs.csv`` (``paired``, issue 40);
- ``collisions``: positive/negative collisions vs the k+ .. k-hard margin (paper Fig. 5; no training);
- ``graph``: link prediction of the graph embeddings (64/128-d, dot vs cos) and the graph
  embeddings alone as a retriever (OpenMSD Table 7 style; the text rows are the main runs that exist).

Each writes ``<OUTPUT_DIR>/<corpus>/<folder>/results.md`` (tables) plus PNG plots where they apply,
and ``timings.json`` (wall seconds per step on this machine). The pages beyond a mean ± std table are
``scincl/eval/study_reports.py``'s (the collision and graph studies' steps: ``study_steps``); a kind's defaults
(arms, split, losses, the collision and graph studies' parameters) are data in ``experiments/``
(:func:`experiment_data`).
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from scincl.errors import InputError, unknown_flag_error
from scincl.io import PathLike
from scincl.eval.study_reports import sweep_report, triplet_relations
from scincl.pipeline.grid import BASE, Grid, Row, RowRuns, labelled_runs, mean_std_report, plan_text, run_grid
from scincl.pipeline.study_steps import collision_steps, graph_steps
from scincl.pipeline.layout import recipe_key
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.settings.arms import (ARM_NAMES, ARMS, BUDGET_ARMS, DEFAULT_ARMS, DEFAULT_SPLIT, DEFAULT_SPLITS, TUNING_ARMS,
                                  corpus_spec)
from scincl.settings.experiment import (EXPERIMENTS_DIR, Experiment, experiment_data, experiment_names,
                                       with_changes, name_list)
from scincl.settings.recipe import RECIPE_FIELDS, Recipe, recipe_field, recipe_fields
from scincl.settings.run import load_module, parse_int_list, parse_seeds
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND
from scincl.triples.margins import DEFAULT_HARD_NEGATIVES_K

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------- the kinds: rows of a grid
def main_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Base vs the trained arms at equal budget (paper Table 1 rows, "w/o leakage"), seed by seed."""
    rows = [Row(ARM_NAMES[BASE], BASE)] + [Row(ARM_NAMES[arm], arm, timing=arm, group="arms")
                                           for arm in exp.arms or DEFAULT_ARMS]

    def report(exp_dir: Path, rep: CorpusPlan, results: List[RowRuns], split: str) -> Tuple[str, Sequence[str]]:
        table, _ = mean_std_report("arm")(exp_dir, rep, results, split)
        relations = triplet_relations(rep.citations_train, {r.row.label: r.runs[0] / "train_triples.csv"
                                                            for r in results if r.row.arm != BASE})
        return table + "\n" + relations, []

    return Grid(f"main_{split}/{recipe_key(recipe)}", f"Main comparison on {rep.corpus.name} ({split} queries)", rows,
                report=report)


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
                first_column="arm: variant")


def sweep_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """SciNCL with k+ (``k_pos``) or k-hard (``k_hard``) varied, the rest of the recipe fixed; plots."""
    family = exp.kind
    if not exp.values:
        raise InputError(f"the {family} sweep needs --values, e.g. --values 10,25,50")
    rows = []
    for value in exp.values:
        changes = recipe_fields({family: int(value)})  # k_pos: easy_positives_k_max
        changed = dataclasses.replace(recipe, **changes)
        if changed.k_pos + POSITIVES_BAND > changed.k_hard - HARD_NEGATIVES_BAND:
            logger.warning("%s=%d: positives overlap the hard negatives (k+ %d, k-hard %d)", family, value,
                           changed.k_pos, changed.k_hard)
        rows.append(Row(f"{family} = {value}", "scincl", changes, timing=f"{family}={value}"))
    return Grid(f"sweep_{split}", f"SciNCL {family} sweep on {rep.corpus.name} ({split} queries)", rows,
                first_column=family, name=f"results_{family}.md", timings=f"timings_{family}.json",
                report=lambda exp_dir, rep, results, split: sweep_report(exp_dir, family, exp.values,
                                                                         labelled_runs(results), split))


def loss_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The same SciNCL triplets trained with each loss (triplet / InfoNCE / CoSENT / AnglE): mining is
    deterministic in (seed, k+, k-hard, queries), so every loss sees the same triplets."""
    rows = [Row(ARM_NAMES[BASE], BASE)] + [Row(loss, "scincl", {"loss": loss}, timing=loss) for loss in exp.losses]
    return Grid(f"losses_{split}", f"Loss functions on SciNCL triplets, {rep.corpus.name} ({split} queries)", rows,
                first_column="loss")


def collision_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Collisions vs k-hard for each k+ of ``experiments/hepth_collisions.py`` K_POS and the recipe's (Fig. 5): no
    trained rows, one search per k+, on at most its QUERIES query papers."""
    study = experiment_data("hepth_collisions")
    queries = min(study.QUERIES, len(rep.eligible_queries(recipe.graph_dim)))
    report = functools.partial(collision_steps, sorted({*study.K_POS, recipe.easy_positives_k_max}),
                               list(exp.values or DEFAULT_HARD_NEGATIVES_K), queries, recipe)
    return Grid("collisions", f"Collisions vs margin on {rep.corpus.name} ({queries} queries x 5 triplets)", [],
                report=report, seeds=(0,))


def graph_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Link prediction per graph variant, held-out-citation retrieval, graph alone on the SciDocs queries,
    beside the text encoders: the base encoder and the main comparison's runs of this recipe that exist."""
    text_runs = {"base encoder (text only)": rep.run_base(split, recipe)}
    for arm in ARMS:
        group = rep.run_dir(arm, 0, recipe, split).parent
        if any(group.glob("seed_*/results.json")):
            text_runs[f"{arm} (text encoder)"] = group
    comparators = tuple(experiment_data("hepth_graph").COMPARATORS)
    report = functools.partial(graph_steps, exp.graph_dims, comparators, recipe, text_runs)
    return Grid("graph", f"Citation-graph embeddings on {rep.corpus.name}", [], report=report, seeds=(0,))


def budget_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The budget curve (``budget_curve``): SPECTER-like vs SciNCL at each triplet budget."""
    from scincl.pipeline.budget_curve import budget_grid

    if not exp.values:
        raise InputError("the budget curve needs --values (triplets per run), e.g. --values 1000,2500,6840")
    return budget_grid(rep, recipe, list(exp.values), exp.seeds, split, exp.arms or BUDGET_ARMS)


def paired_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Arms on the same query papers, seed by seed (``paired``): ``--variants`` change every arm but the first."""
    from scincl.pipeline.paired import paired_grid

    return paired_grid(rep, recipe, split, exp.arms or BUDGET_ARMS,
                       [variant_changes(recipe, variant) for variant in exp.variants], exp.seeds)


def variant_changes(recipe: Recipe, variant: str) -> Dict[str, Any]:
    """A tuning variant ``field=value`` (``pooling=cls``) as the :class:`Recipe` field it changes, typed as the field."""
    if "=" not in variant:
        raise InputError(f"--variants: expected field=value (e.g. pooling=cls), got {variant!r}")
    key, value = (x.strip() for x in variant.split("=", 1))
    key = recipe_field(key)  # pooling=cls: pooling_strategy=cls
    if key not in RECIPE_FIELDS:
        raise InputError(f"--variants: unknown recipe field {key!r} (one of {', '.join(RECIPE_FIELDS)})")
    return {key: type(getattr(recipe, key))(value)}


def experiment_from_flags(kind: str, **flags: Any) -> Experiment:
    """An :class:`Experiment` from ``reproduce``'s flags (lists may be comma-separated strings)."""
    return make_experiment(with_changes({"kind": kind}, flags, "reproduce"))


def make_experiment(definition: Dict[str, Any]) -> Experiment:
    """Validate one experiment definition (a dict of :class:`Experiment` fields) and normalise its lists."""
    fields = {f.name for f in dataclasses.fields(Experiment)}
    unknown = sorted(set(definition) - fields)
    if unknown:
        raise unknown_flag_error(unknown[0], "an experiment definition", fields)
    exp = Experiment(**definition)
    if exp.kind not in KINDS:
        raise InputError(f"unknown experiment {exp.kind!r}: choose from {', '.join(KINDS)}")
    losses = experiment_data("hepth_losses").LOSSES if exp.losses is None else exp.losses  # the kinds' defaults:
    graph_dims = experiment_data("hepth_graph").GRAPH_DIMS if exp.graph_dims is None else exp.graph_dims  # data
    changes: Dict[str, Any] = {"seeds": tuple(parse_seeds(exp.seeds)), "losses": name_list(losses),
                               "variants": name_list(exp.variants), "recipe": dict(exp.recipe)}
    if exp.arms is not None:
        changes["arms"] = name_list(exp.arms)
        for arm in changes["arms"]:
            if arm not in ARMS:
                raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
    if exp.values is not None:
        changes["values"] = tuple(parse_int_list(exp.values, "values"))
    changes["graph_dims"] = tuple(parse_int_list(graph_dims, "graph_dims"))
    for name in ("values", "graph_dims"):  # issue 29: duplicates and non-positive values ran (or crashed) later
        values = changes.get(name) or ()
        if any(v <= 0 for v in values) or len(set(values)) != len(values):
            raise InputError(f"--{name} {','.join(map(str, values))}: expected distinct values > 0")
    if exp.split is not None and exp.split not in ("val", "test"):
        raise InputError(f"--split {exp.split!r}: choose val or test")
    from scincl.settings.values import check_value
    from scincl.model.losses import LOSS_NAMES

    for loss in changes["losses"] + ((str(exp.recipe["loss"]),) if "loss" in exp.recipe else ()):
        if loss not in LOSS_NAMES:
            raise InputError(f"unknown loss {loss!r}: choose from {', '.join(LOSS_NAMES)}")
    for name in ("cocitation_min_count", "eval_max_sequence_length"):
        check_value(name, getattr(exp, name), int)
    for name, value in changes["recipe"].items():  # checked by the flag table; the value is kept as given
        check_value(name, value, None)              # (a run's directory name follows it)
    exp = dataclasses.replace(exp, **changes)
    exp.full_recipe()  # recipe fields checked before any work
    return exp


def run_experiment(exp: Experiment, output_dir: PathLike = "results", data_dir: PathLike = "../shared/data",
                   workers: Optional[int] = None, dry_run: bool = False) -> Union[Path, str]:
    """Run one experiment (every step through the stage runner) and write its tables; returns the table file.
    ``dry_run``: nothing is run or written; returns the plan (:func:`scincl.pipeline.grid.plan_text`)."""
    if dry_run:
        if exp.kind in READS_WHILE_PLANNING:
            raise InputError(f"--dry_run: the {exp.kind} experiment needs finished stages to plan its rows "
                             f"({READS_WHILE_PLANNING[exp.kind]}); run it without --dry_run")
        rep, grid, recipe, split = experiment_grid(exp, output_dir, data_dir, workers, create=False)
        return plan_text(rep, grid, recipe, exp.seeds, split)
    rep, grid, recipe, split = experiment_grid(exp, output_dir, data_dir, workers)
    return run_grid(rep, grid, recipe, exp.seeds, split)


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


# experiment kind -> the builder of its grid (a registry, not an if-chain; in the order of the docs)
KINDS: Dict[str, Callable[[CorpusPlan, Experiment, Recipe, str], Grid]] = {
    "main": main_rows, "tuning": tuning_rows, "k_pos": sweep_rows, "k_hard": sweep_rows, "losses": loss_rows,
    "collisions": collision_rows, "graph": graph_rows, "budget": budget_rows, "paired": paired_rows}


def load_experiments(path_or_name: PathLike, changes: Optional[Dict[str, Any]] = None) -> List[Experiment]:
    """The experiments of a definition module: ``experiments/<name>.py`` or a path to such a file.

    The module's ``get_experiment()`` returns one definition (a dict of :class:`Experiment` fields)
    or a list of them, run in order (the ``biggraph_configs/`` shape); ``changes`` (command-line
    flags) apply to each.
    """
    path = Path(path_or_name)
    if not path.suffix:
        path = EXPERIMENTS_DIR / f"{path_or_name}.py"
    if not path.is_file():
        raise InputError(f"no experiment definition {str(path_or_name)!r} (experiments/: "
                         f"{', '.join(experiment_names())})")
    try:  # a broken definition is one line naming the file, before any stage (issue 29: a traceback)
        module = load_module(path, f"scincl_experiment_{path.stem}")
        if not hasattr(module, "get_experiment"):
            raise InputError("defines no get_experiment()", path=path)
        definitions = module.get_experiment()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - user code: SyntaxError, NameError, ...
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        raise InputError(f"cannot load the experiment definition ({type(exc).__name__}: {exc})", path=path,
                         line=line) from None
    items = definitions if isinstance(definitions, list) else [definitions]
    if not items or not all(isinstance(d, dict) for d in items):
        raise InputError(f"get_experiment() must return a dict of Experiment fields or a list of them, got "
                         f"{type(definitions).__name__}", path=path)
    return [make_experiment(with_changes(d, changes or {}, "run_experiment")) for d in items]
