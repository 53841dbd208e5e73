"""FastRP in bounded memory: the same float32 embeddings as :func:`scincl.graph.embedders.fastrp.embed`,
with the transition matrix, the powers ``N_i``, their row norms and the output on disk, processed a
block of ``block_rows`` rows at a time.

Memory is one block, not the graph: a ``block_rows x column_block`` slice of the power being
computed, one of the previous power, the block's rows of the transition matrix, a
``block_rows x dimension`` slice of the output, plus a few numbers per paper (degrees, the id table).
Disk is the CSR graph (12 bytes per directed entry), two ``n x column_block`` powers and the
``n x dimension`` output (float32), and the squared row norms (float64, one column per power).

Why the results are identical bit for bit (the test compares them on several blocks):

* column groups are the in-memory code's ``column_block`` groups, so each row norm is the same
  ``einsum`` over the same columns, added over the groups in the same order;
* ``N_1 = A L R`` restricted to a block of rows is the same sparse product row by row;
* ``N_i = A N_(i-1)``: scipy's ``csr @ dense`` (``csr_matvecs``) adds ``a_ij * x_j`` into the output
  row in the order of the row's entries, which is columns descending here. The blocked product
  walks the *column* blocks of ``A`` from the last to the first and lets ``csr_matvecs`` add each
  into the same output rows, so every output element receives the same float32 additions in the
  same order as one call over the whole row;
* the weighted sum and the normalisation are element-wise.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Tuple

import numpy as np

from scincl.graph.embedders.disk_graph import DiskArray, DiskGraph, row_blocks
from scincl.graph.embedders.fastrp import FastRPSettings, projection


def scaled_projection(graph: DiskGraph, dimension: int, settings: FastRPSettings, seed: int):
    """``L R`` of Algorithm 1 (steps 1-2), the same CSC matrix as the in-memory code builds."""
    import scipy.sparse as sp

    degrees = graph.degrees()
    edges = degrees.sum() / 2.0
    with np.errstate(divide="ignore"):
        scaling = np.where(degrees > 0, (degrees / (2.0 * max(edges, 1.0))) ** settings.normalization_strength, 0.0)
    return (sp.diags(scaling) @ projection(graph.n, dimension, settings.sparsity, seed)).astype(np.float32).tocsc()


def split_by_column_block(matrix, block_rows: int) -> Iterator[Tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """``(low, high, indptr, indices, data)`` of CSR ``matrix``'s entries with column in each block ``[low, high)``.

    Last block first; columns renumbered from ``low``; each row keeps its entries in their order
    (one stable sort of the entries by block, then a slice per block). Empty blocks are skipped.
    """
    n_rows, n_cols = matrix.shape
    n_blocks = -(-n_cols // block_rows)
    rows = np.repeat(np.arange(n_rows), np.diff(matrix.indptr))
    position = (n_blocks - 1) - matrix.indices // block_rows  # 0 = the last block
    if n_blocks < 2 ** 15:
        position = position.astype(np.int16)  # numpy's stable sort of 16-bit integers is a radix sort
    order = np.argsort(position, kind="stable")  # row order and in-row order kept
    bounds = np.concatenate([[0], np.cumsum(np.bincount(position, minlength=n_blocks))])
    del position
    for p in range(n_blocks):
        lo, hi = bounds[p], bounds[p + 1]
        if lo == hi:
            continue
        picked = order[lo:hi]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[picked], minlength=n_rows))])
        low = (n_blocks - 1 - p) * block_rows
        indices = matrix.indices[picked] - low
        yield low, min(low + block_rows, n_cols), indptr.astype(indices.dtype), indices, matrix.data[picked]


def multiply_rows(graph: DiskGraph, inverse: np.ndarray, start: int, stop: int, previous: DiskArray,
                  block_rows: int) -> np.ndarray:
    """Rows ``start:stop`` of ``(D^-1 A) @ previous``, reading ``previous`` a block of rows at a time."""
    from scipy.sparse import _sparsetools

    rows = graph.transition_rows(start, stop, inverse)
    out = np.zeros((stop - start, previous.columns), dtype=np.float32)
    for low, high, indptr, indices, data in split_by_column_block(rows, block_rows):
        chunk = previous.read(low, high)
        _sparsetools.csr_matvecs(stop - start, high - low, previous.columns, indptr, indices, data, chunk.ravel(),
                                 out.ravel())
    return out


def disk_powers(graph: DiskGraph, inverse: np.ndarray, r_block, weights, block_rows: int,
                work: Path) -> Iterator[Tuple[int, DiskArray]]:
    """``(i, N_(i+1) on disk)`` for every weighted power of one column group (two files, reused)."""
    columns = r_block.shape[1]
    files = [DiskArray.create(work / f"power_{k}.f32", graph.n, columns, np.float32) for k in (0, 1)]
    current = files[0]
    for start, stop in row_blocks(graph.n, block_rows):
        rows = graph.transition_rows(start, stop, inverse)
        current.write(start, np.asarray((rows @ r_block).todense(), dtype=np.float32))
    for i, weight in enumerate(weights):
        if i > 0:
            previous, current = current, files[i % 2]
            for start, stop in row_blocks(graph.n, block_rows):
                current.write(start, multiply_rows(graph, inverse, start, stop, previous, block_rows))
        if weight:
            yield i, current


def column_groups(dimension: int, column_block: int) -> List[slice]:
    """The in-memory code's column blocks (they fix the order of the row-norm sums)."""
    return [slice(start, min(start + column_block, dimension)) for start in range(0, dimension, column_block)]


def embed_bounded(graph: DiskGraph, dimension: int, settings: FastRPSettings, seed: int, block_rows: int,
                  work_dir: Path) -> DiskArray:
    """FastRP embeddings ``[n, dimension]`` (float32) of ``graph`` in ``work_dir/embeddings.f32``."""
    work = Path(work_dir)
    n = graph.n
    inverse = graph.inverse_degrees()
    r = scaled_projection(graph, dimension, settings, seed)
    weights = settings.iteration_weights
    groups = column_groups(dimension, settings.column_block)
    blocks = list(row_blocks(n, block_rows))
    squared = DiskArray.create(work / "squared_norms.f64", n, len(weights), np.float64)
    if settings.normalize_powers:
        for group in groups:
            for i, power in disk_powers(graph, inverse, r[:, group], weights, block_rows, work):
                for start, stop in blocks:
                    values = power.read(start, stop)
                    sums = squared.read(start, stop)
                    sums[:, i] += np.einsum("ij,ij->i", values, values, dtype=np.float64)
                    squared.write(start, sums)
    out = DiskArray.create(work / "embeddings.f32", n, dimension, np.float32)
    for group in groups:
        for i, power in disk_powers(graph, inverse, r[:, group], weights, block_rows, work):
            for start, stop in blocks:
                values = power.read(start, stop)
                if settings.normalize_powers:
                    norms = np.sqrt(squared.read(start, stop)[:, i])
                    inverse_norms = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
                    values = values * inverse_norms[:, None]
                rows = out.read(start, stop)
                rows[:, group] += weights[i] * values
                out.write(start, rows)
    return out
