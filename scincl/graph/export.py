"""Export PyTorch-BigGraph checkpoints to the pipeline's embedding files.

PBG stores one h5 file per entity partition (``embeddings_paper_id_{part}.vN.h5``) and the row
order in the import's ``entity_names_paper_id_{part}.json``. The export concatenates the partitions
in order into one matrix:

- ``OUT/embeddings.h5`` (dataset ``embeddings``) or ``OUT/embeddings.npy``
- ``OUT/entity_names_paper_id_0.json`` (row i = paper id i; the PBG naming the pipeline expects)

Rows are copied in blocks, so memory stays bounded for graphs that do not fit in RAM.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.io import PBG_ENTITY_TYPE, EMBEDDINGS_DATASET, PathLike, atomic_path, entity_names_path, read_id_list, \
    write_id_list

logger = logging.getLogger(__name__)

COPY_BLOCK_ROWS = 262_144  # rows copied at once (256k x 768 float32 = 768 MiB at most)
EXPORT_FORMATS = ("h5", "npy")


def checkpoint_version(checkpoint_path: PathLike) -> int:
    """The current version of a PBG checkpoint directory (``checkpoint_version.txt``)."""
    path = Path(checkpoint_path) / "checkpoint_version.txt"
    if not path.exists():
        raise InputError("no trained BigGraph checkpoint here (checkpoint_version.txt missing)", path=checkpoint_path)
    return int(path.read_text().strip())


def config_of_checkpoint(checkpoint_path: PathLike) -> Dict[str, Any]:
    """The config PBG saved next to its checkpoint (``config.json``)."""
    path = Path(checkpoint_path) / "config.json"
    if not path.exists():
        raise InputError("no config.json in BigGraph checkpoint directory", path=checkpoint_path)
    return json.loads(path.read_text())


def partition_files(config_dict: Mapping[str, Any], entity_type: str = PBG_ENTITY_TYPE) -> List[Tuple[Path, Path]]:
    """``(embeddings h5, entity names json)`` per partition of ``entity_type``, in row order."""
    checkpoint_path = Path(config_dict["checkpoint_path"])
    entity_path = Path(config_dict["entity_path"])
    entities = config_dict.get("entities", {})
    if entity_type not in entities:
        raise InputError(f"entity type {entity_type!r} not in the config (has {sorted(entities)})")
    version = checkpoint_version(checkpoint_path)
    num_partitions = int(entities[entity_type].get("num_partitions", 1))
    return [(checkpoint_path / f"embeddings_{entity_type}_{part}.v{version}.h5",
             entity_path / f"entity_names_{entity_type}_{part}.json") for part in range(num_partitions)]


def export_embeddings(config_dict: Mapping[str, Any], output_dir: PathLike, fmt: str = "h5",
                      entity_type: str = PBG_ENTITY_TYPE) -> Tuple[Path, Path]:
    """Concatenate a checkpoint's partitions into ``output_dir``; returns ``(names path, embeddings path)``."""
    import h5py

    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    parts = partition_files(config_dict, entity_type)
    names: List[str] = []
    shapes = []
    for emb_path, names_path in parts:
        if not emb_path.exists():
            raise InputError("partition embeddings missing from the checkpoint", path=emb_path)
        part_names = read_id_list(names_path)
        with h5py.File(emb_path, "r") as f:
            shape = f[EMBEDDINGS_DATASET].shape
        if shape[0] != len(part_names):
            raise InputError(f"{shape[0]} embedding rows but {len(part_names)} entity names", path=names_path)
        names.extend(part_names)
        shapes.append(shape)
    dims = {s[1] for s in shapes}
    if len(dims) != 1:
        raise InputError(f"partitions have different dimensions {sorted(dims)}", path=config_dict["checkpoint_path"])
    total, dim = len(names), dims.pop()

    out_dir = Path(output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    emb_out = out_dir / f"embeddings.{fmt}"
    with atomic_path(emb_out) as tmp:
        if fmt == "h5":
            with h5py.File(tmp, "w") as dst:
                target = dst.create_dataset(EMBEDDINGS_DATASET, shape=(total, dim), dtype=np.float32)
                _copy_partitions(parts, target)
        else:
            target = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(total, dim))
            _copy_partitions(parts, target)
            target.flush()
            del target
    names_out = entity_names_path(out_dir, entity_type, 0)
    write_id_list(names_out, names)
    logger.info("biggraph: exported %d x %d embeddings to %s (+ %s)", total, dim, emb_out, names_out.name)
    return names_out, emb_out


def _copy_partitions(parts: List[Tuple[Path, Path]], target) -> None:
    import h5py

    row = 0
    for emb_path, _ in tqdm(parts, desc="export partitions", unit="part", disable=len(parts) == 1):
        with h5py.File(emb_path, "r") as src:
            data = src[EMBEDDINGS_DATASET]
            for start in range(0, data.shape[0], COPY_BLOCK_ROWS):
                block = np.asarray(data[start:start + COPY_BLOCK_ROWS], dtype=np.float32)
                target[row:row + len(block)] = block
                row += len(block)
