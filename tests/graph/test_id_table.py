"""Issue 45: a whole graph's ids without a Python object per paper (``scincl/graph/id_table.py``)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scincl.errors import InputError
from scincl.graph import id_table
from scincl.graph.id_table import IdTable, read_id_series
from scincl.io import read_id_list, write_id_list


@pytest.mark.parametrize("chunk_bytes", [1, 7, 64, 1 << 20])
def test_chunked_reader_gives_read_id_list_s_ids(tmp_path, chunk_bytes, monkeypatch):
    path = tmp_path / "ids.json"
    ids = [f"{100_000_000 + 37 * i}" for i in range(400)] + ["W123", "a,b", ",", "x:y", "[]"]  # commas in quotes
    write_id_list(path, ids)
    with monkeypatch.context() as patched:  # read in chunks, not by the whole-file fallback
        patched.setattr(id_table, "read_id_list", None)
        assert read_id_series(path, chunk_bytes).to_list() == ids
    assert read_id_list(path) == ids
    write_id_list(path, ids + ['"', "\\"])  # written escaped: a list with a backslash is read whole
    assert read_id_series(path, chunk_bytes).to_list() == ids + ['"', "\\"]
    path.write_text(' \n[1, "https://openalex.org/W7" ,\n "p2" ]\n')  # numbers, prefix, spaces: canonical ids
    assert read_id_series(path, chunk_bytes).to_list() == read_id_list(path) == ["1", "W7", "p2"]
    path.write_text("[]")
    assert read_id_series(path, chunk_bytes).to_list() == []


@pytest.mark.parametrize("text", ['{"a": 1}', '["a", 1.5]', '["a", ["b", "c"]]', '["a" "b"]', '["a", "b c"]', "[",
                                  '["a", "b"] x'])
def test_a_bad_list_gives_read_id_list_s_error(tmp_path, text):
    path = tmp_path / "ids.json"
    path.write_text(text)
    with pytest.raises(InputError) as expected:
        read_id_list(path)
    with pytest.raises(InputError) as got:
        read_id_series(path, 3)
    assert str(got.value) == str(expected.value)


def test_a_repeated_id_is_refused_as_read_id_list_refuses_it(tmp_path):
    path = tmp_path / "ids.json"
    write_id_list(path, ["a", "b", "c", "b", "a"])
    with pytest.raises(InputError) as expected:
        read_id_list(path)
    with pytest.raises(InputError) as got:
        IdTable.read(path)
    assert str(got.value) == str(expected.value) == f"{path}: item 3: duplicate paper id 'b' (first at item 1)"


@pytest.mark.parametrize("exact", [True, False])  # False: as when two ids share a 64-bit hash (a join on the strings)
def test_lookup_rows_and_absent_ids(exact):
    ids = [f"p{i}" for i in range(1000)]
    table = IdTable(ids, source="graph.json")
    table.exact = exact
    assert table.find(["p17", "absent", "p0", "p999"]).tolist() == [17, -1, 0, 999]
    assert table.known_rows(pl.Series(["p5", "p5", "p900"])).tolist() == [5, 5, 900]
    assert np.array_equal(table.rows_of(ids[::-1], "corpus ids"), np.arange(999, -1, -1))
    with pytest.raises(InputError, match=r"^graph.json: 2 of 3 corpus ids are not in the index/corpus \(e.g. x, y\)$"):
        table.rows_of(["x", "p1", "y"], "corpus ids")
    assert IdTable([]).find(["a"]).tolist() == [-1]


def test_an_absent_id_that_shares_a_hash_with_a_table_id_is_not_found():
    table = IdTable(["a", "b", "c"])
    absent = pl.Series(["zzz"])
    table.hashes[:] = absent.hash().to_numpy()[0]  # every id of the table has the hash of one that is not in it
    assert table.find(absent).tolist() == [-1]
