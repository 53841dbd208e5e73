"""What both planners share (issue 39, one plan): the order of a run's steps (:class:`Planner`), the shared files'
names, the encoder and leakage rules, and each step's library call (``*_stage``; the planner supplies the data)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.evaluate import embed_scidocs_metadata, run_evaluation
from scincl.graph.embed import embed_graph
from scincl.graph.stage import get_citations
from scincl.knn.papers import build_faiss
from scincl.leakage import recorded_report
from scincl.model.card import update_model_card
from scincl.model.device import default_device, reset_torch_threads
from scincl.pipeline.runner import Stage
from scincl.settings.recipe import Recipe
from scincl.triples.metadata import get_metadata
from scincl.triples.queries import QUERY_SELECTIONS
from scincl.triples.sources import sampler

if TYPE_CHECKING:
    from scincl.triples.knn_miner import KnnSearch

PLAN_STEPS = ("inputs", "queries", "index", "triples", "texts", "train", "evaluate")  # a run's steps, in order


def citation_files(shared: Path) -> Tuple[Path, Path]:
    """The train and test citation edges below ``shared`` (``citations/citations.{train,test}.tsv``)."""
    return shared / "citations" / "citations.train.tsv", shared / "citations" / "citations.test.tsv"


def graph_files(directory: Path) -> Dict[str, Path]:
    """The files of one graph embedding in ``directory``: its paper ids, embeddings and link prediction."""
    return {"ids": directory / "entity_names_paper_id_0.json", "embeddings": directory / "embeddings.h5",
            "metrics": directory / "link_prediction.json", "dir": directory}


def run_files(run: Path, gzip: bool = False) -> Tuple[Path, Path]:
    """A run's triplets and their papers' texts in ``run`` (gzipped names when ``gzip``)."""
    suffix = ".gz" if gzip else ""
    return run / f"train_triples.csv{suffix}", run / f"train_metadata.jsonl{suffix}"


def encoder_path(name: Optional[str], packaged: bool = True) -> str:
    """The encoder a run fine-tunes: ``name``, else the packaged MiniLM (``packaged``) or SciBERT when cached."""
    from scincl.model.encoder import packaged_minilm_path, resolve_base_model

    if name:
        return name
    return packaged_minilm_path() if packaged else resolve_base_model(None)


def precision_key(recipe: Recipe) -> str:
    """``""`` for fp32, else ``_bf16`` (training) / ``_ebf16`` (embedding), as this machine resolves the request."""
    from scincl.model.device import resolve_bf16

    device = default_device()
    return ("_bf16" if resolve_bf16(recipe.bf16, device) else "") + (
        "_ebf16" if resolve_bf16(recipe.eval_bf16, device) else "")


def recipe_key(recipe: Recipe) -> str:
    """Directory name of everything that depends on a real-corpus recipe (a revised loss as ``<loss>.r<N>``)."""
    from scincl.model.losses import loss_revision

    r, revision = recipe, loss_revision(recipe.loss)
    loss = r.loss if revision == 1 else f"{r.loss}.r{revision}"
    return (f"t{r.triplets}_kp{r.k_pos}_kh{r.k_hard}_{r.pooling_strategy}"
            f"_lr{r.learning_rate:g}_{loss}_len{r.max_sequence_length}"
            f"_bs{r.per_device_train_batch_size}_ep{r.num_train_epochs}_g{r.graph_dim}"
            + r.encoder_key() + precision_key(r))


def leakage_inputs(excluded: Optional[Path], triples_source: str, graph_ids: Optional[Path],
                   graph_edges: Optional[Path], triples_edges: Optional[Path],
                   graph_leakage: bool = False) -> Dict[str, Any]:
    """The arguments of ``train``'s leakage guard (scincl/leakage.py): the evaluation papers in ``excluded`` against
    the graph's nodes (kNN triplets) and the edges the run learnt from (its graph's, SPECTER-like triplets')."""
    knn = triples_source == "knn"
    edges = [path for path in (graph_edges, None if knn else triples_edges) if path is not None]
    return {"excluded_paper_ids": str(excluded) if excluded else None,
            "graph_paper_ids_path": str(graph_ids) if knn and graph_ids else None,
            "citations_path": ",".join(dict.fromkeys(str(path) for path in edges)) or None,
            "graph_leakage": graph_leakage}


# ---------------------------------------------------------------------- the stages: the library call of each step
# ``stage``: the Stage's ``outputs``, ``inputs``, ``output_dir``, ``settings``, ``description`` as the planner records
# them (its completion marker); the other arguments say what the stage does.
def train_stage(name: str, triples: Path, metadata: Path, model: Path, *, base_model: str, loss: str,
                pooling_strategy: str, max_sequence_length: int, training: Mapping[str, Any],
                leakage: Callable[[], Dict[str, Any]], bitfit: bool = False, threads: Optional[int] = None,
                eval_max_sequence_length: Optional[int] = None, **stage: Any) -> Stage:
    """``model.train.train`` of ``base_model`` into ``model`` (``leakage()``: the guard's inputs, asked when it runs);
    its result is the model's leakage report."""
    def run() -> Optional[Dict[str, Any]]:
        from scincl.model.train import train

        guard = leakage()
        if threads is not None:
            reset_torch_threads(threads)
        train(str(triples), str(metadata), str(model), base_model_name_or_path=base_model, loss=loss,
              pooling_strategy=pooling_strategy, bitfit=bitfit, max_sequence_length=max_sequence_length,
              **({"eval_max_sequence_length": eval_max_sequence_length} if eval_max_sequence_length else {}),
              **guard, **training)
        return recorded_report(model)

    return Stage(name, run=run, output_dir=model, **stage)


def texts_stage(name: str, triples: Path, metadata: Path, metadata_dir: Optional[Path], *, workers: int,
                corpus_format: Optional[str] = None, keep_counts: bool = True, **stage: Any) -> Stage:
    """``triples.metadata.get_metadata``: the texts of the papers of ``triples`` into ``metadata`` (its result: their
    counts when ``keep_counts``)."""
    def run() -> Optional[Dict[str, int]]:
        if metadata_dir is None:
            raise InputError(f"the metadata stage needs --corpus_dir (or --skip_metadata with an existing "
                             f"{metadata.name})")
        counts = get_metadata(triples, metadata, metadata_dir, workers, corpus_format=corpus_format)
        return counts if keep_counts else None

    return Stage(name, [metadata], run, **stage)


def triples_stage(name: str, triples_source: str, triples: Path, queries: Path, *, sampling: Mapping[str, Any],
                  **stage: Any) -> Stage:
    """The sampler of ``triples_source`` (scincl/triples/sources.py) for ``queries`` into ``triples`` with ``sampling``
    (a kNN index in it is an input: used when it fits, never rebuilt here)."""
    mine = sampler(triples_source)  # an unknown source is refused when the plan is built
    plain = Path(str(triples)[:-3]) if str(triples).endswith(".gz") else triples
    return Stage(name, [triples], lambda: mine(output_path=plain, query_papers=str(queries), **sampling), **stage)


def index_stage(name: str, graph: Mapping[str, Path], index: Path, corpus: Path, *, search: "KnnSearch",
                workers: Optional[int], seed: int = 0, keep_result: bool = False, **stage: Any) -> Stage:
    """``knn.papers.build_faiss`` over the ``graph`` embeddings of the papers in ``corpus`` into ``index``, as
    ``search`` searches (its result: the build's summary when ``keep_result``)."""
    def run() -> Optional[Dict[str, Any]]:
        result = build_faiss(str(graph["embeddings"]), str(index), string_factory=search.faiss_string_factory,
                             metric=search.ann_metric, do_normalize=search.ann_normalize_embeddings,
                             paper_ids=str(graph["ids"]), include_paper_ids=str(corpus),
                             batch_size=search.ann_batch_size, workers=workers, device=search.ann_device, seed=seed)
        return result if keep_result else None

    stage.setdefault("outputs", [index])
    return Stage(name, run=run, **stage)


def citations_stage(name: str, metadata_dir: Optional[Path], citations_dir: Path, *, test_ratio: float, seed: int,
                    excluded: Optional[Path], workers: Optional[int], corpus_format: Optional[str] = None,
                    **stage: Any) -> Stage:
    """``graph.stage.get_citations``: the corpus' edges without the papers in ``excluded``, ``test_ratio`` of them held
    out with ``seed``, into ``citations_dir`` (:func:`citation_files`)."""
    def run() -> None:
        if metadata_dir is None:
            raise InputError("building the citation graph needs --corpus_dir (or give --graph_embeddings_path and "
                             "--graph_paper_ids_path)")
        get_citations(str(metadata_dir), str(citations_dir), workers=workers, test_ratio=test_ratio, seed=seed,
                      excluded_paper_ids=str(excluded) if excluded else None, corpus_format=corpus_format)

    return Stage(name, list(citation_files(citations_dir.parent)), run, inputs=[metadata_dir, excluded],
                 output_dir=citations_dir, **stage)


def graph_stage(name: str, train_edges: Path, test_edges: Optional[Path], graph_dir: Path, *,
                embed: Mapping[str, Any], inputs: Sequence[Path] = (), **stage: Any) -> Stage:
    """``graph.embed.embed_graph`` of ``train_edges`` into ``graph_dir`` (link prediction on ``test_edges``) with
    ``embed``; outputs by default its embeddings and ids; its result is ``embed_graph``'s."""
    files = graph_files(graph_dir)
    stage.setdefault("outputs", [files["embeddings"], files["ids"]])
    # override: start over (a rerun discards PyTorch-BigGraph's import and checkpoints), not a reuse check
    return Stage(name, run=lambda: embed_graph(train_edges, graph_dir, test_edges=test_edges, override=True, **embed),
                 inputs=[train_edges, test_edges, *inputs], output_dir=graph_dir, **stage)


def evaluate_stage(name: str, model: str, scidocs_dir: Path, results_dir: Path, *, split: str,
                   pooling_strategy: Optional[str], max_sequence_length: Optional[int],
                   papers: Optional[Callable[[], Path]] = None, bf16: str = "false", device: Optional[str] = None,
                   threads: Optional[int] = None, **stage: Any) -> Stage:
    """SciDocs scores of ``model`` on ``split`` into ``results_dir``: the papers ``papers()`` lists embedded (``bf16``)
    and deleted afterwards, else every SciDocs paper by the evaluator (cut to ``max_sequence_length`` when given)."""
    embeddings, embeddings_dir = Path(results_dir) / f"embeddings.{split}.jsonl", Path(results_dir) / "embeddings"

    def run() -> None:
        if threads is not None:
            reset_torch_threads(threads)
        if papers is not None:
            from scincl.model.embed import embed

            embed(model, str(papers()), str(embeddings), max_sequence_length=max_sequence_length,
                  pooling_strategy=pooling_strategy, bf16=bf16)
            score_embeddings(scidocs_dir, results_dir, split, embeddings)
            embeddings.unlink()  # large and cheap to recompute; results.json keeps the scores
        elif max_sequence_length is None:
            run_evaluation(scidocs_dir, results_dir, val_or_test=split, model_dirs=[model],
                           pooling_strategy=pooling_strategy, device=device)
        else:
            files = embed_scidocs_metadata(model, scidocs_dir, embeddings_dir / "model",
                                           batch_size=32, device=device, override=False,
                                           max_sequence_length=max_sequence_length, pooling_strategy=pooling_strategy,
                                           val_or_test=split)
            run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(files.main)],
                           cls_embeddings=str(files.classification) if files.classification else None,
                           recomm_embeddings=str(files.recomm) if files.recomm else None,
                           device=device)
        update_model_card(model, Path(results_dir) / "results.json")  # the trained model's card gets its scores

    return Stage(name, run=run, writes=[embeddings_dir, embeddings], **stage)


def score_embeddings(scidocs_dir: Path, results_dir: Path, split: str, embeddings: Path) -> None:
    """SciDocs scores of one embeddings file on ``split`` into ``results_dir`` (MAG/MeSH too when labelled)."""
    has_classes = any(Path(scidocs_dir).glob("*/train.csv"))
    run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(embeddings)],
                   cls_embeddings=str(embeddings) if has_classes else None)


def queries_stage(name: str, queries: Path, *, selection: str, select: Mapping[str, Any], **stage: Any) -> Stage:
    """The query papers written to ``queries`` by the selection ``selection`` of :data:`QUERY_SELECTIONS` with the
    arguments ``select``; its result is the selection's counts."""
    if selection not in QUERY_SELECTIONS:
        raise InputError(f"unknown query selection {selection!r}: choose one of {', '.join(QUERY_SELECTIONS)}")
    return Stage(name, run=lambda: QUERY_SELECTIONS[selection](queries, **select), **stage)


class Planner:
    """The base of both planners: a run's steps in one order (:meth:`plan`), its stages named below ``root``, what
    several runs share below ``shared``."""

    def __init__(self, root: Path, shared: Path) -> None:
        self.root, self.shared = Path(root), Path(shared)
        self.planned: Dict[str, Stage] = {}  # the stages planned and not taken yet, by name, in running order

    def plan(self, run: Any = None) -> List[Stage]:
        """Every stage of one run (``run``: an experiment arm; ``run_specter``'s plan is one run) in running order:
        the planner's ``plan_<step>(run)`` for each of :data:`PLAN_STEPS`. The plan is empty afterwards."""
        for step in PLAN_STEPS:
            getattr(self, f"plan_{step}")(run)
        return self.take()

    def add(self, stage: Stage) -> None:
        """Plan ``stage`` (once: a stage asked for again, as every arm asks for the shared ones, keeps its place)."""
        self.planned.setdefault(stage.name, stage)

    def take(self) -> List[Stage]:
        """The planned stages in running order; the plan is empty afterwards."""
        stages, self.planned = list(self.planned.values()), {}
        return stages

    def stage_name(self, output: Path) -> str:
        """A stage named by its output: the path below ``root`` (the name its completion marker records)."""
        return str(Path(output).relative_to(self.root)) if Path(output).is_relative_to(self.root) else str(output)
