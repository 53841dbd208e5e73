"""S2ORC records: shard listing, streaming iteration with skip accounting, parallel map over shards.

S2ORC 20200705v1 ships ``metadata/metadata_{0..99}.jsonl.gz`` (and ``pdf_parses/...``): one JSON
object per line. Every stage reads them through :func:`iter_papers`, which streams one shard with
bounded memory (decompressed in 1 MiB blocks, never a whole shard) and parses lines with orjson.
Bad lines (malformed JSON, a record without ``paper_id``) and unreadable shards are counted in a
:class:`ReadStats` and skipped, or raise :class:`~scincl.errors.InputError` naming file and line
under ``strict``. :func:`map_shards` runs a per-shard function in a process pool and returns the
results in shard order, so outputs do not depend on scheduling.
"""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
import re
import signal
import threading
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

import msgspec
import numpy as np
import orjson
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.ids import are_canonical, are_canonical_lists, canonical_id, canonical_ids, id_problem
from scincl.io import PathLike, read_id_list

try:  # ISA-L inflate is about 3x faster than zlib on S2ORC shards; same stream format and API
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - isal is in requirements.txt; zlib is the fallback
    _inflate = zlib

logger = logging.getLogger(__name__)

SHARD_SUFFIXES = (".jsonl.gz", ".jsonl")
READ_BLOCK_BYTES = 1 << 20
MAX_SKIP_EXAMPLES = 10

SKIP_MALFORMED_JSON = "malformed_json"
SKIP_NOT_AN_OBJECT = "not_a_json_object"
SKIP_MISSING_PAPER_ID = "missing_paper_id"
SKIP_UNREADABLE_SHARD = "unreadable_shard"
SKIP_BAD_PAPER_ID = "bad_paper_id"  # an id with whitespace or a control character inside (scincl/ids.py)
DETAILED_SKIPS = (SKIP_MALFORMED_JSON, SKIP_BAD_PAPER_ID)  # skips whose examples carry the reason


@dataclass
class ReadStats:
    """Counts of what reading shards met: papers, lines, and skipped lines by reason (with examples)."""

    shards: int = 0
    lines: int = 0
    papers: int = 0
    skipped: Counter = field(default_factory=Counter)
    skip_examples: List[str] = field(default_factory=list)
    counted: Counter = field(default_factory=Counter)  # expected events of a corpus format (not errors)

    def skip(self, reason: str, path: PathLike, line: Optional[int], detail: str = "") -> None:
        """Count one skipped line (or shard) and keep the first few as ``file:line: reason`` examples."""
        self.skipped[reason] += 1
        if len(self.skip_examples) < MAX_SKIP_EXAMPLES:
            where = f"{path}:{line}" if line is not None else str(path)
            self.skip_examples.append(f"{where}: {reason}" + (f" ({detail})" if detail else ""))

    def merge(self, other: "ReadStats") -> "ReadStats":
        """Add ``other``'s counts into this one (in call order, so examples stay deterministic)."""
        self.shards += other.shards
        self.lines += other.lines
        self.papers += other.papers
        self.skipped.update(other.skipped)
        self.counted.update(other.counted)
        room = MAX_SKIP_EXAMPLES - len(self.skip_examples)
        self.skip_examples.extend(other.skip_examples[:max(room, 0)])
        return self

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready summary (used in the stats files of every corpus command)."""
        out = {"shards": self.shards, "lines": self.lines, "papers_read": self.papers,
               "skipped_lines": sum(v for k, v in self.skipped.items() if k != SKIP_UNREADABLE_SHARD),
               "skipped_by_reason": dict(sorted(self.skipped.items())), "skip_examples": list(self.skip_examples)}
        if self.counted:
            out["counted"] = dict(sorted(self.counted.items()))
        return out


def _shard_sort_key(path: Path) -> Tuple:
    """Natural order: ``metadata_2`` before ``metadata_10``."""
    return tuple(int(tok) if tok.isdigit() else tok for tok in re.split(r"(\d+)", path.name))


def is_corpus_file(path: Path) -> bool:
    """A file of a corpus folder, or a dangling symlink: kept, so that its reader counts it as an unreadable shard
    with a warning (issue 41: it was dropped without a word while an unreadable shard got a warning)."""
    return path.is_file() or (path.is_symlink() and not path.exists())


def list_metadata_shards(metadata_dir: PathLike) -> List[Path]:
    """The ``*.jsonl.gz`` (or ``*.jsonl``) shards of an S2ORC directory, in natural name order.

    A missing directory, a file instead of a directory, or a directory without shards is an
    :class:`InputError`.
    """
    d = Path(metadata_dir)
    if not d.exists():
        raise InputError("S2ORC directory not found", path=d)
    if not d.is_dir():
        raise InputError("expected a directory of S2ORC shards (*.jsonl.gz), got a file", path=d)
    shards = [p for p in d.iterdir() if is_corpus_file(p) and p.name.endswith(SHARD_SUFFIXES)]
    if not shards:
        raise InputError("no S2ORC shards (*.jsonl.gz) in directory", path=d)
    return sorted(shards, key=_shard_sort_key)


GZIP_MAGIC = b"\x1f\x8b"


def _iter_decompressed(path: Path) -> Iterator[bytes]:
    """Pieces of a (multi-member) gzip or plain file, read and decompressed in bounded blocks.

    A file is gzip when its name ends in ``.gz`` or, without that suffix, when it starts with the
    gzip magic bytes (S2AG release files carry no extension).
    """
    with open(path, "rb") as fh:
        if not path.name.endswith(".gz"):
            head = fh.read(2)
            fh.seek(0)
            if head != GZIP_MAGIC:
                yield from iter(lambda: fh.read(READ_BLOCK_BYTES), b"")
                return
        decomp = _inflate.decompressobj(wbits=31)
        member_open = False  # bytes of the current gzip member were fed but its end not yet seen
        while True:
            chunk = fh.read(READ_BLOCK_BYTES)
            if not chunk:
                break
            while chunk:
                member_open = True
                data = decomp.decompress(chunk)
                chunk = b""
                if decomp.eof:  # end of one gzip member: another may follow (concatenated gzip)
                    chunk = decomp.unused_data
                    decomp = _inflate.decompressobj(wbits=31)
                    member_open = False
                if data:
                    yield data
        if member_open:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")


def _iter_line_blocks(path: Path) -> Iterator[bytes]:
    """Blocks of whole lines (newline-separated, without the final newline) of a shard."""
    rest = b""
    for data in _iter_decompressed(path):
        buf = rest + data if rest else data
        cut = buf.rfind(b"\n")
        if cut < 0:
            rest = buf
            continue
        yield buf[:cut]
        rest = buf[cut + 1:]
    if rest:
        yield rest


def count_lines(block: bytes) -> int:
    """Lines of a block from :func:`_iter_line_blocks` (newlines + 1), with numpy: fewer CPU cycles than ``bytes.count``."""
    return int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10)) + 1


class _BadLine(Exception):
    """A line that is skipped (or fatal under strict): ``reason`` is the stats key."""

    def __init__(self, reason: str, message: str, field: Optional[str] = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.field = reason, message, field


def _decode_record(line: bytes) -> Tuple[Any, dict]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _BadLine(SKIP_MALFORMED_JSON, f"malformed JSON ({exc})") from None
    if not isinstance(record, dict):
        raise _BadLine(SKIP_NOT_AN_OBJECT, f"expected a JSON object, got {type(record).__name__}")
    return record.get("paper_id"), record


class _PaperReferences(msgspec.Struct):
    """The two fields citation extraction needs; msgspec still checks the whole line is valid JSON."""

    paper_id: Any = None
    outbound_citations: Any = None


class _PaperReferenceList(msgspec.Struct, gc=False):
    """Same, typed, for the block fast path: a record without a string ``paper_id``, or whose
    ``outbound_citations`` is not null or a list of strings, fails the whole block (which is then
    decoded line by line). ``gc=False``: these structs hold no cycles, the collector skips them."""

    paper_id: Annotated[str, msgspec.Meta(min_length=1)]
    outbound_citations: Optional[List[str]] = None


_REFERENCES_DECODER = msgspec.json.Decoder(_PaperReferences)
_REFERENCE_LIST_DECODER = msgspec.json.Decoder(_PaperReferenceList)


def _decode_references(line: bytes) -> Tuple[Any, Any]:
    try:
        rec = _REFERENCES_DECODER.decode(line)
    except msgspec.ValidationError:  # valid JSON, but not an object
        raise _BadLine(SKIP_NOT_AN_OBJECT, "expected a JSON object") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # invalid UTF-8 too (issue 29)
        raise _BadLine(SKIP_MALFORMED_JSON, f"malformed JSON ({exc})") from None
    return rec.paper_id, rec.outbound_citations


def _decode_lines(lines: Iterable[bytes], first_line: int, path: Path, decode: Callable[[bytes], Tuple[Any, Any]],
                  strict: bool, stats: ReadStats) -> Iterator[Tuple[int, str, Any]]:
    """``(line_number, paper_id, decoded)`` of good lines; bad ones counted (or raised under strict)."""
    for line_no, line in enumerate(lines, start=first_line):
        if not line or line.isspace():
            continue
        stats.lines += 1
        try:
            pid, decoded = decode(line)
            if pid is None or isinstance(pid, bool) or not isinstance(pid, (str, int)) \
                    or (type(pid) is str and not pid.strip()):
                raise _BadLine(SKIP_MISSING_PAPER_ID, "record without 'paper_id'", field="paper_id")
            problem = id_problem(pid)
            if problem is not None:
                raise _BadLine(SKIP_BAD_PAPER_ID, problem, field="paper_id")
            pid = canonical_id(pid)
        except _BadLine as bad:
            if strict:
                raise InputError(bad.message, path=path, line=line_no, field=bad.field) from None
            stats.skip(bad.reason, path, line_no, bad.message if bad.reason in DETAILED_SKIPS else "")
            continue
        stats.papers += 1
        yield line_no, pid, decoded


def _unreadable(path: Path, line_no: int, exc: BaseException, strict: bool, stats: ReadStats) -> None:
    detail = f"unreadable shard after line {line_no} ({exc})" if line_no else f"unreadable shard ({exc})"
    if isinstance(exc, FileNotFoundError):
        detail = "file not found"
    if strict:
        raise InputError(detail, path=path) from None
    logger.warning("%s: %s; skipped the rest of this shard", path, detail)
    stats.skip(SKIP_UNREADABLE_SHARD, path, None, detail)


_READ_ERRORS = (OSError, EOFError, zlib.error, _inflate.error)


def iter_papers(shard_path: PathLike, strict: bool = False, stats: Optional[ReadStats] = None) -> Iterator[dict]:
    """Stream the records of one S2ORC shard; see :func:`iter_numbered_papers` (same, with line numbers)."""
    for _, record in iter_numbered_papers(shard_path, strict=strict, stats=stats):
        yield record


def iter_numbered_papers(shard_path: PathLike, strict: bool = False,
                         stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, dict]]:
    """Stream ``(line_number, record)`` of one S2ORC shard (gzip jsonl); ``paper_id`` becomes a string.

    Malformed JSON, non-object lines and records without ``paper_id`` are counted in ``stats``
    and skipped; with ``strict`` they raise :class:`InputError` naming file and line. An
    unreadable shard (missing, corrupt or truncated gzip) is counted as ``unreadable_shard``
    (records before the damage are kept) or raised under ``strict``.
    """
    path = Path(shard_path)
    stats = stats if stats is not None else ReadStats()
    stats.shards += 1
    line_no = 0
    try:
        for block in _iter_line_blocks(path):
            lines = block.split(b"\n")
            for number, pid, record in _decode_lines(lines, line_no + 1, path, _decode_record, strict, stats):
                record["paper_id"] = pid
                yield number, record
            line_no += len(lines)
    except _READ_ERRORS as exc:
        _unreadable(path, line_no, exc, strict, stats)


def _canonical_batch(records: Sequence[Any]) -> bool:
    """True when every paper id and reference id of a typed block is already canonical (list operations only)."""
    return are_canonical([r.paper_id for r in records]) and are_canonical_lists([r.outbound_citations
                                                                                 for r in records])


def record_id(value: Any, path: PathLike, line: Optional[int], strict: bool, stats: Optional[ReadStats],
              field: str = "paper_id") -> Optional[str]:
    """A corpus record's id in canonical form (:func:`scincl.ids.canonical_id`), or None after counting it as
    ``bad_paper_id`` (``strict``: an InputError naming file, line and field)."""
    problem = None if value is None else id_problem(value)
    if value is not None and problem is None:
        return canonical_id(value)
    if problem is None:
        problem = f"no {field}"
    if strict:
        raise InputError(problem, path=path, line=line, field=field)
    if stats is not None:
        stats.skip(SKIP_BAD_PAPER_ID, path, line, problem)
    return None


class ReferenceBatch(NamedTuple):
    """The references of one decompressed block of lines (see :func:`iter_reference_batches`)."""

    lines: Sequence[int]  # line number of each record
    paper_ids: List[str]
    references: List[Any]  # ``outbound_citations`` as found
    typed: bool  # True: every entry of ``references`` is None or a list of str (checked by msgspec)

    @classmethod
    def of_records(cls, records: Sequence[Tuple[int, str, Any]]) -> "ReferenceBatch":
        """An untyped batch of ``(line, paper_id, outbound_citations)`` records (normalised one by one later)."""
        return cls([r[0] for r in records], [r[1] for r in records], [r[2] for r in records], False)


def iter_reference_batches(shard_path: PathLike, strict: bool = False,
                           stats: Optional[ReadStats] = None) -> Iterator[ReferenceBatch]:
    """The records of :func:`iter_paper_references`, one :class:`ReferenceBatch` per block of lines.

    A block decodes in one msgspec call into typed records (string ``paper_id``, ``outbound_citations``
    null or a list of strings; the rest of each line is still validated as JSON), so citation
    extraction handles a whole block with list operations instead of a Python step per record. A
    block with any other line (bad JSON, blank, no ``paper_id``, int ids, ...) is decoded again line
    by line with the skip/strict handling of :func:`iter_numbered_papers` (``typed=False``).
    """
    path = Path(shard_path)
    stats = stats if stats is not None else ReadStats()
    stats.shards += 1
    line_no = 0
    try:
        for block in _iter_line_blocks(path):
            n_lines = count_lines(block)
            try:
                records = _REFERENCE_LIST_DECODER.decode_lines(block)
            except (msgspec.DecodeError, UnicodeDecodeError):
                records = None
            if records is not None and len(records) == n_lines and _canonical_batch(records):
                stats.lines += n_lines
                stats.papers += n_lines
                yield ReferenceBatch(range(line_no + 1, line_no + 1 + n_lines), [r.paper_id for r in records],
                                     [r.outbound_citations for r in records], True)
            else:
                yield ReferenceBatch.of_records(
                    list(_decode_lines(block.split(b"\n"), line_no + 1, path, _decode_references, strict, stats)))
            line_no += n_lines
    except _READ_ERRORS as exc:
        _unreadable(path, line_no, exc, strict, stats)


def iter_paper_references(shard_path: PathLike, strict: bool = False,
                          stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, Any]]:
    """Fast path of :func:`iter_numbered_papers` for citation extraction: ``(line, paper_id, outbound_citations)``.

    Decodes only those two fields, a block of lines at a time (:func:`iter_reference_batches`);
    bad lines are skipped (or raise under ``strict``) as there. ``outbound_citations`` is returned as found.
    """
    for batch in iter_reference_batches(shard_path, strict=strict, stats=stats):
        yield from zip(batch.lines, batch.paper_ids, batch.references)


# The block reader and error handling, shared with the other corpus formats (scincl/corpus/).
iter_line_blocks = _iter_line_blocks
count_unreadable = _unreadable
READ_ERRORS = _READ_ERRORS


def _pool_context() -> Any:
    """``fork`` (cheap: no re-import in workers) when this process runs no other threads, else forkserver.

    tqdm's idle monitor thread does not count: workers never touch tqdm, so its lock cannot bite.
    """
    methods = multiprocessing.get_all_start_methods()
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and t.name != "tqdm_monitor"]
    if "fork" in methods and not others:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _init_worker(initializer: Optional[Callable[..., None]], initargs: Tuple[Any, ...]) -> None:
    """Pool workers leave Ctrl-C (sent to the whole process group) and SIGTERM to their parent, which
    stops the pool and reports it in one line (issue 29: each worker printed a KeyboardInterrupt traceback);
    then ``initializer(*initargs)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def process_pool(workers: int, initializer: Optional[Callable[..., None]] = None,
                 initargs: Tuple[Any, ...] = ()) -> Iterator[Any]:
    """A process pool of ``workers`` (:func:`_pool_context`), closed and joined when the block ends: workers exit on
    their own, leaving no pool threads behind (so the next pool can fork). ``Pool.__exit__`` terminates them instead,
    which once left the parent waiting for a worker blocked on the task queue's lock; here only an error terminates."""
    pool = _pool_context().Pool(workers, initializer=_init_worker, initargs=(initializer, initargs))
    try:
        yield pool
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        pool.join()


def map_shards(fn: Callable[[Path], Any], shards: Sequence[PathLike], workers: int = 1,
               desc: str = "shards") -> List[Any]:
    """``[fn(shard) for shard in shards]`` over a process pool, in shard order, with a progress bar.

    ``fn`` must be picklable (a module-level function or a ``functools.partial`` of one); string
    items become paths, other items (picklable job tuples) are passed as they are.
    ``workers <= 1`` runs in this process (no pool), which gives the same results.
    """
    shards = [Path(s) if isinstance(s, str) else s for s in shards]  # other items (jobs) pass unchanged
    workers = max(1, min(int(workers or 1), len(shards)))
    if workers == 1:
        with tqdm(total=len(shards), desc=desc, unit="shard", disable=None) as bar:
            results = []
            for shard in shards:
                results.append(fn(shard))
                bar.update(1)
            return results
    with process_pool(workers) as pool:
        with tqdm(total=len(shards), desc=desc, unit="shard", disable=None) as bar:
            results = []
            for result in pool.imap(fn, shards, chunksize=1):
                results.append(result)
                bar.update(1)
    return results


# ------------------------------------------------------------------------------------ id sets

def load_id_set(ids: Optional[Any], what: str = "paper ids") -> Optional[Set[str]]:
    """An id filter from a JSON list file path, a comma-separated string, or an iterable; None stays None.

    Every id in its canonical form (:func:`scincl.ids.canonical_id`). A path that does not exist, a file
    that is not a JSON list or an id that cannot be one is an :class:`InputError`.
    """
    if ids is None or ids == "":
        return None
    if isinstance(ids, (str, Path)):
        text = str(ids)
        if Path(text).exists() or text.endswith(".json") or text.endswith(".json.gz"):
            out = set(read_id_list(text))
            logger.info("loaded %d %s from %s", len(out), what, text)
            return out
        if "," in text or text.strip().isdigit():
            return {canonical_id(tok, field=what) for tok in text.split(",") if tok.strip()}
        raise InputError(f"{what}: file not found", path=text)
    if isinstance(ids, (int,)):
        return {canonical_id(ids, field=what)}
    return set(canonical_ids(list(ids), field=what))


def iter_all_papers(shards: Iterable[PathLike], strict: bool = False,
                    stats: Optional[ReadStats] = None) -> Iterator[dict]:
    """Records of several shards in order (single process; see :func:`map_shards` for parallel)."""
    for shard in shards:
        yield from iter_papers(shard, strict=strict, stats=stats)


# --- S2ORC record fields and shard names shared by the citation readers (scincl/graph/citations.py) and
# the id mappings (scincl/corpus/s2orc_mappings.py)

SKIP_BAD_OUTBOUND = "bad_outbound_citations"


def unit_name(path: Path) -> str:
    """A corpus file's name, with its Hive-style partition folder (``updated_date=…/part_000.gz``) when it has one.

    Names the part files and the seeded split stream of a file; unique across an OpenAlex snapshot,
    and the plain file name for S2ORC shards (so their splits are unchanged).
    """
    return f"{path.parent.name}/{path.name}" if "=" in path.parent.name else path.name


def normalize_references(refs: Any, path: PathLike = "", line: Optional[int] = None,
                         strict: bool = False, stats: Optional[ReadStats] = None) -> Optional[List[str]]:
    """An ``outbound_citations`` value as distinct canonical string ids (see
    :func:`scincl.graph.citations.outbound_references`); a value that is not a list of ids is None (counted)."""
    if refs is None:
        return []
    if type(refs) is list and not are_canonical(refs):
        refs = [canonical_id(r) for r in refs] if all(id_problem(r) is None for r in refs) else None
    elif type(refs) is not list:
        refs = None
    if refs is None:
        if strict:
            raise InputError("'outbound_citations' is not a list of paper ids", path=path, line=line,
                             field="outbound_citations")
        if stats is not None:
            stats.skip(SKIP_BAD_OUTBOUND, path, line)
        return None
    if len(set(refs)) != len(refs):
        refs = list(dict.fromkeys(refs))
    return refs


def papers_with_text(metadata_dir: PathLike) -> List[str]:
    """Ids (sorted, unique) of the corpus papers that have a title or an abstract: the only ones an encoder can
    use."""
    ids = {str(r["paper_id"]) for r in iter_all_papers(list_metadata_shards(metadata_dir))
           if (r.get("title") or r.get("abstract"))}
    return sorted(ids)
