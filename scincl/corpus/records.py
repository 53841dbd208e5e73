"""Reading one corpus file: typed JSON-lines records in blocks, with the S2ORC reader's skip accounting.

Every format's adapter decodes its files with :func:`iter_records`: the file is streamed in
decompressed blocks (gzip by suffix or by magic bytes, :func:`scincl.corpus.shards.iter_line_blocks`), a
whole block of lines is decoded by one msgspec call into the adapter's ``Struct`` (only the fields
it declares are built), and a block with a bad line is decoded again line by line so that the bad
line is counted and skipped (or, under ``strict``, raised naming file, line and problem).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

import msgspec

from scincl.errors import InputError
from scincl.ids import OPENALEX_ID_PREFIX, canonical_id, id_problem
from scincl.io import PathLike
from scincl.corpus.shards import READ_ERRORS, SKIP_MALFORMED_JSON, ReadStats, count_unreadable, iter_line_blocks

SKIP_INVALID_RECORD = "invalid_record"


def _decode_one(decoder: msgspec.json.Decoder, line: bytes, path: Path, line_no: int, strict: bool,
                stats: ReadStats) -> Optional[Any]:
    """One line decoded, or None after counting (or raising) why it is bad."""
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as exc:
        reason, message = SKIP_INVALID_RECORD, f"invalid record ({exc})"
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # invalid UTF-8: a counted skip (issue 29)
        reason, message = SKIP_MALFORMED_JSON, f"malformed JSON ({exc})"
    if strict:
        raise InputError(message, path=path, line=line_no)
    stats.skip(reason, path, line_no, message)
    return None


def _numbered_blocks(path: Path, strict: bool, stats: ReadStats) -> Iterator[Tuple[int, bytes]]:
    """``(number of the block's first line, block of lines)``; an unreadable file is counted (or raised)."""
    stats.shards += 1
    line_no = 0
    try:
        for block in iter_line_blocks(path):
            yield line_no + 1, block
            line_no += block.count(b"\n") + 1
    except READ_ERRORS as exc:
        count_unreadable(path, line_no, exc, strict, stats)


def iter_records(path: PathLike, decoder: msgspec.json.Decoder, strict: bool = False,
                 stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, Any]]:
    """``(line_number, record)`` of a (gzip) JSON-lines file, decoded by ``decoder``; blank lines ignored.

    Bad lines are counted in ``stats`` and skipped (``strict``: :class:`InputError`); an unreadable
    file is counted as ``unreadable_shard`` (records before the damage are kept) or raised.
    """
    path = Path(path)
    stats = stats if stats is not None else ReadStats()
    for first, block in _numbered_blocks(path, strict, stats):
        n_lines = block.count(b"\n") + 1
        try:
            records = decoder.decode_lines(block)
        except (msgspec.DecodeError, UnicodeDecodeError):  # includes ValidationError; invalid UTF-8
            records = None
        if records is not None and len(records) == n_lines:
            stats.lines += n_lines
            yield from enumerate(records, start=first)
            continue
        for number, line in enumerate(block.split(b"\n"), start=first):
            if not line or line.isspace():
                continue
            stats.lines += 1
            record = _decode_one(decoder, line, path, number, strict, stats)
            if record is not None:
                yield number, record


SKIP_HEADER = "header_line"
SKIP_INVALID_UTF8 = "invalid_utf8"
# a first line of these column names is a header, not an edge (case-insensitive)
TSV_HEADER_NAMES = frozenset({"citing", "cited", "citing_id", "cited_id", "citing_paper_id", "cited_paper_id",
                              "source", "target", "src", "dst", "from", "to", "paper_id", "reference_id",
                              "id1", "id2", "head", "tail", "lhs", "rhs"})


def _tsv_problem(cols: list) -> Optional[str]:
    """Why the columns of a citation TSV line are not two paper ids, or None."""
    if len(cols) != 2:
        return f"expected 2 tab-separated paper ids, got {len(cols)} column(s)"
    if not cols[0] or not cols[1]:
        return "expected 2 tab-separated paper ids, got an empty id"
    for col in cols:
        problem = id_problem(col)
        if problem is not None:
            return f"{problem} (ids are trimmed; a space inside one is not a tab?)"
    return None


def iter_tsv_lines(path: PathLike, strict: bool = False,
                   stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, str]]:
    """``(line_number, first, second)`` of a (gzip) two-column TSV; ``#`` comments and blank lines skipped.

    Parsed strictly (issue 29): ids are trimmed; a line of one or three columns, an empty id or an
    id with whitespace inside is a counted skip (``--strict``: an error naming file and line); a
    first line whose two columns are column names (:data:`TSV_HEADER_NAMES`) is a counted header,
    not an edge; a line that is not UTF-8 is a counted skip.
    """
    path = Path(path)
    stats = stats if stats is not None else ReadStats()
    first_line_seen = False
    for first, block in _numbered_blocks(path, strict, stats):
        for number, raw in enumerate(block.split(b"\n"), start=first):
            raw = raw.rstrip(b"\r")
            if not raw.strip() or raw.startswith(b"#"):
                continue
            stats.lines += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if strict:
                    raise InputError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path, line=number)
                stats.skip(SKIP_INVALID_UTF8, path, number, f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            cols = [col.strip() for col in line.split("\t")]
            if not first_line_seen:
                first_line_seen = True
                if len(cols) == 2 and all(col.lower() in TSV_HEADER_NAMES for col in cols):
                    stats.counted[SKIP_HEADER] += 1
                    continue
            problem = _tsv_problem(cols)
            if problem is not None:
                if strict:
                    raise InputError(problem, path=path, line=number)
                stats.skip(SKIP_INVALID_RECORD, path, number, problem)
                continue
            yield number, canonical_id(cols[0]), canonical_id(cols[1])


def strip_openalex_prefix(work_id: str) -> str:
    """``https://openalex.org/W123`` -> ``W123`` (ids without the prefix are returned unchanged)."""
    return work_id[len(OPENALEX_ID_PREFIX):] if work_id.startswith(OPENALEX_ID_PREFIX) else work_id


def abstract_from_inverted_index(index: Optional[dict]) -> Optional[str]:
    """OpenAlex's ``abstract_inverted_index`` ({word: [positions]}) back to text, words joined by spaces.

    None stays None (no abstract). Positions missing from the index are left out.

    >>> abstract_from_inverted_index({"world": [1], "hello": [0, 2]})
    'hello world hello'
    """
    if index is None:
        return None
    slots = sorted((pos, word) for word, positions in index.items() for pos in positions)
    return " ".join(word for _, word in slots)
