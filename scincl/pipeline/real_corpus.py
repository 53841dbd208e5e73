"""The real-corpus experiments' plan (hep-th, CiteSeer at CPU scale), one :class:`CorpusPlan` per corpus: what the
arms share once under ``OUTPUT_DIR/shared``, each arm x seed under ``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``.
A method plans a stage (its inputs' stages first) and returns the path it writes; ``run_specter``'s runner runs them."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from scincl.corpus.shards import papers_with_text
from scincl.eval.experiment_pages import run_scores
from scincl.graph import stage as corpus_stage
from scincl.io import PathLike, read_id_list, write_id_list, write_json
from scincl.leakage import leakage_inputs, write_edges_without
from scincl.pipeline.layout import (citation_files, citations_stage, evaluate_stage, graph_files, graph_stage,
                                    index_stage, precision_key, recipe_key, run_files, texts_stage, train_stage)
from scincl.pipeline.runner import STATUS_RAN, Manifest, Stage, run_stages
from scincl.provenance import call_settings
from scincl.scidocs_io import query_candidate_pairs, split_papers
from scincl.settings.arms import BASE, GRAPHS, CorpusSpec, arm_setting
from scincl.settings.experiment import Experiment
from scincl.settings.recipe import Recipe, recipe_record
from scincl.settings.schema import SCINCL
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.queries import select_eligible_for_all_arms, select_eligible_for_every_arm
from scincl.triples.sources import SPECTER_LIKE, sampler

# BigGraph training workers (PBG's ``workers``; unset: one Hogwild! worker per core, interleaved differently each run):
# one makes the graph, and so SciNCL's triplets, byte-reproducible (its cost: docs/results.md "Reproducibility")
BIGGRAPH_WORKERS = 1
# the kNN arms' index and search: FAISS Flat inner product over the L2-normalised graph embeddings (cosine)
REAL_CORPUS_SEARCH = KnnSearch(ann_metric="inner_product", ann_normalize_embeddings=True, faiss_string_factory="Flat")


class CorpusPlan:
    """The plan of one corpus' shared stages and of the arm runs of ``exp`` (see the module docstring)."""

    def __init__(self, corpus: CorpusSpec, output_dir: PathLike, exp: Experiment,
                 workers: Optional[int] = None) -> None:
        self.corpus, self.out, self.exp, self.workers = corpus, Path(output_dir), exp, workers
        self.shared = self.out / "shared"
        self.ran = 0  # stages run (not reused) so far: what a step's wall time measures (grid.timed)
        self.planned: Dict[str, Stage] = {}  # the stages planned and not run yet, by name, in running order
        self.manifest = Manifest(self.out, {"corpus": corpus.name,
                                            "eval_max_sequence_length": exp.eval_max_sequence_length,
                                            "workers": workers, "cocitation_min_count": exp.cocitation_min_count})
        self.citations_train, self.citations_test = citation_files(self.shared)  # w/o the SciDocs query papers

    def add(self, build: Callable[..., Stage], output: Path, /, *args: Any, **kwargs: Any) -> Path:
        """Plan the stage ``build`` makes, named by its ``output`` below OUTPUT_DIR (once: a stage asked for again, as
        every arm asks for the shared ones, keeps its place), its settings its call's; returns ``output``."""
        stage = build(name := str(Path(output).relative_to(self.out)), *args, adopts=True, **kwargs)
        stage.settings = call_settings(partial(build, name, *args, **kwargs), stage, self.out)
        self.planned.setdefault(stage.name, stage)
        return output

    def built(self, value: Any) -> Any:
        """``value`` once the planned stages have run or been reused (counting those that ran); the plan is emptied."""
        self.shared.mkdir(parents=True, exist_ok=True)  # made when something runs: a dry run writes nothing
        stages, self.planned = list(self.planned.values()), {}
        self.ran += sum(result.status == STATUS_RAN for result in run_stages(stages, self.manifest).values())
        return value

    def stage(self, output: Path, run: Callable[[], Any], **stage: Any) -> Path:
        """Plan a step named by its ``output`` (``stage``: the other :class:`Stage` fields); returns ``output``."""
        return self.add(Stage, output, [output], run, **stage)

    # ------------------------------------------------------------------ shared inputs
    def citations(self) -> Path:
        """Citation edges without the SciDocs query papers (w/o leakage), 5 % held out for link prediction."""
        return self.add(citations_stage, self.citations_train, self.corpus.metadata_dir, self.citations_train.parent,
                        test_ratio=SCINCL.shared_graph_test_ratio, seed=SCINCL.shared_graph_seed, workers=self.workers,
                        excluded=self.corpus.excluded_ids, description="citation edges w/o the SciDocs queries")

    def cocitations(self) -> Path:
        """Co-citation pairs (both directions, with counts) without the SciDocs query papers."""
        path = self.shared / f"cocitations.min{self.exp.cocitation_min_count}.tsv"
        return self.stage(path, lambda: corpus_stage.get_cocitations(
            str(self.corpus.metadata_dir), str(path), excluded_paper_ids=str(self.corpus.excluded_ids),
            min_count=self.exp.cocitation_min_count, workers=self.workers),
            inputs=[self.corpus.metadata_dir, self.corpus.excluded_ids], description="co-citation pairs")

    def transductive_citations(self) -> Path:
        """Every citation edge but those between a SciDocs query and its candidates (the graph-only retriever's:
        OpenMSD's held-out-edge protocol; transductive, not "w/o leakage")."""
        everything, path = self.shared / "citations_all.tsv", self.shared / "citations_transductive.tsv"
        self.stage(everything, lambda: corpus_stage.get_citations(
            str(self.corpus.metadata_dir), str(everything), workers=self.workers),
            inputs=[self.corpus.metadata_dir], description="every citation edge")
        return self.stage(path, lambda: write_edges_without(everything, path,
                                                            query_candidate_pairs(self.corpus.scidocs_dir)),
                          inputs=[everything], description="citations minus the SciDocs query-candidate edges")

    def graph(self, kind: str, dim: int, comparator: str = "dot") -> Dict[str, Path]:
        """A :data:`GRAPHS` graph's files (:func:`graph_files`) and the ``edges`` it learns from, staged."""
        graph, result = GRAPHS[kind], graph_files(self.shared / f"graph_{kind}_{dim}d_{comparator}")
        edges = {"citations": self.citations, "cocitations": self.cocitations,
                 "transductive": self.transductive_citations}[graph["edges"]]
        train, test = edges(), self.citations_test if graph["edges"] == "citations" else None  # held-out edges
        method, pbg = graph["method"], graph["method"] == "pbg"  # BigGraph: dimension and workers override its config
        embed = {"method": method, "config": graph["config"].format(comparator=comparator),
                 "seed": SCINCL.shared_graph_seed,
                 **({"overrides": f"dimension={dim} workers={BIGGRAPH_WORKERS}"} if pbg else {"dimension": dim})}
        description = f"BigGraph {kind} {dim}d {comparator}" if pbg else f"{method} {kind} {dim}d"
        self.add(graph_stage, result["embeddings"], train, test, result["dir"], embed=embed, description=description)
        return {**result, "edges": train}

    def ann_index(self, kind: str, dim: int) -> Path:
        """FAISS Flat inner-product index over the normalised graph embeddings (papers with text only)."""
        graph, path = self.graph(kind, dim), self.shared / f"graph_{kind}_{dim}d_dot.Flat.faiss"
        corpus = self.graph_papers_with_text(kind, dim)
        return self.add(index_stage, path, graph, path, corpus, search=REAL_CORPUS_SEARCH, workers=self.workers,
                        inputs=[graph["embeddings"], corpus], description=f"FAISS index of the {kind} graph ({dim}d)")

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
                  self.papers_with_text(), self.corpus.excluded_ids]  # the arguments after path, in their order
        return self.stage(path, partial(select_eligible_for_every_arm, path, *inputs,
                                        bidirectional=self.corpus.bidirectional),
                          inputs=inputs, description="queries every arm can build 5 triplets for")

    def queries(self, seed: int, count: int, graph_dim: int) -> Path:
        """``count`` query papers sampled with ``seed`` from the eligible ones (shared by all arms)."""
        path = self.shared / "queries" / f"seed_{seed}.n{count}.g{graph_dim}.json"
        eligible = self.eligible_queries_file(graph_dim)
        return self.stage(path, partial(select_eligible_for_all_arms, path, eligible=eligible, count=count, seed=seed,
                                        where=self.corpus.name), inputs=[eligible],
                          description=f"{count} query papers, seed {seed}")

    def evaluate(self, model: str, run_dir: Path, split: str, bf16: str, pooling: Optional[str] = None) -> None:
        """Plan the SciDocs scores of ``model`` on ``split`` into ``run_dir/results.json`` (it holds every split's)."""
        self.add(evaluate_stage, run_dir / "results.json", model, self.corpus.scidocs_dir, run_dir, split=split,
                 encoding=dict(pooling_strategy=pooling, max_sequence_length=self.exp.eval_max_sequence_length,
                               papers=self.eval_papers(split), bf16=bf16), inputs=[Path(model)],
                 reusable=lambda: run_scores(run_dir, split, missing_ok=True) is not None,  # holds this split's scores
                 description=f"evaluate {run_dir} ({split})")

    # ------------------------------------------------------------------ the cells of an experiment
    def run_dir(self, arm: str, seed: Optional[int], recipe: Recipe, split: str) -> Path:
        """Where one cell lives: an arm x seed x recipe (a run two experiments share trains once) or the untuned
        encoder's evaluation (:data:`BASE`, shared by every seed and recipe with its pooling, lengths and precision)."""
        if arm != BASE:
            return self.out / "runs" / split / recipe_key(recipe) / arm / f"seed_{seed}"
        embedding = "_ebf16" if precision_key(recipe).endswith("_ebf16") else ""
        return (self.shared / "base" / f"{recipe.pooling_strategy}_len{self.exp.eval_max_sequence_length}"
                f"{embedding}{recipe.encoder_key()}" / split)

    def cell(self, arm: str, seed: Optional[int], recipe: Recipe, split: str) -> Path:
        """Plan one cell, the untuned encoder's evaluation (:data:`BASE`) or an arm x seed (its triplets, their texts,
        the training and evaluation, after the shared stages they need); returns its :meth:`run_dir`."""
        from scincl.model.encoder import encoder_path  # torch: loaded when a plan is made, not by the CLI's tables

        run_dir, base_model = self.run_dir(arm, seed, recipe, split), encoder_path(recipe.base_model_name_or_path)
        if arm == BASE:
            self.evaluate(base_model, run_dir, split, pooling=recipe.pooling_strategy, bf16=recipe.eval_bf16)
            return run_dir
        setting, dim, model = arm_setting(arm), recipe.graph_dim, run_dir / "model"
        triples, metadata = run_files(run_dir)
        queries = self.queries(seed, -(-recipe.triplets // SCINCL.triples_per_query), dim)  # SciNCL's per query each
        if setting.triples_source == SPECTER_LIKE:
            graph_ids = graph_edges = None
            sampling: Dict[str, Any] = {"citations_input_path": self.citations(), "triples_count": recipe.triplets,
                                        "bidirectional": self.corpus.bidirectional}
            inputs = [self.citations_train, queries]
        else:
            graph, index = self.graph(setting.graph, dim), self.ann_index(setting.graph, dim)
            graph_ids, graph_edges = graph["ids"], graph["edges"]
            sampling = {"graph_paper_ids_path": graph_ids, "graph_embeddings_path": graph["embeddings"],
                        "config": recipe.miner, "search": REAL_CORPUS_SEARCH, "ann_index_path": index,
                        "include_paper_ids": str(self.graph_papers_with_text(setting.graph, dim)),
                        "workers": self.workers, "show_progress": False}
            inputs = [graph["embeddings"], index, queries]
        self.stage(triples, partial(sampler(setting.triples_source), output_path=triples, query_papers=str(queries),
                                    seed=seed, **sampling), inputs=inputs, description=f"{arm} triplets, seed {seed}")
        self.add(texts_stage, metadata, triples, metadata, self.corpus.metadata_dir, workers=self.workers or 1,
                 description="texts of the triplets' papers")
        arguments = {"base_model_name_or_path": base_model, **recipe.training_arguments(), "seed": seed,
                     "save_strategy": "no", **leakage_inputs(self.corpus.excluded_ids, setting.triples_source,
                                                             graph_ids, graph_edges, self.citations_train)}
        self.add(train_stage, model / "train_args.json", triples, metadata, model, arguments=arguments,
                 outputs=[model / "train_args.json"], description=f"train {arm} seed {seed}")
        self.evaluate(str(model), run_dir, split, bf16=recipe.eval_bf16)
        return run_dir

    def run_cell(self, arm: str, seed: Optional[int], recipe: Recipe, split: str) -> Path:
        """Run (or reuse) one cell (:meth:`cell`), a trained arm's ``recipe.json`` first; returns its run dir."""
        run_dir = self.cell(arm, seed, recipe, split)
        if arm != BASE:
            write_json(run_dir / "recipe.json", {"arm": arm, "seed": seed, "corpus": self.corpus.name,
                                                 "eval_max_sequence_length": self.exp.eval_max_sequence_length,
                                                 **recipe_record(recipe)})
        return self.built(run_dir)

