"""The one plan of every run (issue 39): the order of its steps, where its files go, and each stage, built once.

:class:`Planner` is the base of ``run_specter``'s plan (:class:`~scincl.pipeline.scincl_plan.SciNCLPlan`) and of
the real-corpus experiments (:class:`~scincl.pipeline.real_corpus.CorpusPlan`): :meth:`Planner.plan` states the
steps of a run once (:data:`PLAN_STEPS`), each planner plans each step for its run. Both name their files with
:func:`citation_files`, :func:`graph_files` and :func:`run_files`, resolve their encoder with :func:`encoder_path`,
hand the guard :func:`leakage_inputs` and build every stage with the builders below (``*_stage``: one function per
stage). What a planner decides stays a parameter: where the outputs go, the stage's name and the settings and
inputs its completion marker records (``Stage.made_by``), so runs cached by either planner keep their markers.

``shared`` (default: OUTPUT_DIR) holds what experiments can share (demo corpus, citations, graph,
base-model evaluation); ``run`` is the experiment directory (:func:`experiment_dir`: the original code's layout,
``--auto_output_dir``: ``OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/[queries_<r>/]<miner settings>/``), the model
directory below it :func:`model_dir_name`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import Stage
from scincl.settings.recipe import Recipe
from scincl.settings.run import RunSettings
from scincl.triples.queries import QUERY_SELECTIONS
from scincl.triples.sources import sampler

if TYPE_CHECKING:
    from scincl.triples.knn_miner import KnnSearch

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


# ---------------------------------------------------------------------- the stages, one builder each
def train_stage(name: str, triples: Path, metadata: Path, model: Path, *, base_model: str, loss: str,
                pooling_strategy: str, max_sequence_length: int, training: Mapping[str, Any],
                leakage: Callable[[], Dict[str, Any]], outputs: Sequence[Path], inputs: Sequence[Optional[Path]],
                settings: Optional[Dict[str, Any]] = None, bitfit: bool = False, threads: Optional[int] = None,
                description: str = "",
                eval_max_sequence_length: Optional[int] = None) -> Stage:
    """The contrastive fine-tuning stage: ``model.train.train`` on ``triples`` + ``metadata`` into ``model``.

    Args:
        name, outputs, inputs, settings, description: the :class:`Stage` as the planner records it.
        base_model, loss, pooling_strategy, max_sequence_length, bitfit: the encoder and objective.
        eval_max_sequence_length: the length saved with the model (``train``'s flag; None: the training length).
        training: the Trainer arguments (seed included) passed to ``train`` as they are.
        leakage: returns the leakage guard's inputs (``excluded_paper_ids``, ``graph_paper_ids_path``,
            ``citations_path``, ...); called when the stage runs.
        threads: torch's start-up thread count to restore before training (``None``: leave it).

    The stage's result is the model's leakage report (scincl/leakage.py).
    """
    def run() -> Optional[Dict[str, Any]]:
        from scincl.leakage import recorded_report
        from scincl.model.train import train
        from scincl.pipeline.threads import reset_torch_threads

        guard = leakage()
        if threads is not None:
            reset_torch_threads(threads)
        train(str(triples), str(metadata), str(model), base_model_name_or_path=base_model, loss=loss,
              pooling_strategy=pooling_strategy, bitfit=bitfit, max_sequence_length=max_sequence_length,
              **({"eval_max_sequence_length": eval_max_sequence_length} if eval_max_sequence_length else {}),
              **guard, **training)
        return recorded_report(model)

    return Stage(name, list(outputs), run, inputs=list(inputs), output_dir=model, description=description,
                 settings=dict(settings or {}))


def texts_stage(name: str, triples: Path, metadata: Path, metadata_dir: Optional[Path], *, workers: int,
                inputs: Sequence[Optional[Path]], corpus_format: Optional[str] = None,
                settings: Optional[Dict[str, Any]] = None, keep_counts: bool = True, description: str = "") -> Stage:
    """The texts stage: ``triples.metadata.get_metadata`` writes the titles and abstracts of the papers of ``triples``
    (from the shards in ``metadata_dir``, read with ``workers``, ``corpus_format``) to ``metadata``; ``name``,
    ``inputs``, ``settings``, ``description``: the :class:`Stage` as the planner records it. The stage's result is
    ``get_metadata``'s counts (kept in the run's manifest) when ``keep_counts``, else nothing."""
    def run() -> Optional[Dict[str, int]]:
        from scincl.triples.metadata import get_metadata

        if metadata_dir is None:
            raise InputError(f"the metadata stage needs --corpus_dir (or --skip_metadata with an existing "
                             f"{metadata.name})")
        counts = get_metadata(triples, metadata, metadata_dir, workers, corpus_format=corpus_format)
        return counts if keep_counts else None

    return Stage(name, [metadata], run, inputs=list(inputs), description=description, settings=dict(settings or {}))


def triples_stage(name: str, triples_source: str, triples: Path, queries: Path, *, sampling: Mapping[str, Any],
                  inputs: Sequence[Optional[Path]], settings: Optional[Dict[str, Any]] = None, description: str = "") -> Stage:
    """The triplets stage: the sampler of ``triples_source`` (:func:`scincl.triples.sources.sampler`:
    ``triples.knn_miner.write_knn_triples`` or ``triples.specter_like.get_specter_like_triples``) called as
    ``sampler(output_path=..., query_papers=..., **sampling)`` for the query papers listed in
    ``queries``, written to ``triples`` (a ``.gz`` name is written gzipped: ``sampling["gzip"]``).

    Args:
        name, inputs, settings, description: the :class:`Stage` as the planner records it.
        sampling: every other argument of the sampler as the planner chose it (the source's input paths, seed,
            counts; for ``knn`` the built :class:`~scincl.settings.spec.MinerSpec` and
            :class:`~scincl.triples.knn_miner.KnnSearch`), passed as it is: the sampler records what they make in
            its ``.args.json``, so two planners passing the same values write the same record.

    The runner decided to (re)make the triplets (their sampler does not ask its own record again); a kNN index at
    ``sampling["ann_index_path"]`` is an input, made by the plan's index stage or given: used when it fits the
    corpus and search, else refused (never rebuilt here).
    """
    mine = sampler(triples_source)  # an unknown source is refused when the plan is built

    def run() -> None:
        plain = Path(str(triples)[:-3]) if str(triples).endswith(".gz") else triples
        mine(output_path=plain, query_papers=str(queries), **sampling)

    return Stage(name, [triples], run, inputs=list(inputs), description=description, settings=dict(settings or {}))


def index_stage(name: str, graph: Mapping[str, Path], index: Path, corpus: Path, *, search: "KnnSearch",
                workers: Optional[int], seed: int = 0, inputs: Sequence[Optional[Path]],
                outputs: Optional[Sequence[Path]] = None, settings: Optional[Dict[str, Any]] = None,
                keep_result: bool = False, description: str = "") -> Stage:
    """The kNN index stage: ``knn.papers.build_faiss`` over the ``graph`` embeddings (its ``embeddings`` and
    ``ids``: :func:`scincl.pipeline.layout.graph_files`) of the papers listed in ``corpus`` (the training corpus the
    triplets are mined from), built as ``search`` searches (factory, metric, normalisation, batch size, device) with
    ``workers`` threads and ``seed``, written to ``index`` (rebuilt: the runner decided to; ``faiss_config.json``
    records the settings). ``outputs`` (default ``[index]``), ``inputs``, ``settings``, ``description``: the
    :class:`Stage` as the planner records it; its result is ``build_faiss``'s summary when ``keep_result``.
    """
    def run() -> Optional[Dict[str, Any]]:
        from scincl.knn.papers import build_faiss

        result = build_faiss(str(graph["embeddings"]), str(index), string_factory=search.faiss_string_factory,
                             metric=search.ann_metric, do_normalize=search.ann_normalize_embeddings,
                             paper_ids=str(graph["ids"]), include_paper_ids=str(corpus),
                             batch_size=search.ann_batch_size, workers=workers, device=search.ann_device, seed=seed)
        return result if keep_result else None

    return Stage(name, list(outputs or [index]), run, inputs=list(inputs), description=description,
                 settings=dict(settings or {}))


def citations_stage(name: str, metadata_dir: Optional[Path], citations_dir: Path, *, test_ratio: float, seed: int,
                    excluded: Optional[Path], workers: Optional[int], outputs: Sequence[Path],
                    inputs: Sequence[Optional[Path]], corpus_format: Optional[str] = None,
                    settings: Optional[Dict[str, Any]] = None, description: str = "") -> Stage:
    """The citations stage: ``graph.stage.get_citations`` writes the corpus' citation edges (from the shards in
    ``metadata_dir``, ``corpus_format``, read with ``workers``) without the papers listed in ``excluded``, split into
    train/test edges (``test_ratio`` held out with ``seed``), to ``citations_dir``. ``outputs``, ``inputs``,
    ``settings``, ``description``: the :class:`Stage` as the planner records it."""
    def run() -> None:
        from scincl.graph.stage import get_citations

        if metadata_dir is None:
            raise InputError("building the citation graph needs --corpus_dir (or give --graph_embeddings_path and "
                             "--graph_paper_ids_path)")
        get_citations(str(metadata_dir), str(citations_dir), workers=workers, test_ratio=test_ratio, seed=seed,
                      excluded_paper_ids=str(excluded) if excluded else None, corpus_format=corpus_format)

    return Stage(name, list(outputs), run, inputs=list(inputs), output_dir=citations_dir, description=description,
                 settings=dict(settings or {}))


def graph_stage(name: str, train_edges: Path, test_edges: Optional[Path], graph_dir: Path, *,
                embed: Mapping[str, Any], outputs: Sequence[Path], inputs: Sequence[Optional[Path]],
                settings: Optional[Dict[str, Any]] = None, description: str = "") -> Stage:
    """The graph stage: ``graph.embed.embed_graph`` embeds the citation graph of ``train_edges`` into ``graph_dir``
    (link prediction on ``test_edges`` when given). ``embed``: its other arguments as the planner chose them
    (method, config, overrides, dimension, method settings, seed); PyTorch-BigGraph (``pbg``) runs
    ``graph.biggraph.train_biggraph`` with them. ``outputs``, ``inputs``, ``settings``, ``description``: the
    :class:`Stage` as the planner records it. The stage's result is ``embed_graph``'s (paths and metrics)."""
    def run() -> Dict[str, Any]:
        from scincl.graph.embed import embed_graph

        # override: start over (a rerun discards PyTorch-BigGraph's import and checkpoints), not a reuse check
        return embed_graph(train_edges, graph_dir, test_edges=test_edges, override=True, **embed)

    return Stage(name, list(outputs), run, inputs=list(inputs), output_dir=graph_dir, description=description,
                 settings=dict(settings or {}))


def evaluate_stage(name: str, model: str, scidocs_dir: Path, results_dir: Path, *, split: str,
                   pooling_strategy: Optional[str], max_sequence_length: Optional[int],
                   papers: Optional[Callable[[], Path]] = None, bf16: str = "false", device: Optional[str] = None,
                   threads: Optional[int] = None, outputs: Sequence[Path], inputs: Sequence[Optional[Path]],
                   output_dir: Path, settings: Optional[Dict[str, Any]] = None,
                   reusable: Optional[Callable[[], bool]] = None, description: str = "") -> Stage:
    """The SciDocs evaluation stage: ``model`` embeds SciDocs papers, ``eval.evaluate.run_evaluation`` scores them
    on ``split`` (``val``, ``test`` or ``both``) into ``results_dir`` (``results.json``, ``results.md``).

    The embedding step is the planner's choice:
        ``papers`` None: every SciDocs ``paper_metadata_*.json`` file, as the official suite: by the evaluator
            itself at its full length (``max_sequence_length`` None) or by ``embed_scidocs_metadata`` cut to
            ``max_sequence_length`` tokens into ``results_dir/embeddings/model`` (kept);
        ``papers`` given: returns the JSON of the split's papers (a stage of the planner's, run first);
            ``model.embed.embed`` embeds them (``bf16``) into ``results_dir/embeddings.<split>.jsonl``, scored for every
            task (classification included when the corpus has its labels), then deleted (the scores are kept).

    ``pooling_strategy`` None: the encoder's own. ``device`` None: the evaluator's default. ``threads``: torch's
    start-up thread count to restore first (``None``: leave it). ``name``, ``outputs``, ``inputs``, ``output_dir``,
    ``settings``, ``reusable``, ``description``: the :class:`Stage` as the planner records it.
    """
    def run() -> None:
        from scincl.eval.evaluate import embed_scidocs_metadata, run_evaluation
        from scincl.pipeline.threads import reset_torch_threads

        if threads is not None:
            reset_torch_threads(threads)
        if papers is not None:
            from scincl.model.embed import embed

            embeddings = Path(results_dir) / f"embeddings.{split}.jsonl"
            embed(model, str(papers()), str(embeddings), max_sequence_length=max_sequence_length,
                  pooling_strategy=pooling_strategy, bf16=bf16)
            score_embeddings(scidocs_dir, results_dir, split, embeddings)
            embeddings.unlink()  # large and cheap to recompute; results.json keeps the scores
        elif max_sequence_length is None:
            run_evaluation(scidocs_dir, results_dir, val_or_test=split, model_dirs=[model],
                           pooling_strategy=pooling_strategy, device=device)
        else:
            files = embed_scidocs_metadata(model, scidocs_dir, Path(results_dir) / "embeddings" / "model",
                                           batch_size=32, device=device, override=False,
                                           max_sequence_length=max_sequence_length, pooling_strategy=pooling_strategy,
                                           val_or_test=split)
            run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(files.main)],
                           cls_embeddings=str(files.classification) if files.classification else None,
                           recomm_embeddings=str(files.recomm) if files.recomm else None,
                           device=device)
        from scincl.model.card import update_model_card  # a trained model's card gets these scores (issue 44)
        update_model_card(model, Path(results_dir) / "results.json")

    return Stage(name, list(outputs), run, inputs=list(inputs), output_dir=output_dir, description=description,
                 reusable=reusable, settings=dict(settings or {}),
                 writes=[Path(results_dir) / "embeddings", Path(results_dir) / f"embeddings.{split}.jsonl"])


def score_embeddings(scidocs_dir: Path, results_dir: Path, split: str, embeddings: Path) -> None:
    """SciDocs scores of one embeddings file on ``split`` into ``results_dir`` (also for MAG/MeSH when the corpus has
    their labels)."""
    from scincl.eval.evaluate import run_evaluation

    has_classes = any(Path(scidocs_dir).glob("*/train.csv"))
    run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(embeddings)],
                   cls_embeddings=str(embeddings) if has_classes else None)


def queries_stage(name: str, queries: Path, *, selection: str, select: Mapping[str, Any], outputs: Sequence[Path],
                  inputs: Sequence[Optional[Path]], settings: Optional[Dict[str, Any]] = None,
                  description: str = "") -> Stage:
    """The query-papers stage: the papers the triplets are mined for, written to ``queries`` by one of
    :data:`QUERY_SELECTIONS` (``selection``), called with the arguments ``select`` (paths and settings, as the planner
    chose them). ``name``, ``outputs``, ``inputs``, ``settings``, ``description``: the :class:`Stage` as the planner
    records it. The stage's result is the selection's counts (``None`` for ``eligible``)."""
    if selection not in QUERY_SELECTIONS:
        raise InputError(f"unknown query selection {selection!r}: choose one of {', '.join(QUERY_SELECTIONS)}")
    return Stage(name, list(outputs), lambda: QUERY_SELECTIONS[selection](queries, **select), inputs=list(inputs),
                 description=description, settings=dict(settings or {}))


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
        ``seed``, into :func:`citation_files` below ``shared`` (scincl/pipeline/layout.py:citations_stage);
        ``stage``: the corpus format and the :class:`Stage` as the planner records it."""
        train, test = citation_files(self.shared)
        return citations_stage(name, metadata_dir, train.parent, test_ratio=test_ratio, seed=seed, excluded=excluded,
                               workers=workers, outputs=[train, test], inputs=[metadata_dir, excluded], **stage)

    def graph_step(self, name: str, train: Path, test: Optional[Path], directory: Path, embed: Dict[str, Any],
                   outputs: Optional[Sequence[Path]] = None, inputs: Sequence[Path] = (), **stage: Any) -> Stage:
        """The graph of the edges in ``train`` embedded into ``directory`` (link prediction on ``test``;
        scincl/pipeline/layout.py:graph_stage): its outputs are ``outputs`` (default: the embeddings and ids of
        :func:`graph_files`), its inputs the edges and ``inputs``; ``stage``: the :class:`Stage` as the planner
        records it."""
        files = graph_files(directory)
        return graph_stage(name, train, test, directory, embed=embed, inputs=[train, test, *inputs],
                           outputs=[files["embeddings"], files["ids"]] if outputs is None else outputs, **stage)

    def train_step(self, name: str, run: Any, triples: Path, metadata: Path, model: Path, base_model: str,
                   training: Dict[str, Any], leakage: Callable[[], Dict[str, Any]], **stage: Any) -> Stage:
        """Fine-tune ``base_model`` on ``triples`` + ``metadata`` into ``model`` with the objective of ``run`` (its
        ``loss``, ``pooling_strategy``, ``max_sequence_length``, ``bitfit``) and the Trainer arguments ``training``
        (scincl/pipeline/layout.py:train_stage); ``stage``: the :class:`Stage` as the planner records it."""
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
