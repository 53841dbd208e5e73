"""``run_specter``, ``run_specter_like`` and ``sweep``: flags -> checked :class:`~scincl.settings.run.RunSettings` ->
a :class:`~scincl.pipeline.scincl_plan.SciNCLPlan`, run once, per seed (``--seeds``) or per k (``sweep``)."""
from __future__ import annotations

import dataclasses
import inspect
import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.corpus import check_format
from scincl.errors import InputError, unknown_flag_error
from scincl.eval.compare import compare, compare_with_base
from scincl.graph.embedders import EMBEDDERS
from scincl.graph.embedders.settings import parse_settings
from scincl.model.device import check_gpu_usable
from scincl.output_lock import writes
from scincl.pipeline.scincl_plan import ALL_STAGE_NAMES, SciNCLPlan
from scincl.settings.recipe import recipe_field
from scincl.settings.run import (DEFAULT_DEMO_OUTPUT_DIR, FIELDS, RunSettings, SeedsArg, check_input_paths,
                                 parse_int_list, parse_seeds, resolve)
from scincl.settings.spec import MinerSpec, section_leaves
from scincl.settings.values import check_value
from scincl.triples.sources import METHOD_NAMES, SPECTER_LIKE

logger = logging.getLogger(__name__)

# Flags of the original run_specter that select nothing in this implementation.
ACCEPTED_WITHOUT_EFFECT = {
    "ann_trees": "Annoy index setting; the FAISS backend has no trees",
    "ann_workers": "FAISS search threads follow --workers",
    "disable_specter_to_s2orc_mapping": "pass no --s2id_to_s2orc_input_path to use ids as they are",
    "cache_metadata": "metadata is streamed from the shards for the ids of the triples",
    "scidocs_cuda_device": "evaluation uses CUDA when available",
}
# run_specter decides these training paths itself (they follow OUTPUT_DIR)
RESERVED_TRAINING_FLAGS = {"output_dir", "train_triples_path", "train_metadata_path", "logging_dir", "run_name"}
ROUTED = ("miner_options", "training_options", "skip", "override", "output_dir", "demo")  # fields no flag names


def run_specter_flag_groups() -> Dict[str, str]:
    """Every flag of ``run_specter`` beyond OUTPUT_DIR, in ``--help``'s order -> where it goes (``settings``, ``seeds``,
    ``stages``, ``miner``, ``training``, ``ignored``)."""
    from transformers import TrainingArguments

    from scincl.model.losses import loss_options
    from scincl.model.train import train

    settings = [name for name in FIELDS if name not in ROUTED]
    own = [n for n, p in inspect.signature(train).parameters.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    training = [*section_leaves("recipe", "training"), *(f.name for f in dataclasses.fields(TrainingArguments) if f.init),
                *own, *loss_options()]
    groups = {"settings": settings, "seeds": ["seeds"],
              "stages": [f"{prefix}_{stage}" for prefix in ("skip", "override") for stage in ALL_STAGE_NAMES],
              "miner": [n for n in attrs.fields_dict(MinerSpec) if n not in settings],
              "training": [n for n in training if n not in settings and n not in RESERVED_TRAINING_FLAGS],
              "ignored": list(ACCEPTED_WITHOUT_EFFECT)}
    return {name: group for group, names in groups.items() for name in names}


def settings_from_flags(output_dir: Optional[str], flags: Mapping[str, Any]) -> RunSettings:
    """:class:`RunSettings` from run_specter's flags, each converted to its type and put in the field that holds it
    (an unknown flag or stage: :class:`InputError`), resolved from the run's preset and checked (:func:`check_run`)."""
    group_of, given = run_specter_flag_groups(), {"output_dir": output_dir}  # the other fields: RunSettings' defaults
    for name, value in flags.items():
        prefix, _, stage = name.partition("_")
        if group_of.get(name) == "settings":
            given[name] = value
        elif group_of.get(name) == "stages":
            given[prefix] = sorted(given.get(prefix, []) + [stage] * check_value(name, value, bool, check_range=False))
        elif group_of.get(name) in ("miner", "training"):
            given.setdefault(f"{group_of[name]}_options", {})[name] = check_value(name, value, None, check_range=False)
        elif group_of.get(name) == "seeds":  # sweep lists run_specter's flags; run_specter takes --seeds itself
            raise InputError("--seeds: only run_specter and run_specter_like run several seeds (one --seed here)")
        elif name in ACCEPTED_WITHOUT_EFFECT:
            logger.info("--%s %s: accepted for compatibility, no effect (%s)", name, value, ACCEPTED_WITHOUT_EFFECT[name])
        elif name.startswith(("skip_", "override_")):
            raise InputError(f"--{name}: unknown stage {stage!r} (stages: {', '.join(ALL_STAGE_NAMES)})")
        elif name in RESERVED_TRAINING_FLAGS:
            raise InputError(f"--{name} is set by run_specter itself (its value follows OUTPUT_DIR and the stage "
                             f"layout); run `cli_pipeline.py train` directly to choose it")
        else:
            raise unknown_flag_error(name, "run_specter", {"output_dir", *group_of})
    return check_run(resolve(given))


def check_run(s: RunSettings) -> RunSettings:
    """The errors of resolved settings that other packages judge, before any stage runs: format, stages, graph method,
    GPU, loss, training flags."""
    from scincl.model.losses import build_loss, check_loss_name
    from scincl.model.train import checked_training_arguments

    corpus_format = check_format(s.corpus_format)  # "auto": detected
    for stage in s.stages or ():
        if stage not in ALL_STAGE_NAMES:
            raise InputError(f"--stages {stage}: unknown stage (stages: {', '.join(ALL_STAGE_NAMES)})")
    if s.graph_method != "pbg":  # the method's own range checks (scincl/graph/embedders/settings.py)
        parse_settings(EMBEDDERS[s.graph_method].settings, s.graph_method_settings)
    elif s.graph_method_settings:
        raise InputError("--graph_method_settings is for prone/fastrp; PBG takes --biggraph_overrides")
    if s.device == "cuda":  # asked for a GPU: one line now, not a CPU run or a failure hours later
        check_gpu_usable(s.device)
    try:  # the loss and its flags build (issue 29: refused only after the graph stage ran)
        build_loss(check_loss_name(s.loss), **s.training_options)
    except (TypeError, ValueError) as exc:
        raise InputError(f"--loss {s.loss}: {exc}") from None
    checked_training_arguments(s.training_options)  # --fp16 maybe: now, not at the training stage
    return s if corpus_format == s.corpus_format else s.evolve(corpus_format=corpus_format)


def run_one(output_dir: Optional[str], flags: Mapping[str, Any], shared_dir: Optional[Path] = None) -> Dict[str, Any]:
    """One run of ``flags`` (its plan, run); what several runs of one call share lives in ``shared_dir``."""
    from scincl.model.encoder import check_encoder

    settings = check_input_paths(settings_from_flags(output_dir, flags))
    pipeline = SciNCLPlan(settings, shared_dir=shared_dir)
    if not settings.stages or {"train", "eval_base", "eval"} & set(settings.stages):  # --stages citations: no model
        check_encoder(pipeline.base_model)  # issue 41: the base model loads and encodes, before stage 1
    return pipeline.run({"output_dir": output_dir, **flags})


def run_each(output_dir: Optional[str], flags: Mapping[str, Any],
             runs: Mapping[str, Mapping[str, Any]]) -> Tuple[RunSettings, Path, List[Dict[str, Any]]]:
    """:func:`run_one` of ``flags`` changed by each ``{folder: changes}`` of ``runs`` below the OUTPUT_DIR of ``flags``
    (checked first), which holds what the runs share; returns the settings of ``flags``, that OUTPUT_DIR, the results."""
    first = settings_from_flags(output_dir, flags)
    shared, results = Path(first.output_dir), []
    for folder, changes in runs.items():
        logger.info("=== %s ===", folder)
        results.append(run_one(str(shared / folder), {**flags, **changes, "auto_output_dir": False}, shared))
    return first, shared, results


@writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)
def run_specter(output_dir: Optional[str] = None, seeds: SeedsArg = None, **flags: Any) -> Dict[str, Any]:
    """The whole SciNCL pipeline; with no data arguments, the embedded demo on the bundled corpus.

    Stages, in order (each reuses its output when it exists, logged; --override_<stage> rebuilds,
    --skip_<stage> skips): demo, scidocs_ids, citations, graph (citations -> graph embeddings, only when
    --graph_embeddings_path is not given), metadata_ids, queries, ann, triples, metadata, train, eval_base,
    eval, compare. Every output dir gets a manifest.json (arguments, input hashes, versions, git commit,
    seconds per stage). Prints the SciDocs table: base encoder vs SciNCL-tuned.

    Demo (make demo):  python cli_pipeline.py run_specter
    Paper: the original README command runs as written (docs/REPRODUCE.md, "Steps 3-8 in one command").

    A band's *_k_min not given is its *_k_max minus its count.

    Args:
        seeds: 0..9 or 0,1,2: one run per seed on the same corpus and graph (OUTPUT_DIR/seeds/seed_N), mean ± std.

    Returns {"table": markdown or None, "runs": [per-run results], "output_dir": Path}.
    """
    seed_list = parse_seeds(seeds)
    if not seed_list:
        result = run_one(output_dir, flags)
        return {"table": result["table"], "runs": [result], "output_dir": result["paths"].run}
    if flags.pop("seed", None) not in (None, 0):  # 0 is the CLI default
        raise InputError("give either --seed or --seeds")
    corpus_seed = 0 if flags.get("corpus_seed") is None else flags["corpus_seed"]  # one corpus: only sampling varies
    first, shared, runs = run_each(output_dir, flags, {f"seeds/seed_{seed}": {"seed": seed, "corpus_seed": corpus_seed}
                                                       for seed in seed_list})
    paths, name = runs[0]["paths"], f"{METHOD_NAMES[first.triples_source]} ({len(runs)} seeds)"
    table = compare_with_base(paths.base_eval, shared / "seeds", name, shared / "comparison", first.split,
                              "base encoder") if (paths.eval / "results.json").exists() else None
    return {"table": table, "runs": runs, "output_dir": shared}


@writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)
def run_specter_like(output_dir: Optional[str] = None, **flags: Any) -> Dict[str, Any]:
    """run_specter with SPECTER-like triplets (positives cited, hard negatives citations of citations, easy negatives
    random) on the same corpus and queries as SciNCL; same flags as run_specter."""
    if flags.setdefault("triples_source", SPECTER_LIKE) != SPECTER_LIKE:
        raise InputError(f"run_specter_like samples --triples_source specter_like, not {flags['triples_source']!r} "
                         "(run_specter takes --triples_source)")
    return run_specter(output_dir, **flags)


@writes("output_dir", output_dir=DEFAULT_DEMO_OUTPUT_DIR)
def sweep(output_dir: Optional[str] = None, k_pos: Sequence[int] = (), k_hard: Sequence[int] = (),
          **flags: Any) -> Dict[str, Any]:
    """k+ / k-hard sweeps (paper Figs. 2-3): one run_specter run per value, the other k fixed; plots metric vs k.

    Example: python cli_pipeline.py sweep runs/demo --k_pos 10,25,50 --k_hard 200,400,800 (other flags: run_specter's)
    Outputs OUTPUT_DIR/sweep/<k_pos|k_hard>/<k>/ and the plots in OUTPUT_DIR/comparison/, whose paths it prints.

    Args:
        k_pos: k+ values, one run each: positives n_{k-c+1} .. n_{k} (c: --easy_positives_count)
        k_hard: k-hard values, one run each: hard negatives n_{k-c+1} .. n_{k} (c: --hard_negatives_count)
    """
    if not k_pos and not k_hard:
        raise InputError("give --k_pos and/or --k_hard values, e.g. --k_pos 10,25,100 --k_hard 500,1000,4000")
    band = {family: recipe_field(family)[:-len("_k_max")] for family in ("k_pos", "k_hard")}  # k_pos: easy_positives
    runs = {f"sweep/{family}/{k}": {f"{band[family]}_k_max": k, f"{band[family]}_k_min": None}  # (k - count; k]
            for family, values in (("k_pos", k_pos), ("k_hard", k_hard)) for k in parse_int_list(values, family)}
    first, shared, results = run_each(output_dir, flags, runs)
    summary = compare([], shared / "comparison", sweep_dir=shared / "sweep", split=first.split)
    return {"runs": results, "plots": summary.get("files", []), "output_dir": shared}
