"""The ``evaluate`` stage: embeddings (ready, or made by the ``embed`` stage) -> results.json + results.md.

Output directory layout::

    O/results.json, O/results.md          # see scincl.eval.report for the JSON schema
    O/per_query.json                      # the qrel tasks' trec_eval value per query (PER_QUERY_FILE)
    O/embeddings/<run>/{mag_mesh,view_cite_read,recomm}[.<split>].jsonl   # only with --model_dir (.<split>: the
                                          # papers of that split only, when one split is evaluated)
    O/runs/<run>/results.{json,md}, per_query.json   # only when several runs (seeds) are evaluated

An existing ``O/results.json`` is reused only when its record (``results.json.made_by.json``: the
runs, SciDocs files and settings that made it) matches; otherwise it is refused unless ``override``.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Union

import numpy as np

from scincl.errors import InputError
from scincl.eval.lexical import embed_lexical, is_lexical, is_sparse
from scincl.model.folder_check import check_model_files
from scincl.eval.report import aggregate_runs, average, results_markdown, runs_average
from scincl.eval.retrieval import citation_recommendation_buckets, full_pool_retrieval
from scincl.eval.scidocs import EmbeddingFiles, evaluate_scidocs, parse_splits
from scincl.scidocs_io import METADATA_FILES, read_scidocs_metadata, scidocs_paths, split_papers
from scincl.io import PathLike, atomic_open, atomic_path, dumps_json, read_embeddings_jsonl, read_json, write_json
from scincl.provenance import OutputRecord, local_path
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

PER_QUERY_FILE = "per_query.json"  # beside results.json: {"unit", "per_query": {split: {task: {metric: {query: v}}}}}
PER_QUERY_UNIT = ("trec_eval's value per query, in [0, 1]; the task's figure in results.json is 100 x their mean "
                  "over the queries, rounded to 2 decimals")


def as_list(value: Any) -> List[str]:
    """A CLI value that may be one path, a comma-separated string or a list -> list of strings."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def run_names(paths: Sequence[str]) -> List[str]:
    """Distinct short names for runs: the file/dir names, numbered when they collide."""
    names = [Path(p.rstrip("/")).stem or "run" for p in paths]
    if len(set(names)) == len(names):
        return names
    return [f"{i}_{n}" for i, n in enumerate(names)]


def embed_scidocs_metadata(model_dir: str, scidocs_dir: PathLike, output_dir: Path, batch_size: int,
                           device: Optional[str], override: bool,
                           max_sequence_length: Optional[int] = None,
                           pooling_strategy: Optional[str] = None,
                           fit_corpus: Optional[str] = None, val_or_test: str = "both") -> EmbeddingFiles:
    """Embed every ``paper_metadata_*.json`` with the ``embed`` stage (as the official suite, one file each).

    ``val_or_test`` val or test: a neural encoder embeds only the papers that split needs (its qrels' queries and
    candidates, every classification paper, every recommendation paper: :func:`split_metadata`), into
    ``<group>.<split>.jsonl``; both: every paper, into ``<group>.jsonl``. A lexical encoder always embeds every
    paper of a file (its vocabulary and weights are fitted on them).

    ``pooling_strategy`` (``cls`` | ``mean``): default the one saved in the model dir (``cls`` without one).
    ``model_dir`` tfidf / bm25: the lexical encoders (:mod:`scincl.eval.lexical`), each file fitted on its
    own papers (the SciDocs papers of the tasks it serves) or on ``fit_corpus``.
    """
    paths = scidocs_paths(scidocs_dir)
    made: Dict[str, Path] = {}
    if is_lexical(model_dir):
        for group in METADATA_FILES:
            if paths.metadata(group).exists():
                made[group] = embed_lexical(model_dir, paths.metadata(group), output_dir / f"{group}.jsonl",
                                            fit_corpus=fit_corpus, override=override)
    else:
        try:
            from scincl.model.embed import embed
        except ImportError as exc:
            raise InputError(f"--model_dir needs the embed stage (scincl.model.embed), which is not available: "
                             f"{exc}") from None
    splits = parse_splits(val_or_test)
    for group in METADATA_FILES:
        metadata = paths.metadata(group)
        if not metadata.exists() or group in made:
            continue
        name = group if len(splits) > 1 else f"{group}.{splits[0]}"
        if len(splits) == 1 and group != "recomm":
            metadata = split_metadata(paths.root, metadata, splits[0], output_dir / f"{name}.papers.json")
        made[group] = Path(embed(model_dir, str(metadata), str(output_dir / f"{name}.jsonl"), batch_size=batch_size,
                                 max_sequence_length=max_sequence_length, device=device, override=override,
                                 pooling_strategy=pooling_strategy))
    if not made:
        raise InputError("no paper_metadata_*.json to embed in SciDocs dir", path=paths.root)
    main = made.get("view_cite_read") or made.get("mag_mesh") or made["recomm"]
    return EmbeddingFiles(main=main, classification=made.get("mag_mesh"), recomm=made.get("recomm"))


def split_metadata(scidocs_dir: PathLike, metadata: Path, split: str, output: Path) -> Path:
    """``output``: the papers of ``metadata`` that ``split`` needs (:func:`scincl.scidocs_io.split_papers`), in the
    file's order; rewritten only when its content changes (so the embeddings made from it stay reusable)."""
    needed = split_papers(scidocs_dir, split)
    papers = {pid: record for pid, record in read_scidocs_metadata(metadata).items() if pid in needed}
    logger.info("%s: %d of the papers of %s are needed for %s", output.name, len(papers), metadata.name, split)
    text = dumps_json(papers)
    if not output.exists() or output.read_bytes() != text:
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(output) as tmp:
            tmp.write_bytes(text)
    return output


@writes("output_path")
def embed_papers(model_dir_or_name: str, metadata_path: str, output_path: str, fit_corpus: Optional[str] = None,
                 override: bool = False, **encoder_options: Any) -> Path:
    """Embed papers with an encoder: metadata -> SciDocs embeddings jsonl {"paper_id","embedding"}; prints OUTPUT_PATH.

    Batched longest-first under torch.inference_mode; fp32 unless --bf16 auto|true (auto: bf16 autocast
    only where the device has native bf16). MODEL_DIR_OR_NAME tfidf or bm25: the lexical baselines
    (scincl/eval/lexical.py: scikit-learn TF-IDF with sublinear tf / BM25 k1 1.2 b 0.75, English stop
    words, l2-normalised), fitted on the papers being embedded or on --fit_corpus; their embeddings are
    sparse records {"paper_id", "embedding": {"dim", "indices", "values"}}, which `evaluate` reads.

    A neural encoder embeds with :func:`scincl.model.embed.embed`, which takes ``encoder_options`` (its
    flags and defaults: batch_size, max_sequence_length, pooling_strategy, device, bf16); a lexical one with
    :func:`scincl.eval.lexical.embed_lexical`. Returns OUTPUT_PATH.

    Args:
        model_dir_or_name: a `train` output dir, an HF checkpoint (e.g. malteos/scincl when cached), tfidf or bm25.
        metadata_path: metadata jsonl(.gz) {"paper_id","title","abstract"} or a SciDocs paper_metadata_*.json.
        output_path: embeddings jsonl(.gz), one line per paper in input order.
        batch_size: papers per forward pass.
        max_sequence_length: tokens per paper (title [SEP] abstract).
        pooling_strategy: cls | mean (default: read from the model dir's 1_Pooling/config.json, else cls).
        device: cuda | cpu (default: cuda when available).
        override: recompute an existing OUTPUT_PATH.
        bf16: false (fp32, default: scincl.model.embed.EMBED_BF16) | auto | true.
        fit_corpus: tfidf/bm25 only: metadata jsonl(.gz) or SciDocs json whose papers the vocabulary and
            idf are learned from (default: the papers being embedded).
    """
    if is_lexical(model_dir_or_name):
        return embed_lexical(model_dir_or_name, metadata_path, output_path, fit_corpus=fit_corpus, override=override)
    if fit_corpus:
        raise InputError("--fit_corpus goes with the lexical encoders (tfidf, bm25) only")
    from scincl.model.embed import embed

    return embed(model_dir_or_name, metadata_path, output_path, override=override, **encoder_options)


def read_link_prediction_metrics(path: PathLike) -> Dict[str, Any]:
    """The graph stage's link-prediction metrics JSON, flattened to ``{"a/b": number}`` (not recomputed)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object of link-prediction metrics", path=path)
    flat: Dict[str, float] = {}

    def walk(prefix: str, obj: Any) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                walk(f"{prefix}/{key}" if prefix else str(key), value)
        elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
            flat[prefix] = obj

    walk("", data)
    if not flat:
        raise InputError("no numeric metrics in link-prediction file", path=path)
    return {"source": str(path), "metrics": flat}


def read_retrieval_pairs(path: PathLike) -> Dict[str, Set[str]]:
    """Held-out pairs ``query<TAB>relevant`` (citations.tsv format, gzip ok) -> ``{query: {relevant}}``."""
    from scincl.graph.citations import read_citations_tsv

    relevant: Dict[str, Set[str]] = defaultdict(set)
    for query, positive in read_citations_tsv(path):
        relevant[query].add(positive)
    if not relevant:
        raise InputError("no held-out pairs", path=path)
    return dict(relevant)


def evaluate_full_pool(pairs_path: PathLike, embeddings_path: PathLike, metric: str = "cosine",
                       device: Optional[str] = None) -> Dict[str, Any]:
    """OpenMSD full-pool retrieval and MP-BERT4CR citation-recommendation buckets on held-out pairs.

    The pool is every paper of ``embeddings_path``; ``device="cuda"`` scores on the GPU.
    """
    relevant = read_retrieval_pairs(pairs_path)
    vectors = read_embeddings_jsonl(embeddings_path)
    if is_sparse(next(iter(vectors.values()))):
        raise InputError("full-pool retrieval takes dense embeddings, not a lexical encoder's sparse ones",
                         path=embeddings_path)
    paper_ids = list(vectors)
    matrix = np.stack([vectors[p] for p in paper_ids])
    queries = list(relevant)
    return {
        "pairs": str(pairs_path), "embeddings": str(embeddings_path), "pool": len(paper_ids), "metric": metric,
        "metrics": full_pool_retrieval(queries, relevant, paper_ids, matrix, metric=metric, device=device),
        "citation_recommendation": citation_recommendation_buckets(queries, relevant, paper_ids, matrix, metric=metric,
                                                                   device=device),
    }


def _one_run(scidocs_dir: PathLike, files: EmbeddingFiles, val_or_test: str, classifier_backend: str,
             n_jobs: Optional[int], device: Optional[str], retrieval_pairs: Optional[str],
             retrieval_embeddings: Optional[str]) -> Dict[str, Any]:
    result = evaluate_scidocs(scidocs_dir, files, val_or_test=val_or_test, classifier_backend=classifier_backend,
                              n_jobs=n_jobs, device=device)
    result["average"] = {split: average(scores) for split, scores in result["scores"].items()}
    result["embeddings"] = {"main": str(files.main), "classification": str(files.for_group("classification")),
                            "recomm": str(files.for_group("recomm"))}
    if retrieval_pairs:
        result["full_pool_retrieval"] = evaluate_full_pool(retrieval_pairs, retrieval_embeddings or files.main,
                                                           device=device)
    return result


def write_per_query(output_dir: Path, per_query: Mapping[str, Any]) -> None:
    """``output_dir/per_query.json``: the per-query scores of one run (results.json keeps only their means)."""
    write_json(output_dir / PER_QUERY_FILE, {"unit": PER_QUERY_UNIT, "per_query": per_query}, indent=False)


def results_table(results: Mapping[str, Any]) -> str:
    """The text of ``results.md`` for what :func:`run_evaluation` returns (``evaluate`` prints it)."""
    return results_markdown(results, name=results.get("name") or f"{len(results['runs'])} runs")


def _write(output_dir: Path, results: Mapping[str, Any], name: str) -> None:
    write_json(output_dir / "results.json", results)
    with atomic_open(output_dir / "results.md") as fh:
        fh.write(results_markdown(results, name=name))


@writes("output_dir")
def run_evaluation(
    scidocs_dir: PathLike,
    output_dir: PathLike,
    val_or_test: str = "test",
    model_dirs: Union[str, Sequence[str]] = (),
    embeddings: Union[str, Sequence[str]] = (),
    cls_embeddings: Optional[str] = None,
    recomm_embeddings: Optional[str] = None,
    batch_size: int = 32,
    max_sequence_length: Optional[int] = None,
    link_prediction_metrics: Optional[str] = None,
    retrieval_pairs: Optional[str] = None,
    retrieval_embeddings: Optional[str] = None,
    classifier_backend: str = "auto",
    n_jobs: Optional[int] = -1,
    device: Optional[str] = None,
    override: bool = False,
    pooling_strategy: Optional[str] = None,
    fit_corpus: Optional[str] = None,
) -> Dict[str, Any]:
    """Evaluate embeddings on a SciDocs-format dir: writes OUTPUT_DIR/results.json and results.md (and per_query.json:
    the cite/co-cite/co-view/co-read MAP and nDCG of every query).

    Give either --model_dirs M (the SciDocs paper_metadata_*.json files are embedded with the embed
    stage) or --embeddings E.jsonl ({"paper_id", "embedding"} per line; used for all tasks, unless
    --cls_embeddings / --recomm_embeddings give separate files for MAG/MeSH and recomm as in the
    official suite). Several models/embedding files (comma-separated, e.g. one per seed) are
    reported as mean ± std. Tasks without data in SCIDOCS_DIR are reported absent, never as 0.

    Args:
        scidocs_dir: official SciDocs layout (mag/, mesh/, coview/, coread/, cite/, cocite/, recomm/).
        output_dir: where results.json, results.md (paper Table 1 layout) and embeddings go.
        val_or_test: val | test | both.
        model_dirs: trained model folder(s) or HF name(s), comma-separated; tfidf / bm25: the lexical
            baselines (see `embed --help`), fitted on the SciDocs papers embedded or on --fit_corpus.
        embeddings: SciDocs embeddings jsonl file(s), comma-separated.
        cls_embeddings: separate embeddings for MAG/MeSH (paper_metadata_mag_mesh papers).
        recomm_embeddings: separate embeddings for recomm (paper_metadata_recomm papers).
        batch_size: embedding batch size with --model_dirs.
        max_sequence_length: tokens per paper with --model_dirs; default: each model's saved length
            (where SentenceTransformer reads it: a trained model's is the length its run scored it at), else 512
            (SPECTER/SciNCL).
        link_prediction_metrics: the graph stage's link-prediction metrics JSON, reported as is.
        retrieval_pairs: held-out pairs TSV (query<TAB>relevant) for full-pool retrieval (OpenMSD) and
            citation recommendation buckets; the pool is every paper of --retrieval_embeddings.
        retrieval_embeddings: embeddings jsonl of the retrieval pool (default: the main embeddings).
        classifier_backend: auto | lightning | sklearn (LinearSVC backend for MAG/MeSH; auto = lightning if installed).
        n_jobs: threads for the classification grid search (-1: all cores; results do not depend on it).
        device: cuda | cpu for embedding and the recomm ranker (default: cuda when available); full-pool
            retrieval scores on the GPU only with --device cuda.
        override: recompute an existing results.json / embeddings.
        pooling_strategy: cls | mean for --model_dirs (default: the pooling saved in each model dir, cls
            without one; give the training's pooling to score a base checkpoint as it will be trained).
        fit_corpus: the corpus a tfidf / bm25 --model_dirs is fitted on (metadata jsonl(.gz) or SciDocs json).

    Returns the results written to results.json (the command prints the table of results.md).
    """
    model_dirs, embeddings = as_list(model_dirs), as_list(embeddings)  # a command line's "a,b" or a list
    out = Path(output_dir)
    parse_splits(val_or_test)
    scidocs_paths(scidocs_dir)
    if bool(model_dirs) == bool(embeddings):
        raise InputError("give either --model_dirs or --embeddings (one or several, comma-separated)")
    if (cls_embeddings or recomm_embeddings) and len(embeddings) != 1:
        raise InputError("--cls_embeddings/--recomm_embeddings go with exactly one --embeddings file")
    for given in (retrieval_pairs, retrieval_embeddings, cls_embeddings, recomm_embeddings, link_prediction_metrics,
                  *embeddings):
        if given and not Path(given).exists():  # fail before any expensive step
            raise InputError("file not found", path=given)
    for model in model_dirs:  # every model folder before the first is embedded (issue 41)
        if not is_lexical(model):
            check_model_files(model, "--model_dirs")
    results_path = out / "results.json"
    record = OutputRecord(results_path, command="evaluate", settings={
        "val_or_test": val_or_test, "max_sequence_length": int(max_sequence_length) if max_sequence_length else None,
        "pooling_strategy": pooling_strategy, "classifier_backend": classifier_backend,
        "models": [m if local_path(m) is None else None for m in model_dirs],
        **({"fit_corpus": "given"} if fit_corpus else {})},
        inputs=[scidocs_dir, *(local_path(m) for m in model_dirs), fit_corpus, *embeddings, cls_embeddings,
                recomm_embeddings, link_prediction_metrics, retrieval_pairs, retrieval_embeddings])
    if record.reusable(override):
        return read_json(results_path)

    link = read_link_prediction_metrics(link_prediction_metrics) if link_prediction_metrics else None
    sources = list(model_dirs or embeddings)
    names = run_names(sources)
    runs: List[Dict[str, Any]] = []
    for name, source in zip(names, sources):
        if model_dirs:
            files = embed_scidocs_metadata(source, scidocs_dir, out / "embeddings" / name, batch_size, device, override,
                                           max_sequence_length=max_sequence_length, pooling_strategy=pooling_strategy,
                                           fit_corpus=fit_corpus, val_or_test=val_or_test)
        else:
            files = EmbeddingFiles(Path(source), Path(cls_embeddings) if cls_embeddings else None,
                                   Path(recomm_embeddings) if recomm_embeddings else None)
        scored = _one_run(scidocs_dir, files, val_or_test, classifier_backend, n_jobs, device, retrieval_pairs,
                          retrieval_embeddings)
        per_query = scored.pop("per_query")  # its own file: results.json keeps its layout
        run = {"name": name, "source": source, "scidocs_dir": str(scidocs_dir), "val_or_test": val_or_test, **scored}
        if link:
            run["link_prediction"] = link
        runs.append(run)
        run_out = out / "runs" / name if len(sources) > 1 else out
        run_out.mkdir(parents=True, exist_ok=True)
        write_per_query(run_out, per_query)
        if len(sources) > 1:
            _write(run_out, run, name)

    if len(runs) == 1:
        results = runs[0]
    else:
        results = {"scidocs_dir": str(scidocs_dir), "val_or_test": val_or_test, "runs": runs,
                   "scores": {}, "std": {}, "average": {}, "absent": {}}
        for split in runs[0]["scores"]:
            results["scores"][split], results["std"][split] = aggregate_runs([r["scores"][split] for r in runs])
            results["average"][split] = runs_average([r["scores"][split] for r in runs])
            results["absent"][split] = runs[0]["absent"][split]
        if link:
            results["link_prediction"] = link
    _write(out, results, name=names[0] if len(names) == 1 else f"{len(names)} runs")
    record.write()  # last: complete
    logger.info("wrote %s and %s", out / "results.json", out / "results.md")
    return results


def score_embeddings(scidocs_dir: PathLike, results_dir: PathLike, split: str, embeddings: Path) -> None:
    """SciDocs scores of one embeddings file on ``split`` into ``results_dir`` (MAG/MeSH too when labelled)."""
    has_classes = any(Path(scidocs_dir).glob("*/train.csv"))
    run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(embeddings)],
                   cls_embeddings=str(embeddings) if has_classes else None)


def scratch_embeddings(results_dir: PathLike, split: str) -> List[Path]:
    """The embeddings :func:`evaluate_encoder` writes below ``results_dir``: the evaluator's folder, a subset's file."""
    return [Path(results_dir) / "embeddings", Path(results_dir) / f"embeddings.{split}.jsonl"]


def evaluate_encoder(model: str, scidocs_dir: PathLike, results_dir: PathLike, split: str,
                     pooling_strategy: Optional[str], max_sequence_length: Optional[int],
                     papers: Optional[PathLike] = None, bf16: str = "false", device: Optional[str] = None) -> None:
    """SciDocs scores of ``model`` on ``split`` into ``results_dir``: the ``papers`` embedded (``bf16``) and deleted
    afterwards, else every SciDocs paper by the evaluator (cut to ``max_sequence_length`` when given)."""
    embeddings_dir, embeddings = scratch_embeddings(results_dir, split)
    if papers is not None:
        from scincl.model.embed import embed

        embed(model, str(papers), str(embeddings), max_sequence_length=max_sequence_length,
              pooling_strategy=pooling_strategy, bf16=bf16)
        score_embeddings(scidocs_dir, results_dir, split, embeddings)
        embeddings.unlink()  # large and cheap to recompute; results.json keeps the scores
    elif max_sequence_length is None:
        run_evaluation(scidocs_dir, results_dir, val_or_test=split, model_dirs=[model],
                       pooling_strategy=pooling_strategy, device=device)
    else:
        files = embed_scidocs_metadata(model, scidocs_dir, embeddings_dir / "model", batch_size=32, device=device,
                                       override=False, max_sequence_length=max_sequence_length,
                                       pooling_strategy=pooling_strategy, val_or_test=split)
        run_evaluation(scidocs_dir, results_dir, val_or_test=split, embeddings=[str(files.main)],
                       cls_embeddings=str(files.classification) if files.classification else None,
                       recomm_embeddings=str(files.recomm) if files.recomm else None, device=device)
