"""Commands of `cli_pipeline.py`: train, pretrain, embed, evaluate, compare, the pipelines, the experiments and
MP-BERT4CR's (:mod:`scincl.citrec`); what `run_specter` prints at its end (:func:`run_summary`)."""
from __future__ import annotations

from importlib import import_module

from scincl.citrec.evaluate import evaluate_citation_recommendation
from scincl.citrec.finetune import finetune_citation_recommender
from scincl.citrec.pretrain import pretrain_hierarchical
from scincl.cli import Command, flag_rows, loss_flags, reproduce_flag_info, run_specter_flag_info, training_flags
from scincl.eval.compare import compare_results
from scincl.eval.evaluate import embed_papers as embed, results_table, run_evaluation as evaluate
from scincl.eval.scirepeval.evaluate import evaluate_scirepeval
from scincl.eval.scirepeval.report import results_markdown as scirepeval_table
from scincl.model.pretrain import pretrain
from scincl.model.train import train
from scincl.pipeline.experiment_kinds import KINDS, collect_runs, reproduce, run_experiment_definition
from scincl.pipeline.scincl_plan import run_specter, run_specter_like, sweep
from scincl.settings.recipe import RECIPE_FIELDS

TRAINER = "every transformers.TrainingArguments field (--fp16, --save_steps, --max_steps, ...)"
# the flags a run usually sets: `run_specter --help` shows these, `--help_all` every one
RUN_MAIN = ("preset", "corpus_dir", "corpus_format", "scidocs_dir", "base_model_name_or_path", "graph_method",
            "easy_positives_k_max", "hard_negatives_k_max", "triples_per_query", "max_sequence_length",
            "num_train_epochs", "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
            "device", "workers", "seeds", "val_or_test_or_both", "dry_run", "stages")
EXPERIMENT_MAIN = ("output_dir", "data_dir", "workers", "corpus", "seeds", "split", "arms", "values", "variants",
                   "triplets", "easy_positives_k_max", "hard_negatives_k_max", "learning_rate",
                   "max_sequence_length", "base_model_name_or_path", "dry_run")


def run_summary(result: dict) -> str:
    """What ``run_specter`` prints at its end: the output dir, each run's model folder, the first run's stage times
    (their statuses say what was reused) and the table; with ``--dry_run``, each run's plan."""
    runs = result["runs"]
    if runs[0].get("dry_run"):  # every run of a --dry_run is one
        return "\n\n".join(one["plan"] for one in runs) + "\n(--dry_run: nothing was run)"
    stages = runs[0]["manifest"]["stages"]
    models = [one["paths"].model for one in runs if one["paths"].model.is_dir()]
    return "\n".join([f"\nOutputs: {result['output_dir']}", *(f"Model: {model}" for model in models),
                      "Stage times" + (f" (the first of {len(runs)} runs)" if len(runs) > 1 else "") + ":",
                      *(f"  {name:<12} {stages[name]['status']:<8} {stages[name].get('seconds', 0.0):8.1f} s"
                        for name in runs[0]["manifest"]["stage_order"])]) + (
        f"\n\n{result['table']}" if result["table"] else "")


# a run_specter-like row: its library converts and checks its settings
RUN_ROW = dict(flags=run_specter_flag_info, main=RUN_MAIN, library_checks=True, passes=(
    f"--skip_<stage> / --override_<stage>, every other settings field, the miner's other flags, {TRAINER} and the "
    "original command's flags without effect"))
# a reproduce-like row: the experiment's and the recipe's fields (the recipe's checked when the library builds it)
EXPERIMENT_ROW = dict(flags=reproduce_flag_info, main=EXPERIMENT_MAIN, passes="every other recipe field",
                      library_checks=RECIPE_FIELDS)

COMMANDS = {
    "train": Command(train, flags=lambda: training_flags() + loss_flags(), passes=TRAINER + " and the losses' options"),
    "pretrain": Command(pretrain, repeatable=("corpus_dir", "corpus_format"), passes=TRAINER,
                        flags=lambda: training_flags("scincl.model.pretrain", "PRETRAIN_TRAINING_DEFAULTS")),
    "embed": Command(embed, flags=lambda: flag_rows(import_module("scincl.model.embed").embed),  # loads torch
                     passes="every flag of scincl.model.embed.embed"),
    # the table of OUTPUT_DIR/results.md (results.json holds every number)
    "evaluate": Command(evaluate, aliases={"model_dir": "model_dirs", "classifier": "classifier_backend"},
                        show=results_table),
    "compare_results": compare_results,
    "evaluate_scirepeval": Command(evaluate_scirepeval, show=scirepeval_table),
    "run_specter": Command(run_specter, show=run_summary, **RUN_ROW),
    "run_specter_like": Command(run_specter_like, show=run_summary, **RUN_ROW),
    "sweep": Command(sweep, show=lambda result: "\n".join(map(str, result["plots"])),  # the plots' paths; one seed
                     **{**RUN_ROW, "flags": lambda: [row for row in run_specter_flag_info() if row.name != "seeds"]}),
    "reproduce": Command(reproduce, doc=reproduce.__doc__.replace("{kinds}", " | ".join(KINDS)), **EXPERIMENT_ROW),
    "run_experiment": Command(run_experiment_definition, **EXPERIMENT_ROW),
    "collect_runs": Command(collect_runs, **EXPERIMENT_ROW),  # prints TO/runs.csv
    "pretrain_hierarchical": pretrain_hierarchical,
    "finetune_citation_recommender": finetune_citation_recommender,
    "evaluate_citation_recommendation": evaluate_citation_recommendation}
