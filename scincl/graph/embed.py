"""One entry point for every citation-graph embedder: ``embed_graph(..., method=pbg|prone|fastrp)``.

Every method writes the files of a PBG export into ``output_dir``, so the FAISS index, the kNN
miner and everything after them are unchanged:

    OUT/embeddings.{h5,npy}             dataset ``embeddings``, row i = paper i of ...
    OUT/entity_names_paper_id_0.json    ... this id list (every paper of the train + test edges)
    OUT/link_prediction.{json,md}       with test edges: PBG's protocol (same negatives as PBG)
    OUT/embed_graph_run.json            method, dimension, settings, seed, inputs, timings

``pbg`` is :func:`scincl.graph.biggraph.train_biggraph` (its config and ``-p`` overrides; it also
writes ``biggraph_run.json``). The other methods take the dimension from ``dimension`` or the PBG
config (so ``--method prone`` with the same config embeds in the same size) and their settings
from ``settings`` (``"key=value ..."``, :mod:`scincl.graph.embedders`). An existing output made
with the same method, settings, seed and input files is reused; a different one needs ``override``.
"""
from __future__ import annotations

import dataclasses
import logging
import resource
import shutil
import time
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

from scincl.errors import InputError
from scincl.graph.embedders import EMBEDDERS
from scincl.graph.embedders.settings import parse_settings
from scincl.io import (PBG_ENTITY_TYPE, PathLike, atomic_path, entity_names_path, write_embeddings_h5, write_id_list,
                       write_json)
from scincl.provenance import OutputRecord
from scincl.temporaries import make_temporary_dir
from scincl.settings.choices import GRAPH_METHODS  # pbg, then the EMBEDDERS
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

DEFAULT_GRAPH_METHOD = "pbg"
RUN_RECORD = "embed_graph_run.json"
BOUNDED_METHODS = ("fastrp",)  # methods with a bounded-memory (--block_size) implementation


def fill_isolated(vectors: np.ndarray, degrees: np.ndarray, seed: int) -> np.ndarray:
    """Rows of papers without a training edge get seeded random vectors at the mean row norm.

    PBG leaves such papers at their random initialisation; an all-zero row instead would tie every
    score and turn a normalised (cosine) index's row into NaN.
    """
    isolated = degrees == 0
    if isolated.any():
        norms = np.linalg.norm(vectors[~isolated], axis=1)
        scale = float(norms.mean()) if norms.size else 1.0
        noise = np.random.default_rng(seed).standard_normal((int(isolated.sum()), vectors.shape[1]))
        vectors[isolated] = (noise / np.linalg.norm(noise, axis=1, keepdims=True) * scale).astype(vectors.dtype)
    return vectors


def method_settings_help() -> str:
    """Each method's ``--settings`` (name, paper, then one line per setting), for ``embed_graph --help``."""
    from scincl.graph.embedders.settings import settings_help

    lines = []
    for name, embedder in EMBEDDERS.items():
        lines.append(f"{name} ({embedder.paper}):")
        lines.extend("  " + line.strip() for line in settings_help(embedder.settings).splitlines())
    return "\n".join(lines)


@writes("output_dir")
def embed_graph(train_edges: PathLike, output_dir: PathLike, method: str = DEFAULT_GRAPH_METHOD,
                config: Optional[PathLike] = None, test_edges: Optional[PathLike] = None,
                dimension: Optional[int] = None, settings: Optional[Any] = None, overrides: Optional[Any] = None,
                seed: int = 0, override: bool = False, random_baseline: bool = True,
                export_format: str = "h5", block_size: Optional[int] = None,
                memory_limit: Optional[str] = None) -> Dict[str, Any]:
    """Citation-graph embeddings with --method pbg (PyTorch-BigGraph, the paper's), prone or fastrp.

    python cli_graph.py embed_graph citations.train.tsv out/graph --method fastrp \\
        --test_edges citations.test.tsv --dimension 128 --settings "normalization_strength=-0.5"

    Every method writes what train_biggraph exports: OUTPUT_DIR/embeddings.{h5,npy} +
    entity_names_paper_id_0.json (every paper of the train + test edges), and with --test_edges
    link_prediction.json/.md under PBG's protocol (the config's comparator and negatives), so
    build_faiss, get_knn and the triples are unchanged. --method pbg: train_biggraph with --config
    (default s2orc_768d_dot, paper §4.2) and -p overrides; --dimension sets PBG's dimension.
    --method prone|fastrp: --dimension (default: the config's) and --settings "key=value ..."
    (their paper defaults otherwise; embed_graph_run.json records method, settings, timings):
    {settings}
    --block_size ROWS (fastrp): bounded memory: the graph, the powers and the output stay on disk
    (a temporary folder in OUTPUT_DIR) and are processed ROWS rows at a time; the embeddings are
    the same bytes as without it.
    Memory is planned first (cli_graph.py plan_memory, with the real paper and edge counts): a run
    that would not fit --memory_limit (e.g. 32GB; default: the memory available now) is refused in
    one line naming the setting that fits. With --memory_limit, fastrp gets the largest
    --block_size that fits (when the whole graph does not) and pbg the fewest
    entities.paper_id.num_partitions that fit (when no -p sets them).
    An output made with other inputs, method or settings is refused unless --override.
    Returns the output paths and the link-prediction metrics.
    """
    from scincl.graph.biggraph import train_biggraph
    from scincl.graph.pbg_config import (load_config_dict, load_config_dict_overrides, resolve_config_path,
                                         with_output_dir)

    if method not in GRAPH_METHODS:
        raise InputError(f"--method {method!r} is not one of {', '.join(GRAPH_METHODS)}")
    if dimension is not None and not 1 <= int(dimension) <= 4096:
        raise InputError(f"--dimension {dimension} is outside [1, 4096]")
    if block_size is not None and (method not in BOUNDED_METHODS or int(block_size) < 1):
        raise InputError(f"--block_size needs --method {' or '.join(BOUNDED_METHODS)} and a positive number of rows, "
                         f"got --method {method} --block_size {block_size}")
    config = config or "s2orc_768d_dot"  # paper §4.2: 768-d dot product
    if method == "pbg":
        if settings:
            raise InputError("--method pbg takes its settings as PBG overrides (-p key=value), not --settings")
        extra = f"dimension={int(dimension)}" if dimension is not None else None
        all_overrides = " ".join(x for x in (_as_text(overrides), extra) if x) or None
        partitions = _pbg_partitions_for_memory(config, all_overrides, train_edges, test_edges, memory_limit)
        if partitions is not None:
            all_overrides = " ".join(x for x in (all_overrides, f"entities.paper_id.num_partitions={partitions}") if x)
        return train_biggraph(config, train_edges, test_edges, overrides=all_overrides, output_dir=output_dir,
                              seed=seed, override=override, random_baseline=random_baseline,
                              export_format=export_format)

    embedder = EMBEDDERS[method]
    method_settings = parse_settings(embedder.settings, settings)
    config_path = resolve_config_path(config)
    config_dict = load_config_dict_overrides(with_output_dir(load_config_dict(config_path), output_dir), overrides,
                                             config_path)
    dim = int(dimension if dimension is not None else config_dict["dimension"])
    out = Path(output_dir)
    emb_path = out / f"embeddings.{export_format}"
    names_path = entity_names_path(out)
    record = OutputRecord(emb_path, names_path, command="embed_graph", settings={
        "method": method, "dimension": dim, "seed": int(seed), "settings": dataclasses.asdict(method_settings),
        "export_format": export_format, "evaluated_with": str(config_path) if test_edges else None},
        inputs=[Path(train_edges), Path(test_edges) if test_edges else None])
    if record.reusable(override):
        return {"embeddings_path": str(emb_path), "entity_names_path": str(names_path), "reused": True}

    papers, edges = graph_counts(train_edges, test_edges)
    check_graph_size(method, papers, edges, dim, train_edges)
    block_size = _embedder_memory(method, papers, edges, dim, block_size, memory_limit)
    if test_edges is not None:  # PBG's evaluator loads the embeddings whatever --block_size bounds (issue 45)
        from scincl.graph.memory_plan import check_link_prediction_memory

        check_link_prediction_memory(papers, edges, dim, int(config_dict["entities"][PBG_ENTITY_TYPE].get(
            "num_partitions", 1)), memory_limit)
    started, cpu_started = time.perf_counter(), time.process_time()
    out.mkdir(parents=True, exist_ok=True)
    work = make_temporary_dir(out, "embed_blocks") if block_size is not None else None
    try:
        if work is not None:
            ids, vectors, papers, undirected = _embed_in_blocks(train_edges, test_edges, dim, method_settings, int(seed),
                                                        int(block_size), work, emb_path, names_path, export_format)
        else:
            ids, vectors, papers, undirected = _embed_in_memory(embedder, train_edges, test_edges, dim, method_settings,
                                                        int(seed), method, emb_path, names_path, export_format)
        embed_seconds, embed_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        result: Dict[str, Any] = {"embeddings_path": str(emb_path), "entity_names_path": str(names_path)}
        if test_edges is not None:
            result.update(_link_prediction(config_dict, ids, vectors, train_edges, test_edges, seed, random_baseline,
                                           out))
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    run = {"method": method, "paper": embedder.paper, "dimension": dim, "settings": dataclasses.asdict(method_settings),
           "seed": int(seed), "train_edges": str(train_edges), "test_edges": str(test_edges) if test_edges else None,
           "papers": papers, "undirected_edges": undirected, "block_size": block_size,
           "embed_seconds": round(embed_seconds, 3), "embed_cpu_seconds": round(embed_cpu, 3),
           "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    write_json(out / RUN_RECORD, run)
    record.write()
    result["manifest_path"] = str(out / RUN_RECORD)
    logger.info("embed_graph: %s embeddings in %.1f s (%.1f CPU s) -> %s", method, embed_seconds, embed_cpu, emb_path)
    return result


def check_graph_size(method: str, papers: int, edges: int, dimension: int, train_edges: PathLike) -> None:
    """A graph with no edges has nothing to embed; ProNE's SVD gives at most one dimension per paper, so a
    --dimension above the paper count is refused instead of silently returning fewer dimensions (issue 41)."""
    if edges == 0:
        raise InputError(f"no edges: {method} has nothing to embed (an empty or comment-only edge file)",
                         path=train_edges)
    if method == "prone" and dimension > papers:
        raise InputError(f"--dimension {dimension} is more than the graph's {papers} papers: prone's SVD gives at "
                         f"most {papers} dimensions; pass --dimension {papers} or less", path=train_edges)


def _embedder_memory(method: str, papers: int, edges: int, dimension: int, block_size: Optional[int],
                     memory_limit: Optional[str]) -> Optional[int]:
    """Check the graph stage's memory with the real counts; with --memory_limit, fastrp's block size that fits."""
    from scincl.graph.memory_plan import check_graph_memory, choose_setting

    chosen, _ = choose_setting(method, papers, edges, dimension, memory_limit, block_size)
    if chosen != block_size:
        logger.info("embed_graph: --memory_limit %s: %s in blocks of %d rows", memory_limit, method, chosen)
    check_graph_memory(method, papers, edges, dimension, memory_limit, chosen)
    return chosen


def _pbg_partitions_for_memory(config, overrides: Optional[str], train_edges, test_edges,
                               memory_limit: Optional[str]) -> Optional[int]:
    """Check PBG's memory with the real counts; with --memory_limit and no partitions set, the count that fits."""
    from scincl.graph.memory_plan import check_graph_memory, choose_setting
    from scincl.graph.pbg_config import load_config_dict

    config_dict = load_config_dict(config, overrides)
    dimension = int(config_dict["dimension"])
    partitions = int(config_dict["entities"]["paper_id"].get("num_partitions", 1))
    papers, edges = graph_counts(train_edges, test_edges)
    given = partitions if "num_partitions" in (overrides or "") else None
    _, chosen = choose_setting("pbg", papers, edges, dimension, memory_limit, partitions=given)
    if chosen is not None and chosen != partitions:
        logger.info("embed_graph: --memory_limit %s: PBG with %d partitions", memory_limit, chosen)
    check_graph_memory("pbg", papers, edges, dimension, memory_limit, partitions=chosen or partitions)
    return chosen if chosen != given else None


def graph_counts(train_edges: PathLike, test_edges: Optional[PathLike] = None) -> "tuple[int, int]":
    """``(papers, train edges)``: the unique ids of both files and the edges of the train file, read in chunks."""
    from scincl.graph.embedders.disk_graph import node_ids

    ids, edges = node_ids([Path(p) for p in (train_edges, test_edges) if p is not None])
    return len(ids), edges[0]


def _embed_in_memory(embedder, train_edges, test_edges, dim, method_settings, seed, method, emb_path, names_path,
                     export_format):
    """The whole graph and embedding matrix in memory; writes the embeddings and ids.

    Returns the ids, the embeddings, the paper and the undirected edge counts.
    """
    from scincl.graph.embedders.adjacency import read_graph

    graph = read_graph(train_edges, [test_edges])
    logger.info("embed_graph: %s, %d-d, on %d papers / %d undirected edges", method, dim, len(graph.ids),
                graph.adjacency.nnz // 2)
    vectors = fill_isolated(embedder.embed(graph, dim, method_settings, seed), graph.degrees, seed)
    if not np.isfinite(vectors).all():
        raise InputError(f"{method} produced non-finite embeddings (check its settings)")
    if export_format == "h5":
        write_embeddings_h5(emb_path, vectors)
    elif export_format == "npy":
        with atomic_path(emb_path) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, vectors)
    else:
        raise InputError(f"unknown export format {export_format!r}; choose h5 or npy")
    ids = [str(pid) for pid in graph.ids]
    write_id_list(names_path, ids)
    return ids, vectors, len(ids), int(graph.adjacency.nnz // 2)


def _embed_in_blocks(train_edges, test_edges, dim, method_settings, seed, block_rows, work, emb_path, names_path,
                     export_format):
    """FastRP with the graph, powers and output on disk under ``work``, ``block_rows`` rows at a time.

    Returns the ids (only with test edges: link prediction needs them), the embeddings (a read-only
    map of ``work``'s matrix, for link prediction), the paper and the undirected edge counts.
    """
    from scincl.graph.embedders.block_output import (check_finite_blocks, fill_isolated_blocks,
                                                     write_embeddings_blocks, write_ids_blocks)
    from scincl.graph.embedders.disk_graph import build_disk_graph
    from scincl.graph.embedders.fastrp_bounded import embed_bounded

    graph = build_disk_graph(train_edges, work / "graph", block_rows, [test_edges])
    logger.info("embed_graph: fastrp in blocks of %d rows, %d-d, on %d papers / %d undirected edges", block_rows,
                dim, graph.n, graph.nnz // 2)
    vectors = embed_bounded(graph, dim, method_settings, seed, block_rows, work)
    fill_isolated_blocks(vectors, graph.degrees(), seed, block_rows)
    check_finite_blocks(vectors, block_rows, "fastrp")
    write_embeddings_blocks(vectors, emb_path, export_format, block_rows)
    write_ids_blocks(names_path, graph.ids)
    ids = graph.ids if test_edges is not None else []  # a polars Series: no Python object per paper
    mapped = np.memmap(vectors.path, dtype=vectors.dtype, mode="r", shape=(vectors.rows, vectors.columns))
    return ids, mapped, graph.n, graph.nnz // 2


# each method's --settings, listed in the docstring from where they are declared (help() and --help show them)
if embed_graph.__doc__:  # python -OO drops docstrings
    embed_graph.__doc__ = embed_graph.__doc__.replace("{settings}", method_settings_help().replace("\n", "\n    "))


def _link_prediction(config_dict, ids, vectors, train_edges, test_edges, seed, random_baseline, out) -> Dict[str, Any]:
    from scincl.graph.embedding_link_prediction import evaluate_embeddings
    from scincl.graph.link_prediction import metrics_markdown, write_metrics
    from scincl.graph.pbg_import import import_edges

    import_edges(config_dict, train_edges, test_edges, seed=int(seed), override=True)
    test_path = config_dict["edge_paths"][1]
    rows = evaluate_embeddings(config_dict, ids, vectors, test_path, seed=int(seed), random_baseline=random_baseline)
    json_path, md_path = write_metrics(out, rows, {"test_edges": test_path, "comparator": config_dict["comparator"]})
    logger.info("embed_graph: link prediction on %s\n%s", test_path, metrics_markdown(rows))
    return {"metrics": rows, "metrics_json": str(json_path), "metrics_md": str(md_path)}


def _as_text(overrides: Optional[Any]) -> Optional[str]:
    if overrides is None:
        return None
    return " ".join(overrides) if isinstance(overrides, (list, tuple)) else str(overrides)
