"""Import ``citing<TAB>cited`` edge lists into PyTorch-BigGraph's partitioned storage (and read them back).

Two importers write the same storage (same entities per partition, same edges per bucket for the
same seed): ``fast`` (default, :mod:`scincl.graph.fast_import`: polars + h5py, multi-threaded and
out-of-core; docs/SCALE.md has the timings) and ``pbg``, PBG's own
``torchbiggraph.converters.import_from_tsv.convert_input_data`` (single-threaded, one Python loop
iteration per edge). Around either: gzip and ``#``-comment handling, one-line errors with file and
line, a seeded entity shuffle, an import manifest (input fingerprints) so a rerun reuses or
refuses a stale import, and right-sized edge files (``pbg_compat.edge_chunk_size``).
"""
from __future__ import annotations

import contextlib
import io
import logging
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from scincl.errors import InputError
from scincl.graph.pbg_compat import edge_chunk_size, import_torchbiggraph
from scincl.graph.pbg_config import parse_config
from scincl.io import PathLike, file_fingerprint, is_gzip_path, open_text, read_json, write_json

logger = logging.getLogger(__name__)

FINGERPRINT_BYTES = 1 << 26  # hash the first 64 MiB of an edge file (+ its size) to detect a changed input
IMPORTERS = ("fast", "pbg")
# fast: scincl.graph.fast_import (issue 15: PBG's importer took 51.6 s for 1M edges, 6.5 h for S2ORC's 463M)
DEFAULT_IMPORTER = "fast"


def import_edges(
    config_dict: Mapping[str, Any],
    train_edges: PathLike,
    test_edges: Optional[PathLike] = None,
    seed: int = 0,
    override: bool = False,
    importer: Optional[str] = None,
) -> Dict[str, Any]:
    """Import ``citing<TAB>cited`` TSVs (gzip ok) into the config's entity_path / edge_paths.

    The train file goes to ``edge_paths[0]``, the test file to ``edge_paths[1]``; entities are
    collected from both (as ``torchbiggraph_import_from_tsv`` does), shuffled with ``seed`` and split
    into ``num_partitions``. An import made from the same files is reused; one made from other
    files is an error unless ``override``. ``importer``: ``fast`` (polars) or ``pbg`` (PBG's own),
    None = :data:`DEFAULT_IMPORTER`; both write the same storage. Returns the import manifest (counts, fingerprints).
    """
    import_torchbiggraph()
    from torchbiggraph.converters.import_from_tsv import parse_config_partial

    importer = importer or DEFAULT_IMPORTER
    if importer not in IMPORTERS:
        raise InputError(f"--importer {importer!r} is not one of {', '.join(IMPORTERS)}")

    inputs = [Path(train_edges)] + ([Path(test_edges)] if test_edges else [])
    for path in inputs:
        if not path.is_file():
            raise InputError("edge file not found", path=path)
    entity_configs, relation_configs, entity_path, edge_paths, dynamic = parse_config_partial(dict(config_dict))
    if len(edge_paths) < len(inputs):
        raise InputError(f"config has {len(edge_paths)} edge_paths but {len(inputs)} edge files were given "
                         "(a test file needs a second edge path)")
    edge_paths = edge_paths[: len(inputs)]
    manifest_path = Path(entity_path) / "import_manifest.json"
    wanted = {
        "inputs": [file_fingerprint(p, hash_bytes_limit=FINGERPRINT_BYTES) for p in inputs],
        "edge_paths": edge_paths, "seed": seed,
        "num_partitions": {name: cfg.num_partitions for name, cfg in entity_configs.items()},
    }
    for item in wanted["inputs"]:
        item["path"] = str(Path(item["path"]).resolve())
    if manifest_path.exists():
        previous = read_json(manifest_path)
        if {k: previous.get(k) for k in wanted} == wanted and not override:
            logger.info("biggraph: reusing import in %s (same inputs)", entity_path)
            return previous
        if not override:
            raise InputError(f"{entity_path} holds an import of other edge files or settings; pass --override "
                             "to re-import (train_biggraph --override also discards the checkpoints)",
                             path=manifest_path)
    elif any(Path(entity_path).glob("entity_count_*")) and not override:
        raise InputError("entity_path already holds a BigGraph import without our manifest (made by "
                         "torchbiggraph_import_from_tsv?); train without --train_edges to use it, or pass "
                         "--override to re-import", path=entity_path)
    _remove_import(entity_path, edge_paths + list(config_dict.get("edge_paths", [])))

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=".import_", dir=_mkdir(entity_path)) as tmp_dir:
        if importer == "fast":
            from scincl.graph.fast_import import convert_edges, decompressed_copy

            plain = [decompressed_copy(p, tmp_dir) if is_gzip_path(p) else p for p in inputs]
            counts = convert_edges(entity_configs, relation_configs, entity_path, edge_paths, plain, seed=seed,
                                   dynamic_relations=dynamic)
        else:
            counts = _run_pbg_importer(entity_configs, relation_configs, entity_path, edge_paths, inputs,
                                       Path(tmp_dir), seed, dynamic)
    num_entities = sum(_load_entity_count(entity_path, name, part) for name, cfg in entity_configs.items()
                       for part in range(cfg.num_partitions))
    manifest = dict(wanted, edges=counts, entities=num_entities, importer=importer,
                    seconds=round(time.perf_counter() - started, 2))
    write_json(manifest_path, manifest)
    logger.info("biggraph: imported %s edges over %d entities into %s", " + ".join(f"{c:,}" for c in counts),
                num_entities, entity_path)
    return manifest


def _run_pbg_importer(entity_configs, relation_configs, entity_path: str, edge_paths: List[str],
                      inputs: List[Path], tmp_dir: Path, seed: int, dynamic: bool) -> List[int]:
    """PBG's own ``convert_input_data`` on validated plain-text copies; returns the edges per file."""
    from torchbiggraph.converters.import_from_tsv import convert_input_data

    prepared = [_prepare_edge_file(p, tmp_dir) for p in inputs]
    plain_inputs, counts = [p for p, _ in prepared], [n for _, n in prepared]
    state = random.getstate()
    random.seed(seed)  # PBG shuffles entity names with the global `random` module
    try:
        # PBG's importer print()s its progress; edge_chunk_size: see pbg_compat (patch 2)
        with contextlib.redirect_stdout(_LogWriter()), edge_chunk_size(max(counts)):
            convert_input_data(entity_configs, relation_configs, entity_path, edge_paths, plain_inputs,
                               lhs_col=0, rhs_col=1, rel_col=None, dynamic_relations=dynamic)
    except RuntimeError as exc:
        raise InputError(f"BigGraph import failed: {exc}") from None
    finally:
        random.setstate(state)
    return counts


class _LogWriter(io.TextIOBase):
    """A text stream that sends each printed line to this module's logger (INFO)."""

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                logger.info("pbg import: %s", line.strip())
        return len(text)


def _mkdir(path: PathLike) -> str:
    Path(path).mkdir(parents=True, exist_ok=True)
    return str(path)


def _remove_import(entity_path: PathLike, edge_paths: Iterable[str]) -> None:
    """Delete the files of a previous import (only PBG's own file names, never other files)."""
    root = Path(entity_path)
    for pattern in ("entity_count_*.txt", "entity_names_*.json", "dynamic_rel_*", "import_manifest.json"):
        for p in root.glob(pattern):
            p.unlink()
    for edge_path in set(edge_paths):
        ep = Path(edge_path)
        if ep.is_dir():
            for p in ep.glob("edges_*.h5"):
                p.unlink()


def _prepare_edge_file(path: Path, tmp_dir: Path) -> Tuple[Path, int]:
    """Validate and count the edges of a TSV; returns a plain-text file PBG's importer can read.

    PBG reads uncompressed text and takes every line as an edge, so a gzip file or one with
    ``#`` comment lines is copied (edges only) into ``tmp_dir``. A line without two ids is an
    InputError naming file and line.
    """
    n = comments = 0
    with open_text(path) as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if line.startswith("#"):
                comments += 1
                continue
            if len(line.split()) < 2:
                raise InputError(f"expected two ids (citing<TAB>cited), got {len(line.split())} column(s)",
                                 path=path, line=line_no)
            n += 1
    if n == 0:
        raise InputError("no edges in file", path=path)
    if not comments and not is_gzip_path(path):
        return path, n
    target = tmp_dir / (path.name[: -len(".gz")] if is_gzip_path(path) else path.name)
    with open_text(path) as src, open(target, "w", encoding="utf-8") as dst:
        dst.writelines(line for line in src if line.strip() and not line.startswith("#"))
    return target, n


def _load_entity_count(entity_path: PathLike, entity: str, part: int) -> int:
    return int((Path(entity_path) / f"entity_count_{entity}_{part}.txt").read_text().strip())


def read_imported_edges(config_dict: Mapping[str, Any], edge_path: PathLike) -> List[Tuple[str, str]]:
    """All edges of an imported edge path as ``(lhs_name, rhs_name)`` (bucket by bucket), for checks."""
    import_torchbiggraph()
    from torchbiggraph.graph_storages import EDGE_STORAGES, ENTITY_STORAGES

    config = parse_config(config_dict)
    entity_storage = ENTITY_STORAGES.make_instance(config.entity_path)
    edge_storage = EDGE_STORAGES.make_instance(str(edge_path))
    out: List[Tuple[str, str]] = []
    for relation in config.relations[:1]:
        lhs_parts = config.entities[relation.lhs].num_partitions
        rhs_parts = config.entities[relation.rhs].num_partitions
        lhs_names = [entity_storage.load_names(relation.lhs, p) for p in range(lhs_parts)]
        rhs_names = [entity_storage.load_names(relation.rhs, p) for p in range(rhs_parts)]
        for lp in range(lhs_parts):
            for rp in range(rhs_parts):
                if not edge_storage.has_edges(lp, rp):
                    continue
                edges = edge_storage.load_edges(lp, rp)
                lhs = edges.lhs.to_tensor().tolist()
                rhs = edges.rhs.to_tensor().tolist()
                out.extend((lhs_names[lp][a], rhs_names[rp][b]) for a, b in zip(lhs, rhs))
    return out
