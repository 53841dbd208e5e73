"""``run_specter``, ``run_specter_like`` and ``sweep``: flags -> checked :class:`~scincl.settings.run.RunSettings` (one
built spec) -> the plan of one run (:class:`SciNCLPlan`: its stages, :data:`ALL_STAGE_NAMES`, and where their files
go, :func:`plan_paths`), run once, per seed (``--seeds``) or per k (``sweep``)."""
from __future__ import annotations

import dataclasses
import inspect
import logging
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.corpus import check_format
from scincl.corpus.selection import read_id_mapping, scidocs_graph_ids
from scincl.demo import make_demo
from scincl.errors import InputError, unknown_flag_error
from scincl.eval.compare import compare, compare_with_base
from scincl.graph import stage as corpus_stage
from scincl.graph.embed import RUN_RECORD
from scincl.graph.embedders import EMBEDDERS
from scincl.graph.embedders.settings import parse_settings
from scincl.io import write_id_list
from scincl.knn.ann import index_config_path, index_ids_path
from scincl.leakage import leakage_inputs, model_report
from scincl.model.checkpoints import LOGGING_ONLY_ARGS
from scincl.model.collapse import recorded_embedding_check
from scincl.model.device import check_gpu_usable, torch_threads
from scincl.output_lock import writes
from scincl.pipeline.layout import (citation_files, citations_stage, evaluate_stage, graph_files, graph_stage,
                                    index_stage, run_files, texts_stage, train_stage)
from scincl.pipeline.runner import Manifest, Stage, reuse_decision, run_stages
from scincl.provenance import local_path
from scincl.settings.recipe import recipe_field
from scincl.settings.run import (COUNT_LEAVES, DEFAULT_DEMO_OUTPUT_DIR, FIELDS, MINER_LEAVES, RunSettings, SeedsArg,
                                 check_input_paths, parse_int_list, parse_seeds, resolve)
from scincl.settings.spec import MinerSpec, section_leaves
from scincl.settings.values import check_value
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.queries import select_graph_limit_and_ratio, select_ratio_of_corpus
from scincl.triples.sources import KNN, METHOD_NAMES, SPECTER_LIKE, sampler
from scincl.workload import announce

logger = logging.getLogger(__name__)

ALL_STAGE_NAMES = ("demo", "scidocs_ids", "citations", "graph", "metadata_ids", "queries", "ann", "triples",
                   "metadata", "train", "eval_base", "eval", "compare")  # in running order


# ---------------------------------------------------------------------- where a run's files go (the original layout)
def miner_signature(s: RunSettings) -> str:
    """Short name of the sampling settings, e.g. ``pos_knn_20_25_5__easyneg_random_without_knn_3__hardneg_knn_3998_4000_2``."""
    if s.triples_source != KNN:
        return f"{s.triples_source}_{s.triples_per_query}"
    pos, easy, hard = (s.miner.slot(name) for name in ("easy_positives", "easy_negatives", "hard_negatives"))
    parts = [f"pos_{pos.strategy}_{pos.k_min}_{pos.k_max}_{pos.count}", f"easyneg_{easy.strategy}_{easy.count}",
             f"hardneg_{hard.strategy}_{hard.k_min}_{hard.k_max}_{hard.count}"]
    return "__".join(parts + [f"{k}_{v}" for k, v in sorted(s.miner_options.items())])


def base_model_short_name(name_or_path: str) -> str:
    """``allenai/scibert_scivocab_uncased`` -> ``scibert_scivocab_uncased``; ``.../pkg/model`` -> ``pkg``."""
    parts = [p for p in str(name_or_path).rstrip("/").split("/") if p]
    if len(parts) > 1 and parts[-1] in ("model", "models", "checkpoint"):
        return parts[-2]
    return parts[-1]


def model_dir_name(s: RunSettings, base_model: str) -> str:
    """``model_<base name>[_<pooling>][_bitfit][_<loss>]...`` as in the original code."""
    name = f"model_{base_model_short_name(base_model)}"
    name += "".join(f"_{part}" for part, used in ((s.pooling_strategy, s.pooling_strategy != "cls"),
                                                  ("bitfit", s.bitfit), (s.loss, s.loss != "triplet")) if used)
    for key in ("num_train_epochs", "learning_rate"):
        if key in s.training_options and not s.demo:
            name += f"_{key.split('_')[-1]}_{s.training_options[key]}"
    return name


def plan_paths(s: RunSettings, shared: Path, base_model: str) -> SimpleNamespace:
    """Every file and directory of a ``run_specter`` run, from its settings (user-given paths win); the run's folder is
    OUTPUT_DIR, or with ``--auto_output_dir`` ``OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/[queries_<r>/]<miner>``."""
    ratio = s.sample_queries_ratio if s.sample_queries_ratio is not None and s.sample_queries_ratio < 1 else None
    run, graph, (train, test) = Path(s.output_dir), graph_files(shared / "graph"), citation_files(shared)
    if s.auto_output_dir:
        run = run / str(s.graph_limit) / f"corpus_seed_{s.corpus_seed}"
        if ratio is not None:
            run = run / f"queries_{ratio}"
        run = run / miner_signature(s)
    corpus_ids = Path(s.train_s2orc_paper_ids or run / f"s2orc_paper_ids.seed_{s.corpus_seed}.json")
    query_name = f"query_s2orc_paper_ids.seed_{s.corpus_seed}" + (f".ratio_{ratio}" if ratio is not None else "")
    return SimpleNamespace(
        shared=shared, run=run, demo=shared / "demo_corpus",
        scidocs_ids=Path(s.scidocs_paper_ids or shared / "scidocs_s2orc_paper_ids.json"),
        metadata_ids=shared / "s2orc_metadata_id_mapping.json", citations_dir=train.parent,
        graph_dir=graph["dir"], graph_ids=Path(s.graph_paper_ids_path or graph["ids"]),
        graph_embeddings=Path(s.graph_embeddings_path or graph["embeddings"]), corpus_ids=corpus_ids,
        query_ids=Path(s.train_query_s2orc_paper_ids or run / f"{query_name}.json"),
        ann_index=Path(s.ann_index_path or f"{corpus_ids}.{s.faiss_string_factory}.faiss"),
        **dict(zip(("triples", "metadata"), run_files(run, s.gzip))), model=run / model_dir_name(s, base_model),
        base_eval=shared / "base_model_eval", eval=run, comparison=run / "comparison",
        citations_train=train, citations_test=test)


class SciNCLPlan:
    """The stages of one ``run_specter`` run (:meth:`stages`) and their run (:meth:`run`)."""

    def __init__(self, settings: RunSettings, shared_dir: Optional[Path] = None) -> None:
        from scincl.model.encoder import encoder_path  # torch: loaded when a plan is made, not by the CLI's tables

        shared = Path(shared_dir or settings.output_dir)
        if settings.demo and settings.scidocs_paper_ids is None:  # the demo's held-out SciDocs papers (demo_scidocs.py)
            settings = settings.evolve(scidocs_paper_ids=str(shared / "demo_corpus" / "scidocs_paper_ids.json"))
        s = self.s = settings
        self.base_model = encoder_path(s.base_model_name_or_path, packaged=s.demo)  # the demo: the packaged MiniLM
        p = self.p = plan_paths(s, shared, self.base_model)
        self.metadata_dir = p.demo / "s2orc" / "metadata" if s.demo else Path(s.corpus_dir) if s.corpus_dir else None
        self.corpus_format = "s2orc" if s.demo else s.corpus_format  # None: detected from the folder
        self.scidocs_dir = p.demo / "scidocs" if s.demo else Path(s.scidocs_dir) if s.scidocs_dir else None
        self.builds_graph = s.graph_embeddings_path is None
        # the evaluation papers (a SciDocs dir or --scidocs_paper_ids), kept out of citations, graph and corpus
        evaluation_ids = p.scidocs_ids if self.scidocs_dir is not None or s.scidocs_paper_ids else None
        self.excluded = None if s.graph_leakage else evaluation_ids
        self.citations = Path(s.citations_path) if s.citations_path else p.citations_train
        graph_edges = p.citations_train if self.builds_graph and s.citations_path is None else None
        self.leakage = leakage_inputs(evaluation_ids, s.triples_source, p.graph_ids, graph_edges, self.citations,
                                      s.graph_leakage)  # the leakage guard's arguments

    def stages(self) -> List[Stage]:
        """Every stage of the run, in running order."""
        return [*self.plan_inputs(), *self.plan_queries(), *self.plan_triples(), *self.plan_train(),
                *self.plan_evaluate()]

    def recorded(self, *names: str) -> Dict[str, Any]:
        """The flags ``names`` as a stage records them (its completion marker's settings)."""
        return {name: getattr(self.s, name) for name in names}

    def plan_inputs(self) -> Iterator[Stage]:
        """The demo corpus, the SciDocs ids, the citation edges and graph (when this run makes them), the text ids."""
        p, s, excludes = self.p, self.s, {"excludes_scidocs": self.excluded is not None}
        if s.demo:
            demo = {"papers": s.demo_papers, "seed": 0}  # fixed data; --corpus_seed picks the corpus from it
            yield Stage("demo", [p.demo / "demo_manifest.json"], partial(make_demo, p.demo, **demo),
                        description=f"bundled demo corpus ({s.demo_papers} papers)", settings=demo)
        if self.scidocs_dir is not None and not s.scidocs_paper_ids:  # named for the leakage report too
            yield Stage("scidocs_ids", [p.scidocs_ids], lambda: write_id_list(p.scidocs_ids, sorted(
                scidocs_graph_ids(self.scidocs_dir, read_id_mapping(s.s2id_to_s2orc_input_path)))),
                        inputs=[self.scidocs_dir, local_path(s.s2id_to_s2orc_input_path)],
                        description="SciDocs papers (excluded from graph and corpus unless --graph_leakage)")
        if (self.builds_graph or s.triples_source == SPECTER_LIKE) and s.citations_path is None:
            # the corpus' edge split and graph (--corpus_seed): every seed of --seeds shares them in OUTPUT_DIR
            split = {"test_ratio": s.graph_test_ratio, "seed": s.corpus_seed, "corpus_format": self.corpus_format}
            yield citations_stage("citations", self.metadata_dir, p.citations_dir, **split, excluded=self.excluded,
                                  workers=s.workers, description="citation edges from the corpus",
                                  settings={**split, **excludes})
        if self.builds_graph:
            pbg = s.graph_method == "pbg"
            records = [p.graph_dir / ("biggraph_run.json" if pbg else RUN_RECORD)]
            if s.graph_test_ratio:
                records += [p.graph_dir / "link_prediction.json", p.graph_dir / "link_prediction.md"]
            embed = {"method": s.graph_method, "config": s.biggraph_config, "seed": s.corpus_seed,
                     "settings": s.graph_method_settings, "overrides": s.biggraph_overrides}
            yield graph_stage("graph", p.citations_train, p.citations_test, p.graph_dir, embed=embed,
                              outputs=[p.graph_embeddings, p.graph_ids, *records], inputs=[s.biggraph_config],
                              description=f"BigGraph embeddings ({Path(s.biggraph_config).name})" if pbg
                              else f"{s.graph_method} graph embeddings",
                              settings={"biggraph_overrides": s.biggraph_overrides, "seed": s.corpus_seed,
                                        **({} if pbg else self.recorded("graph_method", "graph_method_settings"))})
        if self.metadata_dir is not None:
            yield Stage("metadata_ids", [p.metadata_ids], lambda: corpus_stage.get_metadata_id_mapping(
                str(self.metadata_dir), str(p.metadata_ids), workers=s.workers, corpus_format=self.corpus_format),
                inputs=[self.metadata_dir], description="which papers have texts in the corpus",
                settings={"corpus_format": self.corpus_format})

    def plan_queries(self) -> Iterator[Stage]:
        """The training corpus and its query papers. A given --train_s2orc_paper_ids / --train_query_s2orc_paper_ids
        that exists is an input, never rewritten: both given, no stage; only the corpus, queries sampled from it."""
        s, p = self.s, self.p
        corpus_given = bool(s.train_s2orc_paper_ids) and p.corpus_ids.exists()
        queries_given = bool(s.train_query_s2orc_paper_ids) and p.query_ids.exists()
        settings = self.recorded("sample_queries_ratio", "corpus_seed")
        sample = {"corpus": p.corpus_ids, "ratio": s.sample_queries_ratio, "seed": s.corpus_seed}
        if corpus_given:
            if not queries_given:
                yield Stage("queries", [p.query_ids], partial(select_ratio_of_corpus, p.query_ids, **sample),
                            inputs=[p.corpus_ids], settings=settings,
                            description="query papers sampled from --train_s2orc_paper_ids")
            return
        if queries_given:
            raise InputError(f"--train_query_s2orc_paper_ids {p.query_ids} exists but the corpus its queries "
                             "come from does not: pass that corpus as --train_s2orc_paper_ids")
        with_text = p.metadata_ids if self.metadata_dir is not None else None
        select = {**sample, "graph_ids": p.graph_ids, "graph_limit": s.graph_limit, "with_text": with_text,
                  "specter_triples": s.specter_triples_path, "id_mapping": s.s2id_to_s2orc_input_path,
                  "excluded": self.excluded}
        yield Stage("queries", [p.corpus_ids, p.query_ids],
                    partial(select_graph_limit_and_ratio, p.query_ids, **select),
                    inputs=[p.graph_ids, with_text, s.specter_triples_path, self.excluded,
                            local_path(s.s2id_to_s2orc_input_path)],
                    description=f"training corpus and query papers (--graph_limit {s.graph_limit})",
                    settings={**settings, "graph_limit": s.graph_limit, "excludes_scidocs": self.excluded is not None})

    def plan_triples(self) -> Iterator[Stage]:
        """The triplets of ``--triples_source`` (kNN: and their index), recorded with every flag; their texts."""
        p, s = self.p, self.s
        names = ["triples_source", "seed", "gzip", *COUNT_LEAVES]
        if s.triples_source == SPECTER_LIKE:
            inputs = [self.citations, p.query_ids]
            sampling = dict(citations_input_path=self.citations, **self.recorded(*COUNT_LEAVES))
        else:  # the index; the slots' strategies and bands, the search (its flags: KnnSearch's fields)
            search = KnnSearch(**{f.name: getattr(s, f.name) for f in dataclasses.fields(KnnSearch)
                                  if hasattr(s, f.name)})
            ann = index_stage("ann", {"embeddings": p.graph_embeddings, "ids": p.graph_ids}, p.ann_index,
                              p.corpus_ids, search=search, workers=s.workers, seed=s.seed,
                              outputs=[p.ann_index, index_ids_path(p.ann_index), index_config_path(p.ann_index)],
                              inputs=[p.graph_embeddings, p.graph_ids, p.corpus_ids],
                              description=f"FAISS {s.faiss_string_factory} index ({s.ann_metric})",
                              settings={"string_factory": s.faiss_string_factory, "metric": s.ann_metric,
                                        "do_normalize": s.ann_do_normalize, "seed": s.seed})
            # an existing --ann_index_path the ann stage did not make is an input, rebuilt only with --override_ann
            if not (s.ann_index_path and p.ann_index.exists()) or "ann" in s.override or reuse_decision(ann) is None:
                yield ann
            names += [*MINER_LEAVES, "ann_metric", "ann_backend", "ann_do_normalize", "faiss_string_factory",
                      "k_scale", "miner_options"]
            inputs = [p.ann_index, p.graph_embeddings, p.graph_ids, p.query_ids, p.corpus_ids]
            sampling = dict(graph_paper_ids_path=p.graph_ids, graph_embeddings_path=p.graph_embeddings, config=s.miner,
                            search=search, strategy_options=s.miner_options, ann_index_path=p.ann_index,
                            workers=s.workers, include_paper_ids=str(p.corpus_ids))  # a reused index must cover them
        plain = p.triples.with_suffix("") if s.gzip else p.triples  # the sampler adds .gz
        yield Stage("triples", [p.triples], partial(sampler(s.triples_source), output_path=plain, seed=s.seed,
                                                    gzip=s.gzip, query_papers=str(p.query_ids), **sampling),
                    inputs=inputs, description=f"{s.triples_source} triplets", settings=self.recorded(*names))
        yield texts_stage("metadata", p.triples, p.metadata, self.metadata_dir, workers=s.workers,
                          corpus_format=self.corpus_format, settings={"corpus_format": self.corpus_format},
                          inputs=[self.metadata_dir], description="titles and abstracts of the triplets' papers")

    def plan_train(self) -> Iterator[Stage]:
        """Fine-tuning the base encoder on the triplets; recorded with every Trainer argument but logging's."""
        s, p = self.s, self.p
        recorded = {"seed": s.seed, **{k: v for k, v in s.training_options.items() if k not in LOGGING_ONLY_ARGS}}
        # the saved model's length = the one its scores are measured at (issue 42)
        length = self.recorded("eval_max_sequence_length") if s.eval_max_sequence_length else {}
        model = self.recorded("loss", "pooling_strategy", "max_sequence_length", "bitfit")
        # checkpoints of this run (an interrupted stage) are resumed from; another run's are discarded
        arguments = {"base_model_name_or_path": self.base_model, **model, **length, **self.leakage,
                     "seed": s.seed, "other_run": "restart", **s.training_options}
        yield train_stage("train", p.triples, p.metadata, p.model, arguments=arguments, threads=torch_threads(),
                          inputs=[local_path(self.base_model)],
                          settings={"base_model": self.base_model, **model, "training": recorded, **length},
                          description=f"fine-tune {self.base_model}")

    def plan_evaluate(self) -> Iterator[Stage]:
        """SciDocs evaluations of the base and the trained encoder, and their comparison (with a SciDocs folder)."""
        p, s = self.p, self.s
        if self.scidocs_dir is None:
            return
        short = base_model_short_name(self.base_model)
        how = dict(split=s.val_or_test_or_both, threads=torch_threads(), encoding=dict(
            pooling_strategy=s.pooling_strategy, max_sequence_length=s.eval_max_sequence_length, device=s.device))
        recorded = self.recorded("val_or_test_or_both", "pooling_strategy", "eval_max_sequence_length")
        if s.evaluate_base_model:
            yield evaluate_stage("eval_base", self.base_model, self.scidocs_dir, p.base_eval, **how,
                                 inputs=[self.scidocs_dir, local_path(self.base_model)],
                                 settings={"base_model": self.base_model, **recorded},
                                 description=f"SciDocs evaluation of the base encoder {short}")
        yield evaluate_stage("eval", str(p.model), self.scidocs_dir, p.eval, **how, settings=recorded,
                             inputs=[p.model, self.scidocs_dir],
                             description="SciDocs evaluation of the trained encoder")
        yield Stage("compare", [p.comparison / "comparison.md"], lambda: compare_with_base(
            p.base_eval, p.eval / "results.json", METHOD_NAMES[s.triples_source], p.comparison, s.split,
            f"base: {short}"), inputs=[p.eval / "results.json", p.base_eval / "results.json"],
            description="results table: base vs trained",
            settings={**self.recorded("split", "triples_source"), "base_model": short})

    def run(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        """Log the plan (``--dry_run``: return it, with what each stage would do), run every stage; returns the stage
        results, the manifest and the comparison table (when evaluated)."""
        s, p = self.s, self.p
        plan = announce(self, base_model_short_name(self.base_model))
        stages = self.stages()
        if s.dry_run:
            plan += "\nstages:\n" + "\n".join(
                f"  {st.name}: " + (f"to run ({why})" if (why := reuse_decision(st)) else "done") for st in stages)
            return {"results": {}, "table": None, "paths": p, "manifest": {}, "dry_run": True, "plan": plan}
        p.run.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(p.run, arguments)
        manifest.update(paths=vars(p), base_model=self.base_model)
        results = run_stages(stages, manifest, skip=s.skip, override=s.override, only=s.stages or (),
                             known=ALL_STAGE_NAMES)
        if "train" not in s.skip and p.model.exists():
            manifest.update(leakage=model_report(p.model, p.triples, **self.leakage),
                            embedding_check=recorded_embedding_check(p.model))  # issue 41: collapse warning
        comparison = p.comparison / "comparison.md"
        table = comparison.read_text() if comparison.exists() and "compare" in results else None
        if table is not None:
            manifest.update(comparison=comparison)
        manifest.write_all()
        return {"results": results, "table": table, "paths": p, "manifest": manifest.data}


# ------------------------------------------------ run_specter, run_specter_like, sweep: flags -> settings -> plans, run
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
