"""The real-corpus experiments (``run_experiment NAME`` / ``reproduce KIND``): each kind (:data:`KINDS`) turns an
:class:`~scincl.settings.experiment.Experiment` into a :class:`~scincl.pipeline.grid.Grid` (rows, folder, page)."""
from __future__ import annotations

import dataclasses
import functools
import itertools
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from scincl.errors import InputError
from scincl.eval.experiment_pages import Page, RowRuns, mean_std_page
from scincl.eval.graph_retrieval import evaluate_graph_retrieval
from scincl.eval.paired_runs import RELATIONS, collect_copies, paired_cells, paired_report
from scincl.eval.study_reports import (budget_report, collision_report, graph_report, main_page, score_graph_alone,
                                       sweep_report)
from scincl.io import PathLike, read_id_list
from scincl.output_lock import writes
from scincl.pipeline.grid import TIMINGS, Grid, Row, plan_text, row_runs, run_grid, timed
from scincl.pipeline.layout import recipe_key
from scincl.pipeline.real_corpus import REAL_CORPUS_SEARCH, CorpusPlan
from scincl.settings.arms import ARM_NAMES, ARMS, BASE, corpus_spec
from scincl.settings.experiment import (COLLISION_K_POS, COLLISION_QUERIES, GRAPH_COMPARATORS, Experiment,
                                        make_experiments, variant_recipes)
from scincl.settings.recipe import Recipe, recipe_fields
from scincl.triples.config import HARD_NEGATIVES_BAND
from scincl.triples.margins import DEFAULT_HARD_NEGATIVES_K, sweep_collision_margins


def main_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Base vs the trained arms at equal budget (paper Table 1 rows, "w/o leakage"), seed by seed."""
    rows = [Row(ARM_NAMES[arm], arm, recipe, timing=arm, group="arms") for arm in (BASE, *exp.arms)]
    return Grid(f"main_{split}/{recipe_key(recipe)}", f"Main comparison on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(main_page, rep.citations_train))


def tuning_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Recipe variants (``pooling=cls``) of the trained arms; a variant with another pooling gets its base row."""
    rows = [Row(f"{ARM_NAMES[BASE]} ({recipe.pooling_strategy} pooling)", BASE, recipe)]
    for variant, changed in variant_recipes(recipe, exp.variants):
        if changed.pooling_strategy != recipe.pooling_strategy:
            rows.append(Row(f"{ARM_NAMES[BASE]} ({changed.pooling_strategy} pooling)", BASE, changed,
                            timing=f"base_{changed.pooling_strategy}"))
        rows += [Row(f"{arm}: {variant}", arm, changed, timing=f"{recipe_key(changed)}/{arm}")
                 for arm in exp.arms]
    return Grid(f"tuning_{split}", f"Recipe variants on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(mean_std_page, "arm: variant"))


def sweep_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """SciNCL with k+ (``k_pos``) or k-hard (``k_hard``) varied, the rest of the recipe fixed."""
    rows = [Row(f"{exp.kind} = {value}", "scincl", dataclasses.replace(recipe, **recipe_fields({exp.kind: value})),
                timing=f"{exp.kind}={value}") for value in exp.values]
    return Grid(f"sweep_{split}", f"SciNCL {exp.kind} sweep on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(sweep_report, exp.kind, exp.values), name=f"results_{exp.kind}.md",
                timings=f"timings_{exp.kind}.json")


def loss_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The same SciNCL triplets (mining is deterministic) trained with each loss."""
    rows = [Row(ARM_NAMES[BASE], BASE, recipe)] + [
        Row(loss, "scincl", dataclasses.replace(recipe, loss=loss), timing=loss) for loss in exp.losses]
    return Grid(f"losses_{split}", f"Loss functions on SciNCL triplets, {rep.corpus.name} ({split} queries)", rows,
                functools.partial(mean_std_page, "loss"))


def budget_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Two arms at each triplet budget (runs shared with the other kinds'), each budget's seeds before the next."""
    rows = [Row(ARM_NAMES[BASE], BASE, recipe)] + [
        Row(ARM_NAMES[arm], arm, dataclasses.replace(recipe, triplets=budget), timing=f"t{budget}/{arm}", group=budget)
        for budget in sorted(exp.values) for arm in exp.arms]
    return Grid(f"budget_{split}/" + recipe_key(recipe).split("_", 1)[1],  # the recipe without its budget
                f"Budget curve on {rep.corpus.name} ({split} queries): {', '.join(f'{b:,}' for b in exp.values)} "
                "triplets", rows, functools.partial(budget_report, exp.values, exp.seeds, exp.arms),
                rewrite_after_each_run=True)


def paired_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """The arms on the same query papers, then each ``--variants`` change of every arm but the first (the reference),
    seed by seed; a run is named by its arm and its recipe key's parts the experiment's lacks (``scincl_kp25``)."""
    arms, own, rows = exp.arms, set(recipe_key(recipe).split("_")), [Row(ARM_NAMES[BASE], BASE, recipe)]
    for variant, changed in variant_recipes(recipe, exp.variants):
        extra = "_".join(part for part in recipe_key(changed).split("_") if part not in own)
        for arm in arms if variant == "default" else arms[1:]:
            name, label = (f"{arm}_{extra}", f"{ARM_NAMES[arm]}, {extra}") if extra else (arm, ARM_NAMES[arm])
            rows.append(Row(label, arm, changed, timing=f"t{recipe.triplets}/{name}", group="paired", id=name))
    return Grid(f"paired_{split}/{recipe_key(recipe)}",
                f"Arms on the same query papers, seed by seed, on {rep.corpus.name} ({split} queries)", rows,
                functools.partial(paired_report, recipe.triplets, exp.seeds, rep.citations_train),
                rewrite_after_each_run=True)


def collision_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Collisions vs k-hard (``--values``) for each k+ of COLLISION_K_POS and the recipe's (paper Fig. 5): one margin
    search per k+ on at most COLLISION_QUERIES query papers of seed 0, no trained rows."""
    dim, k_hard = recipe.graph_dim, list(exp.values or DEFAULT_HARD_NEGATIVES_K)
    queries = min(COLLISION_QUERIES, len(read_id_list(rep.built(rep.eligible_queries_file(dim)))))

    def searches(exp_dir: Path) -> List[Tuple[int, Path]]:
        graph, query_ids = rep.graph("cite", dim), rep.queries(0, queries, dim)
        index, corpus, found = rep.ann_index("cite", dim), rep.graph_papers_with_text("cite", dim), []
        for kp in sorted({*COLLISION_K_POS, recipe.easy_positives_k_max}):
            out = exp_dir / f"k_pos_{kp}.json"
            found.append((kp, rep.built(rep.stage(out, functools.partial(
                sweep_collision_margins, str(graph["ids"]), str(graph["embeddings"]), str(index),
                query_papers=str(query_ids), positives_k=[kp],
                hard_negatives_k=[k for k in k_hard if k - HARD_NEGATIVES_BAND > kp], output_path=str(out), seed=0,
                ann_normalize_embeddings=REAL_CORPUS_SEARCH.ann_normalize_embeddings, include_paper_ids=str(corpus),
                workers=rep.workers),
                inputs=[index, query_ids], description=f"collisions vs margin, k+ = {kp}"))))
        return found

    return Grid("collisions", f"Collisions vs margin on {rep.corpus.name} ({queries} queries x 5 triplets)", [],
                lambda exp_dir, rows, split: collision_report(exp_dir, timed(rep, exp_dir / TIMINGS,
                                                                             "collisions", searches, exp_dir)))


def graph_rows(rep: CorpusPlan, exp: Experiment, recipe: Recipe, split: str) -> Grid:
    """Link prediction and citation retrieval per graph (``--graph_dims`` x GRAPH_COMPARATORS) and a transductive
    graph alone on the SciDocs queries, beside the base encoder and the main comparison's runs that exist."""
    text_runs = {"base encoder (text only)": rep.run_cell(BASE, None, recipe, split),
                 **{f"{arm} (text encoder)": rep.run_dir(arm, 0, recipe, split).parent for arm in ARMS}}

    def report(exp_dir: Path, rows: Sequence[RowRuns], split: str) -> Page:
        timings, link_prediction, retrieval = exp_dir / TIMINGS, [], []
        for dim, comparator in itertools.product(exp.graph_dims, GRAPH_COMPARATORS):
            name, out = f"{dim}d {comparator}", exp_dir / f"retrieval_{dim}d_{comparator}.json"
            graph = timed(rep, timings, f"biggraph {name}", rep.built, rep.graph("cite", dim, comparator))
            link_prediction.append((name, graph["metrics"]))
            retrieval.append((name, rep.built(rep.stage(out, functools.partial(
                evaluate_graph_retrieval, str(graph["embeddings"]), str(rep.citations_test), output_path=str(out),
                paper_ids_path=str(graph["ids"]), metric=GRAPH_COMPARATORS[comparator]),
                inputs=[graph["embeddings"], rep.citations_test], description=f"graph retrieval {name}"))))
        dim = recipe.graph_dim
        graph = timed(rep, timings, "biggraph transductive", rep.built, rep.graph("transductive", dim, "dot"))
        papers, run = rep.eval_papers(split), exp_dir / f"scidocs_transductive_{dim}d" / split
        rep.built(rep.stage(run / "results.json", functools.partial(
            score_graph_alone, graph["ids"], graph["embeddings"], papers, rep.corpus.scidocs_dir, run, split),
            inputs=[graph["embeddings"]], output_dir=run, description=f"graph embeddings alone on the SciDocs {split} "
            "queries"))
        alone = (f"graph embeddings alone ({dim}d dot, transductive graph)", run)
        return graph_report(link_prediction, retrieval, alone, text_runs, split)

    return Grid("graph", f"Citation-graph embeddings on {rep.corpus.name}", [], report)


KINDS: Dict[str, Callable[[CorpusPlan, Experiment, Recipe, str], Grid]] = {
    "main": main_rows, "tuning": tuning_rows, "k_pos": sweep_rows, "k_hard": sweep_rows, "losses": loss_rows,
    "collisions": collision_rows, "graph": graph_rows, "budget": budget_rows, "paired": paired_rows}
# experiment kinds whose grid is planned from finished stages (the rows depend on them)
READS_WHILE_PLANNING = {"collisions": "the number of eligible query papers",
                        "graph": "the base encoder's evaluation"}


def experiment_grid(exp: Experiment, output_dir: PathLike, data_dir: PathLike,
                    workers: Optional[int] = None) -> Tuple[CorpusPlan, Grid]:
    """The corpus plan and grid of one experiment (only what :data:`READS_WHILE_PLANNING` says runs)."""
    rep = CorpusPlan(corpus_spec(exp.corpus, data_dir), Path(output_dir) / exp.corpus, exp, workers)
    return rep, KINDS[exp.kind](rep, exp, exp.full_recipe(), exp.split)


def run_experiments(experiments: Sequence[Experiment], output_dir: PathLike, data_dir: PathLike,
                    workers: Optional[int] = None, dry_run: bool = False) -> Optional[str]:
    """Run experiments in order and write their pages, every corpus checked first; ``dry_run``: their plans."""
    for exp in experiments:
        corpus_spec(exp.corpus, data_dir)
        if dry_run and exp.kind in READS_WHILE_PLANNING:
            raise InputError(f"--dry_run: the {exp.kind} experiment needs finished stages to plan its rows "
                             f"({READS_WHILE_PLANNING[exp.kind]}); run it without --dry_run")
    step = plan_text if dry_run else run_grid  # each takes the corpus plan and grid experiment_grid returns
    plans = [step(*experiment_grid(exp, output_dir, data_dir, workers)) for exp in experiments]
    return "\n\n".join(plans) + "\n(--dry_run: nothing was run)" if dry_run else None


def load_experiments(definitions: Union[PathLike, List[Dict[str, Any]]], changes: Optional[Dict[str, Any]] = None,
                     command: str = "run_experiment") -> List[Experiment]:
    """:func:`~scincl.settings.experiment.make_experiments` (of experiments/<name>.py, a path to such a module, or a
    list of definitions) with their loss names checked."""
    from scincl.model.losses import check_loss_name

    experiments = make_experiments(definitions, changes or {}, command)
    for exp in experiments:  # the registry's names (the settings do not import it)
        for loss, flag in [*((name, "--losses") for name in exp.losses), (exp.full_recipe().loss, "--loss")]:
            check_loss_name(loss, flag)
    return experiments


@writes("output_dir")
def reproduce(experiment: str, output_dir: str = "results", data_dir: str = "../shared/data",
              workers: Optional[int] = None, dry_run: bool = False, **settings: Any) -> Optional[str]:
    """Real-corpus experiments of docs/results.md on hep-th or CiteSeer (../shared/data), with the packaged MiniLM
    unless --base_model_name_or_path names another encoder.

    EXPERIMENT: main (base vs SPECTER-like vs SciNCL vs continuous co-citation, mean ± std over --seeds), tuning
    (--variants pooling=cls,learning_rate=2e-5,...), k_pos / k_hard (SciNCL sweeps over --values), losses, collisions
    (vs margin, --values = the k-hard grid), graph (link prediction and the graph alone as a retriever), budget
    (SPECTER-like vs SciNCL at each triplet budget of --values), paired (--arms, then --variants of all but the
    first, on the same query papers, seed by seed; runs.csv). Tables: OUTPUT_DIR/<corpus>/<experiment...>/results.md;
    what the runs share (citations, graphs, indexes, query samples, the base evaluation) is made once in
    OUTPUT_DIR/<corpus>/shared. --dry_run prints each cell's stages (done, the next to run and why), runs nothing.

    Example: python cli_pipeline.py reproduce main --corpus hepth --output_dir results --seeds 0,1,2
    Args:
        experiment: {kinds}.
        settings: the fields of Experiment and Recipe (the flags below, with their former names).
    """
    return run_experiments(load_experiments([{"kind": experiment}], settings, "reproduce"), output_dir, data_dir,
                           workers, dry_run)


@writes("output_dir")
def run_experiment_definition(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                              workers: Optional[int] = None, dry_run: bool = False, **changes: Any) -> Optional[str]:
    """Run the experiments of experiments/<name>.py (or a path to such a module; its get_experiment() returns
    Experiment fields: one dict, or a list run in order), each changed by the further flags as in `reproduce`.

    Example: python cli_pipeline.py run_experiment hepth_main --output_dir results
    """
    return run_experiments(load_experiments(definition, changes), output_dir, data_dir, workers, dry_run)


@writes("to")
def collect_runs(definition: str, to: str, results_dir: str = "results", data_dir: str = "../shared/data",
                 **changes: Any) -> Path:
    """Copy the finished runs of a paired experiment (experiments/<name>.py) and its pages into a folder of the docs
    (TO/<arm id>/t<triplets>/seed_<s>/, earlier copies kept) and write TO/runs.csv from the copies; prints its path.
    Give the flags and environment the experiment ran with; RESULTS_DIR (its --output_dir) is only read.

    Example: BASE_MODEL_NAME_OR_PATH=/work/runs/pretrain/hepth_citeseer_mini SCINCL_RESULTS=/work/runs/40/results
        bash experiments/run.sh collect_runs hepth_powered docs/results/hepth/pretrained/powered
    """
    cells, parts, splits = [], [], set()
    for exp in load_experiments(definition, changes):
        if exp.kind != "paired":
            raise InputError(f"collect_runs takes experiments of kind paired, {definition} has {exp.kind}")
        rep, grid = experiment_grid(exp, results_dir, data_dir)  # only read
        splits.add(exp.split)
        cells += paired_cells(row_runs(rep, grid), exp.seeds)
        parts += [(rep.out / grid.folder / name, exp.full_recipe().triplets) for name in (grid.timings, grid.name,
                                                                                           RELATIONS)]
    if len(splits) != 1:
        raise InputError(f"{definition}: its parts score different splits ({', '.join(sorted(splits))})")
    return collect_copies(Path(to), cells, parts, splits.pop())
