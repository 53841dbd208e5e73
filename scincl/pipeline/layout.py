"""What both planners compute once (issue 27: one planner): where a run's files go, the encoder a run
fine-tunes, the leakage guard's inputs, how a stage is named and run, and the citation, graph and train steps.

:class:`Planner` is the base of ``run_specter``'s plan (:class:`~scincl.pipeline.scincl_plan.SciNCLPlan`)
and of the real-corpus experiments (:class:`~scincl.pipeline.real_corpus.CorpusPlan`): both name their
files with :func:`citation_files`, :func:`graph_files` and :func:`run_files`, resolve their encoder with
:func:`encoder_path`, hand the guard :func:`leakage_inputs` and build their citation, graph and training stages
with :meth:`Planner.citations_step`, :meth:`Planner.graph_step` and :meth:`Planner.train_step` (the objective from
a settings object carrying the settings' own names: a :class:`~scincl.settings.run.RunSettings` or a
real-corpus ``Recipe``); every stage itself is implemented once, in :mod:`scincl.pipeline.stages` (the index and
triplets stages from the run's :class:`~scincl.triples.knn_miner.KnnSearch` and ``triples_source``).

``shared`` (default: OUTPUT_DIR) holds what experiments can share (demo corpus, citations, graph,
base-model evaluation); ``run`` is the experiment directory (:func:`experiment_dir`: the original code's layout,
``--auto_output_dir``: ``OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/[queries_<r>/]<miner settings>/``), the model
directory below it :func:`model_dir_name`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import Stage
from scincl.pipeline.stages import citations_stage, graph_stage, train_stage
from scincl.settings.recipe import Recipe
from scincl.settings.run import RunSettings

TRIPLES_FILE = "train_triples.csv"  # a run's triplets (``.gz`` when gzipped)
TEXTS_FILE = "train_metadata.jsonl"  # the titles and abstracts of its triplets' papers


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
    return run / f"{TRIPLES_FILE}{suffix}", run / f"{TEXTS_FILE}{suffix}"


def encoder_path(name: Optional[str], packaged: bool = True) -> str:
    """The encoder a run fine-tunes: ``name`` when given, else the packaged all-MiniLM-L6-v2 (``packaged``: the demo
    and the real-corpus experiments) or ``model.encoder.resolve_base_model``'s choice (SciBERT when cached)."""
    from scincl.model.encoder import packaged_minilm_path, resolve_base_model

    if name:
        return name
    return packaged_minilm_path() if packaged else resolve_base_model(None)


def device_type() -> str:
    """Where a run trains when no device is given: ``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def precision_key(recipe: Recipe) -> str:
    """``""`` for fp32 training and embedding, else ``_bf16`` (training) / ``_ebf16`` (embedding).

    The request is resolved on this machine (``auto`` -> what the device runs natively), so a bf16
    run and an fp32 run never share a directory, and fp32 runs keep their pre-bf16 names.
    """
    from scincl.model.device import resolve_bf16

    device = device_type()
    return ("_bf16" if resolve_bf16(recipe.bf16, device) else "") + (
        "_ebf16" if resolve_bf16(recipe.eval_bf16, device) else "")


def loss_key(loss: str) -> str:
    """The loss name, with ``.r<N>`` once its definition was revised (runs of older definitions keep
    their names and are not reused; :func:`scincl.model.losses.loss_revision`)."""
    from scincl.model.losses import loss_revision

    revision = loss_revision(loss)
    return loss if revision == 1 else f"{loss}.r{revision}"


def recipe_key(recipe: Recipe) -> str:
    """Directory name of everything that depends on a real-corpus :class:`~scincl.settings.recipe.Recipe`
    (precision included)."""
    r = recipe
    return (f"t{r.triplets}_kp{r.k_pos}_kh{r.k_hard}_{r.pooling_strategy}"
            f"_lr{r.learning_rate:g}_{loss_key(r.loss)}_len{r.max_sequence_length}"
            f"_bs{r.per_device_train_batch_size}_ep{r.num_train_epochs}_g{r.graph_dim}"
            + r.encoder_key() + precision_key(r))


def leakage_inputs(excluded: Optional[Path], triples_source: str, graph_ids: Optional[Path],
                   graph_edges: Optional[Path], triples_edges: Optional[Path],
                   graph_leakage: bool = False) -> Dict[str, Any]:
    """What the leakage guard of ``train`` checks (scincl/leakage.py), decided once for both planners: the evaluation
    papers listed in ``excluded`` against the graph's nodes (``graph_ids``, kNN triplets only) and the citation edges
    the run learnt from: those its graph was trained on (``graph_edges``, when the run made its graph) and those
    SPECTER-like triplets were drawn from (``triples_edges``); unless ``graph_leakage`` (the paper's "w/ leakage").
    ``None`` (none given) is ``train``'s default."""
    knn = triples_source == "knn"
    edges = [path for path in (graph_edges, None if knn else triples_edges) if path is not None]
    return {"excluded_paper_ids": str(excluded) if excluded else None,
            "graph_paper_ids_path": str(graph_ids) if knn and graph_ids else None,
            "citations_path": ",".join(dict.fromkeys(str(path) for path in edges)) or None,
            "graph_leakage": graph_leakage}


# The steps of every run, in running order (issue 39: one plan): a planner's ``plan_<step>`` method plans each.
PLAN_STEPS = ("inputs", "queries", "index", "triples", "texts", "train", "evaluate")


class Planner:
    """The base of both planners: the one order of a run's steps (:meth:`plan`), stages named below ``root`` and
    recorded in ``manifest``, what several runs share below ``shared`` (citations, graphs), and the steps both build
    the same way (training and evaluation from a settings object: ``loss``, ``pooling_strategy``,
    ``max_sequence_length``, ``bitfit``)."""

    def __init__(self, root: Path, shared: Path, manifest: Optional[Manifest] = None) -> None:
        self.root = Path(root)
        self.shared = Path(shared)
        self.manifest = manifest
        self.planned: Dict[str, Stage] = {}  # the stages planned and not taken yet, by name, in running order

    def plan(self, run: Any = None) -> List[Stage]:
        """Every stage of one run, in running order, for ``run_specter`` and an experiment arm alike: its inputs
        (corpus, evaluation ids, citations, graph) -> query papers -> kNN index -> triplets -> their texts ->
        training -> evaluation (:data:`PLAN_STEPS`). Each step is the planner's ``plan_<step>(run)``, which plans
        (:meth:`add`) that step's stages as the run's settings ask, the inputs it reads first; ``run``: which run
        (an experiment arm; ``run_specter``'s plan is one run). The plan is empty afterwards."""
        for step in PLAN_STEPS:
            getattr(self, f"plan_{step}")(run)
        return self.take()

    def add(self, stage: Optional[Stage]) -> None:
        """Plan ``stage`` (once: a stage asked for again, as every arm asks for the shared ones, keeps its place)."""
        if stage is not None:
            self.planned.setdefault(stage.name, stage)

    def take(self) -> List[Stage]:
        """The planned stages in running order; the plan is empty afterwards."""
        stages = list(self.planned.values())
        self.planned.clear()
        return stages

    def stage_name(self, output: Path) -> str:
        """A stage named by its output: the path below ``root`` (the name its completion marker records)."""
        return str(Path(output).relative_to(self.root)) if Path(output).is_relative_to(self.root) else str(output)

    def citations_step(self, name: str, metadata_dir: Optional[Path], excluded: Optional[Path], test_ratio: float,
                       seed: int, workers: Optional[int], **stage: Any) -> Stage:
        """The corpus' citation edges without the papers listed in ``excluded``, ``test_ratio`` of them held out with
        ``seed``, into :func:`citation_files` below ``shared`` (scincl/pipeline/stages.py:citations_stage);
        ``stage``: the corpus format and the :class:`Stage` as the planner records it."""
        train, test = citation_files(self.shared)
        return citations_stage(name, metadata_dir, train.parent, test_ratio=test_ratio, seed=seed, excluded=excluded,
                               workers=workers, outputs=[train, test], inputs=[metadata_dir, excluded], **stage)

    def graph_step(self, name: str, train: Path, test: Optional[Path], directory: Path, embed: Dict[str, Any],
                   outputs: Optional[Sequence[Path]] = None, inputs: Sequence[Path] = (), **stage: Any) -> Stage:
        """The graph of the edges in ``train`` embedded into ``directory`` (link prediction on ``test``;
        scincl/pipeline/stages.py:graph_stage): its outputs are ``outputs`` (default: the embeddings and ids of
        :func:`graph_files`), its inputs the edges and ``inputs``; ``stage``: the :class:`Stage` as the planner
        records it."""
        files = graph_files(directory)
        return graph_stage(name, train, test, directory, embed=embed, inputs=[train, test, *inputs],
                           outputs=[files["embeddings"], files["ids"]] if outputs is None else outputs, **stage)

    def train_step(self, name: str, run: Any, triples: Path, metadata: Path, model: Path, base_model: str,
                   training: Dict[str, Any], leakage: Callable[[], Dict[str, Any]], **stage: Any) -> Stage:
        """Fine-tune ``base_model`` on ``triples`` + ``metadata`` into ``model`` with the objective of ``run`` (its
        ``loss``, ``pooling_strategy``, ``max_sequence_length``, ``bitfit``) and the Trainer arguments ``training``
        (scincl/pipeline/stages.py:train_stage); ``stage``: the :class:`Stage` as the planner records it."""
        return train_stage(name, triples, metadata, model, base_model=base_model, loss=run.loss,
                           pooling_strategy=run.pooling_strategy, max_sequence_length=run.max_sequence_length,
                           bitfit=getattr(run, "bitfit", False), training=training, leakage=leakage, **stage)


def miner_signature(s: RunSettings) -> str:
    """Short name of the sampling settings, e.g. ``knn_5_pos_knn_20_25__neg_random_without_knn_3__hard_knn_3998_4000_2``."""
    if s.triples_source != "knn":
        return f"{s.triples_source}_{s.triples_per_query}"
    pos, easy, hard = (s.miner.slot(name) for name in ("easy_positives", "easy_negatives", "hard_negatives"))
    parts = [f"pos_{pos.strategy}_{pos.k_min}_{pos.k_max}_{pos.count}", f"easyneg_{easy.strategy}_{easy.count}",
             f"hardneg_{hard.strategy}_{hard.k_min}_{hard.k_max}_{hard.count}"]
    parts += [f"{k}_{v}" for k, v in sorted(s.miner_options.items())]
    return "__".join(parts)


def experiment_dir(s: RunSettings) -> Path:
    """Where this experiment's outputs go (``--auto_output_dir`` adds the original sub-directories)."""
    base = Path(s.output_dir)
    if not s.auto_output_dir:
        return base
    out = base / str(s.graph_limit) / f"corpus_seed_{s.corpus_seed}"
    if s.sample_queries_ratio is not None and s.sample_queries_ratio < 1:
        out = out / f"queries_{s.sample_queries_ratio}"
    return out / miner_signature(s)


def base_model_short_name(name_or_path: str) -> str:
    """``allenai/scibert_scivocab_uncased`` -> ``scibert_scivocab_uncased``; ``.../pkg/model`` -> ``pkg``."""
    parts = [p for p in str(name_or_path).rstrip("/").split("/") if p]
    if len(parts) > 1 and parts[-1] in ("model", "models", "checkpoint"):
        return parts[-2]
    return parts[-1] if parts else "base"


def model_dir_name(s: RunSettings, base_model: Optional[str] = None) -> str:
    """``model_<base name>[_<pooling>][_bitfit][_<loss>]...`` as in the original code."""
    name = f"model_{base_model_short_name(base_model or s.base_model_name_or_path or 'base')}"
    if s.pooling_strategy != "cls":
        name += f"_{s.pooling_strategy}"
    if s.bitfit:
        name += "_bitfit"
    if s.loss != "triplet":
        name += f"_{s.loss}"
    for key in ("num_train_epochs", "learning_rate"):
        if key in s.training_options and not s.demo:
            name += f"_{key.split('_')[-1]}_{s.training_options[key]}"
    return name


@dataclass
class RunPaths:
    """Every file and directory of one ``run_specter`` run."""

    shared: Path
    run: Path
    demo: Path
    scidocs_ids: Path
    metadata_ids: Path
    citations_dir: Path
    graph_dir: Path
    graph_ids: Path
    graph_embeddings: Path
    corpus_ids: Path
    query_ids: Path
    ann_index: Path
    triples: Path
    metadata: Path
    model: Path
    base_eval: Path
    eval: Path
    comparison: Path
    citations_train: Path
    citations_test: Path


def plan_paths(s: RunSettings, shared_dir: Optional[Path] = None, base_model: Optional[str] = None) -> RunPaths:
    """Derive every path of a ``run_specter`` run from its settings (user-given paths win)."""
    shared = Path(shared_dir) if shared_dir is not None else Path(s.output_dir)
    run = experiment_dir(s)
    graph = graph_files(shared / "graph")
    corpus_ids = Path(s.train_s2orc_paper_ids or run / f"s2orc_paper_ids.seed_{s.corpus_seed}.json")
    query_name = f"query_s2orc_paper_ids.seed_{s.corpus_seed}"
    if s.sample_queries_ratio is not None and s.sample_queries_ratio < 1:
        query_name += f".ratio_{s.sample_queries_ratio}"
    query_ids = Path(s.train_query_s2orc_paper_ids or run / f"{query_name}.json")
    triples, metadata = run_files(run, s.gzip)
    citations_train, citations_test = citation_files(shared)
    return RunPaths(
        shared=shared, run=run, demo=shared / "demo_corpus",
        scidocs_ids=Path(s.scidocs_paper_ids) if s.scidocs_paper_ids else shared / "scidocs_s2orc_paper_ids.json",
        metadata_ids=shared / "s2orc_metadata_id_mapping.json", citations_dir=citations_train.parent,
        graph_dir=graph["dir"], graph_ids=Path(s.graph_paper_ids_path) if s.graph_paper_ids_path else graph["ids"],
        graph_embeddings=Path(s.graph_embeddings_path) if s.graph_embeddings_path else graph["embeddings"],
        corpus_ids=corpus_ids, query_ids=query_ids,
        ann_index=Path(s.ann_index_path) if s.ann_index_path else Path(f"{corpus_ids}.{s.faiss_string_factory}.faiss"),
        triples=triples, metadata=metadata, model=run / model_dir_name(s, base_model),
        base_eval=shared / "base_model_eval", eval=run, comparison=run / "comparison",
        citations_train=citations_train, citations_test=citations_test,
    )
