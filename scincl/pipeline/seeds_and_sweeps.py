"""``run_specter``: its flags -> checked :class:`~scincl.settings.run.RunSettings` -> one SciNCL plan, one
per seed (``--seeds``), or one per k+ / k-hard value (``sweep``).

``run_specter`` accepts the original SciNCL command verbatim. Each flag is one of:

- a :class:`RunSettings` field (``--graph_limit``, ``--hard_negatives_k_max``, ...): type-checked
  against the field's annotation, then range-checked by :func:`~scincl.pipeline.run_checks.check_run`;
- ``skip_<stage>`` / ``override_<stage>``: stage control (validated against the stage names);
- another miner flag (``medium_negatives_count``, ``random_sorted_sample_n``, ...): the triplet miner;
- a ``TrainingArguments`` field or a ``train`` option (``learning_rate``, ``fp16``, ``save_steps``):
  the training stage;
- a flag of the original code that has no effect here (``ann_trees``: Annoy only; ``ann_workers``:
  FAISS uses ``--workers`` threads): accepted and logged, so the README command runs as written.

Anything else is an :class:`InputError` naming the closest valid flag, never silently ignored.

- :func:`run_specter`: one experiment (all stages), or ``seeds=...`` -> one experiment per seed
  on the same corpus (``OUTPUT_DIR/seeds/seed_N``) and a mean ± std table (paper Table 1 reports
  the mean over ten seeds);
- :func:`sweep`: the k+ and k-hard sweeps of paper Figs. 2-3 (``OUTPUT_DIR/sweep/k_pos/<k+>``,
  ``OUTPUT_DIR/sweep/k_hard/<k->``) plotted by the evaluation's ``compare``;
- :func:`reproduce`, :func:`run_experiment_definition`: the real-corpus experiments of
  :mod:`scincl.pipeline.experiment_kinds` (``cli_pipeline.py reproduce`` / ``run_experiment``).

Experiments of one call share the demo corpus, citations, graph embeddings and the base-model
evaluation (``OUTPUT_DIR``); everything that depends on the seed or the sampling goes below.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set

from scincl.errors import InputError, unknown_flag_error
from scincl.pipeline.run_checks import check_run, check_types
from scincl.settings.run import (DEMO_DEFAULTS, RunSettings, SeedsArg, check_input_paths, parse_int_list, parse_seeds,
                                 resolve)
from scincl.settings.schema import derive_bands
from scincl.triples.miner import miner_option_names

logger = logging.getLogger(__name__)

def stage_names():
    """The SciNCL plan's stages (``--skip_<stage>`` / ``--override_<stage>``), imported when a run or a flag check
    needs them: the plan loads every stage's module, which ``import cli_pipeline`` does not need."""
    from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES

    return ALL_STAGE_NAMES


# Flags of the original run_specter that select nothing in this implementation (see module doc).
ACCEPTED_WITHOUT_EFFECT = {
    "ann_trees": "Annoy index setting; the FAISS backend has no trees",
    "ann_workers": "FAISS search threads follow --workers",
    "disable_specter_to_s2orc_mapping": "pass no --s2id_to_s2orc_input_path to use ids as they are",
    "cache_metadata": "metadata is streamed from the shards for the ids of the triples",
    "scidocs_cuda_device": "evaluation uses CUDA when available",
}


@dataclass
class RoutedFlags:
    """``run_specter``'s extra keyword arguments, sorted by the stage that takes them."""

    skip: Set[str] = field(default_factory=set)
    override: Set[str] = field(default_factory=set)
    miner: Dict[str, Any] = field(default_factory=dict)
    training: Dict[str, Any] = field(default_factory=dict)
    ignored: Dict[str, Any] = field(default_factory=dict)


def training_option_names() -> Set[str]:
    """``TrainingArguments`` fields plus the options of the training stage's ``train`` function."""
    import inspect

    from transformers import TrainingArguments

    from scincl.model.train import train

    names = {f.name for f in dataclasses.fields(TrainingArguments) if f.init}
    return names | {n for n, p in inspect.signature(train).parameters.items()
                    if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}


def route_flags(kwargs: Mapping[str, Any], stage_names: Iterable[str],
                reserved: Iterable[str] = ()) -> RoutedFlags:
    """Sort ``kwargs`` (see module docstring); unknown flags raise :class:`InputError`.

    ``reserved``: flags run_specter sets itself for training (e.g. ``output_dir``); passing them
    here would be ambiguous, so they are rejected with a hint.
    """
    stages = list(stage_names)
    routed = RoutedFlags()
    miner, training, reserved = miner_option_names(), training_option_names(), set(reserved)
    for name, value in kwargs.items():
        for prefix, target in (("skip_", routed.skip), ("override_", routed.override)):
            if name.startswith(prefix):
                stage = name[len(prefix):]
                if stage not in stages:
                    raise InputError(f"--{name}: unknown stage {stage!r} (stages: {', '.join(stages)})")
                if value:
                    target.add(stage)
                break
        else:
            if name in ACCEPTED_WITHOUT_EFFECT:
                logger.info("--%s %s: accepted for compatibility, no effect (%s)", name, value,
                            ACCEPTED_WITHOUT_EFFECT[name])
                routed.ignored[name] = value
            elif name in miner:
                routed.miner[name] = value
            elif name in reserved:
                raise InputError(f"--{name} is set by run_specter itself (its value follows OUTPUT_DIR and "
                                 f"the stage layout); run `cli_pipeline.py train` directly to choose it")
            elif name in training:
                routed.training[name] = value
            else:
                raise unknown_flag_error(name, "run_specter", run_specter_flag_names())
    return routed


def check_extra_flags(kwargs: Mapping[str, Any]) -> RoutedFlags:
    """Validate extra flags against the full stage list (used by tests rendering sbin/ scripts)."""
    return route_flags({k: v for k, v in kwargs.items() if k not in setting_names()}, stage_names())


# run_specter decides these training paths itself (they follow OUTPUT_DIR)
RESERVED_TRAINING_FLAGS = {"output_dir", "train_triples_path", "train_metadata_path", "logging_dir", "run_name"}


def setting_names() -> Set[str]:
    """The :class:`RunSettings` fields a user sets by flag (the routed ones are filled here)."""
    return {f.name for f in dataclasses.fields(RunSettings)} - {"miner_options", "training_options", "skip",
                                                                 "override", "demo"}


def run_specter_flag_names() -> Set[str]:
    """Every flag ``run_specter`` takes (for the front end's check before anything runs): its OUTPUT_DIR and
    the flags ``--help`` lists (:func:`run_specter_flag_info`)."""
    return {"output_dir"} | {row.name for row in run_specter_flag_info()}


def run_specter_flag_info() -> list:
    """``run_specter --help``: the flags beyond its OUTPUT_DIR: the
    :class:`~scincl.settings.run.RunSettings` fields with the paper's and the demo's defaults, stage
    control, the miner's and the trainer's flags and those accepted without effect."""
    from scincl.cli.help import FlagInfo, dataclass_flags, miner_flags, signature_flags, training_flags
    from scincl.model.train import train

    settings, reserved = setting_names(), RESERVED_TRAINING_FLAGS
    rows = dataclass_flags(RunSettings, exclude={f.name for f in dataclasses.fields(RunSettings)} - settings
                           | {"output_dir"})
    rows += [FlagInfo(f"{prefix}_{stage}", "bool", "False", "scincl/pipeline/scincl_plan.py:ALL_STAGE_NAMES",
                      f"{'skip' if prefix == 'skip' else 'rebuild'} the {stage} stage")
             for prefix in ("skip", "override") for stage in stage_names()]
    rows += [r for r in miner_flags() if r.name not in settings]
    demo_training = DEMO_DEFAULTS["training_options"]
    for row in training_flags(exclude=reserved):
        if row.name in demo_training:
            row.default += f" (demo {demo_training[row.name]!r}: scincl/settings/run.py:RunSettings.training_options)"
        rows.append(row)
    rows += [r for r in signature_flags(train) if r.name in training_option_names() - reserved
             and r.name not in settings]
    rows += [FlagInfo(name, "any", "None", "scincl/pipeline/seeds_and_sweeps.py:ACCEPTED_WITHOUT_EFFECT",
                      f"accepted for the original command, no effect: {why}")
             for name, why in ACCEPTED_WITHOUT_EFFECT.items()]
    return rows + [FlagInfo("seeds", "str", "None", "scincl/settings/run.py:parse_seeds",
                            "e.g. 0..9 or 0,1,2: one run per seed on the same corpus")]


def settings_from_flags(output_dir: Optional[str], flags: Mapping[str, Any]):
    """:class:`RunSettings` from run_specter's flags: routed, type- and range-checked, defaults resolved."""
    names, flags = setting_names(), check_types(dict(flags))
    named = {k: v for k, v in flags.items() if k in names and k != "output_dir"}
    routed = route_flags({k: v for k, v in flags.items() if k not in names}, stage_names(),
                         reserved=RESERVED_TRAINING_FLAGS)
    settings = RunSettings(output_dir=output_dir, **named, miner_options=routed.miner,
                           training_options=routed.training, skip=sorted(routed.skip),
                           override=sorted(routed.override))
    return check_run(resolve(settings))


def _run_one(output_dir: Optional[str], flags: Mapping[str, Any], shared_dir: Optional[Path] = None) -> Dict[str, Any]:
    from scincl.pipeline.scincl_plan import SciNCLPlan

    settings = check_input_paths(settings_from_flags(output_dir, flags))
    pipeline = SciNCLPlan(settings, shared_dir=shared_dir)
    arguments = {"output_dir": output_dir, **flags}
    return pipeline.run(arguments)


def run_specter(output_dir: Optional[str] = None, seeds: SeedsArg = None, **flags: Any) -> Dict[str, Any]:
    """The whole SciNCL pipeline; with no data arguments, the embedded demo on the bundled corpus.

    Stages, in order (each reuses its output when it exists, logged; --override_<stage> rebuilds,
    --skip_<stage> skips): demo, scidocs_ids, citations, graph (citations -> BigGraph, only when
    --graph_embeddings_path is not given), queries, ann, triples, metadata, train, eval_base, eval,
    compare. Every output dir gets a manifest.json (arguments, input hashes, versions, git commit,
    seconds per stage). Prints the SciDocs table: base encoder vs SciNCL-tuned.

    Demo (make demo):  python cli_pipeline.py run_specter
    Paper (original README command, runs as written):
        python cli_pipeline.py run_specter ${OUTPUT_DIR} --auto_output_dir --scidocs_dir ${SCIDOCS_DIR} \\
            --s2orc_metadata_dir ${S2ORC_METADATA_DIR} --specter_triples_path ${SPECTER_DIR}/train_triples.csv \\
            --graph_paper_ids_path ${S2ORC_PAPER_IDS} --graph_embeddings_path ${S2ORC_EMBEDDINGS} \\
            --s2id_to_s2orc_input_path ${SPECTER_DIR}/s2id_to_s2orc_paper_id.json --graph_limit specter \\
            --ann_metric inner_product --ann_workers 1 --ann_backend faiss --ann_index_path ${ANN_INDEX_PATH} \\
            --val_or_test_or_both both --eval_steps 1 --save_steps 2 --triples_per_query 5 \\
            --workers ${WORKERS} --gzip --base_model_name_or_path ${BASE_MODEL} \\
            --easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 --easy_positives_k_max 25 \\
            --easy_negatives_count 3 --easy_negatives_strategy random_without_knn \\
            --hard_negatives_count 2 --hard_negatives_strategy knn --hard_negatives_k_min 3998 --hard_negatives_k_max 4000

    Flags: every field of scincl/settings/run.py:RunSettings, each with its help, its default (the
    paper's / the demo's where they differ), the source of that default and its range (`run_specter --help` lists
    them from there); a band's *_k_min not given is its *_k_max minus its count (--hard_negatives_k_max 500
    samples 498-500). The miner's other flags (medium_*, *_range, k_means_clusters ...) and every
    TrainingArguments flag (--learning_rate, --num_train_epochs, --fp16, ...) pass through.
    --seeds 0..9 or 0,1,2: one run per seed on the same corpus (OUTPUT_DIR/seeds/seed_N), mean ± std.

    Returns {"table": markdown or None, "runs": [per-run result dicts], "output_dir": Path}; the command
    prints :func:`run_summary` of it.
    """
    seed_list = parse_seeds(seeds)
    if not seed_list:
        result = _run_one(output_dir, flags)
        return {"table": result["table"], "runs": [result], "output_dir": result["paths"].run}
    flags = dict(flags)
    if flags.pop("seed", None) not in (None, 0):  # 0 is the CLI default
        raise InputError("give either --seed or --seeds")
    first = settings_from_flags(output_dir, flags)
    shared = Path(first.output_dir)
    runs = []
    # the same corpus for every seed (default corpus seed 0): only sampling and training randomness varies
    corpus_seed = flags.get("corpus_seed") if flags.get("corpus_seed") is not None else 0
    for seed in seed_list:
        logger.info("=== seed %d (%d of %d) ===", seed, len(runs) + 1, len(seed_list))
        per_seed = {**flags, "seed": seed, "corpus_seed": corpus_seed, "auto_output_dir": False}
        runs.append(_run_one(str(shared / "seeds" / f"seed_{seed}"), per_seed, shared_dir=shared))
    table = _compare_seeds(runs, shared, first)
    return {"table": table, "runs": runs, "output_dir": shared}


def run_specter_like(output_dir: Optional[str] = None, **flags: Any) -> Dict[str, Any]:
    """run_specter with SPECTER-like triplets (citations) on the same corpus and queries as SciNCL.

    Same flags as run_specter (this sets --triples_source specter_like): positives are cited papers,
    hard negatives citations of citations, easy negatives random (SPECTER's sampling).
    """
    if flags.get("triples_source", "specter_like") != "specter_like":
        raise InputError(f"run_specter_like samples --triples_source specter_like, not {flags['triples_source']!r} "
                         "(run_specter takes --triples_source)")
    return run_specter(output_dir, **{**flags, "triples_source": "specter_like"})


def _compare_seeds(runs: List[Dict[str, Any]], shared: Path, settings: RunSettings) -> Optional[str]:
    """Base encoder vs mean ± std over the seeds (when evaluated)."""
    from scincl.eval.compare import compare

    paths = runs[0]["paths"]
    if not (paths.eval / "results.json").exists():
        return None
    rows, names = [], []
    if (paths.base_eval / "results.json").exists():
        rows.append(paths.base_eval)
        names.append("base encoder")
    rows.append(shared / "seeds")
    names.append(f"SciNCL ({len(runs)} seeds)" if settings.triples_source == "knn" else f"SPECTER-like ({len(runs)} seeds)")
    compare(rows, shared / "comparison", names=names, split=settings.split)
    return (shared / "comparison" / "comparison.md").read_text()


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
            runs.append(_run_one(str(shared / "sweep" / family / str(k)), per_run, shared_dir=shared))
    from scincl.eval.compare import compare

    summary = compare([], shared / "comparison", sweep_dir=shared / "sweep", split=first.split)
    return {"runs": runs, "plots": summary.get("files", []), "output_dir": shared}


def reproduce(experiment: str, output_dir: str = "results", data_dir: str = "../shared/data",
              workers: Optional[int] = None, **settings: Any) -> None:
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


def run_experiment_definition(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                              workers: Optional[int] = None, **changes: Any) -> None:
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


def format_stage_times(result: Dict[str, Any]) -> str:
    """One line per stage: status and seconds (for the end of a run's output)."""
    lines = []
    stages = result["manifest"]["stages"]
    for name in result["manifest"].get("stage_order", list(stages)):
        entry = stages[name]
        lines.append(f"  {name:<12} {entry['status']:<8} {entry.get('seconds', 0.0):8.1f} s")
    return "\n".join(lines)


def run_summary(result: Dict[str, Any]) -> str:
    """What ``run_specter`` prints at the end: the output dir, the first run's stage times, the table."""
    text = f"\nOutputs: {result['output_dir']}"
    for one in result["runs"][:1]:
        text += "\nStage times (first run):\n" + format_stage_times(one)
    return text + (f"\n\n{result['table']}" if result["table"] else "")


def sweep_summary(result: Dict[str, Any]) -> str:
    """What ``sweep`` prints at the end: the plots' paths, one a line."""
    return "\n".join(str(p) for p in result["plots"])
