"""The experiment commands beyond one ``run_specter``: the k sweeps on the SciNCL plan (:func:`sweep`) and the
real-corpus experiments (:func:`reproduce`, :func:`run_experiment_definition`, :func:`collect_runs`:
:mod:`scincl.pipeline.experiment_kinds`).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from scincl.errors import InputError
from scincl.output_lock import writes
from scincl.pipeline.run_command import run_one, settings_from_flags
from scincl.settings.recipe import recipe_field
from scincl.settings.run import DEFAULT_DEMO_OUTPUT_DIR, parse_int_list
from scincl.settings.schema import derive_bands

logger = logging.getLogger(__name__)


@writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)
def sweep(output_dir: Optional[str] = None, k_pos: Sequence[int] = (), k_hard: Sequence[int] = (),
          **flags: Any) -> Dict[str, Any]:
    """k+ / k-hard sweeps (paper Figs. 2-3): one run_specter run per value, the other k fixed; plots metric vs k.

    Example: python cli_pipeline.py sweep runs/demo --k_pos 10,25,50 --k_hard 200,400,800
    Outputs OUTPUT_DIR/sweep/k_pos/<k+>/, OUTPUT_DIR/sweep/k_hard/<k->/ (each band n_{k-c+1} .. n_{k}, c its
    --*_count) and the plots in OUTPUT_DIR/comparison/, whose paths it prints. Other flags as in run_specter.
    """
    if not k_pos and not k_hard:
        raise InputError("give --k_pos and/or --k_hard values, e.g. --k_pos 10,25,100 --k_hard 500,1000,4000")
    first = settings_from_flags(output_dir, flags)
    shared = Path(first.output_dir)
    runs = []
    for family, values in (("k_pos", parse_int_list(k_pos, "k_pos")), ("k_hard", parse_int_list(k_hard, "k_hard"))):
        band = recipe_field(family)[:-len("_k_max")]  # k_pos: easy_positives
        for k in values:
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
        settings: the fields of scincl.settings.experiment.Experiment (--corpus, --seeds, --split, --values, ...)
            and of scincl.settings.recipe.Recipe (--triplets, the k+ and k-hard band ends, --learning_rate, ...;
            the former names --k_pos, --k_hard, --pooling, --batch_size, --epochs, --base_model too).
    """
    from scincl.pipeline.experiment_kinds import make_experiments, run_experiments

    experiments = make_experiments([{"kind": experiment}], settings, "reproduce")
    return run_experiments(experiments, output_dir, data_dir, workers, dry_run)


@writes("output_dir")
def run_experiment_definition(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                              workers: Optional[int] = None, dry_run: bool = False, **changes: Any) -> Optional[str]:
    """Run the experiments of experiments/<name>.py (or a path to such a module): its get_experiment() returns the
    fields of scincl.settings.experiment.Experiment (one dict, or a list run in order). Further flags change every
    experiment of the module, as in `reproduce`; --dry_run prints their plans and runs nothing.

    Example: python cli_pipeline.py run_experiment hepth_main --output_dir results
    """
    from scincl.pipeline.experiment_kinds import load_experiments, run_experiments

    return run_experiments(load_experiments(definition, changes), output_dir, data_dir, workers, dry_run)


@writes("to")
def collect_runs(definition: str, to: str, results_dir: str = "results", data_dir: str = "../shared/data",
                 **changes: Any) -> Path:
    """Copy the finished runs of a paired experiment (experiments/<name>.py) into a folder of the docs; prints
    TO/runs.csv.

    Each run's results.json, per_query.json and recipe.json go to TO/<arm id>/t<triplets>/seed_<s>/ (byte copies,
    earlier copies kept), each part's timings.json, results.md and relations.md to TO/<name>_t<triplets>.<ext>,
    then TO/runs.csv is written from the copies. Give the flags and environment the experiment ran with (the encoder
    path is part of a run's folder name); RESULTS_DIR, the experiment's --output_dir, is only read.

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
        cells += paired_cells(row_runs(rep, grid, experiment.seeds, split), experiment.seeds)
        part = rep.out / grid.folder  # its wall times, the runner's tables and the triplet relations, per budget
        part_files += [(part / name, recipe.triplets) for name in (grid.timings, grid.name, RELATIONS)]
    if len(splits) != 1:
        raise InputError(f"{definition}: its parts score different splits ({', '.join(sorted(splits))})")
    return collect_copies(Path(to), cells, part_files, splits.pop())
