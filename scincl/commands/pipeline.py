"""Commands of `cli_pipeline.py`: train, pretrain, embed, evaluate, compare, the pipelines and the experiments,
and MP-BERT4CR's HIBERT pre-training, fine-tuning and evaluation (`pretrain_hierarchical`,
`finetune_citation_recommender`, `evaluate_citation_recommendation`: :mod:`scincl.citrec`).

:data:`COMMANDS` is the table: each command is a library function itself (same flags, defaults and docstring,
which `--help` shows); the marks below say which extra flags a ``**kwargs`` command takes (the rows `--help`
lists), which older flag spellings it accepts, which output it writes by default and what the command line
prints.
"""
from __future__ import annotations

from scincl.citrec.evaluate import evaluate_citation_recommendation
from scincl.citrec.finetune import finetune_citation_recommender
from scincl.citrec.pretrain import pretrain_hierarchical
from scincl.cli import accepts_flags, flag_aliases, repeatable_flags
from scincl.cli.flags import default_outputs, fills_doc, settings_checked_by_library, shows
from scincl.cli.help import loss_flags, signature_flags, training_flags
from scincl.cli.pipeline_help import reproduce_flag_info, run_specter_flag_info
from scincl.eval.compare import compare_results
from scincl.eval.evaluate import embed_papers as embed, results_table, run_evaluation as evaluate
from scincl.eval.scirepeval.evaluate import evaluate_scirepeval
from scincl.eval.scirepeval.report import results_markdown as scirepeval_table
from scincl.model.pretrain import PRETRAIN_TRAINING_DEFAULTS, pretrain
from scincl.model.train import train
from scincl.pipeline.experiment_commands import (collect_runs, reproduce, run_experiment_definition, run_summary,
                                                 sweep, sweep_summary)
from scincl.pipeline.scincl_plan import run_specter, run_specter_like
from scincl.settings.run import DEFAULT_DEMO_OUTPUT_DIR


def _experiment_kinds():
    """:mod:`scincl.pipeline.experiment_kinds`, imported when a command needs it (it loads the real-corpus stages)."""
    from scincl.pipeline import experiment_kinds

    return experiment_kinds


def _encoder():
    """:func:`scincl.model.embed.embed`, imported when a command needs it (it loads torch)."""
    from scincl.model.embed import embed as embed_with_encoder

    return embed_with_encoder


# train's **training_args: the TrainingArguments fields (output_dir is its OUTPUT_DIR), with the defaults it applies,
# and the options the losses declare
accepts_flags(lambda: training_flags(exclude={"output_dir"}) + loss_flags())(train)
repeatable_flags("corpus_dir", "corpus_format")(pretrain)
accepts_flags(lambda: training_flags(exclude={"output_dir"}, defaults=PRETRAIN_TRAINING_DEFAULTS,
                                     defaults_source="scincl/model/pretrain.py:PRETRAIN_TRAINING_DEFAULTS"))(pretrain)
shows(str)(pretrain)  # OUTPUT_DIR
accepts_flags(lambda: signature_flags(_encoder()))(embed)
flag_aliases(model_dir="model_dirs", classifier="classifier_backend")(evaluate)
shows(results_table)(evaluate)  # the table of OUTPUT_DIR/results.md (results.json holds every number)
shows(scirepeval_table)(evaluate_scirepeval)  # the table of OUTPUT_DIR/results.md
for command in (run_specter, run_specter_like, sweep):
    settings_checked_by_library(command)
    default_outputs(output_dir=DEFAULT_DEMO_OUTPUT_DIR)(command)
    shows(sweep_summary if command is sweep else run_summary)(command)
    accepts_flags(run_specter_flag_info)(command)
for command in (reproduce, run_experiment_definition, collect_runs):
    accepts_flags(reproduce_flag_info)(command)
shows(str)(collect_runs)  # TO/runs.csv
fills_doc(kinds=lambda: " | ".join(_experiment_kinds().KINDS))(reproduce)

COMMANDS = {"train": train, "pretrain": pretrain, "embed": embed, "evaluate": evaluate, "compare_results": compare_results,
            "evaluate_scirepeval": evaluate_scirepeval,
            "run_specter": run_specter, "run_specter_like": run_specter_like, "sweep": sweep, "reproduce": reproduce,
            "run_experiment": run_experiment_definition, "collect_runs": collect_runs,
            "pretrain_hierarchical": pretrain_hierarchical,
            "finetune_citation_recommender": finetune_citation_recommender,
            "evaluate_citation_recommendation": evaluate_citation_recommendation}
