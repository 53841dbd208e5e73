"""What both planners share: the shared files' names, the folder keys of a real-corpus recipe, and each step's
library call as a :class:`Stage` (``*_stage``; the planner supplies the data)."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.evaluate import evaluate_encoder, scratch_embeddings
from scincl.graph.embed import embed_graph
from scincl.graph.stage import get_citations
from scincl.knn.papers import build_faiss
from scincl.leakage import recorded_report
from scincl.model.card import update_model_card
from scincl.model.device import default_device, reset_torch_threads, resolve_bf16
from scincl.pipeline.runner import Stage
from scincl.settings.recipe import Recipe
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.metadata import get_metadata


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


def precision_key(recipe: Recipe) -> str:
    """``""`` for fp32, else ``_bf16`` (training) / ``_ebf16`` (embedding), as this machine resolves the request."""
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


# ---------------------------------------------------------------------- the stages: the library call of each step
# ``stage``: the Stage's ``outputs``, ``inputs``, ``output_dir``, ``settings``, ``description``; the other arguments say
# what the stage does (a real-corpus stage's recorded settings: CorpusPlan.add, provenance.call_settings).
def train_stage(name: str, triples: Path, metadata: Path, model: Path, *, arguments: Mapping[str, Any],
                threads: Optional[int] = None, inputs: Sequence[Optional[Path]] = (), **stage: Any) -> Stage:
    """``model.train.train`` on ``triples`` into ``model`` with its other ``arguments`` (the base model, the loss, the
    leakage guard's, the Trainer's); ``inputs``: beside the triplets and texts; its result: the leakage report."""
    def run() -> Optional[Dict[str, Any]]:
        from scincl.model.train import train

        if threads is not None:
            reset_torch_threads(threads)
        train(str(triples), str(metadata), str(model), **arguments)
        return recorded_report(model)

    return Stage(name, stage.pop("outputs", [model]), run, inputs=[triples, metadata, *inputs], output_dir=model,
                 **stage)


def texts_stage(name: str, triples: Path, metadata: Path, metadata_dir: Optional[Path], *, workers: int,
                corpus_format: Optional[str] = None, inputs: Sequence[Optional[Path]] = (), **stage: Any) -> Stage:
    """``triples.metadata.get_metadata``: the texts of the papers of ``triples`` into ``metadata`` (``inputs``: beside
    the triplets; its result: their counts)."""
    def run() -> Dict[str, int]:
        if metadata_dir is None:
            raise InputError(f"the metadata stage needs --corpus_dir (or --skip_metadata with an existing "
                             f"{metadata.name})")
        return get_metadata(triples, metadata, metadata_dir, workers, corpus_format=corpus_format)

    return Stage(name, [metadata], run, inputs=[triples, *inputs], **stage)


def index_stage(name: str, graph: Mapping[str, Path], index: Path, corpus: Path, *, search: KnnSearch,
                workers: Optional[int], seed: int = 0, **stage: Any) -> Stage:
    """``knn.papers.build_faiss`` over the ``graph`` embeddings of the papers in ``corpus`` into ``index``, as
    ``search`` searches (its result: the build's summary)."""
    run = partial(build_faiss, str(graph["embeddings"]), str(index), string_factory=search.faiss_string_factory,
                  metric=search.ann_metric, do_normalize=search.ann_normalize_embeddings, paper_ids=str(graph["ids"]),
                  include_paper_ids=str(corpus), batch_size=search.ann_batch_size, workers=workers,
                  device=search.ann_device, seed=seed)
    return Stage(name, stage.pop("outputs", [index]), run, **stage)


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

    return Stage(name, list(citation_files(citations_dir.parent)), run, inputs=[metadata_dir, excluded], **stage)


def graph_stage(name: str, train_edges: Path, test_edges: Optional[Path], graph_dir: Path, *,
                embed: Mapping[str, Any], inputs: Sequence[Path] = (), **stage: Any) -> Stage:
    """``graph.embed.embed_graph`` of ``train_edges`` into ``graph_dir`` (link prediction on ``test_edges``) with
    ``embed``; outputs by default its embeddings and ids; its result is ``embed_graph``'s."""
    files = graph_files(graph_dir)
    # override: start over (a rerun discards PyTorch-BigGraph's import and checkpoints), not a reuse check
    return Stage(name, stage.pop("outputs", [files["embeddings"], files["ids"]]),
                 lambda: embed_graph(train_edges, graph_dir, test_edges=test_edges, override=True, **embed),
                 inputs=[train_edges, test_edges, *inputs], output_dir=graph_dir, **stage)


def evaluate_stage(name: str, model: str, scidocs_dir: Path, results_dir: Path, *, split: str,
                   encoding: Mapping[str, Any], threads: Optional[int] = None, **stage: Any) -> Stage:
    """``eval.evaluate.evaluate_encoder`` of ``model`` on ``split`` into ``results_dir``'s ``results.json`` with its
    other arguments ``encoding`` (pooling, length, papers, bf16, device); a trained model's card gets the scores."""
    def run() -> None:
        if threads is not None:
            reset_torch_threads(threads)
        evaluate_encoder(model, scidocs_dir, results_dir, split, **encoding)
        update_model_card(model, results_dir / "results.json")

    return Stage(name, [results_dir / "results.json"], run, writes=scratch_embeddings(results_dir, split), **stage)

