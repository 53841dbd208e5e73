"""The SciNCL plan (``run_specter``): every stage of DESIGN.md as a :class:`Stage`, wired to the stage APIs (the
command, its flags -> :class:`~scincl.settings.run.RunSettings` -> this plan: :mod:`scincl.pipeline.run_command`).

Stages (``--skip_<name>`` / ``--override_<name>``), in order; each reuses its output when present:

======================  ================================================================  ============
stage                   what                                                              output
======================  ================================================================  ============
``demo``                build the bundled demo corpus (embedded default only)             ``demo_corpus/``
``scidocs_ids``         SciDocs papers mapped to graph ids (kept out of graph + corpus)   ``scidocs_s2orc_paper_ids.json``
``citations``           corpus citations, train/test edge split (no graph given)          ``citations/``
``graph``               PyTorch-BigGraph import/train/eval/export (no graph given)        ``graph/``
``metadata_ids``        ids of the papers with a text in the corpus (for the encoder)     ``s2orc_metadata_id_mapping.json``
``queries``             training corpus + query papers (``--graph_limit``)                ``s2orc_paper_ids.seed_S.json``
``ann``                 FAISS index over the corpus' graph embeddings                     ``*.faiss``
``triples``             SciNCL kNN (or SPECTER-like) triplets                             ``train_triples.csv[.gz]``
``metadata``            titles/abstracts of the triplets' papers                          ``train_metadata.jsonl[.gz]``
``train``               contrastive fine-tuning (transformers Trainer, resumable)         ``model_<base>/``
``eval_base``           SciDocs evaluation of the base encoder                            ``base_model_eval/``
``eval``                SciDocs evaluation of the trained encoder                         ``results.json``
``compare``             base vs SciNCL side by side                                       ``comparison/``
======================  ================================================================  ============

``shared_dir`` (default: the output dir) holds what several experiments can share: the demo
corpus, citations, graph embeddings and the base-model evaluation; experiment-specific outputs
go to :func:`scincl.pipeline.layout.experiment_dir`.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Dict, List, Optional

from scincl.graph import stage as corpus_stage
from scincl.errors import InputError
from scincl.io import write_id_list
from scincl.leakage import guard_training, recorded_report
from scincl.pipeline.layout import (Planner, base_model_short_name, encoder_path, evaluate_stage, index_stage,
                                    leakage_inputs, plan_paths, queries_stage, texts_stage, triples_stage)
from scincl.pipeline.manifest import Manifest
from scincl.model.checkpoints import LOGGING_ONLY_ARGS
from scincl.model.collapse import recorded_embedding_check
from scincl.pipeline.threads import torch_threads
from scincl.workload import Workload, cpu_warning, eval_paper_count, format_workload, run_workload
from scincl.pipeline.runner import Stage, reuse_decision, run_stages, waiting_stages
from scincl.provenance import local_path
from scincl.settings.run import CHOICES, RunSettings
from scincl.settings.spec import section_leaves

logger = logging.getLogger(__name__)

TRIPLES_SOURCES = CHOICES["triples_source"]
MINER_LEAVES = section_leaves("sampler", "miner")  # the SciNCL slot settings a run records for its triplets
# The stages of run_specter's plan, in order (SciNCLPlan.stages builds them under these names): the stage control
# flags are --skip_<stage> and --override_<stage>, --stages selects some
ALL_STAGE_NAMES = ("demo", "scidocs_ids", "citations", "graph", "metadata_ids", "queries", "ann", "triples",
                   "metadata", "train", "eval_base", "eval", "compare")
DEMO_CORPUS_SEED = 0  # the demo data itself is fixed; --corpus_seed picks the training corpus from it


class SciNCLPlan(Planner):
    """Builds the stage list for one experiment and runs it (its steps shared with the real-corpus experiments:
    :class:`~scincl.pipeline.layout.Planner`)."""

    def __init__(self, settings: RunSettings, shared_dir: Optional[Path] = None) -> None:
        if settings.triples_source not in TRIPLES_SOURCES:
            raise InputError(f"--triples_source {settings.triples_source!r}: choose one of {', '.join(TRIPLES_SOURCES)}")
        self.s = settings
        if settings.demo and settings.scidocs_paper_ids is None:
            # the demo's held-out SciDocs papers (queries + classification papers); its candidates are
            # training-universe papers by design (scincl/demo_scidocs.py)
            shared = Path(shared_dir) if shared_dir is not None else Path(settings.output_dir)
            settings.scidocs_paper_ids = str(shared / "demo_corpus" / "scidocs_paper_ids.json")
        # the demo always uses the packaged MiniLM (offline, small)
        self.base_model = encoder_path(settings.base_model_name_or_path, packaged=settings.demo)
        self.p = plan_paths(settings, shared_dir, self.base_model)
        super().__init__(self.p.run, self.p.shared)
        self.torch_threads = torch_threads()

    # ------------------------------------------------------------------ inputs of the run

    @property
    def metadata_dir(self) -> Optional[Path]:
        if self.s.demo:
            return self.p.demo / "s2orc" / "metadata"
        return Path(self.s.corpus_dir) if self.s.corpus_dir else None

    @property
    def corpus_format(self) -> Optional[str]:
        """The corpus format (None: detected from the folder; the demo corpus is S2ORC)."""
        return "s2orc" if self.s.demo else self.s.corpus_format

    @property
    def scidocs_dir(self) -> Optional[Path]:
        if self.s.demo:
            return self.p.demo / "scidocs"
        return Path(self.s.scidocs_dir) if self.s.scidocs_dir else None

    @property
    def builds_graph(self) -> bool:
        return self.s.graph_embeddings_path is None

    @property
    def needs_citations(self) -> bool:
        return (self.builds_graph or self.s.triples_source == "specter_like") and self.s.citations_path is None

    @property
    def names_evaluation_papers(self) -> bool:
        """The run knows its evaluation papers: a SciDocs dir (mapped to graph ids) or --scidocs_paper_ids."""
        return self.scidocs_dir is not None or bool(self.s.scidocs_paper_ids)

    @property
    def excludes_scidocs(self) -> bool:
        """The evaluation papers are kept out of the citations, the graph and the corpus (w/o leakage)."""
        return self.names_evaluation_papers and not self.s.graph_leakage

    def training_leakage_inputs(self) -> Dict[str, Any]:
        """What the leakage guard of ``train`` checks (scincl/pipeline/layout.py:leakage_inputs): the evaluation ids,
        the graph's nodes, the edges the graph (when this run builds it) or the triplets came from."""
        graph_edges = self.p.citations_train if self.builds_graph and self.s.citations_path is None else None
        return leakage_inputs(self.p.scidocs_ids if self.names_evaluation_papers else None, self.s.triples_source,
                              self.p.graph_ids, graph_edges, self.citations_for_triples, self.s.graph_leakage)

    @property
    def citations_for_triples(self) -> Path:
        return Path(self.s.citations_path) if self.s.citations_path else self.p.citations_train

    # ------------------------------------------------------------------ stage functions
    def make_demo(self) -> None:
        from scincl.demo import make_demo

        make_demo(self.p.demo, papers=self.s.demo_papers, seed=DEMO_CORPUS_SEED)

    def write_scidocs_ids(self) -> None:
        from scincl.corpus.selection import read_id_mapping, scidocs_graph_ids

        ids = scidocs_graph_ids(self.scidocs_dir, read_id_mapping(self.s.s2id_to_s2orc_input_path))
        write_id_list(self.p.scidocs_ids, sorted(ids))

    def write_metadata_ids(self) -> None:
        corpus_stage.get_metadata_id_mapping(str(self.metadata_dir), str(self.p.metadata_ids), workers=self.s.workers,
                                             corpus_format=self.corpus_format)

    @property
    def given_index(self) -> bool:
        """An existing --ann_index_path: an input of the triples stage, checked by the miner, never rebuilt."""
        return bool(self.s.ann_index_path) and self.p.ann_index.exists()

    @functools.cached_property
    def search(self):
        """How this run builds its kNN index and searches it (:class:`~scincl.triples.knn_miner.KnnSearch`, from the
        run's flags, built once per plan; an unknown ``--ann_backend`` or ``--k_scale`` is refused when the plan is
        built)."""
        from scincl.triples.knn_miner import KnnSearch

        s = self.s
        return KnnSearch(ann_metric=s.ann_metric, ann_backend=s.ann_backend, ann_normalize_embeddings=s.ann_do_normalize,
                         ann_device=s.ann_device, faiss_string_factory=s.faiss_string_factory, k_scale=s.k_scale)

    def sampling(self) -> Dict[str, Any]:
        """The arguments of this run's ``--triples_source`` sampler (scincl/pipeline/layout.py:triples_stage) besides
        the output and the queries: for ``knn``, the run's miner settings
        (:attr:`~scincl.settings.run.RunSettings.miner`, built and checked once by ``check_run``) and :attr:`search`;
        for ``specter_like``, its count flags."""
        s, p = self.s, self.p
        if s.triples_source == "specter_like":
            return dict(citations_input_path=self.citations_for_triples, seed=s.seed, gzip=s.gzip,
                        triples_per_query=s.triples_per_query, easy_positives_count=s.easy_positives_count,
                        easy_negatives_count=s.easy_negatives_count, hard_negatives_count=s.hard_negatives_count)
        return dict(graph_paper_ids_path=p.graph_ids, graph_embeddings_path=p.graph_embeddings, config=s.miner,
                    search=self.search, strategy_options=s.miner_options, seed=s.seed, gzip=s.gzip,
                    ann_index_path=p.ann_index, workers=s.workers,
                    include_paper_ids=str(p.corpus_ids),  # a reused index must cover this run's corpus
                    show_progress=True)

    def leakage_record(self) -> Optional[Dict[str, Any]]:
        """The trained model's leakage report (checked now when a model made before the guard is reused)."""
        report = recorded_report(self.p.model)
        if report is None and self.p.triples.exists():
            leak = self.training_leakage_inputs()
            report = guard_training(leak["excluded_paper_ids"], self.p.triples,
                                    graph_paper_ids=leak["graph_paper_ids_path"],
                                    citations=leak["citations_path"].split(",") if leak["citations_path"] else (),
                                    with_leakage=leak["graph_leakage"], output_dir=self.p.model)
        return report

    def evaluate_stage(self, name: str, model: str, results_dir: Path, **stage: Any) -> Stage:
        """A SciDocs evaluation of ``model`` into ``results_dir`` (scincl/pipeline/layout.py:evaluate_stage): every
        SciDocs file, embedded by the evaluator or, with --eval_max_sequence_length, cut to that length."""
        return evaluate_stage(name, model, self.scidocs_dir, results_dir, split=self.s.val_or_test_or_both,
                              pooling_strategy=self.s.pooling_strategy,
                              max_sequence_length=self.s.eval_max_sequence_length, device=self.s.device,
                              threads=self.torch_threads, **stage)

    def compare(self) -> None:
        from scincl.eval.compare import compare

        rows, names = [], []
        if (self.p.base_eval / "results.json").exists():
            rows.append(self.p.base_eval)
            names.append(f"base: {base_model_short_name(self.base_model)}")
        rows.append(self.p.eval / "results.json")
        names.append("SciNCL" if self.s.triples_source == "knn" else "SPECTER-like")
        compare(rows, self.p.comparison, names=names, split=self.s.split)

    # ------------------------------------------------------------------ what each stage's bytes depend on
    @property
    def graph_records(self) -> List[Path]:
        """The graph stage's files beside the embeddings: link prediction (with a test split) and the run record."""
        from scincl.graph.embed import RUN_RECORD

        records = [self.p.graph_dir / ("biggraph_run.json" if self.s.graph_method == "pbg" else RUN_RECORD)]
        if self.s.graph_test_ratio:
            records += [self.p.graph_dir / "link_prediction.json", self.p.graph_dir / "link_prediction.md"]
        return records

    def triples_settings(self) -> Dict[str, Any]:
        """Every flag of the triples stage (miner slots, kNN backend, seed, output format)."""
        s = self.s
        counts = [name for name in MINER_LEAVES if name.endswith("_count") or name == "triples_per_query"]
        names = ["triples_source", *counts, "seed", "gzip"]
        if s.triples_source == "knn":  # the slots' strategies and bands too
            names += [name for name in MINER_LEAVES if name not in counts]
            names += ["ann_metric", "ann_backend", "ann_do_normalize", "faiss_string_factory", "k_scale",
                      "miner_options"]
        return {name: getattr(s, name) for name in names}

    def train_settings(self) -> Dict[str, Any]:
        """The encoder, objective and every Trainer argument except those that only change logging."""
        options = {k: v for k, v in self.s.training_options.items() if k not in LOGGING_ONLY_ARGS}
        options.setdefault("seed", self.s.seed)
        return {"base_model": self.base_model, "loss": self.s.loss, "pooling_strategy": self.s.pooling_strategy,
                "bitfit": self.s.bitfit, "max_sequence_length": self.s.max_sequence_length, "training": options,
                # the saved model's length = the one its scores are measured at (issue 42)
                **({"eval_max_sequence_length": self.s.eval_max_sequence_length}
                   if self.s.eval_max_sequence_length else {})}

    def eval_settings(self) -> Dict[str, Any]:
        """What the SciDocs evaluation's results depend on besides the encoder and the SciDocs files."""
        return {"val_or_test_or_both": self.s.val_or_test_or_both, "pooling_strategy": self.s.pooling_strategy,
                "eval_max_sequence_length": self.s.eval_max_sequence_length}

    # ------------------------------------------------------------------ plan
    def stages(self) -> List[Stage]:
        """The stage list for these settings (stages that do not apply are left out): :meth:`Planner.plan`, the steps
        below."""
        return self.plan()

    def plan_inputs(self, run: Any = None) -> None:
        """The demo corpus, the SciDocs ids, the citation edges and the graph (each when this run makes it), and the
        ids of the papers with a text."""
        p, s = self.p, self.s
        if s.demo:
            self.add(Stage("demo", [p.demo / "demo_manifest.json"], self.make_demo, output_dir=p.demo,
                           description=f"bundled demo corpus ({s.demo_papers} papers)",
                           settings={"papers": s.demo_papers, "seed": DEMO_CORPUS_SEED}))
        if self.scidocs_dir is not None and not self.s.scidocs_paper_ids:  # named for the leakage report too
            self.add(Stage("scidocs_ids", [p.scidocs_ids], self.write_scidocs_ids,
                           inputs=[self.scidocs_dir, local_path(s.s2id_to_s2orc_input_path)],
                           description="SciDocs papers (excluded from graph and corpus unless --graph_leakage)"))
        if self.needs_citations:
            excluded = p.scidocs_ids if self.excludes_scidocs else None
            # the edge split and the graph are the corpus' (--corpus_seed, which follows --seed in a single run): every
            # seed of --seeds shares them in OUTPUT_DIR, where seed 1 used to rebuild what seed 0 had made
            self.add(self.citations_step("citations", self.metadata_dir, excluded, s.graph_test_ratio, s.corpus_seed,
                                         s.workers, corpus_format=self.corpus_format,
                                         description="citation edges from the corpus",
                                         settings={"test_ratio": s.graph_test_ratio, "seed": s.corpus_seed,
                                                   "corpus_format": self.corpus_format,
                                                   "excludes_scidocs": self.excludes_scidocs}))
        if self.builds_graph:
            embed = {"method": s.graph_method, "config": s.biggraph_config, "seed": s.corpus_seed,
                     "settings": s.graph_method_settings, "overrides": s.biggraph_overrides}
            self.add(self.graph_step("graph", p.citations_train, p.citations_test, p.graph_dir, embed,
                                     outputs=[p.graph_embeddings, p.graph_ids, *self.graph_records],
                                     inputs=[Path(s.biggraph_config)],
                                     description=f"BigGraph embeddings ({Path(s.biggraph_config).name})"
                                     if s.graph_method == "pbg" else f"{s.graph_method} graph embeddings",
                                     settings={"biggraph_overrides": s.biggraph_overrides, "seed": s.corpus_seed,
                                               **({"graph_method": s.graph_method,
                                                   "graph_method_settings": s.graph_method_settings}
                                                  if s.graph_method != "pbg" else {})}))
        if self.metadata_dir is not None:
            self.add(Stage("metadata_ids", [p.metadata_ids], self.write_metadata_ids, inputs=[self.metadata_dir],
                           description="which papers have texts in the corpus",
                           settings={"corpus_format": self.corpus_format}))

    def plan_queries(self, run: Any = None) -> None:
        """The training corpus and its query papers (scincl/pipeline/layout.py:queries_stage). An existing file
        given by --train_s2orc_paper_ids / --train_query_s2orc_paper_ids is an input, never rewritten (a given
        path that does not exist yet is where the selection is written): both exist, no stage; only
        the corpus exists, the query papers are sampled from it."""
        s, p = self.s, self.p
        corpus_given = bool(s.train_s2orc_paper_ids) and p.corpus_ids.exists()
        queries_given = bool(s.train_query_s2orc_paper_ids) and p.query_ids.exists()
        if corpus_given and queries_given:
            return
        settings = {"sample_queries_ratio": s.sample_queries_ratio, "corpus_seed": s.corpus_seed}
        sample = {"corpus": p.corpus_ids, "ratio": s.sample_queries_ratio, "seed": s.corpus_seed}
        if corpus_given:
            return self.add(queries_stage("queries", p.query_ids, selection="ratio_of_corpus", select=sample,
                                          outputs=[p.query_ids], inputs=[p.corpus_ids], settings=settings,
                                          description="query papers sampled from --train_s2orc_paper_ids"))
        if queries_given:
            raise InputError(f"--train_query_s2orc_paper_ids {p.query_ids} exists but the corpus its queries "
                             "come from does not: pass that corpus as --train_s2orc_paper_ids")
        select = {**sample, "graph_ids": p.graph_ids, "graph_limit": s.graph_limit,
                  "with_text": p.metadata_ids if self.metadata_dir is not None else None,
                  "specter_triples": s.specter_triples_path, "id_mapping": s.s2id_to_s2orc_input_path,
                  "excluded": p.scidocs_ids if self.excludes_scidocs else None}
        self.add(queries_stage("queries", p.query_ids, selection="graph_limit_and_ratio", select=select,
                               outputs=[p.corpus_ids, p.query_ids],
                               inputs=[p.graph_ids] + ([p.metadata_ids] if self.metadata_dir is not None else [])
                               + [Path(x) for x in (s.specter_triples_path,) if x]
                               + ([p.scidocs_ids] if self.excludes_scidocs else [])
                               + [local_path(s.s2id_to_s2orc_input_path)],
                               description=f"training corpus and query papers (--graph_limit {s.graph_limit})",
                               settings={**settings, "graph_limit": s.graph_limit,
                                         "excludes_scidocs": self.excludes_scidocs}))

    def plan_index(self, run: Any = None) -> None:
        """The kNN index over the corpus' graph embeddings (kNN triplets only). An existing --ann_index_path this
        stage did not make from these inputs and settings (the user's, or another seed's corpus) is an input, never
        rebuilt unless --override_ann: the miner uses it when it fits and refuses it otherwise."""
        p, s = self.p, self.s
        if s.triples_source != "knn":
            return
        from scincl.knn.ann import index_config_path, index_ids_path

        ann = index_stage("ann", {"embeddings": p.graph_embeddings, "ids": p.graph_ids}, p.ann_index, p.corpus_ids,
                          search=self.search, workers=s.workers, seed=s.seed,
                          outputs=[p.ann_index, index_ids_path(p.ann_index), index_config_path(p.ann_index)],
                          inputs=[p.graph_embeddings, p.graph_ids, p.corpus_ids],
                          description=f"FAISS {s.faiss_string_factory} index ({s.ann_metric})",
                          settings={"string_factory": s.faiss_string_factory, "metric": s.ann_metric,
                                    "do_normalize": s.ann_do_normalize, "seed": s.seed})
        if not self.given_index or "ann" in s.override or reuse_decision(ann) is None:
            self.add(ann)

    def plan_triples(self, run: Any = None) -> None:
        """The triplets of ``--triples_source`` (:meth:`sampling`)."""
        p, s = self.p, self.s
        inputs = ([p.ann_index, p.graph_embeddings, p.graph_ids, p.query_ids, p.corpus_ids]
                  if s.triples_source == "knn" else [self.citations_for_triples, p.query_ids])
        self.add(triples_stage("triples", s.triples_source, p.triples, p.query_ids, sampling=self.sampling(),
                               inputs=inputs, description=f"{s.triples_source} triplets",
                               settings=self.triples_settings()))

    def plan_texts(self, run: Any = None) -> None:
        """The titles and abstracts of the triplets' papers."""
        p = self.p
        self.add(texts_stage("metadata", p.triples, p.metadata, self.metadata_dir, workers=self.s.workers,
                             corpus_format=self.corpus_format, keep_counts=False,
                             inputs=[p.triples, self.metadata_dir], settings={"corpus_format": self.corpus_format},
                             description="titles and abstracts of the triplets' papers"))

    def plan_train(self, run: Any = None) -> None:
        """Fine-tuning the base encoder on the triplets (scincl/pipeline/layout.py:train_stage)."""
        options = dict(self.s.training_options)
        options.setdefault("seed", self.s.seed)
        # checkpoints of this run (an interrupted stage) are resumed from; another run's are discarded
        options.setdefault("other_run", "restart")
        self.add(self.train_step("train", self.s, self.p.triples, self.p.metadata, self.p.model, self.base_model,
                                 options, self.training_leakage_inputs, threads=self.torch_threads,
                                 outputs=[self.p.model], inputs=[self.p.triples, self.p.metadata,
                                                                 local_path(self.base_model)],
                                 settings=self.train_settings(), description=f"fine-tune {self.base_model}",
                                 eval_max_sequence_length=self.s.eval_max_sequence_length))

    def plan_evaluate(self, run: Any = None) -> None:
        """SciDocs evaluations of the base and the trained encoder, and their comparison (with a SciDocs folder)."""
        p, s = self.p, self.s
        if self.scidocs_dir is None:
            return
        if s.evaluate_base_model:
            self.add(self.evaluate_stage(
                "eval_base", self.base_model, p.base_eval, outputs=[p.base_eval / "results.json"],
                output_dir=p.base_eval, inputs=[self.scidocs_dir, local_path(self.base_model)],
                settings={"base_model": self.base_model, **self.eval_settings()},
                description=f"SciDocs evaluation of the base encoder {base_model_short_name(self.base_model)}"))
        self.add(self.evaluate_stage("eval", str(p.model), p.eval, outputs=[p.eval / "results.json"],
                                     inputs=[p.model, self.scidocs_dir], output_dir=p.run,
                                     description="SciDocs evaluation of the trained encoder",
                                     settings=self.eval_settings()))
        self.add(Stage("compare", [p.comparison / "comparison.md"], self.compare,
                       inputs=[p.eval / "results.json", p.base_eval / "results.json"], output_dir=p.comparison,
                       description="results table: base vs trained",
                       settings={"split": s.split, "triples_source": s.triples_source,
                                 "base_model": base_model_short_name(self.base_model)}))

    def workload(self) -> Workload:
        """What this run is about to do, counted from its inputs before stage 1 (scincl/workload.py:run_workload)."""
        return run_workload(self, base_model_short_name(self.base_model))

    def eval_paper_count(self) -> Optional[int]:
        """How many SciDocs papers the evaluation embeds per encoder (scincl/workload.py:eval_paper_count)."""
        return eval_paper_count(self.scidocs_dir, self.s.val_or_test_or_both)

    def announce(self) -> str:
        """The plan before stage 1 (logged unless ``--dry_run``, which prints it) and, for a long run without a GPU,
        the warning naming the CPU preset (experiments/presets/cpu.py); returns the plan's text."""
        import torch

        work, gpu = self.workload(), torch.cuda.is_available()
        plan = format_workload(work, gpu)
        if not self.s.dry_run:
            logger.info("%s", plan)
        warning = cpu_warning(work, gpu, "--preset cpu")
        if warning and self.s.preset in (None, "paper"):
            logger.warning("%s", warning)
        return plan

    def run(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        """Run every stage; returns the stage results and the comparison table (when evaluated)."""
        plan = self.announce()
        if self.s.dry_run:  # the plan and, stage by stage, what would run and why
            stages = self.stages()
            waiting = dict(waiting_stages(stages))
            plan += "\nstages:\n" + "\n".join(
                f"  {st.name}: " + (f"to run ({waiting[st.name]})" if st.name in waiting else "done") for st in stages)
            return {"results": {}, "table": None, "paths": self.p, "manifest": {}, "dry_run": True, "plan": plan}
        self.p.run.mkdir(parents=True, exist_ok=True)
        stages = self.stages()
        names = [st.name for st in stages]
        for flag, chosen in (("skip", self.s.skip), ("override", self.s.override)):
            for name in chosen:
                if name in ALL_STAGE_NAMES and name not in names:
                    logger.info("--%s_%s: stage %s does not run in this configuration", flag, name, name)
        manifest = Manifest(self.p.run, arguments)
        manifest.set("paths", {k: str(v) for k, v in vars(self.p).items()})
        manifest.set("base_model", self.base_model)
        skip = [n for n in self.s.skip if n in names] + unselected_stages(stages, self.s.stages or [])
        results = run_stages(stages, manifest, skip=skip, override=[n for n in self.s.override if n in names])
        if "train" in names and "train" not in self.s.skip and self.p.model.exists():
            manifest.set("leakage", self.leakage_record())
            manifest.set("embedding_check", recorded_embedding_check(self.p.model))  # issue 41: collapse warning
        table = None
        if (self.p.comparison / "comparison.md").exists() and "compare" in names:
            table = (self.p.comparison / "comparison.md").read_text()
            manifest.set("comparison", str(self.p.comparison / "comparison.md"))
        manifest.write_all()
        return {"results": results, "table": table, "paths": self.p, "manifest": manifest.data}


def unselected_stages(stages: List[Stage], selected: List[str]) -> List[str]:
    """The stages of the plan ``--stages`` leaves out (none when nothing is selected), once each of them that comes
    before a selected one is checked to be done by the runner's reuse rule
    (:func:`~scincl.pipeline.runner.waiting_stages`, as a dry run reports), else one :class:`InputError` line naming the stage to run
    first. A selected stage this run does not plan is logged."""
    if not selected:
        return []
    names = [stage.name for stage in stages]
    for name in selected:
        if name not in names:
            logger.info("--stages %s: stage %s does not run in this configuration", name, name)
    last = max((names.index(name) for name in selected if name in names), default=-1)
    waiting = waiting_stages([stage for stage in stages[:last] if stage.name not in selected])
    if waiting:
        name, why = waiting[0]
        raise InputError(f"--stages {','.join(selected)}: stage {name} comes first and is not done ({why}); "
                         f"run it first (--stages {name})")
    return [name for name in names if name not in selected]
