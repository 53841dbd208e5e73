"""A fast, out-of-core writer of PyTorch-BigGraph's partitioned storage from ``citing<TAB>cited`` TSVs.

It writes exactly what PBG's own importer (``torchbiggraph.converters.import_from_tsv``) writes —
``entity_count_{type}_{part}.txt``, ``entity_names_{type}_{part}.json`` and one
``edges_{lhs}_{rhs}.h5`` per bucket (int64 datasets ``lhs``, ``rhs``, ``rel``; attribute
``format_version`` = 1) — with the same entity order and partitions for the same seed, so
``torchbiggraph_train`` trains on it unchanged:

1. entities are listed in order of first appearance (lhs before rhs, line by line, files in
   order: the insertion order of PBG's ``Counter``), then shuffled with ``random.Random(seed)``
   exactly as ``random.seed(seed); random.shuffle(names)`` does, and split into partitions with
   PBG's ``Dictionary`` formula (``part_start = ceil(part / num_parts * size)``);
2. every edge goes to bucket ``(lhs_part, rhs_part)`` as ``(lhs_offset, rhs_offset, rel=0)``, in
   file order within each bucket, so each bucket holds the same edge sequence as PBG's.

The work is done by polars' streaming engine (multi-threaded CSV parsing, a streaming group-by for
the first appearances, a streaming hash join of the edges against the entity table) and h5py
appends. Memory is bounded by the entity table plus one batch of ``chunk_edges`` edges, not by the
edge count. Why polars rather than DuckDB: its lazy streaming engine gives an order-preserving
join (``maintain_order="left"``) and ``collect_batches`` hands numpy-ready batches straight to
h5py without a SQL round trip or a temporary database file, and it is a single wheel with no
extension downloads.

Differences to PBG's importer, on purpose: fields are tab-separated (PBG splits on any
whitespace), blank lines and ``#`` comment lines are skipped (PBG fails on blank lines), and the
h5 chunk size follows the bucket size instead of a fixed 50 MiB (see ``pbg_compat`` patch 2).
"""
from __future__ import annotations

import logging
import math
import random
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Sequence

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike
from scincl.disk_space import check_room

logger = logging.getLogger(__name__)

# Edges per streamed batch of the edge pass: 4M edges = 3 int64 columns of 32 MiB each (+ the
# strings being parsed); the memory bound of the import besides the entity table.
DEFAULT_CHUNK_EDGES = 1 << 22
# PBG's own h5 chunk (graph_storages.BufferedDataset.BUFFER_SIZE = 50 MiB of int64); smaller buckets
# get a chunk of their expected size so a small import does not occupy 150 MiB per bucket.
PBG_H5_CHUNK = 50 * 2 ** 20 // 8
# Inputs up to this many bytes are processed in memory (one batch; faster than the streaming engine on
# small files), larger ones by polars' streaming engine in batches of DEFAULT_CHUNK_EDGES edges.
# 32 bytes/edge: two ~10-digit ids + tab + newline as text, ~3x that once parsed.
BYTES_PER_EDGE = 32
H5_FORMAT_VERSION = 1  # torchbiggraph.graph_storages.FORMAT_VERSION
ENTITY_NAMES_BLOCK = 1 << 20  # names serialised per orjson call when writing entity_names_*.json


@dataclass
class EntityTable:
    """One entity type after the shuffle: names in PBG row order and the partition boundaries."""

    names: "object"  # polars Series of str, shuffled (PBG order: partition 0 rows, then 1, ...)
    bounds: List[int]  # partition p holds rows bounds[p] .. bounds[p + 1] - 1
    part_of_first: np.ndarray  # partition of the entity with first-appearance index i
    offset_of_first: np.ndarray  # its row inside that partition

    @property
    def num_parts(self) -> int:
        return len(self.bounds) - 1


def _pl():
    import polars as pl  # imported lazily: only the import step needs it

    return pl


def partition_bounds(size: int, num_parts: int) -> List[int]:
    """Row boundaries of PBG's partitions: ``Dictionary.part_start`` for ``0 .. num_parts``."""
    return [math.ceil(part / num_parts * size) for part in range(num_parts + 1)]


def shuffled_order(size: int, rng: random.Random) -> np.ndarray:
    """The permutation ``rng.shuffle`` applies to a list of ``size`` items (new row -> old row).

    Shuffling an index array with the same generator draws the same random numbers as shuffling
    PBG's list of names, so ``names[order]`` is PBG's shuffled list.
    """
    order = array("q", range(size))
    rng.shuffle(order)
    return np.frombuffer(order, dtype=np.int64)


def scan_edges(path: PathLike):
    """A lazy frame ``lhs, rhs`` (strings) of a ``citing<TAB>cited[<TAB>...]`` file; blank lines skipped."""
    pl = _pl()
    lf = pl.scan_csv(path, separator="\t", has_header=False, comment_prefix="#", quote_char=None,
                     schema={"lhs": pl.String, "rhs": pl.String}, truncate_ragged_lines=True,
                     raise_if_empty=False)
    return lf.filter(pl.col("lhs").is_not_null() | pl.col("rhs").is_not_null())


def engine_for(paths: Sequence[Path], chunk_edges: int) -> str:
    """``in-memory`` when all inputs fit in one batch of ``chunk_edges`` edges, else ``streaming``."""
    total = sum(Path(p).stat().st_size for p in paths)
    return "in-memory" if total <= chunk_edges * BYTES_PER_EDGE else "streaming"


def _collect_all(queries: list, engine: str, path: Path) -> list:
    pl = _pl()
    try:
        return pl.collect_all(queries, engine=engine)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"cannot read edge file: {str(exc).splitlines()[0]}", path=path) from None


def count_queries(paths: Sequence[Path]) -> list:
    """Per file: a lazy ``n`` (edges) and ``bad`` (lines with one id) count."""
    pl = _pl()
    return [scan_edges(p).select(n=pl.len(), bad=(pl.col("lhs").is_null() | pl.col("rhs").is_null()).sum())
            for p in paths]


def check_counts(paths: Sequence[Path], results: Sequence[object]) -> List[int]:
    """Edges per file from :func:`count_queries`; a line without two ids is an InputError with file and line."""
    counts = []
    for path, frame in zip(paths, results):
        n, bad = int(frame["n"][0]), int(frame["bad"][0])
        if bad:
            _raise_first_bad_line(path)
        if n == 0:
            raise InputError("no edges in file", path=path)
        counts.append(n)
    return counts


def _raise_first_bad_line(path: Path) -> None:
    """Find (slowly, only on the error path) the first line of ``path`` without two tab-separated ids."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 2 or not fields[0] or not fields[1]:
                raise InputError(f"expected two ids (citing<TAB>cited), got {len([f for f in fields if f])} "
                                 "column(s)", path=path, line=line_no)
    raise InputError("expected two ids (citing<TAB>cited) on every line", path=path)


def first_appearances_query(paths: Sequence[Path], columns: Sequence[str]):
    """Lazy frame of the distinct values of ``columns`` over all files with their first position ``pos``.

    Order key: (file, line, column position in ``columns``), the order in which PBG's importer
    fills its ``Counter``. One group-by; memory ~ the number of distinct names.
    """
    pl = _pl()
    parts = []
    width = len(columns)
    for file_no, path in enumerate(paths):
        lf = scan_edges(path).with_row_index("line")
        for col_no, col in enumerate(columns):
            parts.append(lf.select(name=pl.col(col), pos=pl.lit(file_no, pl.UInt64) * (1 << 40)
                                   + pl.col("line").cast(pl.UInt64) * width + col_no))
    return pl.concat(parts).group_by("name").agg(pl.col("pos").min())


def build_entity_table(names_in_first_order, num_parts: int, rng: random.Random) -> EntityTable:
    """Shuffle one entity type like PBG and locate every entity (first-appearance index -> part, offset)."""
    size = len(names_in_first_order)
    order = shuffled_order(size, rng)  # new row -> first-appearance index
    bounds = partition_bounds(size, num_parts)
    new_row_of_first = np.empty(size, dtype=np.int64)
    new_row_of_first[order] = np.arange(size, dtype=np.int64)
    part = np.searchsorted(np.asarray(bounds[1:]), new_row_of_first, side="right").astype(np.int64)
    offset = new_row_of_first - np.asarray(bounds, dtype=np.int64)[part]
    return EntityTable(names=names_in_first_order.gather(order), bounds=bounds, part_of_first=part,
                       offset_of_first=offset)


def write_entity_files(entity_path: PathLike, entity_type: str, table: EntityTable) -> None:
    """``entity_count_{type}_{p}.txt`` and ``entity_names_{type}_{p}.json`` for every partition (atomic)."""
    import orjson

    from scincl.io import atomic_open, atomic_path

    root = Path(entity_path)
    root.mkdir(parents=True, exist_ok=True)
    for part in range(table.num_parts):
        start, end = table.bounds[part], table.bounds[part + 1]
        with atomic_path(root / f"entity_names_{entity_type}_{part}.json") as tmp, open(tmp, "wb") as fh:
            fh.write(b"[")
            for block_start in range(start, end, ENTITY_NAMES_BLOCK):
                block = table.names.slice(block_start, min(ENTITY_NAMES_BLOCK, end - block_start)).to_list()
                if block_start > start:
                    fh.write(b",")
                fh.write(orjson.dumps(block)[1:-1])
            fh.write(b"]")
        with atomic_open(root / f"entity_count_{entity_type}_{part}.txt") as fh:
            fh.write(f"{end - start}\n")


class _BucketWriter:
    """Appends ``(lhs, rhs, rel)`` int64 columns to ``edges_{l}_{r}.h5`` files, one per bucket.

    Each file is written as ``edges_{l}_{r}.tmp.h5`` and renamed on :meth:`close` (as PBG does).
    """

    def __init__(self, edge_path: PathLike, chunk: int) -> None:
        self.root = Path(edge_path)
        self.root.mkdir(parents=True, exist_ok=True)
        self.chunk = int(chunk)
        self.files: Dict[tuple, object] = {}

    def append(self, bucket: tuple, lhs: np.ndarray, rhs: np.ndarray) -> None:
        import h5py

        hf = self.files.get(bucket)
        if hf is None:
            tmp = self.root / f"edges_{bucket[0]}_{bucket[1]}.tmp.h5"
            tmp.unlink(missing_ok=True)
            hf = h5py.File(tmp, "x")
            hf.attrs["format_version"] = H5_FORMAT_VERSION
            for name in ("lhs", "rhs", "rel"):
                hf.create_dataset(name, shape=(0,), dtype=np.int64, chunks=(self.chunk,), maxshape=(None,))
            self.files[bucket] = hf
        n = len(lhs)
        for name, values in (("lhs", lhs), ("rhs", rhs), ("rel", np.zeros(n, dtype=np.int64))):
            ds = hf[name]
            ds.resize(ds.shape[0] + n, axis=0)
            ds[-n:] = values

    def abort(self) -> None:
        """Close and delete every ``.tmp.h5`` bucket file (a failed import leaves no partial bucket)."""
        for hf in self.files.values():
            tmp = Path(hf.filename)
            try:
                hf.close()
            except Exception:  # noqa: BLE001 - the write that failed is the error being raised
                pass
            tmp.unlink(missing_ok=True)
        self.files = {}

    def close(self) -> Dict[tuple, int]:
        """Close and rename every bucket file; returns the edge count per bucket."""
        counts = {}
        for (lp, rp), hf in sorted(self.files.items()):
            counts[(lp, rp)] = int(hf["rel"].shape[0])
            tmp = Path(hf.filename)
            hf.close()
            tmp.rename(self.root / f"edges_{lp}_{rp}.h5")
        self.files = {}
        return counts


def lookup_frame(names, column: str):
    """``(lazy frame key -> f"{column}_index", key expression of column)`` for mapping names to first indices.

    Keys are 64-bit hashes of the names (an integer join is several times faster than a string one)
    when they are unique among the entities, which makes the mapping exact since every edge's name
    is one of them; on a hash collision the names themselves are the keys.
    """
    pl = _pl()
    hashes = names.hash()
    index = np.arange(len(names), dtype=np.int64)
    if hashes.n_unique() == len(names):
        return pl.LazyFrame({"key": hashes, f"{column}_index": index}), pl.col(column).hash()
    return pl.LazyFrame({"key": names, f"{column}_index": index}), pl.col(column)


def write_edge_buckets(path_in: Path, edge_path_out: PathLike, lhs: EntityTable, rhs: EntityTable,
                       lhs_names, rhs_names, num_edges: int, engine: str,
                       chunk_edges: int = DEFAULT_CHUNK_EDGES) -> Dict[tuple, int]:
    """Stream one TSV through a join with the entity tables into its ``edges_{l}_{r}.h5`` buckets.

    ``lhs_names``/``rhs_names``: the entity names in first-appearance order (the tables' index).
    """
    lf = scan_edges(path_in)
    for col, names in (("lhs", lhs_names), ("rhs", rhs_names)):
        lookup, key = lookup_frame(names, col)
        lf = lf.with_columns(key.alias(f"{col}_key")).join(lookup, left_on=f"{col}_key", right_on="key", how="left",
                                                            maintain_order="left")
    lf = lf.select("lhs_index", "rhs_index")
    n_buckets = lhs.num_parts * rhs.num_parts
    chunk = max(1024, min(PBG_H5_CHUNK, math.ceil(num_edges / n_buckets)))
    # lhs, rhs, rel as int64: check the room first (HDF5 reports a failed write late, then crashes)
    check_room(Path(edge_path_out), 3 * 8 * int(num_edges) + 8 * chunk * n_buckets)
    writer = _BucketWriter(edge_path_out, chunk)
    batches = [lf.collect()] if engine == "in-memory" else lf.collect_batches(chunk_size=int(chunk_edges),
                                                                              engine="streaming")
    completed = False
    try:
        for batch in batches:
            li = batch["lhs_index"].to_numpy()
            ri = batch["rhs_index"].to_numpy()
            bucket = lhs.part_of_first[li] * rhs.num_parts + rhs.part_of_first[ri]
            if n_buckets == 1:
                writer.append((0, 0), lhs.offset_of_first[li], rhs.offset_of_first[ri])
                continue
            order = np.argsort(bucket, kind="stable")
            keys, starts = np.unique(bucket[order], return_index=True)
            ends = list(starts[1:]) + [len(order)]
            for key, start, end in zip(keys.tolist(), starts.tolist(), ends):
                rows = order[start:end]
                writer.append(divmod(key, rhs.num_parts), lhs.offset_of_first[li[rows]],
                              rhs.offset_of_first[ri[rows]])
        completed = True
    finally:
        if not completed:
            writer.abort()  # never rename a partial bucket to its final name
    return writer.close()


def convert_edges(
    entity_configs: Mapping[str, object],
    relation_configs: Sequence[object],
    entity_path: PathLike,
    edge_paths_out: Sequence[PathLike],
    edge_paths_in: Sequence[PathLike],
    seed: int = 0,
    dynamic_relations: bool = False,
    chunk_edges: int = DEFAULT_CHUNK_EDGES,
) -> List[int]:
    """PBG's ``convert_input_data(..., lhs_col=0, rhs_col=1, rel_col=None)``, columnar and out-of-core.

    ``entity_configs``/``relation_configs`` as parsed by ``import_from_tsv.parse_config_partial``.
    Every edge has relation 0 (as in PBG without ``rel_col``); returns the edge count of each
    input file. Same seed and partitions -> same entity files and same bucket contents as PBG.
    Two passes over the files: entities (first appearances + counts), then edges into buckets.
    """
    pl = _pl()
    if dynamic_relations:
        raise InputError("the fast importer has no dynamic relations (PBG needs a relation column for them); "
                         "use --importer pbg")
    if len(edge_paths_in) != len(edge_paths_out):
        raise InputError(f"{len(edge_paths_in)} edge files for {len(edge_paths_out)} edge paths")
    paths = [Path(p) for p in edge_paths_in]
    engine = engine_for(paths, chunk_edges)
    lhs_type, rhs_type = relation_configs[0].lhs, relation_configs[0].rhs
    types = list(entity_configs)
    columns = {t: [c for c, ct in (("lhs", lhs_type), ("rhs", rhs_type)) if ct == t] for t in types}
    with_columns = [t for t in types if columns[t]]
    results = _collect_all(count_queries(paths) + [first_appearances_query(paths, columns[t]) for t in with_columns],
                           engine, paths[0])
    counts = check_counts(paths, results[:len(paths)])
    firsts = dict(zip(with_columns, results[len(paths):]))
    rng = random.Random(seed)  # = random.seed(seed) before PBG's importer
    tables: Dict[str, EntityTable] = {}
    names: Dict[str, object] = {}
    for etype in types:  # PBG shuffles the types in config order
        names[etype] = (firsts[etype].sort("pos")["name"] if etype in firsts
                        else pl.Series("name", [], dtype=pl.String))
        tables[etype] = build_entity_table(names[etype], entity_configs[etype].num_partitions, rng)
        write_entity_files(entity_path, etype, tables[etype])
        logger.info("fast import: %s: %d entities in %d partition(s)", etype, len(names[etype]),
                    entity_configs[etype].num_partitions)
    for path_in, path_out, n in zip(paths, edge_paths_out, counts):
        buckets = write_edge_buckets(path_in, path_out, tables[lhs_type], tables[rhs_type], names[lhs_type],
                                     names[rhs_type], n, engine, chunk_edges=chunk_edges)
        logger.info("fast import: %s: %d edges into %d bucket(s) of %s (%s engine)", path_in,
                    sum(buckets.values()), len(buckets), path_out, engine)
    return counts


def decompressed_copy(path: Path, tmp_dir: PathLike) -> Path:
    """A plain-text copy of a gzip file (streamed in 1 MiB blocks), for the CSV scanner."""
    import gzip
    import shutil

    target = Path(tmp_dir) / path.name[: -len(".gz")]
    with gzip.open(path, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return target
