"""Issue 29, class 3: an output is reused only when its made-by record matches and every output it
lists still exists with its recorded size and hash (deleted files, in-place edits that keep size and
mtime, outputs made from another corpus)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scincl import provenance
from scincl.graph.stage import get_citations
from scincl.errors import InputError
from scincl.pipeline.runner import Manifest, Stage, run_stages
from scincl.provenance import fingerprint, outputs_changed, outputs_record, same_fingerprint


def _plain_corpus(root: Path, edges) -> Path:
    root.mkdir(parents=True)
    papers = sorted({p for edge in edges for p in edge})
    (root / "papers.jsonl").write_text("".join(json.dumps({"paper_id": p, "title": p, "abstract": ""}) + "\n"
                                               for p in papers))
    (root / "citations.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    return root


def _edit_in_place(path: Path, offset: int) -> None:
    """Change one byte at ``offset`` and restore the mtime: size and mtime say nothing changed."""
    stat = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_standalone_get_citations_refuses_an_output_made_from_another_corpus(tmp_path):
    first = _plain_corpus(tmp_path / "a", [("a1", "a2"), ("a2", "a3")])
    other = _plain_corpus(tmp_path / "b", [("b1", "b2")])
    out = tmp_path / "out"
    get_citations(str(first), str(out), workers=1, corpus_format="plain")
    made = (out / "citations.tsv").read_text()
    get_citations(str(first), str(out), workers=1, corpus_format="plain")  # same corpus: reused
    with pytest.raises(InputError, match="made differently: input b differs from the one it was made from"):
        get_citations(str(other), str(out), workers=1, corpus_format="plain")
    assert (out / "citations.tsv").read_text() == made
    (out / "citations.tsv").write_text("a1\ta3\n")  # an edited output is not what the record vouches for
    with pytest.raises(InputError, match="citations.tsv changed since it was made"):
        get_citations(str(first), str(out), workers=1, corpus_format="plain")
    get_citations(str(other), str(out), workers=1, corpus_format="plain", override=True)
    assert (out / "citations.tsv").read_text() == "b1\tb2\n"


def test_an_output_without_a_record_is_not_reused(tmp_path):
    corpus = _plain_corpus(tmp_path / "a", [("a1", "a2")])
    out = tmp_path / "out"
    out.mkdir()
    (out / "citations.tsv").write_text("x\ty\n")
    (out / "citations.stats.json").write_text("{}")
    with pytest.raises(InputError, match="has no made-by record"):
        get_citations(str(corpus), str(out), workers=1, corpus_format="plain")


@pytest.mark.parametrize("size, offset", [(9 << 20, (9 << 20) - 10), (3 << 20, 3 << 20 - 1)])
def test_an_edit_keeping_size_and_mtime_changes_the_fingerprint(tmp_path, monkeypatch, size, offset):
    monkeypatch.setattr(provenance, "FULL_HASH_LIMIT", 1 << 20)  # the 64 MiB / 8 MiB rules, scaled down
    monkeypatch.setattr(provenance, "DIR_FILE_HASH_LIMIT", 1 << 20)
    path = tmp_path / "d" / "big.bin"
    path.parent.mkdir()
    path.write_bytes(os.urandom(size))
    before_file, before_dir = fingerprint(path), fingerprint(path.parent)
    _edit_in_place(path, offset)
    assert not same_fingerprint(before_file, fingerprint(path))
    assert not same_fingerprint(before_dir, fingerprint(path.parent))


def test_beyond_the_content_limit_sampled_blocks_are_hashed(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "FULL_HASH_LIMIT", 1 << 20)
    monkeypatch.setattr(provenance, "CONTENT_HASH_LIMIT", 2 << 20)
    path = tmp_path / "huge.bin"
    path.write_bytes(os.urandom(5 << 20))
    before = fingerprint(path)
    assert "xxh3_128_of_blocks" in before
    _edit_in_place(path, (5 << 20) - 1)  # the last block is always sampled
    assert not same_fingerprint(before, fingerprint(path))


def test_records_from_before_the_content_hash_still_match(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "FULL_HASH_LIMIT", 1 << 20)
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(2 << 20))
    new = fingerprint(path)
    old = {k: v for k, v in new.items() if k != "xxh3_128"}  # what the earlier code wrote
    assert same_fingerprint(old, new) and same_fingerprint(new, old)
    assert not same_fingerprint({**old, "size": 1}, new)
    assert not same_fingerprint({"name": "big.bin", "missing": True}, new)


def test_outputs_changed_names_a_deleted_or_edited_file_and_ignores_added_ones(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    (model / "tokenizer.json").write_text("{}")
    recorded = outputs_record([model])
    (model / "later_stage_output.json").write_text("{}")
    assert outputs_changed(recorded, [model]) is None
    (model / "tokenizer.json").unlink()
    assert "tokenizer.json was deleted" in outputs_changed(recorded, [model])


def test_a_stage_whose_recorded_output_was_deleted_runs_again(tmp_path):
    calls = []
    model = tmp_path / "model"

    def train():
        calls.append("train")
        model.mkdir(exist_ok=True)
        (model / "model.safetensors").write_bytes(b"weights")
        (model / "tokenizer.json").write_text("{}")

    def stages():
        return [Stage("train", [model], train, settings={"lr": 1})]

    run_stages(stages(), Manifest(tmp_path, {}))
    run_stages(stages(), Manifest(tmp_path, {}))
    assert calls == ["train"]
    (model / "model.safetensors").unlink()
    results = run_stages(stages(), Manifest(tmp_path, {}))
    assert calls == ["train", "train"] and results["train"].status == "ran"
    assert (model / "model.safetensors").read_bytes() == b"weights"
    marker = json.loads((model / "stage_train.done.json").read_text())  # an old marker without outputs:
    del marker["outputs"]                                                # adopted, then checked
    (model / "stage_train.done.json").write_text(json.dumps(marker))
    assert run_stages(stages(), Manifest(tmp_path, {}))["train"].status == "reused"
    assert "outputs" in json.loads((model / "stage_train.done.json").read_text())
    (model / "tokenizer.json").unlink()
    assert run_stages(stages(), Manifest(tmp_path, {}))["train"].status == "ran"


def test_embed_refuses_to_reuse_an_edited_embeddings_file(toy_train_files, tmp_path):
    from scincl.model.embed import embed

    args = (str(toy_train_files["bert"]), str(toy_train_files["root"] / "metadata.jsonl"), str(tmp_path / "e.jsonl"))
    out = embed(*args, max_sequence_length=24)
    assert embed(*args, max_sequence_length=24) == out  # unchanged: reused
    _edit_in_place(out, 40)
    with pytest.raises(InputError, match="e.jsonl changed since it was made"):
        embed(*args, max_sequence_length=24)


def test_an_output_written_into_the_corpus_folder_is_not_part_of_the_corpus(tmp_path):
    from scincl.graph.stage import get_metadata_id_mapping

    corpus = _plain_corpus(tmp_path / "a", [("a1", "a2")])
    get_citations(str(corpus), str(tmp_path / "out"), workers=1)  # format detected
    get_metadata_id_mapping(str(corpus), str(corpus / "id_mapping.json"), workers=1)  # the original README's habit
    get_citations(str(corpus), str(tmp_path / "out"), workers=1, corpus_format="plain")  # same corpus: reused
    get_metadata_id_mapping(str(corpus), str(corpus / "id_mapping.json"), workers=1)


def test_a_copy_with_the_same_bytes_matches_up_to_the_content_limit(tmp_path, monkeypatch):
    """A data folder provisioned again (same bytes, new mtime) is the same input when every byte is hashed;
    beyond the content limit, where only blocks are sampled, the new mtime still counts as a change."""
    monkeypatch.setattr(provenance, "FULL_HASH_LIMIT", 1 << 20)
    monkeypatch.setattr(provenance, "DIR_FILE_HASH_LIMIT", 1 << 20)
    monkeypatch.setattr(provenance, "CONTENT_HASH_LIMIT", 4 << 20)
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "big.bin").write_bytes(os.urandom(3 << 20))
    (folder / "huge.bin").write_bytes(os.urandom(5 << 20))
    big, huge, whole = fingerprint(folder / "big.bin"), fingerprint(folder / "huge.bin"), fingerprint(folder)
    for path in (folder / "big.bin", folder / "huge.bin"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # copied a second later
    assert same_fingerprint(big, fingerprint(folder / "big.bin"))
    assert "xxh3_128_of_blocks" in huge and not same_fingerprint(huge, fingerprint(folder / "huge.bin"))
    assert not same_fingerprint(whole, fingerprint(folder))  # the folder holds the sampled file
    os.remove(folder / "huge.bin")
    without_huge = fingerprint(folder)
    os.utime(folder / "big.bin", ns=(0, 5))
    assert same_fingerprint(without_huge, fingerprint(folder))
    old_record = {k: v for k, v in big.items() if k != "xxh3_128"}  # written before the content hash
    assert not same_fingerprint(old_record, fingerprint(folder / "big.bin"))
