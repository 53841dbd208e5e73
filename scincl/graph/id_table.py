"""The paper ids of a whole graph in bounded memory: ``id -> row`` without a Python object per paper (issue 45).

A graph's id list (``entity_names_paper_id_0.json``, row i = paper i) held as a Python list and an
``{id: row}`` dict cost the index and the kNN miner 84 and 53 bytes a paper (``bench_memory.py``): ~6.7 GiB
together at S2ORC's 52.6M papers. :class:`IdTable` holds the ids as one polars String Series
and their 64-bit hashes sorted, with the rows in that order: ~16 bytes a paper for the hashes and
rows plus the Series (~16 bytes for ids of up to 12 characters, which polars stores inline). A
lookup is a binary search over the hashes, and the strings are compared to confirm each hit (or,
when two of the table's ids share a hash, a join on the strings). :func:`read_id_series` reads the
JSON list a chunk at a time, so only one chunk's ids are ever Python strings (measured: 45 bytes a
paper at the peak of reading 3M ids into a table, against 166 for ``read_id_list`` and a dict).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike, read_id_list

ID_CHUNK_BYTES = 4 << 20  # bytes of the JSON list parsed at once (~0.35M ids as Python strings)
_QUOTE, _COMMA = ord('"'), ord(",")


def read_id_series(path: PathLike, chunk_bytes: int = ID_CHUNK_BYTES):
    """The ids :func:`scincl.io.read_id_list` reads (the same checks and canonical form; a repeated id is
    refused by :class:`IdTable`), as a polars String Series, parsed ``chunk_bytes`` of the file at a time.

    The file is cut at commas outside the ids' quotes; a list whose ids hold a backslash (a JSON
    escape), that is not a JSON list, or that holds an id :func:`read_id_list` refuses is read by it
    whole (which raises its one-line error for the latter two).
    """
    import orjson
    import polars as pl

    from scincl.ids import canonical_ids

    path = Path(path)
    if not path.exists():
        return pl.Series("id", read_id_list(path), dtype=pl.String)  # read_id_list's "not found" error
    parts, carry, started = [], b"", False
    try:
        with open(path, "rb") as fh:
            while True:
                chunk = fh.read(chunk_bytes)
                data = carry + chunk
                if not started:
                    data = data.lstrip()
                    if not data and chunk:
                        continue
                    if not data.startswith(b"["):
                        raise ValueError("not a JSON list")
                    data, started = data[1:], True
                if b"\\" in data:
                    raise ValueError("an escaped character")
                if not chunk:  # the end: what is left is the last ids and the closing bracket
                    data = data.rstrip()
                    if not data.endswith(b"]"):
                        raise ValueError("not a JSON list")
                    head, carry = data[:-1], b""
                else:
                    head, carry = _cut_outside_quotes(data)
                if head.strip():
                    items = orjson.loads(b"[" + head + b"]")
                    parts.append(pl.Series("id", canonical_ids(items, path=path), dtype=pl.String))
                if not chunk:
                    break
    except (ValueError, InputError, TypeError):  # orjson.JSONDecodeError is a ValueError
        return pl.Series("id", read_id_list(path), dtype=pl.String)
    return pl.concat(parts, rechunk=False) if parts else pl.Series("id", [], dtype=pl.String)  # no copy


def _cut_outside_quotes(data: bytes):
    """``(head, rest)`` of ``data`` (which starts outside an id) at its last comma outside the ids' quotes
    (without backslashes, every quote opens or closes an id); ``(b"", data)`` when it has none."""
    array = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(array == _QUOTE)
    commas = np.flatnonzero(array == _COMMA)
    outside = commas[np.searchsorted(quotes, commas) % 2 == 0]
    if not len(outside):
        return b"", data
    cut = int(outside[-1])
    return data[:cut], data[cut + 1:]


class IdTable:
    """``paper id -> row`` of an id Series (row = position) through its sorted 64-bit hashes."""

    def __init__(self, ids, source: Optional[PathLike] = None) -> None:
        import polars as pl

        self.ids = ids if isinstance(ids, pl.Series) else pl.Series("id", list(ids), dtype=pl.String)
        self.source = source
        hashes = self.ids.hash().to_numpy()
        order = np.argsort(hashes, kind="stable")
        self.hashes, self.rows = hashes[order], order.astype(np.int64, copy=False)
        del order, hashes
        self.exact = not bool(np.any(self.hashes[1:] == self.hashes[:-1]))
        if not self.exact:
            self._refuse_repeats()

    @classmethod
    def read(cls, path: PathLike) -> "IdTable":
        """The table of a JSON id list (:func:`read_id_series`)."""
        return cls(read_id_series(path), source=path)

    def __len__(self) -> int:
        return len(self.ids)

    def _refuse_repeats(self) -> None:
        """The error :func:`read_id_list` gives for the first id that repeats an earlier one."""
        repeats = np.flatnonzero(~self.ids.is_first_distinct().to_numpy())
        if len(repeats):
            later = int(repeats[0])
            pid = self.ids[later]
            first = int(np.flatnonzero((self.ids == pid).to_numpy())[0])
            raise InputError(f"item {later}: duplicate paper id {pid!r} (first at item {first})", path=self.source)

    def known_rows(self, names) -> np.ndarray:
        """Rows of ``names`` (a String Series), every one of which is in the table (not checked: the caller
        read them from the same files, as the disk graph's edges)."""
        if self.exact:
            return self.rows[np.searchsorted(self.hashes, names.hash().to_numpy())]
        return self._joined(names)

    def find(self, names: Union[Sequence[str], "object"]) -> np.ndarray:
        """Rows of ``names`` (a sequence or a String Series), -1 for a name that is not in the table."""
        import polars as pl

        names = names if isinstance(names, pl.Series) else pl.Series("id", list(names), dtype=pl.String)
        if not self.exact:
            return self._joined(names)
        if not len(self.hashes):
            return np.full(len(names), -1, dtype=np.int64)
        wanted = names.hash().to_numpy()
        position = np.minimum(np.searchsorted(self.hashes, wanted), len(self.hashes) - 1)
        rows = np.where(self.hashes[position] == wanted, self.rows[position], -1)
        hit = np.flatnonzero(rows >= 0)
        same = (self.ids.gather(rows[hit]) == names.gather(hit)).to_numpy()  # a hash shared with an absent id
        rows[hit[~same]] = -1
        return rows

    def _joined(self, names) -> np.ndarray:
        import polars as pl

        table = pl.DataFrame({"id": self.ids, "row": np.arange(len(self.ids), dtype=np.int64)})
        found = pl.DataFrame({"id": names}).join(table, on="id", how="left", maintain_order="left")["row"]
        return found.fill_null(-1).to_numpy().astype(np.int64)

    def rows_of(self, names: Sequence[str], what: str) -> np.ndarray:
        """Rows of ``names``; names not in the table are an :class:`InputError` naming how many and a few."""
        rows = self.find(names)
        missing = np.flatnonzero(rows < 0)
        if len(missing):
            examples = ", ".join(str(names[int(i)]) for i in missing[:5])
            raise InputError(f"{len(missing)} of {len(rows)} {what} are not in the index/corpus (e.g. {examples})",
                             path=self.source)
        return rows
