"""Commands of `cli_pipeline.py`: train, pretrain, embed, evaluate, compare, the pipelines and the experiments,
and MP-BERT4CR's HIBERT pre-training, fine-tuning and evaluation (`pretrain_hierarchical`,
`finetune_citation_recommender`, `evaluate_citation_recommendation`: :mod:`scincl.citrec`).

:data:`COMMANDS` is the table: each command is a library function itself (same flags, defaults and docstring,
which `--help` shows), in a :class:`scincl.cli.Command` row where the command line adds to it: the flags of its
``**kwargs`` (the rows `--help_all` lists), the ones `--help` shows, older flag spellings, what it prints. The
pipelines' outputs are locked here (:func:`scincl.output_lock.writes`) until the plan's runner takes them.
"""
from __future__ import annotations

from importlib import import_module

from scincl.citrec.evaluate import evaluate_citation_recommendation
from scincl.citrec.finetune import finetune_citation_recommender
from scincl.citrec.pretrain import pretrain_hierarchical
from scincl.cli import Command
from scincl.cli.help import loss_flags, reproduce_flag_info, run_specter_flag_info, signature_flags, training_flags
from scincl.eval.compare import compare_results
from scincl.eval.evaluate import embed_papers as embed, results_table, run_evaluation as evaluate
from scincl.eval.scirepeval.evaluate import evaluate_scirepeval
from scincl.eval.scirepeval.report import results_markdown as scirepeval_table
from scincl.model.pretrain import PRETRAIN_TRAINING_DEFAULTS, pretrain
from scincl.model.train import train
from scincl.pipeline.experiment_commands import (collect_runs, reproduce, run_experiment_definition, run_summary,
                                                 sweep, sweep_summary)
from scincl.pipeline.scincl_plan import run_specter, run_specter_like
from scincl.output_lock import writes
from scincl.settings.run import DEFAULT_DEMO_OUTPUT_DIR


TRAINER = "every transformers.TrainingArguments field (--fp16, --save_steps, --max_steps, ...)"
RUN = ("--skip_<stage> / --override_<stage>, every other settings field, the miner's other flags, "
       + TRAINER + " and the original command's flags without effect")
# the flags a run usually sets: `run_specter --help` shows these, `--help_all` every one
RUN_MAIN = ("preset", "corpus_dir", "corpus_format", "scidocs_dir", "base_model_name_or_path", "graph_method",
            "easy_positives_k_max", "hard_negatives_k_max", "triples_per_query", "max_sequence_length",
            "num_train_epochs", "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
            "device", "workers", "seeds", "val_or_test_or_both", "dry_run", "stages")
EXPERIMENT_MAIN = ("output_dir", "data_dir", "workers", "corpus", "seeds", "split", "arms", "values", "variants",
                   "triplets", "easy_positives_k_max", "hard_negatives_k_max", "learning_rate",
                   "max_sequence_length", "base_model_name_or_path", "dry_run")


def _run(function, show):
    """A ``run_specter``-like row: writes OUTPUT_DIR (``demo_output`` without one), its library checks its settings."""
    return Command(writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)(function), flags=run_specter_flag_info,
                   main=RUN_MAIN, passes=RUN, checks_settings=True, show=show)


def _experiment(function, **options):
    """A ``reproduce``-like row: the experiment's and the recipe's fields as flags."""
    return Command(function, flags=reproduce_flag_info, main=EXPERIMENT_MAIN, passes="every other recipe field",
                   **options)


COMMANDS = {
    "train": Command(train, flags=lambda: training_flags() + loss_flags(), passes=TRAINER + " and the losses' options"),
    "pretrain": Command(pretrain, repeatable=("corpus_dir", "corpus_format"), show=str, passes=TRAINER,
                        flags=lambda: training_flags(defaults=PRETRAIN_TRAINING_DEFAULTS,
                                                     defaults_source="scincl/model/pretrain.py:PRETRAIN_TRAINING_DEFAULTS")),
    "embed": Command(embed, flags=lambda: signature_flags(import_module("scincl.model.embed").embed),  # loads torch
                     passes="every flag of scincl.model.embed.embed"),
    # the table of OUTPUT_DIR/results.md (results.json holds every number)
    "evaluate": Command(evaluate, aliases={"model_dir": "model_dirs", "classifier": "classifier_backend"},
                        show=results_table),
    "compare_results": compare_results,
    "evaluate_scirepeval": Command(evaluate_scirepeval, show=scirepeval_table),
    "run_specter": _run(run_specter, run_summary),
    "run_specter_like": _run(run_specter_like, run_summary),
    "sweep": _run(sweep, sweep_summary),
    "reproduce": _experiment(writes("output_dir")(reproduce),
                             doc_fills={"kinds": lambda: " | ".join(
                                 import_module("scincl.pipeline.experiment_kinds").KINDS)}),
    "run_experiment": _experiment(writes("output_dir")(run_experiment_definition)),
    "collect_runs": _experiment(writes("to")(collect_runs), show=str),  # TO/runs.csv
    "pretrain_hierarchical": pretrain_hierarchical,
    "finetune_citation_recommender": finetune_citation_recommender,
    "evaluate_citation_recommendation": evaluate_citation_recommendation}
