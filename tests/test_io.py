"""Shared file formats: gzip determinism, atomic writes, id lists, triples CSV, embeddings."""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from scincl import io
from scincl.errors import InputError, os_error_message


def test_gzip_jsonl_is_byte_identical_across_writes(tmp_path):
    recs = [{"paper_id": str(i), "title": f"t{i}"} for i in range(50)]
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert io.write_jsonl(a, recs) == 50
    assert io.write_jsonl(b, recs) == 50
    assert a.read_bytes() == b.read_bytes()
    assert io.read_jsonl(a) == recs
    with gzip.open(a, "rt") as fh:
        assert fh.readline().strip() == '{"paper_id":"0","title":"t0"}'


def test_atomic_path_leaves_no_partial_file_on_error(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_open_replaces_existing_file_only_on_success(tmp_path):
    target = tmp_path / "out.csv.gz"
    io.write_triples_csv(target, [("q", "p", "n")])
    before = target.read_bytes()
    with pytest.raises(ValueError):
        with io.atomic_open(target) as fh:
            fh.write("garbage")
            raise ValueError("interrupted")
    assert target.read_bytes() == before
    assert list(io.iter_triples_csv(target)) == [("q", "p", "n")]


def test_iter_jsonl_reports_file_and_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{broken\n{"a": 2}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:3: malformed JSON"):
        list(io.iter_jsonl(p))
    skipped = []
    recs = list(io.iter_jsonl(p, strict=False, on_skip=lambda ln, why: skipped.append(ln)))
    assert [r for _, r in recs] == [{"a": 1}, {"a": 2}]
    assert skipped == [3]


def test_read_id_list_validates_type(tmp_path):
    good = tmp_path / "ids.json"
    good.write_text('["a", 2]')
    assert io.read_id_list(good) == ["a", "2"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}')
    with pytest.raises(InputError, match="expected a JSON list of paper ids, got dict"):
        io.read_id_list(bad)
    with pytest.raises(InputError, match="file not found"):
        io.read_id_list(tmp_path / "missing.json")


def test_triples_csv_header_is_checked(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(InputError, match="expected header query_paper_id,positive_id,negative_id"):
        list(io.iter_triples_csv(p))


def test_embeddings_roundtrip_h5_and_jsonl(tmp_path):
    emb = np.arange(12, dtype=np.float32).reshape(4, 3)
    io.write_embeddings_h5(tmp_path / "e.h5", emb)
    np.testing.assert_array_equal(io.read_embeddings_h5(tmp_path / "e.h5"), emb)
    io.write_embeddings_jsonl(tmp_path / "e.jsonl", ["a", "b", "c", "d"], emb)
    loaded = io.read_embeddings_jsonl(tmp_path / "e.jsonl")
    assert sorted(loaded) == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(loaded["d"], emb[3])


def test_a_paper_id_twice_in_embeddings_is_an_error_naming_both_lines(tmp_path):
    """Issue 16: a later copy used to overwrite the first silently (MAG F1 18.00 -> 13.33)."""
    io.write_embeddings_jsonl(tmp_path / "e.jsonl", ["a", "b", "c", "a"], np.ones((4, 2), dtype=np.float32))
    with pytest.raises(InputError, match=r"e\.jsonl:4, field 'paper_id': duplicate paper_id 'a' \(first on line 1\)"):
        io.read_embeddings_jsonl(tmp_path / "e.jsonl")


def test_embedding_dimension_mismatch_is_an_input_error(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text('{"paper_id": "a", "embedding": [1, 2]}\n{"paper_id": "b", "embedding": [1]}\n')
    with pytest.raises(InputError, match=r"e\.jsonl:2, field 'embedding': embedding dimension 1 differs"):
        io.read_embeddings_jsonl(p)


def test_os_error_messages_are_actionable():
    import errno

    assert os_error_message(OSError(errno.ENOSPC, "No space", "/x/y")) == "no space left on device while writing /x/y"
    assert os_error_message(PermissionError(errno.EACCES, "denied", "/root/z")) == "permission denied: /root/z"


def test_atomic_outputs_get_the_usual_file_mode(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        io.write_json(tmp_path / "x.json", {"a": 1})
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "x.json").stat().st_mode) == 0o644


def test_iter_tsv_skips_blank_and_comment_lines(tmp_path):
    p = tmp_path / "edges.tsv"
    p.write_text("# comment\na\tb\n\nc\td\te\n")
    assert list(io.iter_tsv(p)) == [(2, ["a", "b"]), (4, ["c", "d", "e"])]
    p.write_text("a\tb\nlonely\n")
    with pytest.raises(InputError, match=r"edges\.tsv:2: expected at least 2 tab-separated columns, got 1"):
        list(io.iter_tsv(p))


def test_read_embeddings_h5_error_branches_name_the_file(tmp_path):
    import h5py

    with pytest.raises(InputError, match=r"missing\.h5: file not found"):
        io.read_embeddings_h5(tmp_path / "missing.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.create_dataset("vectors", data=np.zeros((2, 3), np.float32))
        f.create_dataset("meta", data=np.zeros(1))
    with pytest.raises(InputError, match=r"other\.h5: no dataset 'embeddings' \(found \['meta', 'vectors'\]\)"):
        io.read_embeddings_h5(tmp_path / "other.h5")
    np.testing.assert_array_equal(io.read_embeddings_h5(tmp_path / "other.h5", dataset="vectors"), np.zeros((2, 3)))
    (tmp_path / "text.h5").write_text("paper_id\tembedding\n")
    with pytest.raises(InputError, match=r"text\.h5: not a readable h5 file \("):
        io.read_embeddings_h5(tmp_path / "text.h5")
    with pytest.raises(InputError, match=r"missing\.npy: file not found"):
        io.read_embeddings_matrix(tmp_path / "missing.npy")
