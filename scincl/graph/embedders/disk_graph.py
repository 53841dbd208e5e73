"""The citation graph as an on-disk CSR transition matrix, read and written a block of rows at a time.

The bounded-memory twin of :mod:`scincl.graph.embedders.adjacency`: the same nodes (sorted unique
paper ids of the train edges plus the extra files' ids), the same undirected, deduplicated edges
without self loops, and the transition matrix ``D^-1 A`` with its rows in the order
:func:`~scincl.graph.embedders.adjacency.row_normalized` leaves them (columns *descending*: scipy's
``diag @ csr`` product reverses each row), so a product over these rows sums in the same order as
the in-memory matrix does. What stays in memory is the id table (a polars Series, a few dozen bytes
per paper), a few numbers per paper (degrees) and one block of rows; the edges go to disk as they
are read (one file of int64 keys per row block, then one sort per block).

Files under ``work_dir``: ``indptr.i64`` (n + 1 row starts), ``indices.i32`` (column of every entry,
int64 when n >= 2^31). :class:`DiskArray` is the raw-file matrix used for them and for the
embedders' intermediates: reads and writes go through ``np.fromfile``/``tofile`` at an offset, not
a memory map, so the process holds only the rows it asked for (a map's touched pages would count
towards its resident memory).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.graph.id_table import IdTable
from scincl.io import PathLike

# Bytes of edge text parsed at a time (~1.5M edges of two 10-digit ids; ~0.1 GiB once parsed).
EDGE_CHUNK_BYTES = 1 << 25


@dataclass
class DiskArray:
    """A C-ordered ``rows x columns`` matrix of ``dtype`` in a raw file; rows read and written by range."""

    path: Path
    rows: int
    columns: int
    dtype: np.dtype

    @classmethod
    def create(cls, path: PathLike, rows: int, columns: int, dtype) -> "DiskArray":
        """A new file of zeros of the right size (sparse on most file systems: no disk until written)."""
        array = cls(Path(path), int(rows), int(columns), np.dtype(dtype))
        with open(array.path, "wb") as fh:
            fh.truncate(array.rows * array.row_bytes)
        return array

    def __post_init__(self) -> None:
        self.dtype = np.dtype(self.dtype)

    @property
    def row_bytes(self) -> int:
        return self.columns * self.dtype.itemsize

    def read(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` as a new in-memory array."""
        count = (stop - start) * self.columns
        out = np.fromfile(self.path, dtype=self.dtype, count=count, offset=start * self.row_bytes)
        return out.reshape(stop - start, self.columns)

    def write(self, start: int, values: np.ndarray) -> None:
        """Rows ``start:start + len(values)`` := ``values``."""
        values = np.ascontiguousarray(values, dtype=self.dtype)
        with open(self.path, "r+b") as fh:
            fh.seek(start * self.row_bytes)
            values.tofile(fh)


def row_blocks(n: int, block_rows: int) -> Iterator[Tuple[int, int]]:
    """``(start, stop)`` of consecutive blocks of ``block_rows`` rows covering ``0..n``."""
    for start in range(0, n, block_rows):
        yield start, min(start + block_rows, n)


@dataclass
class DiskGraph:
    """``ids[i]`` is node ``i``; the transition matrix's CSR arrays are files under ``directory``."""

    ids: "object"  # polars Series of str, sorted
    directory: Path
    nnz: int

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def indptr(self) -> DiskArray:
        return DiskArray(self.directory / "indptr.i64", self.n + 1, 1, np.dtype(np.int64))

    @property
    def indices(self) -> DiskArray:
        return DiskArray(self.directory / "indices.i32", self.nnz, 1, index_dtype(self.n))

    def degrees(self) -> np.ndarray:
        """Undirected degree of every node (float64, as ``Graph.degrees``)."""
        return np.diff(self.indptr.read(0, self.n + 1).ravel()).astype(np.float64)

    def inverse_degrees(self) -> np.ndarray:
        """``1 / degree`` in float32 (0 for isolated nodes): the transition matrix's row values."""
        degrees = self.degrees().astype(np.float32)
        return np.divide(np.float32(1.0), degrees, out=np.zeros_like(degrees), where=degrees > 0)

    def transition_rows(self, start: int, stop: int, inverse: np.ndarray):
        """Rows ``start:stop`` of ``D^-1 A`` as a ``(stop - start) x n`` CSR matrix (columns descending per row)."""
        import scipy.sparse as sp

        bounds = self.indptr.read(start, stop + 1).ravel()
        indices = self.indices.read(int(bounds[0]), int(bounds[-1])).ravel()
        counts = np.diff(bounds)
        data = np.repeat(inverse[start:stop], counts)
        matrix = sp.csr_matrix((data, indices, bounds - bounds[0]), shape=(stop - start, self.n))
        matrix.has_sorted_indices = False  # descending: never let scipy re-sort them
        return matrix


def index_dtype(n: int) -> np.dtype:
    """int32 column indices while they fit (as scipy does), int64 beyond."""
    return np.dtype(np.int32 if n < 2 ** 31 else np.int64)


def iter_edge_frames(path: PathLike, chunk_bytes: int = EDGE_CHUNK_BYTES):
    """The ``lhs, rhs`` string columns of a ``citing<TAB>cited`` file (gzip ok), ``chunk_bytes`` of text at a time.

    Read with plain reads and parsed by polars one chunk at a time: memory is one chunk, not the file
    (polars' own scan maps the whole file, whose pages then count as the process's resident memory).
    Lines as :func:`scincl.graph.fast_import.scan_edges` reads them (``#`` comments and blank lines skipped).
    """
    import gzip
    import io

    import polars as pl

    from scincl.io import is_gzip_path

    def parse(data: bytes):
        try:
            frame = pl.read_csv(io.BytesIO(data), separator="\t", has_header=False, comment_prefix="#", quote_char=None,
                                schema={"lhs": pl.String, "rhs": pl.String}, truncate_ragged_lines=True)
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"cannot read edge file: {str(exc).splitlines()[0]}", path=path) from None
        return frame.filter(pl.col("lhs").is_not_null() | pl.col("rhs").is_not_null())

    with (gzip.open(path, "rb") if is_gzip_path(path) else open(path, "rb")) as fh:
        rest = b""
        while True:
            block = fh.read(chunk_bytes)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield parse(block[:cut])
        if rest.strip():
            yield parse(rest)


def node_ids(paths: Sequence[Path]):
    """Sorted unique ids of both columns of every file (as ``read_graph``) and the edges (lines) of each file,
    a chunk of edges at a time."""
    import polars as pl

    ids, pending, waiting = pl.Series("id", [], dtype=pl.String), [], 0
    edges = []
    for path in paths:
        if not Path(path).exists():
            raise InputError("edge file not found", path=path)
        edges.append(0)
        for frame in iter_edge_frames(path):
            edges[-1] += frame.height
            pending.append(pl.concat([frame["lhs"], frame["rhs"]]).rename("id").drop_nulls().unique())
            waiting += len(pending[-1])
            if waiting > max(len(ids), EDGE_CHUNK_BYTES // 8):  # merge: amortised, at most ~2x the ids at once
                ids, pending, waiting = pl.concat([ids] + pending).unique(), [], 0
    return pl.concat([ids] + pending).unique().sort(), edges


def _coded_batches(path: Path, table: IdTable) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """``(i, j)`` node numbers of the edges of ``path``, a chunk at a time."""
    for frame in iter_edge_frames(path):
        frame = frame.drop_nulls()
        yield table.known_rows(frame["lhs"]), table.known_rows(frame["rhs"])


def build_disk_graph(train_edges: PathLike, work_dir: PathLike, block_rows: int,
                     extra_node_edges: Sequence[Optional[PathLike]] = ()) -> DiskGraph:
    """The graph of ``train_edges`` (plus the nodes of ``extra_node_edges``) as CSR files in ``work_dir``.

    Every edge is written twice (both directions) as the int64 key ``row * n + (n - 1 - column)``
    into the file of its row's block; each block is then sorted and deduplicated (``np.unique``),
    which yields the rows in order and each row's columns descending, as ``row_normalized`` does.
    """
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    train = Path(train_edges)
    if not train.exists():
        raise InputError("edge file not found", path=train)
    ids, _ = node_ids([train] + [Path(p) for p in extra_node_edges if p is not None])
    n = len(ids)
    blocks = list(row_blocks(n, block_rows))
    bucket_paths = [work / f"keys_{b}.i64" for b in range(len(blocks))]
    handles = [open(p, "wb") for p in bucket_paths]
    edges = 0
    try:
        for i, j in _coded_batches(train, IdTable(ids)):
            edges += len(i)
            keep = i != j
            rows = np.concatenate([i[keep], j[keep]])
            cols = np.concatenate([j[keep], i[keep]])
            keys = rows * n + (n - 1 - cols)
            bucket = rows // block_rows
            order = np.argsort(bucket, kind="stable")
            split = np.searchsorted(bucket[order], np.arange(1, len(blocks)))
            for b, part in enumerate(np.split(keys[order], split)):
                part.tofile(handles[b])
    finally:
        for fh in handles:
            fh.close()
    if edges == 0:
        raise InputError("no edges", path=train)
    indptr = DiskArray.create(work / "indptr.i64", n + 1, 1, np.int64)
    indptr.write(0, np.zeros((1, 1), dtype=np.int64))
    nnz = 0
    with open(work / "indices.i32", "wb") as out:
        for (start, stop), path in zip(blocks, bucket_paths):
            keys = np.unique(np.fromfile(path, dtype=np.int64))
            path.unlink()
            rows, reversed_cols = np.divmod(keys, n)
            del keys
            (n - 1 - reversed_cols).astype(index_dtype(n)).tofile(out)
            counts = np.bincount(rows - start, minlength=stop - start)
            indptr.write(start + 1, (nnz + np.cumsum(counts)).reshape(-1, 1))
            nnz += int(counts.sum())
    return DiskGraph(ids=ids, directory=work, nnz=nnz)
