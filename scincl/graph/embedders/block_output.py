"""Finish and write an on-disk embedding matrix a block of rows at a time (the bounded-memory embedders).

The same bytes as :func:`scincl.graph.embed.fill_isolated` followed by ``write_embeddings_h5`` /
``np.save`` and ``write_id_list`` on the whole matrix, with one block of rows in memory: row norms
and the seeded noise are row-wise, the mean norm is taken over the same float32 vector, and
``Generator.standard_normal`` draws the same stream in several calls as in one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from scincl.errors import InputError
from scincl.graph.embedders.disk_graph import DiskArray, row_blocks
from scincl.io import EMBEDDINGS_DATASET, atomic_path

# paper ids serialised per orjson call
ID_BLOCK = 1 << 20


def fill_isolated_blocks(vectors: DiskArray, degrees: np.ndarray, seed: int, block_rows: int) -> None:
    """:func:`scincl.graph.embed.fill_isolated` on a matrix on disk, in place."""
    isolated = degrees == 0
    if not isolated.any():
        return
    norms = [np.linalg.norm(vectors.read(start, stop)[~isolated[start:stop]], axis=1)
             for start, stop in row_blocks(vectors.rows, block_rows)]
    joined = np.concatenate(norms) if norms else np.zeros(0, dtype=vectors.dtype)
    scale = float(joined.mean()) if joined.size else 1.0
    del norms, joined
    rng = np.random.default_rng(seed)
    for start, stop in row_blocks(vectors.rows, block_rows):
        here = isolated[start:stop]
        if not here.any():
            continue
        rows = vectors.read(start, stop)
        noise = rng.standard_normal((int(here.sum()), vectors.columns))
        rows[here] = (noise / np.linalg.norm(noise, axis=1, keepdims=True) * scale).astype(rows.dtype)
        vectors.write(start, rows)


def check_finite_blocks(vectors: DiskArray, block_rows: int, method: str) -> None:
    """An :class:`InputError` when any value is NaN or infinite (as ``embed_graph`` checks in memory)."""
    for start, stop in row_blocks(vectors.rows, block_rows):
        if not np.isfinite(vectors.read(start, stop)).all():
            raise InputError(f"{method} produced non-finite embeddings (check its settings)")


def write_embeddings_blocks(vectors: DiskArray, path: Path, export_format: str, block_rows: int) -> None:
    """``embeddings.h5`` (dataset ``embeddings``) or ``embeddings.npy`` from the matrix, atomically."""
    shape = (vectors.rows, vectors.columns)
    if export_format == "h5":
        import h5py

        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            dataset = f.create_dataset(EMBEDDINGS_DATASET, shape=shape, dtype=vectors.dtype)
            for start, stop in row_blocks(vectors.rows, block_rows):
                dataset[start:stop] = vectors.read(start, stop)
    elif export_format == "npy":
        header = {"descr": np.lib.format.dtype_to_descr(vectors.dtype), "fortran_order": False, "shape": shape}
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            for start, stop in row_blocks(vectors.rows, block_rows):
                vectors.read(start, stop).tofile(fh)
    else:
        raise InputError(f"unknown export format {export_format!r}; choose h5 or npy")


def write_ids_blocks(path: Path, ids, block: Optional[int] = None) -> None:
    """The JSON id list ``write_id_list`` writes, from a polars Series, a block of ids per ``orjson`` call."""
    import orjson

    block = block or ID_BLOCK
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(b"[")
        for start in range(0, len(ids), block):
            if start:
                fh.write(b",")
            fh.write(orjson.dumps(ids.slice(start, block).to_list())[1:-1])
        fh.write(b"]\n")
