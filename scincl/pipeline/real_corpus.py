"""The real-corpus experiments' plan (hep-th, CiteSeer at CPU scale), one :class:`CorpusPlan` per corpus: what the
arms share once under ``OUTPUT_DIR/shared``, each arm x seed under ``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``.
A method plans a stage (its inputs' stages first) and returns the path it writes; ``run_specter``'s runner runs them."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from scincl.corpus.shards import papers_with_text
from scincl.errors import InputError
from scincl.graph import stage as corpus_stage
from scincl.io import PathLike, iter_tsv, read_id_list, read_json, write_id_list, write_json
from scincl.leakage import write_edges_without
from scincl.pipeline.layout import (Planner, citation_files, citations_stage, encoder_path, evaluate_stage, graph_files,
                                    graph_stage, index_stage, leakage_inputs, precision_key, queries_stage, recipe_key,
                                    run_files, texts_stage, train_stage, triples_stage)
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import STATUS_RAN, Stage, run_stages
from scincl.scidocs_io import query_candidate_pairs, split_papers
from scincl.settings.arms import BASE, GRAPHS, CorpusSpec, arm_setting
from scincl.settings.recipe import Recipe, recipe_record
from scincl.settings.schema import SCINCL
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.queries import eligible_for_every_arm
from scincl.triples.sources import SPECTER_LIKE

logger = logging.getLogger(__name__)

# BigGraph training workers (PBG's ``workers``; unset: one Hogwild! worker per core, interleaved differently each run):
# one makes the graph, and so SciNCL's triplets, byte-reproducible (its cost: docs/results.md "Reproducibility")
BIGGRAPH_WORKERS = 1
# the kNN arms' index and search: FAISS Flat inner product over the L2-normalised graph embeddings (cosine)
REAL_CORPUS_SEARCH = KnnSearch(ann_metric="inner_product", ann_normalize_embeddings=True, faiss_string_factory="Flat")


@dataclass(frozen=True)
class ArmRun:
    """One arm x seed x recipe, evaluated on ``split`` in ``run_dir`` (the ``run`` of :meth:`Planner.plan`)."""

    arm: str
    seed: int
    recipe: Recipe
    split: str
    run_dir: Path


class CorpusPlan(Planner):
    """The plan of one corpus' shared stages and arm runs (see the module docstring)."""

    def __init__(self, corpus: CorpusSpec, output_dir: PathLike, eval_max_sequence_length: int = 128,
                 workers: Optional[int] = None, cocitation_min_count: int = 2, create: bool = True) -> None:
        self.corpus, self.out, self.workers = corpus, Path(output_dir), workers
        self.eval_max_sequence_length = eval_max_sequence_length
        self.ran = 0  # stages run (not reused) so far: what a step's wall time measures (grid.Timings)
        super().__init__(self.out, self.out / "shared")
        self.manifest = Manifest(self.out, {"corpus": corpus.name, "eval_max_sequence_length": eval_max_sequence_length,
                                            "workers": workers, "cocitation_min_count": cocitation_min_count})
        self.citations_train, self.citations_test = citation_files(self.shared)  # w/o the SciDocs query papers
        self.cocitations_file = self.shared / f"cocitations.min{cocitation_min_count}.tsv"
        self.cocitation_min_count = cocitation_min_count
        if create:  # not for a dry run, which writes nothing
            self.shared.mkdir(parents=True, exist_ok=True)

    def built(self, value: Any) -> Any:
        """``value`` (what the plan writes) once the planned stages have run or been reused; the plan is empty."""
        self.execute(self.take())
        return value

    def execute(self, stages: List[Stage]) -> None:
        """Run (or reuse) ``stages`` in order (the runner of ``run_specter``), counting those it ran."""
        if stages:
            self.ran += sum(result.status == STATUS_RAN for result in run_stages(stages, self.manifest).values())

    def stage(self, output: Path, run: Callable[[], Any], **stage: Any) -> Path:
        """Plan one step named by its ``output`` below OUTPUT_DIR (``stage``: the other :class:`Stage` fields);
        returns ``output``."""
        self.add(Stage(self.stage_name(output), [output], run, **stage))
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
        path = self.cocitations_file
        return self.stage(path, lambda: corpus_stage.get_cocitations(
            str(self.corpus.metadata_dir), str(path), excluded_paper_ids=str(self.corpus.excluded_ids),
            min_count=self.cocitation_min_count, workers=self.workers),
            inputs=[self.corpus.metadata_dir, self.corpus.excluded_ids], description="co-citation pairs")

    def transductive_citations(self) -> Path:
        """Every citation edge but those between a SciDocs query and its candidates (the graph-only retriever's:
        OpenMSD's held-out-edge protocol; transductive, not "w/o leakage")."""
        everything, path = self.shared / "citations_all.tsv", self.shared / "citations_transductive.tsv"
        self.stage(everything, lambda: corpus_stage.get_citations(
            str(self.corpus.metadata_dir), str(everything), workers=self.workers),
            inputs=[self.corpus.metadata_dir], description="every citation edge")

        def hide() -> None:
            kept, removed = write_edges_without(everything, path, query_candidate_pairs(self.corpus.scidocs_dir))
            logger.info("transductive citations: %d edges kept, %d query-candidate edges hidden", kept, removed)

        return self.stage(path, hide, inputs=[everything],
                          description="citations minus the SciDocs query-candidate edges")

    def graph(self, kind: str = "cite", dim: int = 64, comparator: str = "dot") -> Dict[str, Path]:
        """The files (:func:`graph_files`) of a :data:`GRAPHS` graph's embeddings, its edges staged first."""
        graph, result = GRAPHS[kind], self.graph_paths(kind, dim, comparator)
        if comparator not in graph.get("comparators", (comparator,)):
            raise InputError(f"the {kind} graph is trained with the {', '.join(graph['comparators'])} comparator only")
        edges = {"citations": self.citations, "cocitations": self.cocitations,
                 "transductive": self.transductive_citations}[graph["edges"]]
        train, test = edges(), self.citations_test if graph["edges"] == "citations" else None  # held-out edges
        method, pbg = graph["method"], graph["method"] == "pbg"  # BigGraph: dimension and workers override its config
        embed = {"method": method, "config": graph["config"].format(comparator=comparator),
                 "seed": SCINCL.shared_graph_seed,
                 **({"overrides": f"dimension={dim} workers={BIGGRAPH_WORKERS}"} if pbg else {"dimension": dim})}
        description = f"BigGraph {kind} {dim}d {comparator}" if pbg else f"{method} {kind} {dim}d"
        self.add(graph_stage(self.stage_name(result["embeddings"]), train, test, result["dir"], embed=embed,
                             description=description))
        return result

    def graph_paths(self, kind: str, dim: int, comparator: str = "dot") -> Dict[str, Path]:
        """Where :meth:`graph` writes the embeddings of one graph (:func:`graph_files`)."""
        return graph_files(self.shared / f"graph_{kind}_{dim}d_{comparator}")

    def ann_index(self, kind: str, dim: int) -> Path:
        """FAISS Flat inner-product index over the normalised graph embeddings (papers with text only)."""
        graph, path = self.graph(kind, dim), self.shared / f"graph_{kind}_{dim}d_dot.Flat.faiss"
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
        return self.stage(path, lambda: write_id_list(path, papers_with_text(self.corpus.metadata_dir)),
                          inputs=[self.corpus.metadata_dir], description="papers with a text")

    def eval_papers(self, split: str) -> Path:
        """The SciDocs papers one split needs (its qrels' queries and candidates, all classification papers)."""
        path = self.shared / f"scidocs_papers.{split}.json"
        return self.stage(path, lambda: write_json(path, split_papers(self.corpus.scidocs_dir, split), indent=False),
                          inputs=[self.corpus.scidocs_dir], description=f"SciDocs papers of the {split} split")

    # ------------------------------------------------------------------ queries
    def eligible_queries_file(self, graph_dim: int) -> Path:
        """The papers every arm can build 5 triplets for (scincl/triples/queries.py:eligible_for_every_arm)."""
        path = self.shared / f"eligible_queries_g{graph_dim}.json"
        inputs = [self.citations(), self.graph("cite", graph_dim)["ids"], self.graph("cocite", graph_dim)["ids"],
                  self.papers_with_text(), self.corpus.excluded_ids]

        def write() -> None:
            edges = ((citing, cited) for _, (citing, cited, *_rest) in iter_tsv(inputs[0]))
            cite, cocite, with_text, excluded = (set(read_id_list(ids)) for ids in inputs[1:])
            eligible = eligible_for_every_arm(edges, self.corpus.bidirectional, cite & cocite, with_text, excluded)
            write_id_list(path, eligible)
            logger.info("%d papers are eligible queries for every arm", len(eligible))

        return self.stage(path, write, inputs=inputs, description="queries every arm can build 5 triplets for")

    def eligible_queries(self, graph_dim: int) -> List[str]:
        """The papers every arm can build 5 triplets for (:meth:`eligible_queries_file`, run first)."""
        return read_id_list(self.built(self.eligible_queries_file(graph_dim)))

    def queries(self, seed: int, count: int, graph_dim: int) -> Path:
        """``count`` query papers sampled with ``seed`` from the eligible ones (shared by all arms)."""
        path = self.shared / "queries" / f"seed_{seed}.n{count}.g{graph_dim}.json"
        eligible = self.eligible_queries_file(graph_dim)
        self.add(queries_stage(self.stage_name(path), path, selection="eligible_for_all_arms",
                               select={"eligible": eligible, "count": count, "seed": seed, "where": self.corpus.name},
                               outputs=[path], inputs=[eligible], description=f"{count} query papers, seed {seed}"))
        return path

    # ------------------------------------------------------------------ one arm x seed: the steps of Planner.plan
    def plan_inputs(self, run: ArmRun) -> None:
        """The papers every arm can use (:meth:`eligible_queries_file`) and what decides them."""
        self.eligible_queries_file(run.recipe.graph_dim)

    def plan_queries(self, run: ArmRun) -> None:
        """The seed's query papers, shared by every arm (:meth:`queries`)."""
        self.queries(run.seed, query_count(run.recipe), run.recipe.graph_dim)

    def plan_index(self, run: ArmRun) -> None:
        """The kNN index of the arm's graph (kNN arms only; :meth:`ann_index`)."""
        setting = arm_setting(run.arm)
        if setting.triples_source != SPECTER_LIKE:
            self.ann_index(setting.graph, run.recipe.graph_dim)

    def plan_triples(self, run: ArmRun) -> None:
        """The arm's triplets: SPECTER-like's exactly the recipe's number, the kNN miner's with the recipe's miner
        settings (:attr:`Recipe.miner`) searching :data:`REAL_CORPUS_SEARCH`."""
        setting, dim, path = arm_setting(run.arm), run.recipe.graph_dim, run_files(run.run_dir)[0]
        queries = self.queries(run.seed, query_count(run.recipe), dim)
        if setting.triples_source == SPECTER_LIKE:
            citations = self.citations()
            sampling: Dict[str, Any] = {"citations_input_path": citations, "triples_count": run.recipe.triplets,
                                        "bidirectional": self.corpus.bidirectional}
            inputs = [citations, queries]
        else:
            graph, index = self.graph(setting.graph, dim), self.ann_index(setting.graph, dim)
            sampling = {"graph_paper_ids_path": graph["ids"], "graph_embeddings_path": graph["embeddings"],
                        "config": run.recipe.miner, "search": REAL_CORPUS_SEARCH, "ann_index_path": index,
                        "include_paper_ids": str(self.graph_papers_with_text(setting.graph, dim)),
                        "workers": self.workers, "show_progress": False}
            inputs = [graph["embeddings"], index, queries]
        self.add(triples_stage(self.stage_name(path), setting.triples_source, path, queries,
                               sampling={**sampling, "seed": run.seed}, inputs=inputs,
                               description=f"{run.arm} triplets, seed {run.seed}"))

    def plan_texts(self, run: ArmRun) -> None:
        """The texts of the arm's triplets' papers."""
        triples, metadata = run_files(run.run_dir)
        self.add(texts_stage(self.stage_name(metadata), triples, metadata, self.corpus.metadata_dir,
                             workers=self.workers or 1, inputs=[triples], description="texts of the triplets' papers"))

    def plan_train(self, run: ArmRun) -> None:
        """The fine-tuning of the recipe's encoder on the arm's triplets and texts."""
        model, (triples, metadata), recipe = run.run_dir / "model", run_files(run.run_dir), run.recipe
        self.add(train_stage(self.stage_name(model / "train_args.json"), triples, metadata, model,
                             base_model=encoder_path(recipe.base_model_name_or_path), loss=recipe.loss,
                             pooling_strategy=recipe.pooling_strategy, max_sequence_length=recipe.max_sequence_length,
                             bitfit=False, training={**recipe.training_arguments(), "seed": run.seed,
                                                     "save_strategy": "no"},
                             leakage=lambda: self.leakage_inputs(run.arm, recipe),
                             outputs=[model / "train_args.json"], inputs=[triples, metadata],
                             description=f"train {run.arm} seed {run.seed}"))

    def plan_evaluate(self, run: ArmRun) -> None:
        """The trained encoder's SciDocs evaluation on the arm's split (:meth:`evaluate`)."""
        self.evaluate(str(run.run_dir / "model"), run.run_dir, run.split, bf16=run.recipe.eval_bf16)

    def leakage_inputs(self, arm: str, recipe: Recipe) -> Dict[str, Any]:
        """The leakage guard's inputs for an arm: the SciDocs query papers against its graph's nodes and edges."""
        setting, graph_ids, graph_edges = arm_setting(arm), None, None
        if setting.triples_source != SPECTER_LIKE:  # paths only: called when the training runs, the graph exists
            graph_ids = self.graph_paths(setting.graph, recipe.graph_dim)["ids"]
            graph_edges = (self.cocitations_file if GRAPHS[setting.graph]["edges"] == "cocitations"
                           else self.citations_train)
        return leakage_inputs(self.corpus.excluded_ids, setting.triples_source, graph_ids, graph_edges,
                              self.citations_train)

    def evaluate(self, model: str, run_dir: Path, split: str, pooling: Optional[str] = None,
                 bf16: str = "false") -> Path:
        """Plan the SciDocs scores of ``model`` on ``split`` (``eval_max_sequence_length`` tokens, fp32 unless
        ``bf16``); returns ``results.json``, which holds every split evaluated."""
        results, papers = run_dir / "results.json", self.eval_papers(split)

        def reusable() -> bool:  # results.json holds this split's scores
            data = read_json(results)
            return isinstance(data, dict) and split in data.get("scores", {})

        self.add(evaluate_stage(
            self.stage_name(results), model, self.corpus.scidocs_dir, run_dir, split=split, pooling_strategy=pooling,
            max_sequence_length=self.eval_max_sequence_length, papers=lambda: papers, bf16=bf16,
            outputs=[results], inputs=[Path(model)], output_dir=run_dir, reusable=reusable,
            description=f"evaluate {run_dir} ({split})"))
        return results

    # ------------------------------------------------------------------ the cells of an experiment
    def run_dir(self, arm: str, seed: int, recipe: Recipe, split: str) -> Path:
        """Where one arm x seed x recipe lives (every experiment reads it: a run two experiments share trains once)."""
        return self.out / "runs" / split / recipe_key(recipe) / arm / f"seed_{seed}"

    def cell(self, arm: str, seed: Optional[int], recipe: Recipe, split: str) -> Tuple[Path, List[Stage]]:
        """The run dir and whole plan of one cell: an arm x seed (:meth:`Planner.plan`) or the untuned encoder's
        evaluation (``arm`` :data:`BASE`, shared by every seed and recipe with its pooling, lengths and precision)."""
        if arm != BASE:
            run_dir = self.run_dir(arm, seed, recipe, split)
            return run_dir, self.plan(ArmRun(arm, seed, recipe, split, run_dir))
        embedding = "_ebf16" if precision_key(recipe).endswith("_ebf16") else ""
        run_dir = (self.shared / "base" / f"{recipe.pooling_strategy}_len{self.eval_max_sequence_length}{embedding}"
                   f"{recipe.encoder_key()}" / split)
        self.evaluate(encoder_path(recipe.base_model_name_or_path), run_dir, split, pooling=recipe.pooling_strategy,
                      bf16=recipe.eval_bf16)
        return run_dir, self.take()

    def run_cell(self, arm: str, seed: Optional[int], recipe: Recipe, split: str) -> Path:
        """Run (or reuse) one cell (:meth:`cell`), a trained arm's ``recipe.json`` first; returns its run dir."""
        run_dir, stages = self.cell(arm, seed, recipe, split)
        run_dir.mkdir(parents=True, exist_ok=True)
        if arm != BASE:
            write_json(run_dir / "recipe.json", {"arm": arm, "seed": seed, "corpus": self.corpus.name,
                                                 "eval_max_sequence_length": self.eval_max_sequence_length,
                                                 **recipe_record(recipe)})
        self.execute(stages)
        return run_dir


def query_count(recipe: Recipe) -> int:
    """The query papers a recipe's triplets are drawn for (its triplets over SciNCL's triplets per query)."""
    return -(-recipe.triplets // SCINCL.triples_per_query)
