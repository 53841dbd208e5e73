"""File formats shared by every stage (see DESIGN.md "Data contracts").

gzip-aware text streaming (by ``.gz`` suffix), atomic writes (temp file + rename, so an
interrupted run never leaves a half file that a rerun would trust), JSON id lists, citation TSVs,
triples CSVs, h5 embeddings with PyTorch-BigGraph entity-name files, and SciDocs embedding jsonl.
"""
from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import numpy as np
import orjson

from scincl.errors import InputError
from scincl.ids import canonical_id, canonical_ids, id_problem
from scincl.temporaries import temporary_file_prefix

PathLike = Union[str, os.PathLike]

TRIPLES_HEADER = ("query_paper_id", "positive_id", "negative_id")
PBG_ENTITY_TYPE = "paper_id"
EMBEDDINGS_DATASET = "embeddings"


def is_gzip_path(path: PathLike) -> bool:
    """True when the file name ends in ``.gz``."""
    return str(path).endswith(".gz")


def open_text(path: PathLike, mode: str = "rt", compresslevel: int = 6) -> IO[str]:
    """Open a text file, transparently gzip-compressed when the name ends in ``.gz``."""
    if "b" in mode:
        raise ValueError("open_text is for text modes only")
    if "t" not in mode:
        mode += "t"
    if is_gzip_path(path):
        if "r" in mode:
            return gzip.open(path, mode, encoding="utf-8")
        # mtime=0 keeps gzip output byte-identical across runs (reproducibility contract).
        raw = gzip.GzipFile(filename="", mode=mode.replace("t", "b"), fileobj=open(path, mode.replace("t", "b")),
                            compresslevel=compresslevel, mtime=0)
        return _ClosingTextWrapper(raw)
    return open(path, mode, encoding="utf-8", newline="" if "w" in mode or "a" in mode else None)


class _ClosingTextWrapper(io.TextIOWrapper):
    """TextIOWrapper over a GzipFile that also closes the underlying file object."""

    def __init__(self, gz: gzip.GzipFile) -> None:
        super().__init__(gz, encoding="utf-8", newline="")
        self._gz_fileobj = gz.fileobj

    def close(self) -> None:  # pragma: no cover - trivial
        try:
            super().close()
        finally:
            if self._gz_fileobj is not None and not self._gz_fileobj.closed:
                self._gz_fileobj.close()


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Called with an output's path just before it is renamed into place (scincl.provenance registers the writing of
# a command's pending made-by record here, so a run killed between two outputs is recognised as that command's).
BEFORE_REPLACE: List[Callable[[Path], None]] = []


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it onto ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched, so a crash
    never leaves a partial output behind.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=temporary_file_prefix(target), suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_current_umask())  # mkstemp creates 0600; outputs get the usual mode
    try:
        yield tmp
        for hook in BEFORE_REPLACE:
            hook(target)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(target)  # a failed write() (disk full) names no file: name the output
        raise


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "wt") -> Iterator[IO[str]]:
    """Open ``path`` for writing text through a temp file that is renamed into place on success.

    gzip-compressed (deterministically, mtime 0) when the name ends in ``.gz``.
    """
    with atomic_path(path) as tmp:
        # the temp name does not end in .gz, so choose compression from the final name
        if is_gzip_path(path):
            raw = gzip.GzipFile(filename="", mode="wb", fileobj=open(tmp, "wb"), compresslevel=6, mtime=0)
            fh: IO[str] = _ClosingTextWrapper(raw)
        else:
            fh = open(tmp, mode, encoding="utf-8", newline="")
        try:
            yield fh
        finally:
            fh.close()


def concatenate_parts(parts: Iterable[PathLike], output: PathLike,
                      skip_lines: Optional[Dict[Path, Set[int]]] = None) -> None:
    """The part files ``parts`` concatenated, in order, into ``output`` (gzip when ``.gz``, deterministic: mtime 0;
    written atomically), dropping the line numbers ``skip_lines`` gives per part (keys: the part paths as given)."""
    skip_lines = skip_lines or {}
    with atomic_path(output) as tmp:
        raw = open(tmp, "wb")
        out = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) \
            if is_gzip_path(output) else raw
        try:
            for part in parts:
                drop = skip_lines.get(part)
                with open(part, "rb") as fh:
                    if not drop:
                        shutil.copyfileobj(fh, out, 1 << 20)
                        continue
                    for i, line in enumerate(fh):
                        if i not in drop:
                            out.write(line)
        finally:
            out.close()
            raw.close()


def file_fingerprint(path: PathLike, hash_bytes_limit: Optional[int] = None) -> Dict[str, Any]:
    """Size and sha256 of a file (of its first ``hash_bytes_limit`` bytes when given), for manifests."""
    p = Path(path)
    digest = hashlib.sha256()
    remaining = hash_bytes_limit
    with open(p, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20 if remaining is None else min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
                if remaining <= 0:
                    break
    out = {"path": str(p), "size": p.stat().st_size, "sha256": digest.hexdigest()}
    if hash_bytes_limit is not None:
        out["sha256_of_first_bytes"] = hash_bytes_limit
    return out


# --------------------------------------------------------------------------------------- JSON

def dumps_json(obj: Any, indent: bool = False) -> bytes:
    """orjson serialisation (numpy arrays allowed, sorted keys for stable bytes)."""
    option = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS
    if indent:
        option |= orjson.OPT_INDENT_2
    return orjson.dumps(obj, option=option)


def read_json(path: PathLike) -> Any:
    """Read a JSON file; a missing or malformed file is an :class:`InputError`."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    try:
        with open(p, "rb") if not is_gzip_path(p) else gzip.open(p, "rb") as fh:
            return orjson.loads(fh.read())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc})", path=p) from None


def write_json(path: PathLike, obj: Any, indent: bool = True) -> None:
    """Write JSON atomically (pretty-printed by default)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(dumps_json(obj, indent=indent) + b"\n")


def read_id_list(path: PathLike) -> List[str]:
    """Read a JSON list of paper ids in their canonical form (:func:`scincl.ids.canonical_id`: numbers become
    strings, surrounding whitespace goes); anything else, or an id listed twice
    (an embedding row order or an id set cannot hold one paper twice), is an InputError."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list of paper ids, got {type(data).__name__}", path=path)
    out: List[str] = []
    first: Dict[str, int] = {}
    for i, item in enumerate(data):
        problem = id_problem(item)
        if problem is not None:
            raise InputError(f"item {i}: {problem}", path=path)
        paper_id = canonical_id(item)
        if first.setdefault(paper_id, i) != i:
            raise InputError(f"item {i}: duplicate paper id {paper_id!r} (first at item {first[paper_id]})",
                             path=path)
        out.append(paper_id)
    return out


def write_id_list(path: PathLike, ids: Iterable[Any]) -> None:
    """Write a JSON list of paper ids atomically (compact, one line)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(orjson.dumps([str(i) for i in ids]) + b"\n")


def iter_jsonl(
    path: PathLike,
    strict: bool = True,
    on_skip: Optional[Callable[[int, str], None]] = None,
) -> Iterator[Tuple[int, Any]]:
    """Yield ``(line_number, record)`` from a (gzip) jsonl file; blank lines are ignored.

    A malformed line raises :class:`InputError` naming file and line when ``strict``; otherwise
    it is reported to ``on_skip(line_number, reason)`` and skipped.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    opener = gzip.open if is_gzip_path(p) else open
    try:
        with opener(p, "rb") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield line_no, orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    reason = f"malformed JSON ({exc})"
                    if strict:
                        raise InputError(reason, path=p, line=line_no) from None
                    if on_skip is not None:
                        on_skip(line_no, reason)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError("file not found", path=p) from None
        raise InputError(f"unreadable file ({exc})", path=p) from None


def read_jsonl(path: PathLike) -> List[Any]:
    """All records of a (gzip) jsonl file (strict)."""
    return [rec for _, rec in iter_jsonl(path)]


def write_jsonl(path: PathLike, records: Iterable[Any]) -> int:
    """Write records as jsonl atomically (gzip when ``.gz``); returns the number written."""
    n = 0
    with atomic_path(path) as tmp:
        if is_gzip_path(path):
            fh: IO[bytes] = gzip.GzipFile(filename="", mode="wb", fileobj=open(tmp, "wb"), compresslevel=6, mtime=0)
        else:
            fh = open(tmp, "wb")
        try:
            for rec in records:
                fh.write(orjson.dumps(rec, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
                n += 1
        finally:
            inner = getattr(fh, "fileobj", None)
            fh.close()
            if inner is not None:
                inner.close()
    return n


# ---------------------------------------------------------------------------------- TSV / CSV

def iter_tsv(path: PathLike, min_columns: int = 2) -> Iterator[Tuple[int, List[str]]]:
    """Yield ``(line_number, columns)`` of a tab-separated file (gzip-aware, no header).

    Blank lines and ``#`` comment lines are skipped.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    with open_text(p) as fh:
        for line_no, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < min_columns:
                raise InputError(f"expected at least {min_columns} tab-separated columns, got {len(cols)}",
                                 path=p, line=line_no)
            yield line_no, cols


def write_triples_csv(path: PathLike, triples: Iterable[Sequence[str]]) -> int:
    """Write ``query_paper_id,positive_id,negative_id`` rows atomically; returns the row count."""
    n = 0
    with atomic_open(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(TRIPLES_HEADER)
        for row in triples:
            writer.writerow(row)
            n += 1
    return n


def iter_csv_rows(path: PathLike, header: Sequence[str], empty_message: Optional[str] = None
                  ) -> Iterator[Tuple[int, List[str]]]:
    """Yield ``(line number, row)`` of a CSV whose first line must be ``header``; blank lines skipped.

    A missing or empty file, another header or a row with another column count raises
    :class:`InputError` naming the file (and line). ``empty_message``: the error for an empty file
    (default: ``empty file (expected header ...)``).
    """
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    expected = ",".join(header)
    with open_text(p) as fh:
        reader = csv.reader(fh)
        found = next(reader, None)
        if found is None:
            raise InputError(empty_message or f"empty file (expected header {expected})", path=p)
        if tuple(h.strip() for h in found) != tuple(header):
            raise InputError(f"expected header {expected}, got {','.join(found)}", path=p, line=1)
        for line_no, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise InputError(f"expected {len(header)} columns, got {len(row)}", path=p, line=line_no)
            yield line_no, row


def iter_triples_csv(path: PathLike) -> Iterator[Tuple[str, str, str]]:
    """Yield ``(query, positive, negative)`` from a triples CSV, checking the header; ids canonical
    (:func:`scincl.ids.canonical_id`: a bad one is an error naming file and line)."""
    for line_no, row in iter_csv_rows(path, TRIPLES_HEADER, empty_message="empty triples file (no header)"):
        query, positive, negative = canonical_ids(row, path, line_no)
        yield query, positive, negative


# --------------------------------------------------------------------------------- embeddings

def entity_names_path(directory: PathLike, entity_type: str = PBG_ENTITY_TYPE, partition: int = 0) -> Path:
    """PBG's entity-name file: ``entity_names_{type}_{part}.json``."""
    return Path(directory) / f"entity_names_{entity_type}_{partition}.json"


def write_embeddings_h5(path: PathLike, embeddings: np.ndarray, dataset: str = EMBEDDINGS_DATASET) -> None:
    """Write a 2-d float array as the ``embeddings`` dataset of an h5 file (atomically)."""
    import h5py

    arr = np.asarray(embeddings)
    if arr.ndim != 2:
        raise ValueError(f"embeddings must be 2-d, got shape {arr.shape}")
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.create_dataset(dataset, data=arr)


def read_embeddings_h5(path: PathLike, dataset: str = EMBEDDINGS_DATASET) -> np.ndarray:
    """Read the ``embeddings`` dataset of an h5 file (PBG checkpoint or our export) into memory."""
    import h5py

    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    try:
        with h5py.File(p, "r") as f:
            if dataset not in f:
                raise InputError(f"no dataset {dataset!r} (found {sorted(f.keys())})", path=p)
            return f[dataset][...]
    except OSError as exc:
        raise InputError(f"not a readable h5 file ({exc})", path=p) from None


def check_finite(matrix: np.ndarray, path: PathLike, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """``matrix`` unchanged, or an :class:`InputError` naming ``path`` and the first row with NaN/inf.

    ``rows``: the file rows ``matrix`` was read from (default: row i of ``matrix`` is row i of the file).
    """
    finite = np.ones(len(matrix), dtype=bool)
    for start in range(0, len(matrix), 1 << 16):  # blocks: the check must not double the memory of a big matrix
        finite[start:start + (1 << 16)] = np.isfinite(matrix[start:start + (1 << 16)]).reshape(
            min(1 << 16, len(matrix) - start), -1).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        file_rows = np.sort(np.asarray(rows)[bad]) if rows is not None else bad
        raise InputError(f"{len(bad)} embedding rows hold NaN or infinite values, the first is row {int(file_rows[0])} "
                         "(0-based; a diverged graph training?)", path=path)
    return matrix


def read_embeddings_matrix(path: PathLike) -> np.ndarray:
    """Read embeddings from ``.h5`` (dataset ``embeddings``) or ``.npy``; NaN/inf rows are an InputError."""
    if str(path).endswith(".npy"):
        if not Path(path).exists():
            raise InputError("file not found", path=path)
        return check_finite(np.load(path), path)
    return check_finite(read_embeddings_h5(path), path)


def _sparse_row(record: Any, dtype: Any, path: PathLike, line_no: int) -> Any:
    """A sparse embedding ``{"dim", "indices", "values"}`` as a ``1 x dim`` CSR row."""
    import scipy.sparse as sp

    try:
        dim = int(record["dim"])
        indices = np.asarray(record["indices"], dtype=np.int64)
        values = np.asarray(record["values"], dtype=dtype)
        if indices.ndim != 1 or indices.shape != values.shape or (indices.size and
                                                                  (indices.min() < 0 or indices.max() >= dim)):
            raise ValueError
    except (KeyError, TypeError, ValueError):
        raise InputError("sparse embedding needs 'dim' and equally long 'indices' (0..dim-1) and 'values'",
                         path=path, line=line_no, field="embedding") from None
    return sp.csr_matrix((values, indices, [0, indices.size]), shape=(1, dim))


def read_embeddings_jsonl(path: PathLike, dtype: Any = np.float32) -> Dict[str, np.ndarray]:
    """SciDocs embeddings jsonl ``{"paper_id", "embedding"}`` -> dict.

    ``embedding`` is a list of numbers, or (lexical encoders, :mod:`scincl.eval.lexical`) a sparse
    ``{"dim", "indices", "values"}``, read as a ``1 x dim`` ``scipy.sparse`` CSR row.

    A paper id on two lines, a malformed record (NaN and infinity are not JSON: malformed) or an
    embedding holding ``null`` (dense or sparse) is an :class:`InputError` naming the file and line.

    ``dtype=np.float64`` keeps the JSON numbers exactly (the official SciDocs evaluator does).
    """
    out: Dict[str, np.ndarray] = {}
    first_line: Dict[str, int] = {}
    dim: Optional[int] = None
    for line_no, rec in iter_jsonl(path):
        if not isinstance(rec, dict) or "paper_id" not in rec:
            raise InputError("record without 'paper_id'", path=path, line=line_no, field="paper_id")
        if "embedding" not in rec:
            raise InputError("record without 'embedding'", path=path, line=line_no, field="embedding")
        if isinstance(rec["embedding"], dict):  # sparse: a lexical encoder's {"dim", "indices", "values"}
            vec = _sparse_row(rec["embedding"], dtype, path, line_no)
            values = vec.data
        else:
            try:
                with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused below
                    vec = np.asarray(rec["embedding"], dtype=dtype)
            except (TypeError, ValueError):
                raise InputError("embedding is not a flat list of numbers", path=path, line=line_no,
                                 field="embedding") from None
            if vec.ndim != 1:
                raise InputError("embedding is not a flat list of numbers", path=path, line=line_no,
                                 field="embedding")
            values = vec
        if not np.isfinite(values).all():  # null reads as NaN; a diverged model writes nulls (issue 29)
            bad = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InputError(f"embedding holds null, NaN or infinite values (the first at index {bad}; a diverged "
                             "model?)", path=path, line=line_no, field="embedding")
        if dim is None:
            dim = vec.shape[-1]
        elif vec.shape[-1] != dim:
            raise InputError(f"embedding dimension {vec.shape[-1]} differs from the first one ({dim})",
                             path=path, line=line_no, field="embedding")
        paper_id = str(rec["paper_id"])
        if paper_id in first_line:
            raise InputError(f"duplicate paper_id {paper_id!r} (first on line {first_line[paper_id]})",
                             path=path, line=line_no, field="paper_id")
        first_line[paper_id] = line_no
        out[paper_id] = vec
    if not out:
        raise InputError("no embeddings in file", path=path)
    return out


def write_embeddings_jsonl(path: PathLike, paper_ids: Sequence[str], embeddings: np.ndarray) -> int:
    """Write SciDocs-format embeddings jsonl atomically; returns the number of lines."""
    if len(paper_ids) != len(embeddings):
        raise ValueError(f"{len(paper_ids)} ids but {len(embeddings)} embeddings")
    return write_jsonl(path, ({"paper_id": pid, "embedding": vec.tolist()} for pid, vec in zip(paper_ids, embeddings)))
