"""Real-corpus reproduction (issue 8): the paper's comparisons on hep-th and CiteSeer at CPU scale.

One :class:`CorpusPlan` per corpus and output dir. Everything the arms share is built once under
``OUTPUT_DIR/shared`` and reused by every later command (citations without the SciDocs query papers,
co-citations, BigGraph embeddings, FAISS indexes, the SciDocs papers of each split, the base
encoder's evaluation, the query sample of each seed); each arm x seed gets its own triplets, model
and evaluation under ``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``.

A run is planned first, then run, as ``run_specter``'s: the methods below only *plan* (each adds the
:class:`~scincl.pipeline.runner.Stage` objects of what it asks for, its inputs' stages first, to the plan and
returns the path its stage writes), :meth:`CorpusPlan.execute` hands the planned stages, in order, to
:func:`~scincl.pipeline.runner.run_stages`, the runner of ``run_specter``: the same reuse rule, the same log lines,
a ``manifest.json`` in each output directory, so an interrupted command resumes and a finished one re-prints its
tables for free. :meth:`CorpusPlan.arm_stages` is one arm x seed's whole plan.

The arms (paper Table 1 "w/o leakage" rows, at equal budget: ``base``, the encoder without fine-tuning, and the
trained ones, SPECTER-like citation triplets or SciNCL's kNN triplets on a graph's embeddings), their graphs and
the corpora are data: ``scincl/settings/arms.py``.

Every trained arm of one seed uses the same query papers (a seeded sample of the papers for which
*every* arm can build its triplets), the same number of triplets and the same training recipe.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from scincl.corpus.shards import papers_with_text
from scincl.errors import InputError
from scincl.graph import stage as corpus_stage
from scincl.io import PathLike, iter_tsv, read_id_list, read_json, write_id_list, write_json
from scincl.leakage import write_edges_without
from scincl.pipeline.layout import (Planner, citation_files, citations_stage, encoder_path, evaluate_stage, graph_files,
                                    graph_stage, index_stage, leakage_inputs, precision_key, queries_stage, recipe_key,
                                    run_files, score_embeddings, texts_stage, train_stage, triples_stage)
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import Stage, run_stages
from scincl.scidocs_io import query_candidate_pairs, split_papers
from scincl.settings.arms import GRAPHS, CorpusSpec, arm_setting
from scincl.settings.recipe import Recipe, recipe_record
from scincl.settings.schema import SCINCL
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.miner import make_config
from scincl.triples.queries import eligible_for_every_arm
from scincl.triples.sources import SPECTER_LIKE

logger = logging.getLogger(__name__)

# BigGraph training workers of the real-corpus graphs (PBG's ``workers``; unset = one Hogwild! worker
# per core, whose interleaving differs between runs). One worker makes the graph, and so SciNCL's
# triplets, byte-reproducible from a clean checkout (scincl/graph/pbg_compat.py seeds it); its cost on
# hep-th is in docs/results.md ("Reproducibility").
BIGGRAPH_WORKERS = 1

# The kNN arms' index and search: FAISS Flat (exact) inner product over the L2-normalised graph embeddings (cosine;
# the original README's build_faiss --do_normalize), the paper's k as given.
REAL_CORPUS_SEARCH = KnnSearch(ann_metric="inner_product", ann_normalize_embeddings=True, faiss_string_factory="Flat")


class CorpusPlan(Planner):
    """The plan of one corpus' shared stages and per-arm runs (see the module docstring); the steps it shares with
    ``run_specter``'s plan: :class:`~scincl.pipeline.layout.Planner`."""

    def __init__(self, corpus: CorpusSpec, output_dir: PathLike, eval_max_sequence_length: int = 128,
                 workers: Optional[int] = None, cocitation_min_count: int = 2, create: bool = True) -> None:
        self.corpus = corpus
        self.out = Path(output_dir)
        self.shared = self.out / "shared"
        # the citation edges the graphs are trained on (w/o the SciDocs query papers) and the held-out ones
        self.citations_train, self.citations_test = citation_files(self.shared)
        self.eval_max_sequence_length = eval_max_sequence_length
        self.workers = workers
        self.cocitation_min_count = cocitation_min_count
        if create:  # not for a dry run, which writes nothing
            self.shared.mkdir(parents=True, exist_ok=True)
        super().__init__(self.out, self.shared, Manifest(self.out, {
            "corpus": corpus.name, "eval_max_sequence_length": eval_max_sequence_length, "workers": workers,
            "cocitation_min_count": cocitation_min_count}))

    def execute(self) -> None:
        """Run (or reuse) the planned stages in order (:func:`~scincl.pipeline.runner.run_stages`, recorded in the
        corpus' manifest); the plan is empty afterwards."""
        stages = self.take()
        if stages:
            run_stages(stages, self.manifest)

    def built(self, value: Any) -> Any:
        """``value`` (a path or paths the plan writes) once the planned stages have run (:meth:`execute`)."""
        self.execute()
        return value

    def stage(self, output: Path, run: Callable[[], Any], inputs: Sequence[Path] = (), outputs: Sequence[Path] = (),
              description: str = "", output_dir: Optional[Path] = None,
              reusable: Optional[Callable[[], bool]] = None) -> Path:
        """Plan one step (reused when its outputs exist); returns ``output``.

        The stage is named by its output's path below OUTPUT_DIR; ``outputs`` adds further files
        that must exist for a reuse, ``reusable`` a further condition (e.g. the split is scored).
        """
        self.add(Stage(self.stage_name(output), [output, *outputs], run, inputs=[p for p in inputs if p is not None],
                       output_dir=output_dir, description=description, reusable=reusable))
        return output

    # ------------------------------------------------------------------ shared inputs
    def citations(self) -> Path:
        """Citation edges without the SciDocs query papers (w/o leakage), 5 % held out for link prediction."""
        self.add(citations_stage(
            self.stage_name(self.citations_train), self.corpus.metadata_dir, self.citations_train.parent,
            test_ratio=SCINCL.shared_graph_test_ratio, seed=SCINCL.shared_graph_seed,
            excluded=self.corpus.excluded_ids, workers=self.workers,
            description="citation edges w/o the SciDocs queries"))
        return self.citations_train

    def cocitations(self) -> Path:
        """Co-citation pairs (both directions, with counts) without the SciDocs query papers."""
        path = self.cocitations_path()
        return self.stage(path, lambda: corpus_stage.get_cocitations(
            str(self.corpus.metadata_dir), str(path), excluded_paper_ids=str(self.corpus.excluded_ids),
            min_count=self.cocitation_min_count, workers=self.workers),
            inputs=[self.corpus.metadata_dir, self.corpus.excluded_ids], description="co-citation pairs")

    def cocitations_path(self) -> Path:
        """Where :meth:`cocitations` writes the co-citation pairs."""
        return self.shared / f"cocitations.min{self.cocitation_min_count}.tsv"

    def graph_dir(self, kind: str, dim: int, comparator: str = "dot") -> Path:
        """Where :meth:`graph` writes the embeddings of one graph."""
        return self.shared / f"graph_{kind}_{dim}d_{comparator}"

    def graph(self, kind: str = "cite", dim: int = 64, comparator: str = "dot") -> Dict[str, Path]:
        """Embeddings of a graph of :data:`GRAPHS` (scincl/settings/arms.py): the citation (``cite``), co-citation
        (``cocite``) or transductive citation graph by BigGraph, or the citation graph by another method; its edges
        are staged first (only the citation graph has held-out edges to score)."""
        directory = self.graph_dir(kind, dim, comparator)
        result = graph_files(directory)
        if kind not in GRAPHS:
            raise InputError(f"unknown graph kind {kind!r}")
        graph = GRAPHS[kind]
        if comparator not in graph.get("comparators", (comparator,)):
            raise InputError(f"the {kind} graph is trained with the {', '.join(graph['comparators'])} comparator only")
        edges = {"citations": self.citations, "cocitations": self.cocitations,
                 "transductive": self.transductive_citations}[graph["edges"]]
        train, test = edges(), self.citations_test if graph["edges"] == "citations" else None
        method = graph["method"]
        embed: Dict[str, Any] = {"method": method, "config": graph["config"].format(comparator=comparator),
                                 "seed": SCINCL.shared_graph_seed}
        if method == "pbg":  # BigGraph's dimension and worker count as overrides of the config
            embed["overrides"] = f"dimension={dim} workers={BIGGRAPH_WORKERS}"
        else:
            embed["dimension"] = dim
        self.add(graph_stage(self.stage_name(result["embeddings"]), train, test, directory, embed=embed,
                             description=f"BigGraph {kind} {dim}d {comparator}" if method == "pbg"
                             else f"{method} {kind} {dim}d"))
        return result

    def transductive_citations(self) -> Path:
        """Every citation edge except those between a SciDocs query and its own candidates.

        The graph-only retriever needs the query papers in the graph: this graph keeps each query's
        other citations (as OpenMSD's held-out-edge protocol does) and hides only the edges the
        cite / co-cite tasks ask about. It is an optimistic, transductive setting, not "w/o leakage".
        """
        path = self.shared / "citations_transductive.tsv"
        everything = self.stage(self.shared / "citations_all.tsv", lambda: corpus_stage.get_citations(
            str(self.corpus.metadata_dir), str(self.shared / "citations_all.tsv"), workers=self.workers),
            inputs=[self.corpus.metadata_dir], description="every citation edge")
        return self.stage(path, lambda: self._hide_query_candidate_edges(everything, path), inputs=[everything],
                          description="citations minus the SciDocs query-candidate edges")

    def _hide_query_candidate_edges(self, everything: Path, path: Path) -> None:
        kept, removed = write_edges_without(everything, path, query_candidate_pairs(self.corpus.scidocs_dir))
        logger.info("transductive citations: %d edges kept, %d query-candidate edges hidden", kept, removed)

    def ann_index(self, kind: str, dim: int) -> Path:
        """FAISS Flat inner-product index over the normalised graph embeddings (papers with text only)."""
        graph = self.graph(kind, dim)
        path = self.shared / f"graph_{kind}_{dim}d_dot.Flat.faiss"
        corpus = self.graph_papers_with_text(kind, dim)
        self.add(index_stage(self.stage_name(path), graph, path, corpus, search=REAL_CORPUS_SEARCH,
                                   workers=self.workers, inputs=[graph["embeddings"], corpus], keep_result=True,
                                   description=f"FAISS index of the {kind} graph ({dim}d)"))
        return path

    def graph_papers_with_text(self, kind: str, dim: int) -> Path:
        """The graph's papers that have a text: the kNN arms' corpus (index, positives, negatives)."""
        path = self.shared / f"graph_{kind}_{dim}d.papers_with_text.json"
        with_text, graph_ids = self.papers_with_text(), self.graph(kind, dim)["ids"]

        def write() -> None:
            keep = set(read_id_list(with_text))
            write_id_list(path, [pid for pid in read_id_list(graph_ids) if pid in keep])

        return self.stage(path, write, inputs=[with_text, graph_ids], description="graph papers with a text")

    def papers_with_text(self) -> Path:
        """Ids of the corpus papers that have a title or an abstract (the only ones an encoder can use)."""
        path = self.shared / "papers_with_text.json"

        def write() -> None:
            write_id_list(path, papers_with_text(self.corpus.metadata_dir))

        return self.stage(path, write, inputs=[self.corpus.metadata_dir], description="papers with a text")

    # ------------------------------------------------------------------ queries
    def eligible_queries_file(self, graph_dim: int) -> Path:
        """The file of the papers every arm can build 5 triplets for (sorted ids).

        SPECTER-like needs >= 5 cited (CiteSeer: linked) papers and >= 2 citations of citations that
        are not cited; the kNN arms need the paper in the citation and co-citation graphs; the
        encoder needs its text. SciDocs query papers are never eligible (not in the graphs).
        """
        path = self.shared / f"eligible_queries_g{graph_dim}.json"
        inputs = self.eligibility_inputs(graph_dim)
        return self.stage(path, lambda: self._write_eligible_queries(path, *inputs), inputs=inputs,
                          description="queries every arm can build 5 triplets for")

    def eligibility_inputs(self, graph_dim: int) -> List[Path]:
        """What decides which papers every arm can use (planned first): the citation edges, the citation and
        co-citation graphs' ids, the papers with a text, the excluded (SciDocs query) papers."""
        return [self.citations(), self.graph("cite", graph_dim)["ids"], self.graph("cocite", graph_dim)["ids"],
                self.papers_with_text(), self.corpus.excluded_ids]

    def eligible_queries(self, graph_dim: int) -> List[str]:
        """The papers every arm can build 5 triplets for (sorted; :meth:`eligible_queries_file`, run first)."""
        return read_id_list(self.built(self.eligible_queries_file(graph_dim)))

    def _write_eligible_queries(self, path: Path, citations: Path, cite_ids: Path, cocite_ids: Path,
                                with_text_ids: Path, excluded_ids: Path) -> None:
        edges = ((citing, cited) for _, (citing, cited, *_rest) in iter_tsv(citations))
        eligible = eligible_for_every_arm(edges, self.corpus.bidirectional,
                                          set(read_id_list(cite_ids)) & set(read_id_list(cocite_ids)),
                                          set(read_id_list(with_text_ids)), set(read_id_list(excluded_ids)))
        write_id_list(path, eligible)
        logger.info("%d papers are eligible queries for every arm", len(eligible))

    def queries(self, seed: int, count: int, graph_dim: int) -> Path:
        """``count`` query papers sampled with ``seed`` from the eligible ones (shared by all arms;
        scincl/pipeline/layout.py:queries_stage)."""
        path = self.shared / "queries" / f"seed_{seed}.n{count}.g{graph_dim}.json"
        eligible = self.eligible_queries_file(graph_dim)
        self.add(queries_stage(self.stage_name(path), path, selection="eligible_for_all_arms",
                                     select={"eligible": eligible, "count": count, "seed": seed,
                                             "where": self.corpus.name},
                                     outputs=[path], inputs=[eligible], description=f"{count} query papers, seed {seed}"))
        return path

    # ------------------------------------------------------------------ arms
    def triples_stage(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Stage:
        """The arm's triplets stage (scincl/pipeline/layout.py:triples_stage); the inputs its source
        reads are staged first. The kNN miner's bands come from the recipe (the other slots keep SciNCL's, each band
        starts at k_max - count: scincl/settings/schema.py:derive_bands) and it searches :data:`REAL_CORPUS_SEARCH`;
        the SPECTER-like sampler writes exactly the recipe's number of triplets."""
        setting = arm_setting(arm)
        path = run_files(run_dir)[0]
        queries = self.queries(seed, query_count(recipe), recipe.graph_dim)
        if setting.triples_source == SPECTER_LIKE:
            citations = self.citations()
            sampling: Dict[str, Any] = {"citations_input_path": citations, "triples_count": recipe.triplets,
                                        "bidirectional": self.corpus.bidirectional}
            inputs = [citations, queries]
        else:
            graph = self.graph(setting.graph, recipe.graph_dim)
            index = self.ann_index(setting.graph, recipe.graph_dim)
            corpus = self.graph_papers_with_text(setting.graph, recipe.graph_dim)
            config = make_config(**recipe.miner_flags())  # the recipe's bands; other slots: SciNCL's
            sampling = {"graph_paper_ids_path": graph["ids"], "graph_embeddings_path": graph["embeddings"],
                        "config": config, "search": REAL_CORPUS_SEARCH, "ann_index_path": index,
                        "include_paper_ids": str(corpus), "workers": self.workers, "show_progress": False}
            inputs = [graph["embeddings"], index, queries]
        return triples_stage(self.stage_name(path), setting.triples_source, path, queries,
                             sampling={**sampling, "seed": seed}, inputs=inputs, description=f"{arm} triplets, seed {seed}")

    def train_stage(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Stage:
        """The arm's training stage (scincl/pipeline/layout.py:train_stage) on the triplets and texts in
        ``run_dir`` (:meth:`plan_triples` and :meth:`plan_texts` plan their stages first)."""
        model = run_dir / "model"
        triples, metadata = run_files(run_dir)
        return train_stage(self.stage_name(model / "train_args.json"), triples, metadata, model,
                           base_model=encoder_path(recipe.base_model_name_or_path), loss=recipe.loss,
                           pooling_strategy=recipe.pooling_strategy, max_sequence_length=recipe.max_sequence_length,
                           bitfit=False, training={**recipe.training_arguments(), "seed": seed, "save_strategy": "no"},
                           leakage=lambda: self.leakage_inputs(arm, recipe),
                           outputs=[model / "train_args.json"], inputs=[triples, metadata],
                           description=f"train {arm} seed {seed}")

    def texts_stage(self, run_dir: Path) -> Stage:
        """The texts of the run's triplets' papers (scincl/pipeline/layout.py:texts_stage)."""
        triples, metadata = run_files(run_dir)
        return texts_stage(self.stage_name(metadata), triples, metadata, self.corpus.metadata_dir,
                           workers=self.workers or 1, inputs=[triples], description="texts of the triplets' papers")

    def leakage_inputs(self, arm: str, recipe: Recipe) -> Dict[str, Any]:
        """What the leakage guard of ``train`` checks for an arm (scincl/leakage.py): the SciDocs query
        papers against the arm's graph nodes and the citation edges it came from (w/o leakage: none)."""
        setting = arm_setting(arm)
        graph_ids = graph_edges = None
        if setting.triples_source != SPECTER_LIKE:  # paths only: called when the training runs, the graph exists
            graph_ids = graph_files(self.graph_dir(setting.graph, recipe.graph_dim))["ids"]
            graph_edges = (self.cocitations_path() if GRAPHS[setting.graph]["edges"] == "cocitations"
                           else self.citations_train)
        return leakage_inputs(self.corpus.excluded_ids, setting.triples_source, graph_ids, graph_edges,
                              self.citations_train)

    def eval_papers(self, split: str) -> Path:
        """The SciDocs papers one split needs (its qrels' queries and candidates, all classification papers)."""
        path = self.shared / f"scidocs_papers.{split}.json"
        return self.stage(path, lambda: write_json(path, split_papers(self.corpus.scidocs_dir, split), indent=False),
                          inputs=[self.corpus.scidocs_dir], description=f"SciDocs papers of the {split} split")

    def evaluate(self, model: str, run_dir: Path, split: str, pooling: Optional[str] = None,
                 bf16: str = "false") -> Path:
        """Plan the embedding of the split's SciDocs papers (``eval_max_sequence_length`` tokens, fp32 unless
        ``bf16``) and their scores (scincl/pipeline/layout.py:evaluate_stage); returns ``results.json``, which holds
        the scores of every split evaluated."""
        results, papers = run_dir / "results.json", self.eval_papers(split)
        self.add(evaluate_stage(
            self.stage_name(results), model, self.corpus.scidocs_dir, run_dir, split=split, pooling_strategy=pooling,
            max_sequence_length=self.eval_max_sequence_length, papers=lambda: papers, bf16=bf16,
            outputs=[results], inputs=[Path(model)], output_dir=run_dir, reusable=lambda: split in _splits_of(results),
            description=f"evaluate {run_dir} ({split})"))
        return results

    def score_embeddings(self, embeddings: Path, run_dir: Path, split: str) -> None:
        """SciDocs scores of one embeddings file (also for MAG/MeSH when the corpus has their labels)."""
        score_embeddings(self.corpus.scidocs_dir, run_dir, split, embeddings)

    def base_dir(self, split: str, recipe: Recipe) -> Path:
        """Where the untuned encoder's evaluation of ``recipe`` lives (shared by every experiment with the same
        pooling, lengths and precision)."""
        embedding = "_ebf16" if precision_key(recipe).endswith("_ebf16") else ""
        name = f"{recipe.pooling_strategy}_len{self.eval_max_sequence_length}{embedding}{recipe.encoder_key()}"
        return self.shared / "base" / name / split

    def base_stages(self, split: str, recipe: Recipe) -> List[Stage]:
        """The plan of the untuned encoder's evaluation (:meth:`base_dir`); the plan is empty afterwards."""
        self.evaluate(encoder_path(recipe.base_model_name_or_path), self.base_dir(split, recipe), split,
                      pooling=recipe.pooling_strategy, bf16=recipe.eval_bf16)
        return self.take()

    def run_base(self, split: str, recipe: Recipe) -> Path:
        """The untuned encoder's evaluation (:meth:`base_stages`, run); returns its run dir."""
        run_dir = self.base_dir(split, recipe)
        run_dir.mkdir(parents=True, exist_ok=True)
        run_stages(self.base_stages(split, recipe), self.manifest)
        return run_dir

    def run_dir(self, arm: str, seed: int, recipe: Recipe, split: str) -> Path:
        """Where one arm x seed x recipe lives (``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``).

        Every experiment reads its runs from here, so a run shared by two studies (the default
        recipe of a sweep and of the tuning table, say) is trained once.
        """
        return self.out / "runs" / split / recipe_key(recipe) / arm / f"seed_{seed}"

    def arm_stages(self, arm: str, seed: int, recipe: Recipe, split: str) -> List[Stage]:
        """The whole plan of one arm and seed, in running order (:meth:`Planner.plan`, the steps below): the shared
        stages it reads (citations, graphs, queries, index), its triplets, their texts, the training and the
        evaluation; the plan is empty afterwards."""
        return self.plan(ArmRun(arm, seed, recipe, split, self.run_dir(arm, seed, recipe, split)))

    # ------------------------------------------------------------------ one arm x seed: the steps of Planner.plan
    def plan_inputs(self, run: "ArmRun") -> None:
        """The inputs every arm's query papers depend on (:meth:`eligibility_inputs`)."""
        self.eligibility_inputs(run.recipe.graph_dim)

    def plan_queries(self, run: "ArmRun") -> None:
        """The seed's query papers, shared by every arm (:meth:`queries`)."""
        self.queries(run.seed, query_count(run.recipe), run.recipe.graph_dim)

    def plan_index(self, run: "ArmRun") -> None:
        """The kNN index of the arm's graph (kNN arms only; :meth:`ann_index`)."""
        setting = arm_setting(run.arm)
        if setting.triples_source != SPECTER_LIKE:
            self.ann_index(setting.graph, run.recipe.graph_dim)

    def plan_triples(self, run: "ArmRun") -> None:
        """The arm's triplets (:meth:`triples_stage`)."""
        self.add(self.triples_stage(run.arm, run.seed, run.recipe, run.run_dir))

    def plan_texts(self, run: "ArmRun") -> None:
        """The texts of the arm's triplets' papers (:meth:`texts_stage`)."""
        self.add(self.texts_stage(run.run_dir))

    def plan_train(self, run: "ArmRun") -> None:
        """The fine-tuning of the recipe's encoder on them (:meth:`train_stage`)."""
        self.add(self.train_stage(run.arm, run.seed, run.recipe, run.run_dir))

    def plan_evaluate(self, run: "ArmRun") -> None:
        """The trained encoder's SciDocs evaluation on the arm's split (:meth:`evaluate`)."""
        self.evaluate(str(run.run_dir / "model"), run.run_dir, run.split, bf16=run.recipe.eval_bf16)

    def run_arm(self, arm: str, seed: int, recipe: Recipe, split: str) -> Path:
        """Triplets -> training -> evaluation of one arm and seed (:meth:`arm_stages`, run); returns the run dir."""
        run_dir = self.run_dir(arm, seed, recipe, split)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_json(run_dir / "recipe.json", {"arm": arm, "seed": seed, "corpus": self.corpus.name,
                                             "eval_max_sequence_length": self.eval_max_sequence_length,
                                             **recipe_record(recipe)})
        run_stages(self.arm_stages(arm, seed, recipe, split), self.manifest)
        return run_dir


@dataclass(frozen=True)
class ArmRun:
    """One arm x seed x recipe of a corpus plan, evaluated on ``split`` in ``run_dir`` (the ``run`` of
    :meth:`Planner.plan`)."""

    arm: str
    seed: int
    recipe: Recipe
    split: str
    run_dir: Path


def query_count(recipe: Recipe) -> int:
    """The query papers a recipe's triplets are drawn for (its triplets over SciNCL's triplets per query)."""
    return -(-recipe.triplets // SCINCL.triples_per_query)


def _splits_of(results_path: Path) -> Sequence[str]:
    data = read_json(results_path)
    return list(data.get("scores", {})) if isinstance(data, dict) else []
