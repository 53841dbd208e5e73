"""Commands of `cli_pipeline.py`: train, embed, evaluate, compare, and the pipelines and experiments (`--help` shows each docstring).

:data:`COMMANDS` is the table. `train`, `embed`, `evaluate`, `run_specter`, `run_specter_like` and `sweep` are
library functions themselves (same flags, defaults and docstring): :func:`scincl.model.train.train` (its
``**training_args`` are the ``transformers.TrainingArguments`` fields), :func:`scincl.eval.evaluate.embed_papers`,
:func:`scincl.eval.evaluate.run_evaluation` and :mod:`scincl.pipeline.seeds_and_sweeps`; the marks below
say which extra flags each takes, which output it writes by default and what the command line prints.
"""
from __future__ import annotations

from scincl.cli import accepts_flags, command_flags, flag_aliases, repeatable_flags
from scincl.cli.help import signature_flags
from scincl.eval.evaluate import embed_papers as embed, run_evaluation as evaluate
from scincl.cli.flags import default_outputs, fills_doc, settings_checked_by_library, shows
from scincl.model.train import train
from scincl.pipeline.seeds_and_sweeps import (run_specter, run_specter_flag_info, run_specter_flag_names,
                                              run_specter_like, run_summary, sweep, sweep_summary)
from scincl.pipeline.settings import DEFAULT_DEMO_OUTPUT_DIR


@repeatable_flags("corpus_dir", "corpus_format")
@accepts_flags(lambda: _training_flag_names(), lambda: _pretrain_flag_info())
def pretrain(corpus_dir=None, output_dir: str = None, corpus_format=None, excluded_paper_ids: str = None,
             vocab_size: int = None, size: str = None, max_sequence_length: int = None,
             mlm_probability: float = None, whole_word_masking: bool = False, val_ratio: float = None,
             workers: int = None, override: bool = False, **training_args) -> str:
    """Pre-train a BERT from random initialisation by masked-language modelling on corpora's titles + abstracts; prints OUTPUT_DIR.

    SciBERT's recipe at a size this machine affords: the text is `title [SEP] abstract` of every
    paper (as in fine-tuning) cut into windows of --max_sequence_length tokens; an uncased WordPiece
    vocabulary of --vocab_size is learned from it (tokenizers); BertForMaskedLM from a --size preset
    (tiny 2x128, mini 4x256, small 4x512: the BERT miniatures; base 12x768 = SciBERT, for a GPU);
    DataCollatorForLanguageModeling masks --mlm_probability of the tokens (whole words with
    --whole_word_masking); the transformers Trainer trains it (bf16 where native, tqdm, checkpoints
    every --save_steps, --report_to wandb when asked). A --val_ratio share of the papers is held out
    for an MLM loss every --eval_steps. Every transformers.TrainingArguments flag passes through
    (defaults: scincl.model.pretrain.PRETRAIN_TRAINING_DEFAULTS: lr 5e-4, batch 32, 1 epoch, weight
    decay 0.01, 5 % warm-up, linear decay; --max_steps N stops earlier).

    OUTPUT_DIR loads with AutoModel/AutoTokenizer and is a --base_model_name_or_path of `train`
    and `run_specter` and of `reproduce` (BASE_MODEL_NAME_OR_PATH= of experiments/run.sh). It holds
    run_fingerprint.json (corpora and excluded ids fingerprinted, every setting): rerun with the same
    ones, a finished run is reused and an interrupted one resumes from its newest complete
    checkpoint; anything else is refused unless --override. pretrain_log.jsonl and mlm_loss.png:
    loss, held-out loss, tokens, wall seconds and tokens/s; pretrain_args.json (written last): cost
    and counts.

    Example: python cli_pipeline.py pretrain --corpus_dir ../shared/data/hepth/s2orc/metadata
        --corpus_dir ../shared/data/citeseer/s2orc/metadata --corpus_format s2orc
        --excluded_paper_ids ../shared/data/hepth/scidocs_paper_ids.json --output_dir runs/pretrain
        --size mini --vocab_size 16000 --max_steps 3000

    Args:
        corpus_dir: a corpus folder (repeat the flag, or comma-separate, for several corpora).
        output_dir: the model dir (checkpoints in OUTPUT_DIR/checkpoint-N).
        corpus_format: s2orc | s2ag | openalex | plain (default: detected); one for all corpora or one each.
        excluded_paper_ids: JSON list of paper ids whose text is kept out (e.g. SciDocs query papers).
        vocab_size: WordPiece vocabulary size (31090: SciBERT's SciVocab).
        size: tiny | mini | small | base (mini).
        max_sequence_length: tokens per window (128: BERT's and SciBERT's first phase).
        mlm_probability: share of tokens masked (0.15, BERT).
        whole_word_masking: mask all pieces of a word together.
        val_ratio: share of papers held out for the MLM loss (0.01; 0: none).
        Unset flags take the defaults of scincl.model.pretrain.
        workers: processes reading the corpora (default: all CPUs).
        override: start over even if OUTPUT_DIR holds this run (or another).
    """
    from scincl.eval.evaluate import as_list
    from scincl.model.pretrain import pretrain as pretrain_encoder
    from scincl.corpus.outputs import worker_count

    if not output_dir:
        from scincl.errors import InputError

        raise InputError("give --output_dir")
    given = {name: value for name, value in (("vocab_size", vocab_size), ("size", size),
                                              ("max_sequence_length", max_sequence_length),
                                              ("mlm_probability", mlm_probability), ("val_ratio", val_ratio))
             if value is not None}
    return str(pretrain_encoder(
        as_list(corpus_dir), output_dir, corpus_formats=[f or None for f in as_list(corpus_format)],
        excluded_paper_ids=excluded_paper_ids, whole_word_masking=whole_word_masking,
        workers=worker_count(workers), override=override, **given, **training_args))


def compare_results(*results: str, output_dir: str = "comparison", names=None, split: str = "test",
                    sweep_dir: str = None, metric: str = "avg") -> None:
    """Put evaluation runs side by side (OUTPUT_DIR/comparison.md, .json) and plot sweeps (PNG).

    Each RESULTS argument is a results.json of `evaluate`, a directory holding one, or a directory
    of per-seed sub-directories holding one (shown as mean ± std), e.g.
    `compare_results runs/base runs/specter runs/scincl --names base,SPECTER-like,SciNCL`.

    Args:
        results: results.json files or directories (one table row each).
        output_dir: where comparison.md, comparison.json and the plots go.
        names: row names, comma-separated (default: directory names).
        split: val | test.
        sweep_dir: sweep layout SWEEP/k_pos/<k+>/, SWEEP/k_hard/<k-hard>/ (results.json in each, or one
            sub-directory per seed) and SWEEP/margin/<margin>/collisions.json ({"collisions": N}):
            plots metric vs k+ and vs k-hard (paper Figs. 2-3) and collisions vs margin (Fig. 5).
        metric: what the sweep plots show: avg (the table's Avg.) or task/metric, e.g. cite/map.
    """
    from scincl.eval.compare import compare
    from scincl.eval.evaluate import as_list

    compare(list(results), output_dir, names=as_list(names) or None, split=split, sweep_dir=sweep_dir,
            metric=metric)


@fills_doc(kinds=lambda: " | ".join(_experiment_kinds().KINDS))
@accepts_flags(lambda: _experiment_kinds().reproduce_flag_names(), lambda: _experiment_kinds().reproduce_flag_info())
def reproduce(experiment: str, output_dir: str = "results", data_dir: str = "../shared/data", workers: int = None,
              **settings) -> None:
    """Real-corpus experiments of docs/results.md (hep-th, CiteSeer from ../shared/data), MiniLM encoder
    unless --base_model_name_or_path names another.

    EXPERIMENT: one of {kinds} (scincl.pipeline.experiment_kinds.KINDS): main (base vs SPECTER-like vs
    SciNCL vs continuous co-citation, mean ± std over --seeds, test queries), tuning (--variants
    pooling=cls,learning_rate=2e-5,... on val), k_pos / k_hard (SciNCL sweeps over --values, val), losses
    (triplet, infonce, cosent, angle on SciNCL triplets, val), collisions (vs margin, --values = k-hard
    grid), graph (link prediction 64/128-d dot vs cos + graph embeddings alone as a retriever), budget
    (SPECTER-like vs SciNCL at each triplet budget of --values, e.g. 1000,2500,6840).
    Shared stage outputs (citations w/o the SciDocs queries, co-citations, BigGraph, FAISS, query
    samples, base-encoder evaluation) live in OUTPUT_DIR/<corpus>/shared and are reused; each arm x
    seed has its own triplets, model and results. Tables: OUTPUT_DIR/<corpus>/<experiment...>/results.md.
    Every step runs through the stage runner of run_specter (manifest.json in each output dir).
    The same experiments as data: experiments/*.py, run with `run_experiment`.

    Example: python cli_pipeline.py reproduce main --corpus hepth --output_dir results --seeds 0,1,2
    Args:
        experiment: {kinds}.
        settings: the fields of scincl.pipeline.experiment_kinds.Experiment (--corpus hepth|citeseer, --seeds,
            --split, --values, --variants, --arms, --losses, ...) and of the recipe
            (scincl.pipeline.real_corpus.Recipe: --triplets, --easy_positives_k_max, --hard_negatives_k_max,
            --pooling_strategy, --learning_rate, ...), each with its default defined there and listed below
            (the recipe's former names --k_pos, --k_hard, --pooling, --batch_size, --epochs, --base_model too).
    """
    from scincl.pipeline.experiment_kinds import experiment_from_flags, run_experiment as run

    run(experiment_from_flags(experiment, **settings), output_dir=output_dir, data_dir=data_dir, workers=workers)


@accepts_flags(lambda: _experiment_kinds().reproduce_flag_names(), lambda: _experiment_kinds().reproduce_flag_info())
def run_experiment(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                   workers: int = None, **changes) -> None:
    """Run an experiment defined as data: experiments/<name>.py (or a path to such a module).

    The module's get_experiment() returns the experiment's kind, corpus, arms, seeds, split,
    recipe changes and sweep values (one dict, or a list run in order); see experiments/ and
    scincl.pipeline.experiment_kinds.Experiment for the fields and their defaults. Further flags
    change every experiment of the module: the same settings as `reproduce` (e.g. --seeds 0
    --k_hard 2000).

    Example: python cli_pipeline.py run_experiment hepth_main --output_dir results
    """
    from scincl.pipeline.experiment_kinds import load_experiments, run_experiment as run

    from scincl.pipeline.real_corpus import corpus_spec

    experiments = load_experiments(definition, changes)
    for experiment in experiments:  # every experiment's corpus checked before the first one runs
        corpus_spec(experiment.corpus, data_dir)
    for experiment in experiments:
        run(experiment, output_dir=output_dir, data_dir=data_dir, workers=workers)


def _training_flag_names() -> set:
    """``train``'s **training_args: the ``transformers.TrainingArguments`` fields (its output_dir is OUTPUT_DIR)."""
    import dataclasses

    from transformers import TrainingArguments

    return {f.name for f in dataclasses.fields(TrainingArguments) if f.init} - {"output_dir"}


def _training_flag_info() -> list:
    """``train --help``: the TrainingArguments fields with the defaults train applies (SPECTER's set-up)."""
    from scincl.cli.help import training_flags

    return training_flags(exclude={"output_dir"})


def _pretrain_flag_info() -> list:
    """``pretrain --help``: the TrainingArguments fields with pretrain's defaults (scincl/model/pretrain.py)."""
    from scincl.cli.help import training_flags
    from scincl.model.pretrain import PRETRAIN_TRAINING_DEFAULTS

    return training_flags(exclude={"output_dir"}, defaults=PRETRAIN_TRAINING_DEFAULTS,
                          defaults_source="scincl/model/pretrain.py:PRETRAIN_TRAINING_DEFAULTS")


def _experiment_kinds():
    """The experiment kinds module (imported when a command needs it: it loads the real-corpus stages)."""
    from scincl.pipeline import experiment_kinds

    return experiment_kinds


def _encoder():
    """:func:`scincl.model.embed.embed` (imported when a command needs it: it loads torch)."""
    from scincl.model.embed import embed as embed_with_encoder

    return embed_with_encoder


accepts_flags(_training_flag_names, _training_flag_info)(train)
accepts_flags(lambda: command_flags(_encoder()), lambda: signature_flags(_encoder()))(embed)
flag_aliases(model_dir="model_dirs", classifier="classifier_backend")(evaluate)
shows(lambda results: None)(evaluate)  # the results are in OUTPUT_DIR/results.{json,md}
for command in (run_specter, run_specter_like, sweep):
    settings_checked_by_library(command)
    default_outputs(output_dir=DEFAULT_DEMO_OUTPUT_DIR)(command)
    shows(sweep_summary if command is sweep else run_summary)(command)
    accepts_flags(run_specter_flag_names, run_specter_flag_info)(command)

COMMANDS = {"train": train, "pretrain": pretrain, "embed": embed, "evaluate": evaluate, "compare_results": compare_results,
            "run_specter": run_specter, "run_specter_like": run_specter_like, "sweep": sweep, "reproduce": reproduce,
            "run_experiment": run_experiment}
