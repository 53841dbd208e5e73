"""The stages every planner builds, each implemented once (issue 27: one planner).

``run_specter`` (:class:`~scincl.pipeline.scincl_plan.SciNCLPlan`) and the real-corpus experiments
(:class:`~scincl.pipeline.real_corpus.CorpusPlan`) build their stages here, one function per stage. What
a planner decides stays a parameter: where the outputs go, the stage's name and the settings and inputs its
completion marker records (``Stage.made_by``), so runs cached by either planner keep their markers and are
reused.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Sequence

from scincl.errors import InputError
from scincl.io import read_id_list, write_id_list
from scincl.pipeline.runner import Stage
from scincl.triples.sources import sampler

if TYPE_CHECKING:
    from scincl.triples.knn_miner import KnnSearch

logger = logging.getLogger(__name__)


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
                 reusable=reusable, settings=dict(settings or {}))


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


def _graph_limit_and_ratio(queries: Path, *, corpus: Path, graph_ids: Path, graph_limit: str, ratio: float, seed: int,
                           with_text: Optional[Path], specter_triples: Optional[str], id_mapping: Optional[str],
                           excluded: Optional[Path]) -> Dict[str, int]:
    """``run_specter``'s selection: the training corpus (``corpus.selection.select_training_corpus``: the graph papers
    with a text, limited by ``graph_limit`` to SPECTER's papers of ``specter_triples`` or not, without the
    ``excluded`` ones) written to ``corpus``, and ``ratio`` of its query papers drawn with ``seed``."""
    from scincl.corpus.selection import read_id_mapping, read_specter_ids, select_training_corpus
    from scincl.io import read_json
    from scincl.triples.queries import sample_query_ids

    mapping = read_id_mapping(id_mapping)
    specter = read_specter_ids(specter_triples, mapping) if specter_triples else None
    graph = read_id_list(graph_ids)
    if with_text is not None:  # the corpus' metadata id mapping {shard: [[paper_id, line], ...]}
        texts = {str(row[0]) for rows in read_json(with_text).values() for row in rows}
        kept = [pid for pid in graph if pid in texts]
        logger.info("queries: %d of %d graph papers have a text in the corpus (the others cannot be encoded)",
                    len(kept), len(graph))
        graph = kept
    selected = select_training_corpus(graph, graph_limit, specter, read_id_list(excluded) if excluded else [],
                                      seed=seed)
    sampled = sample_query_ids(selected.query_ids, ratio, seed=seed)
    write_id_list(corpus, selected.paper_ids)
    write_id_list(queries, sampled)
    return {**selected.stats, "sampled_query_papers": len(sampled)}


def _ratio_of_corpus(queries: Path, *, corpus: Path, ratio: float, seed: int) -> Dict[str, int]:
    """``ratio`` of the papers of a given training ``corpus`` drawn with ``seed``."""
    from scincl.triples.queries import sample_query_ids

    papers = read_id_list(corpus)
    sampled = sample_query_ids(papers, ratio, seed=seed)
    write_id_list(queries, sampled)
    return {"corpus_papers": len(papers), "sampled_query_papers": len(sampled)}


def _eligible_for_all_arms(queries: Path, *, eligible: Path, count: int, seed: int, where: str) -> None:
    """``count`` of the papers listed in ``eligible`` (those every arm can build its triplets for) drawn with
    ``seed`` (``where``: the corpus, named in the error when too few are eligible)."""
    from scincl.triples.queries import sample_eligible_queries

    write_id_list(queries, sample_eligible_queries(read_id_list(eligible), count, seed, where))


# how a planner selects its query papers: run_specter's training corpus (--graph_limit) and --sample_queries_ratio
# of its queries, or that ratio of a given corpus; the real-corpus experiments' fixed count of papers every arm can
# build its triplets for (shared by all arms of a seed)
QUERY_SELECTIONS: Dict[str, Callable[..., Optional[Dict[str, int]]]] = {
    "graph_limit_and_ratio": _graph_limit_and_ratio, "ratio_of_corpus": _ratio_of_corpus,
    "eligible_for_all_arms": _eligible_for_all_arms}
