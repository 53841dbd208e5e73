"""Issue 41, class 3: model folders are checked before any work, and collapsed embeddings are never scored.

A truncated or corrupted weights file, a folder without tokenizer or ``config.json``, an unknown architecture,
weights of another shape and a corpus folder given as a model each end in one line naming what is missing,
before the first stage or output (``embed``, ``evaluate --model_dirs``, ``train``, ``run_specter``); a model
that gives every paper the same vector is refused after ``embed`` and after ``train``.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from scincl.errors import InputError
from scincl.io import write_jsonl
from scincl.model.collapse import embedding_check, relative_spread
from scincl.model.encoder import check_encoder
from scincl.model.folder_check import model_files_problem
from tests.conftest import run_front_end


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _set_config(folder: Path, **values) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **values}))


def _as_bin(folder: Path) -> None:
    """The same model saved as pytorch_model.bin (then truncated)."""
    import torch
    from safetensors.torch import load_file

    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    _truncate(folder / "pytorch_model.bin")


BROKEN = {  # name: (how the copy of a good folder is broken, the message)
    "truncated_weights": (lambda d: _truncate(d / "model.safetensors"),
                          "model.safetensors is unreadable \\(truncated or corrupted"),
    "garbage_weights": (lambda d: (d / "model.safetensors").write_bytes(b"\0" * 64), "model.safetensors is unreadable"),
    "truncated_bin": (_as_bin, "pytorch_model.bin is not a torch archive"),
    "no_weights": (lambda d: (d / "model.safetensors").unlink(), "no weights \\(model.safetensors or pytorch_model.bin"),
    "no_tokenizer": (lambda d: [(d / n).unlink() for n in ("tokenizer.json", "vocab.txt")], "no tokenizer"),
    "no_config": (lambda d: (d / "config.json").unlink(), "no config.json: not a saved model folder"),
    "bad_config": (lambda d: (d / "config.json").write_text("{oops"), "config.json is not readable JSON"),
    "config_list": (lambda d: (d / "config.json").write_text("[1]"), "config.json has no model_type"),
    "unknown_type": (lambda d: _set_config(d, model_type="no_such_model"), "model_type 'no_such_model' is not one"),
    "other_shape": (lambda d: _set_config(d, hidden_size=64, intermediate_size=64),
                    "cannot load model \\(RuntimeError: Error\\(s\\) in loading state_dict"),
}


@pytest.fixture()
def metadata(tmp_path) -> Path:
    path = tmp_path / "papers.jsonl"
    write_jsonl(path, [{"paper_id": str(i), "title": f"paper {i} graph", "abstract": "neural text " * i}
                       for i in range(1, 5)])
    return path


def _broken_copy(toy_bert: Path, tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(toy_bert, folder)
    BROKEN[name][0](folder)
    return folder


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_embed_refuses_a_broken_model_folder_in_one_line(toy_bert, tmp_path, metadata, name):
    from scincl.model.embed import embed

    folder = _broken_copy(toy_bert, tmp_path, name)
    with pytest.raises(InputError, match=BROKEN[name][1]) as caught:
        embed(str(folder), str(metadata), str(tmp_path / "out.jsonl"))
    assert "\n" not in str(caught.value) and str(folder) in str(caught.value)
    assert not (tmp_path / "out.jsonl").exists()


def test_every_model_folder_is_checked_before_the_first_output(toy_bert, tmp_path, metadata, demo_corpus):
    """evaluate: the good model is not embedded when the second is broken; train: no output dir."""
    import cli_pipeline

    broken = _broken_copy(toy_bert, tmp_path, "no_tokenizer")
    with pytest.raises(InputError, match="--model_dirs: no tokenizer"):
        cli_pipeline.evaluate(str(demo_corpus.scidocs_dir), str(tmp_path / "eval"),
                              model_dirs=f"{toy_bert},{broken}")
    assert not (tmp_path / "eval").exists()
    (tmp_path / "t.csv").write_text("query_paper_id,positive_id,negative_id\n1,2,3\n")
    with pytest.raises(InputError, match="--base_model_name_or_path: no tokenizer"):
        cli_pipeline.train(str(tmp_path / "t.csv"), str(metadata), str(tmp_path / "model"),
                           base_model_name_or_path=str(broken))
    assert not (tmp_path / "model").exists()
    assert model_files_problem(toy_bert) is None
    check_encoder(str(toy_bert))  # a good folder loads and encodes
    with pytest.raises(InputError, match="--base_model_name_or_path: a file, not a model folder"):
        check_encoder(str(metadata))
    with pytest.raises(InputError, match="no such folder"):
        check_encoder(str(tmp_path / "missing" / "model"))


def test_run_specter_refuses_a_corpus_folder_as_base_model_before_stage_one(demo_corpus, tmp_path):
    proc = run_front_end("cli_pipeline.py", "run_specter", tmp_path / "run", "--corpus_dir",
                         demo_corpus.s2orc_metadata_dir, "--base_model_name_or_path", demo_corpus.s2orc_metadata_dir,
                         "--workers", "1", timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "--base_model_name_or_path: no config.json: not a saved model folder (it holds " \
        "metadata_0.jsonl.gz" in errors[0]
    assert not (tmp_path / "run").exists()


def _collapsed_copy(toy_bert: Path, folder: Path) -> Path:
    """The toy BERT with its last LayerNorm's weight at zero: every token state is that LayerNorm's bias."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(toy_bert)
    model.encoder.layer[-1].output.LayerNorm.weight.data.zero_()
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(toy_bert).save_pretrained(folder)
    return folder


def test_collapsed_embeddings_are_refused_and_near_collapse_is_a_loud_warning(toy_bert, tmp_path, metadata, caplog):
    import numpy as np

    from scincl.model.embed import embed

    collapsed = _collapsed_copy(toy_bert, tmp_path / "collapsed")
    with pytest.raises(InputError, match=r"the same vector for all 4 papers with distinct texts .*cannot be scored"):
        embed(str(collapsed), str(metadata), str(tmp_path / "out.jsonl"))
    assert not (tmp_path / "out.jsonl").exists()
    # hand-made vectors: the spread is the mean distance to the centroid over the mean norm
    assert relative_spread(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(np.sqrt(0.5))
    near = np.array([[1.0, 0.0], [1.0, 0.001], [1.0, -0.001]])
    assert embedding_check(near, ["a", "b", "c"])["status"] == "near_collapsed"
    assert embedding_check(near[:1].repeat(3, 0), ["a", "b", "c"])["status"] == "collapsed"
    assert embedding_check(near[:1].repeat(3, 0), ["a", "a", "a"])["status"] == "not_checked"  # same texts
    with caplog.at_level(logging.WARNING):
        embed(str(toy_bert), str(metadata), str(tmp_path / "random.jsonl"))  # a random tiny BERT is near collapse
    assert (tmp_path / "random.jsonl").exists() and "nearly the same vector for all 4 papers" in caplog.text


@pytest.mark.slow  # trains (one step of the toy BERT)
def test_a_training_that_collapses_is_refused_before_it_counts_as_finished(toy_bert, toy_train_files, tmp_path):
    import cli_pipeline

    from scincl.model.collapse import EMBEDDING_CHECK_NAME

    base = _collapsed_copy(toy_bert, tmp_path / "base")
    out = tmp_path / "model"
    with pytest.raises(InputError, match="the training collapsed"):
        cli_pipeline.train(str(toy_train_files["root"] / "train.csv"), str(toy_train_files["root"] / "metadata.jsonl"),
                           str(out), base_model_name_or_path=str(base), max_steps=1, learning_rate=1e-12,
                           per_device_train_batch_size=4, use_cpu=True, report_to="none", max_sequence_length=16)
    assert json.loads((out / EMBEDDING_CHECK_NAME).read_text())["status"] == "collapsed"
    assert not (out / "train_args.json").exists()  # never a finished run, so never scored
