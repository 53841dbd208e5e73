"""The experiment commands beyond one ``run_specter``: the k sweeps of paper Figs. 2-3 on the SciNCL plan
(:func:`sweep`), the real-corpus experiments (:func:`reproduce`, :func:`run_experiment_definition`:
:mod:`scincl.pipeline.experiment_kinds`).

- :func:`sweep`: ``OUTPUT_DIR/sweep/k_pos/<k+>``, ``OUTPUT_DIR/sweep/k_hard/<k->``, one ``run_specter`` experiment
  each (:func:`scincl.pipeline.run_command.run_one`) sharing the corpus, citations, graph and base evaluation of
  ``OUTPUT_DIR``, plotted by the evaluation's ``compare``;
- :func:`reproduce`, :func:`run_experiment_definition`: ``cli_pipeline.py reproduce`` / ``run_experiment``;
- :func:`collect_runs`: the runs of a paired experiment, whose finished ones ``scincl/eval/paired_runs.py`` copies into
  the docs, with its ``runs.csv``.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from scincl.errors import InputError
from scincl.output_lock import writes
from scincl.pipeline.run_command import run_one, settings_from_flags
from scincl.settings.run import DEFAULT_DEMO_OUTPUT_DIR, parse_int_list
from scincl.settings.schema import derive_bands

logger = logging.getLogger(__name__)


@writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)
def sweep(output_dir: Optional[str] = None, k_pos: Sequence[int] = (), k_hard: Sequence[int] = (),
          **flags: Any) -> Dict[str, Any]:
    """k+ / k-hard sweeps (paper Figs. 2-3): one run per value, plots metric vs k.

    Example: python cli_pipeline.py sweep runs/demo --k_pos 10,25,50 --k_hard 200,400,800
    Outputs OUTPUT_DIR/sweep/k_pos/<k+>/, OUTPUT_DIR/sweep/k_hard/<k->/ and the plots in
    OUTPUT_DIR/comparison/. Other flags as in run_specter. One model per k+ (positives
    n_{k+-c+ +1} .. n_{k+}, c+ = --easy_positives_count) and per k-hard (hard negatives n_{k- -c- +1} .. n_{k-},
    c- = --hard_negatives_count): paper Figs. 2-3 vary k+ with k-hard fixed and vice versa. The command prints
    the plots' paths.
    """
    if not k_pos and not k_hard:
        raise InputError("give --k_pos and/or --k_hard values, e.g. --k_pos 10,25,100 --k_hard 500,1000,4000")
    first = settings_from_flags(output_dir, flags)
    shared = Path(first.output_dir)
    runs = []
    for family, values in (("k_pos", parse_int_list(k_pos, "k_pos")), ("k_hard", parse_int_list(k_hard, "k_hard"))):
        for k in values:
            band = "easy_positives" if family == "k_pos" else "hard_negatives"
            per_run = dict(flags, auto_output_dir=False, **{f"{band}_k_max": k})
            # the band's start k - count (paper §3.2), whatever k_min the other runs take
            per_run.update(derive_bands({f"{band}_k_max": k, f"{band}_count": flags.get(f"{band}_count")}))
            logger.info("=== sweep %s = %d ===", family, k)
            runs.append(run_one(str(shared / "sweep" / family / str(k)), per_run, shared_dir=shared))
    from scincl.eval.compare import compare

    summary = compare([], shared / "comparison", sweep_dir=shared / "sweep", split=first.split)
    return {"runs": runs, "plots": summary.get("files", []), "output_dir": shared}


@writes("output_dir")
def reproduce(experiment: str, output_dir: str = "results", data_dir: str = "../shared/data",
              workers: Optional[int] = None, dry_run: bool = False, **settings: Any) -> Optional[str]:
    """Real-corpus experiments of docs/results.md (hep-th, CiteSeer from ../shared/data), MiniLM encoder
    unless --base_model_name_or_path names another.

    EXPERIMENT: one of {kinds} (scincl.pipeline.experiment_kinds.KINDS): main (base vs SPECTER-like vs
    SciNCL vs continuous co-citation, mean ± std over --seeds, test queries), tuning (--variants
    pooling=cls,learning_rate=2e-5,... on val), k_pos / k_hard (SciNCL sweeps over --values, val), losses
    (triplet, infonce, cosent, angle on SciNCL triplets, val), collisions (vs margin, --values = k-hard
    grid), graph (link prediction 64/128-d dot vs cos + graph embeddings alone as a retriever), budget
    (SPECTER-like vs SciNCL at each triplet budget of --values, e.g. 1000,2500,6840), paired (--arms and
    --variants of all but the first arm on the same query papers, seed by seed, every pair tested; runs.csv).
    Shared stage outputs (citations w/o the SciDocs queries, co-citations, BigGraph, FAISS, query
    samples, base-encoder evaluation) live in OUTPUT_DIR/<corpus>/shared and are reused; each arm x
    seed has its own triplets, model and results. Tables: OUTPUT_DIR/<corpus>/<experiment...>/results.md.
    Every step runs through the stage runner of run_specter (manifest.json in each output dir).
    The same experiments as data: experiments/*.py, run with `run_experiment`.
    --dry_run: print the plan (each arm x seed's stages: how many are done, the next to run and why) and run nothing.

    Example: python cli_pipeline.py reproduce main --corpus hepth --output_dir results --seeds 0,1,2
    Args:
        experiment: {kinds}.
        settings: the fields of scincl.settings.experiment.Experiment (--corpus hepth|citeseer, --seeds,
            --split, --values, --variants, --arms, --losses, ...) and of the recipe
            (scincl.settings.recipe.Recipe: --triplets, the k+ and k-hard band ends, --pooling_strategy,
            --learning_rate, ...), each with its default defined there and listed below
            (the recipe's former names --k_pos, --k_hard, --pooling, --batch_size, --epochs, --base_model too).
    """
    from scincl.pipeline.experiment_kinds import experiment_from_flags, run_experiments

    return run_experiments([experiment_from_flags(experiment, **settings)], output_dir, data_dir, workers, dry_run)


@writes("output_dir")
def run_experiment_definition(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                              workers: Optional[int] = None, dry_run: bool = False, **changes: Any) -> Optional[str]:
    """Run an experiment defined as data: experiments/<name>.py (or a path to such a module).

    The module's get_experiment() returns the experiment's kind, corpus, arms, seeds, split,
    recipe changes and sweep values (one dict, or a list run in order); see experiments/ and
    scincl.settings.experiment.Experiment for the fields and their defaults. Further flags
    change every experiment of the module: the same settings as `reproduce` (e.g. --seeds 0
    --k_hard 2000). --dry_run prints the plan of every experiment of the module (each arm x seed's stages: how many
    are done, the next to run and why) and runs nothing.

    Example: python cli_pipeline.py run_experiment hepth_main --output_dir results
    """
    from scincl.pipeline.experiment_kinds import load_experiments, run_experiments

    return run_experiments(load_experiments(definition, changes), output_dir, data_dir, workers, dry_run)


@writes("to")
def collect_runs(definition: str, to: str, results_dir: str = "results", data_dir: str = "../shared/data",
                 **changes: Any) -> Path:
    """Copy the finished runs of a paired experiment (experiments/<name>.py of kind paired) into a folder of the docs.

    Every run's results.json, per_query.json and recipe.json go to TO/<arm id>/t<triplets>/seed_<s>/ (byte copies;
    a run copied before stays), each part's timings.json, results.md and relations.md to TO/timings_t<triplets>.json,
    TO/results_t<triplets>.md and TO/relations_t<triplets>.md; then TO/runs.csv is
    written from the copies (one row per run: arm,triplets,seed,cite_map,cite_ndcg,cocite_map,cocite_ndcg,avg).
    Give the flags and environment the experiment ran with (the encoder path is part of a run's folder name);
    RESULTS_DIR is the experiment's --output_dir, only read (it may be running: collect as often as you like).
    Prints TO/runs.csv.

    Example: BASE_MODEL_NAME_OR_PATH=/work/runs/pretrain/hepth_citeseer_mini SCINCL_RESULTS=/work/runs/40/results
        bash experiments/run.sh collect_runs hepth_powered docs/results/hepth/pretrained/powered
    """
    from scincl.eval.paired_runs import RELATIONS, collect_copies, paired_cells
    from scincl.pipeline.experiment_kinds import experiment_grid, load_experiments
    from scincl.pipeline.grid import row_runs

    cells, part_files, splits = [], [], set()
    for experiment in load_experiments(definition, changes):
        if experiment.kind != "paired":
            raise InputError(f"collect_runs takes experiments of kind paired, {definition} has {experiment.kind}")
        rep, grid, recipe, split = experiment_grid(experiment, results_dir, data_dir, create=False)  # only read
        splits.add(split)
        cells += paired_cells(row_runs(rep, grid, recipe, experiment.seeds, split), experiment.seeds)
        part = rep.out / grid.folder  # its wall times, the runner's tables and the triplet relations, per budget
        part_files += [(part / name, recipe.triplets) for name in (grid.timings, grid.name, RELATIONS)]
    if len(splits) != 1:
        raise InputError(f"{definition}: its parts score different splits ({', '.join(sorted(splits))})")
    return collect_copies(Path(to), cells, part_files, splits.pop())
