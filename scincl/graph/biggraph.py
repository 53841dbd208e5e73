"""Citation-graph embeddings with PyTorch-BigGraph: config -> import -> train -> eval -> export.

All heavy lifting is PBG's own Python API (``torchbiggraph.converters.import_from_tsv``,
``torchbiggraph.train``, ``torchbiggraph.eval``); this module wires the steps, makes them
reproducible (seeded entity shuffling, bucket order and Hogwild! workers), reuses finished steps, and writes
the link-prediction metrics of the test split (the columns of the SciNCL paper's Table 5 / the
thesis' Table 6) as json and a markdown row. The steps live in their own modules and are
re-exported here: :mod:`~scincl.graph.pbg_config` (find/load/override/validate configs),
:mod:`~scincl.graph.pbg_import` (TSV -> PBG storage), :mod:`~scincl.graph.link_prediction` (eval +
report), :mod:`~scincl.graph.export` (checkpoint -> h5/npy), :mod:`~scincl.graph.pbg_compat`
(torch-2 patches, seeded subprocesses).

Layout of one run with ``output_dir=OUT`` (without it, the config's own paths are used and the
exports land in ``checkpoint_path``)::

    OUT/graph/                          PBG entity_path (entity counts + names) ...
    OUT/graph/{train,test}_partitioned  ... and the imported edge buckets
    OUT/checkpoints/                    PBG checkpoints (embeddings_paper_id_{part}.vN.h5, model, stats)
    OUT/embeddings.h5                   exported embeddings (dataset ``embeddings``) ...
    OUT/entity_names_paper_id_0.json    ... and their row order (paper ids)
    OUT/link_prediction.{json,md}       test-split metrics (+ a random-embedding baseline row)
    OUT/biggraph_run.json               manifest: resolved config, inputs, seed, versions, timings
"""
from __future__ import annotations

import contextlib
import logging
import re
import shutil
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional

from scincl.errors import InputError
from scincl.faults import kill_point
from scincl.graph.link_prediction import (CHECKPOINT_FILE_PREFIXES, METRIC_NAMES, evaluate,  # noqa: F401
                                          evaluate_random_baseline, metrics_markdown, read_training_losses,
                                          write_metrics)
from scincl.graph.pbg_compat import import_torchbiggraph, seeded_bucket_order, subprocess_initializer
from scincl.graph.pbg_config import (CONFIG_DIR, Overrides, load_config_dict, load_config_dict_overrides,  # noqa: F401
                                     normalize_overrides, parse_config, resolve_config_path, with_output_dir)
from scincl.graph.pbg_import import import_edges, read_imported_edges  # noqa: F401
from scincl.io import PathLike, read_json, write_json
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------ train

def train(config_dict: Mapping[str, Any], edge_path: Optional[str] = None, rank: int = 0, seed: int = 0) -> None:
    """Train (or resume) PBG on ``edge_path`` (default: the config's first edge path)."""
    import_torchbiggraph()
    import torch
    from torchbiggraph.train import train as pbg_train
    from torchbiggraph.types import Rank

    config = parse_config(dict(config_dict, edge_paths=[edge_path or config_dict["edge_paths"][0]]))
    for entity, entity_config in config.entities.items():
        for part in range(entity_config.num_partitions):
            if not (Path(config.entity_path) / f"entity_count_{entity}_{part}.txt").exists():
                raise InputError(f"no import for partition {part} of {entity!r} ({entity_config.num_partitions} "
                                 "partitions configured): import the edges with this config first",
                                 path=config.entity_path)
    torch.manual_seed(seed)
    logger.info("biggraph: training %d-d %s embeddings for %d epochs on %s (rank %d of %d)", config.dimension,
                config.comparator, config.num_epochs, config.edge_paths[0], rank, config.num_machines)
    with seeded_bucket_order(seed):
        pbg_train(config, rank=Rank(rank), subprocess_init=subprocess_initializer(seed))


# -------------------------------------------------------------------------------- one call

def clear_checkpoints(checkpoint_path: PathLike) -> None:
    """Delete PBG checkpoint files (only PBG's own file names) so training starts from scratch.

    Also the snapshots ``epoch_N/`` that ``checkpoint_preservation_interval`` keeps: PBG hard-links
    its new checkpoint into them, so a stale one fails a retraining with "File exists".
    """
    root = Path(checkpoint_path)
    if root.is_dir():
        for p in root.iterdir():
            if p.is_file() and p.name.startswith(CHECKPOINT_FILE_PREFIXES):
                p.unlink()
            elif p.is_dir() and re.fullmatch(r"epoch_\d+", p.name):
                shutil.rmtree(p)


def remove_partial_checkpoints(checkpoint_path: PathLike) -> List[str]:
    """Remove the checkpoint files newer than ``checkpoint_version.txt`` (all versioned files without it): what a
    training that failed mid-write (full disk) left half written. Returns the names removed."""
    root = Path(checkpoint_path)
    version_file = root / "checkpoint_version.txt"
    try:
        complete = int(version_file.read_text().strip()) if version_file.exists() else 0
    except (OSError, ValueError):
        complete = 0
    removed = []
    for path in root.glob("*.v*.h5") if root.is_dir() else ():
        match = re.search(r"\.v(\d+)\.h5$", path.name)
        if match and int(match.group(1)) > complete:
            path.unlink(missing_ok=True)
            removed.append(path.name)
    if removed:
        logger.info("biggraph: removed the partial checkpoint files %s", ", ".join(sorted(removed)))
    return removed


@contextlib.contextmanager
def _failure_names(path: PathLike, step: str, cleanup: Optional[PathLike] = None) -> Iterator[None]:
    """A write failure inside PyTorch-BigGraph (a full disk) names ``path`` (issue 41: "no space left on device while
    writing" named nothing); ``cleanup``: a folder this step created, removed on any failure (no half import)."""
    try:
        yield
    except BaseException as exc:
        if cleanup is not None:
            shutil.rmtree(cleanup, ignore_errors=True)
        current: Optional[BaseException] = exc
        while current is not None:
            if isinstance(current, OSError) and not current.filename:
                current.filename = f"{path} (PyTorch-BigGraph {step})"
                break
            current = current.__cause__ or current.__context__
        raise


@writes("output_dir")
def train_biggraph(
    config: PathLike,
    train_edges: Optional[PathLike] = None,
    test_edges: Optional[PathLike] = None,
    output_dir: Optional[PathLike] = None,
    overrides: Overrides = None,
    rank: int = 0,
    seed: int = 0,
    override: bool = False,
    random_baseline: bool = True,
    export_format: str = "h5",
    importer: Optional[str] = None,
) -> Dict[str, Any]:
    """Train citation-graph embeddings with PyTorch-BigGraph: import -> train -> eval -> export.

    python cli_graph.py train_biggraph demo --train_edges citations.train.tsv \\
        --test_edges citations.test.tsv --output_dir out/biggraph -p num_epochs=5

    Writes embeddings.{h5,npy} + entity_names_paper_id_0.json, link_prediction.json/.md (test split:
    loss, mean rank, MRR, Hits@1/10/50, AUC) and biggraph_run.json; the command prints the output paths.

    Args:
        config: a config module (biggraph_configs/*.py) or a bundled config name (demo, s2orc_768d_dot, ...).
        train_edges / test_edges: ``citing<TAB>cited`` TSVs (gzip ok); omit both to train on an existing import
            (e.g. one made by torchbiggraph_import_from_tsv or ``import_edges``).
        output_dir: put import (graph/), checkpoints, exports and metrics under this folder; without it the
            config's entity_path/checkpoint_path are used and exports go to checkpoint_path.
        overrides: PBG ``key=value`` overrides (``-p``, repeatable), applied last (they win over ``output_dir``).
        rank: this machine's rank in distributed mode (``num_machines > 1``). Import first
            (``import_edges`` / ``cli_graph.py import_edges``), then start every rank without edge
            files; only rank 0 evaluates and exports after training.
        seed: entity shuffling, embedding initialisation and worker seeds.
        override: discard a previous import / checkpoints in these paths and start over.
        random_baseline: also evaluate random embeddings of the same shape (reference row).
        export_format: ``h5`` (dataset ``embeddings``) or ``npy``.
        importer: ``fast`` (:mod:`scincl.graph.fast_import`) or ``pbg`` (PBG's own); same storage.
            None: ``pbg_import.DEFAULT_IMPORTER``.

    Returns:
        ``{"embeddings_path", "entity_names_path", "metrics_json", "metrics_md", "metrics",
        "checkpoint_path", "entity_path", "edge_paths", "manifest_path"}`` (paths as strings;
        metric entries absent when there is no test split, or on ranks other than 0).
    """
    from scincl.graph.export import export_embeddings

    started = time.perf_counter()
    config_path = resolve_config_path(config)
    config_dict = load_config_dict(config_path)
    if output_dir is not None:
        config_dict = with_output_dir(config_dict, output_dir)
    config_dict = load_config_dict_overrides(config_dict, overrides, config_path)
    parse_config(config_dict)  # validate before doing anything
    out_dir = Path(output_dir) if output_dir is not None else Path(config_dict["checkpoint_path"])
    edge_paths = list(config_dict["edge_paths"])
    result: Dict[str, Any] = {"checkpoint_path": config_dict["checkpoint_path"],
                              "entity_path": config_dict["entity_path"], "edge_paths": edge_paths}

    if test_edges is not None and train_edges is None:
        raise InputError("--test_edges needs --train_edges (both are imported together)")
    if train_edges is not None:
        if rank != 0:
            raise InputError("import on rank 0 (or beforehand); other ranks train on the existing import")
        previous = _manifest_or_none(Path(config_dict["entity_path"]) / "import_manifest.json")
        with _failure_names(config_dict["entity_path"], "import",
                            cleanup=None if Path(config_dict["entity_path"]).exists() else config_dict["entity_path"]):
            manifest = import_edges(config_dict, train_edges, test_edges, seed=seed, override=override,
                                    importer=importer)
        if override or previous is None or previous.get("inputs") != manifest.get("inputs"):
            clear_checkpoints(config_dict["checkpoint_path"])
    elif override:
        clear_checkpoints(config_dict["checkpoint_path"])
    if not Path(edge_paths[0]).is_dir():
        raise InputError("no imported training edges; pass --train_edges (and --test_edges)", path=edge_paths[0])

    kill_point("biggraph:imported")
    with _failure_names(config_dict["checkpoint_path"], "training"):
        try:
            train(config_dict, edge_path=edge_paths[0], rank=rank, seed=seed)
        except BaseException:
            remove_partial_checkpoints(config_dict["checkpoint_path"])
            raise
    if rank != 0:
        logger.info("biggraph: rank %d done (rank 0 evaluates and exports)", rank)
        return result

    names_path, embeddings_path = export_embeddings(config_dict, out_dir, fmt=export_format)
    result.update(embeddings_path=str(embeddings_path), entity_names_path=str(names_path))
    kill_point("biggraph:exported")
    losses = read_training_losses(config_dict["checkpoint_path"])
    test_path = edge_paths[1] if len(edge_paths) > 1 and Path(edge_paths[1]).is_dir() else None
    if test_path is None:
        logger.info("biggraph: no test edge path; skipping link-prediction evaluation")
    else:
        rows = {"trained": evaluate(config_dict, test_path, seed=seed)}
        rows["trained"]["train_loss"] = losses[-1] if losses else float("nan")
        if random_baseline:
            rows["random"] = evaluate_random_baseline(config_dict, test_path, seed=seed)
        json_path, md_path = write_metrics(out_dir, rows, {"config": str(config_path), "test_edges": test_path})
        result.update(metrics=rows, metrics_json=str(json_path), metrics_md=str(md_path))
        logger.info("biggraph: link prediction on %s\n%s", test_path, metrics_markdown(rows))
    manifest_path = out_dir / "biggraph_run.json"
    write_json(manifest_path, {
        "config_file": str(config_path), "config": config_dict, "overrides": normalize_overrides(overrides),
        "train_edges": str(train_edges) if train_edges else None, "test_edges": str(test_edges) if test_edges else None,
        "seed": seed, "train_loss_per_epoch": losses, "versions": _versions(),
        "seconds": round(time.perf_counter() - started, 2),
    })
    result["manifest_path"] = str(manifest_path)
    return result
def _manifest_or_none(path: Path) -> Optional[Dict[str, Any]]:
    return read_json(path) if path.exists() else None


def _versions() -> Dict[str, str]:
    import torch

    tbg = import_torchbiggraph()
    version_file = Path(tbg.__file__).parent / "VERSION.txt"
    return {"torch": torch.__version__,
            "torchbiggraph": version_file.read_text().strip() if version_file.exists() else "unknown"}


# ------------------------------------------------------------------------------------ the single steps as commands

@writes("output_dir")
def import_edge_files(config: str, train_edges: str, test_edges: Optional[str] = None,
                      output_dir: Optional[str] = None, overrides: Optional[str] = None, seed: int = 0,
                      override: bool = False, importer: Optional[str] = None) -> dict:
    """Import citing<TAB>cited TSVs into a config's PBG entity/edge paths (like torchbiggraph_import_from_tsv).

    python cli_graph.py import_edges demo citations.train.tsv citations.test.tsv --output_dir out/biggraph

    Entity order is shuffled with --seed; an import of the same files is reused, other files need --override.
    --importer fast (polars; the default) or pbg (PBG's own importer) write the same storage.
    """
    config_dict = load_config_dict(config)
    if output_dir is not None:
        config_dict = with_output_dir(config_dict, output_dir)
    config_dict = load_config_dict_overrides(config_dict, overrides, resolve_config_path(config))
    manifest = import_edges(config_dict, train_edges, test_edges, seed=int(seed), override=override,
                            importer=importer)
    return {"entity_path": config_dict["entity_path"], "edge_paths": manifest["edge_paths"],
            "edges": manifest["edges"], "entities": manifest["entities"]}


@writes("output_dir")
def export_checkpoint(source: str, output_dir: str, export_format: str = "h5", overrides: Optional[str] = None,
                      entity_type: str = "paper_id") -> dict:
    """Export a PBG checkpoint to one embeddings file + entity_names_paper_id_0.json (row order).

    python cli_graph.py export_embeddings out/biggraph/checkpoints out/export --export_format npy

    SOURCE: a PBG checkpoint directory (its config.json gives the entity path) or a config (name or
    file, with -p overrides). Partitions are concatenated in order; embeddings.h5 holds dataset
    `embeddings`.
    """
    from scincl.graph.export import config_of_checkpoint, export_embeddings as run

    if Path(source).is_dir():
        config_dict = config_of_checkpoint(source)
        config_dict["checkpoint_path"] = str(source)
    else:
        config_dict = load_config_dict(source, overrides)
    names_path, emb_path = run(config_dict, output_dir, fmt=export_format, entity_type=entity_type)
    return {"embeddings_path": str(emb_path), "entity_names_path": str(names_path)}
