"""Issue 29, class 5: Ctrl-C, SIGTERM and a full disk end with one line and rc != 0, leave no
temporary files or partial outputs, and a rerun resumes; a damaged newest checkpoint falls back
to the previous complete one."""
from __future__ import annotations

import json
import re
import resource
import signal
import socket
import zipfile
from pathlib import Path

import pytest
import torch

from scincl.model.checkpoints import damaged_file, last_complete_checkpoint
from tests.conftest import run_front_end

FAST_TRAIN = ["--max_steps", "4", "--save_steps", "2", "--per_device_train_batch_size", "8", "--bf16", "false",
              "--disable_tqdm", "true", "--max_sequence_length", "24", "--report_to", "none"]


def file_size_limit(limit: int):
    """A ``preexec_fn`` for a full disk, as the process sees it: writes past ``limit`` bytes fail with EFBIG."""
    def limit_writes():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if re.match(r"cli_\w+\.py: ", line)]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def s2orc_corpus(tmp_path_factory):
    from scincl.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("signals"), papers=300, seed=0).s2orc_metadata_dir


@pytest.mark.parametrize("signal_name, code, said", [("TERM", 143, "terminated (SIGTERM)"),
                                                     ("INT", 130, "interrupted (Ctrl-C)")])
def test_a_signal_ends_get_papers_with_one_line_and_no_parts_folder(s2orc_corpus, tmp_path, signal_name, code, said):
    argv = ["cli_s2orc.py", "get_papers", str(s2orc_corpus), str(tmp_path / "papers.jsonl"), "--workers", "2"]
    done = run_front_end(*argv, kill_at=f"papers:parts_written={signal_name}")
    assert done.returncode == code and said in _one_error_line(done.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no parts, no output, no lock file
    assert run_front_end(*argv).returncode == 0  # the rerun runs
    assert len((tmp_path / "papers.jsonl").read_text().splitlines()) == 300


def test_a_rerun_removes_the_parts_folder_of_a_killed_run(s2orc_corpus, tmp_path):
    dead = run_front_end("-c", "import os; print(os.getpid())")
    stale = tmp_path / f".papers.parts.{socket.gethostname()}-{int(dead.stdout)}.x1"
    stale.mkdir()
    (stale / "000000.part").write_text("half")
    argv = ["cli_s2orc.py", "get_papers", str(s2orc_corpus), str(tmp_path / "papers.jsonl"), "--workers", "1"]
    done = run_front_end(*argv)
    assert done.returncode == 0 and "left by an interrupted run" in done.stderr
    assert not stale.exists()


def test_disk_full_during_training_is_one_line_and_the_rerun_finishes(toy_train_files, tmp_path):
    root = toy_train_files["root"]
    argv = ["cli_pipeline.py", "train", str(root / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "model"),
            "--base_model_name_or_path", str(toy_train_files["bert"]), "--cache_dir", str(tmp_path / "cache"),
            *FAST_TRAIN]
    model_bytes = (toy_train_files["bert"] / "model.safetensors").stat().st_size
    # the weights fit, optimizer.pt (2x) does not
    done = run_front_end(*argv, preexec_fn=file_size_limit(int(model_bytes * 1.5)))
    assert done.returncode == 2
    assert "a write failed (disk full?)" in _one_error_line(done.stderr)
    assert not list((tmp_path / "model").glob("checkpoint-*"))  # the half-written checkpoint was removed
    from scincl.model.train import train  # the rerun (in-process: same flags, no second interpreter start)

    train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "model"),
          base_model_name_or_path=str(toy_train_files["bert"]), cache_dir=str(tmp_path / "cache"), max_steps=4,
          save_steps=2, per_device_train_batch_size=8, bf16="false", disable_tqdm=True, max_sequence_length=24,
          report_to="none")
    assert json.loads((tmp_path / "model" / "train_args.json").read_text())["metrics"]["global_step"] == 4


def test_disk_full_in_the_biggraph_import_is_one_line_without_partial_buckets(demo_citations, tmp_path):
    argv = ["cli_graph.py", "train_biggraph", "demo", "--train_edges", str(demo_citations["train"]),
            "--test_edges", str(demo_citations["test"]), "--output_dir", str(tmp_path / "graph")]
    done = run_front_end(*argv, preexec_fn=file_size_limit(50_000))
    assert done.returncode == 2 and "File too large" in _one_error_line(done.stderr)
    assert not list(tmp_path.rglob("*.h5"))  # no bucket, partial or renamed


def _checkpoint(path: Path, step: int) -> Path:
    path.mkdir(parents=True)
    torch.save({"state": torch.arange(2000.0)}, path / "optimizer.pt")
    (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return path


def test_a_truncated_optimizer_falls_back_to_the_previous_checkpoint(tmp_path):
    older = _checkpoint(tmp_path / "checkpoint-2", 2)
    newest = _checkpoint(tmp_path / "checkpoint-4", 4)
    assert last_complete_checkpoint(tmp_path, remove_incomplete=False) == newest
    data = (newest / "optimizer.pt").read_bytes()
    (newest / "optimizer.pt").write_bytes(data[: len(data) // 2])
    assert "optimizer.pt cannot be read" in damaged_file(newest)
    assert last_complete_checkpoint(tmp_path, remove_incomplete=False) == older and newest.exists()
    assert last_complete_checkpoint(tmp_path, remove_incomplete=True) == older and not newest.exists()
    (older / "trainer_state.json").write_text('{"global_step": ')
    assert last_complete_checkpoint(tmp_path) is None


def test_deleted_weights_are_repaired_and_a_damaged_checkpoint_is_skipped(toy_train_files, tmp_path):
    """One training serves both recoveries: a finished run whose weights and tokenizer were deleted
    is not reused but finished again from its last checkpoint (issue 29: it was reused without
    model.safetensors), and a run whose newest checkpoint has a truncated optimizer.pt resumes from
    the one before. Both give the uninterrupted run's weights."""
    from safetensors.torch import load_file

    from scincl.model.train import train

    root = toy_train_files["root"]
    args = dict(base_model_name_or_path=str(toy_train_files["bert"]), max_steps=4, save_steps=2,
                per_device_train_batch_size=8, max_sequence_length=24, disable_tqdm=True, bf16="false",
                learning_rate=1e-3, cache_dir=str(tmp_path / "cache"))
    out = train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "model"), **args)
    uninterrupted = load_file(out / "model.safetensors")
    (out / "model.safetensors").unlink()
    (out / "tokenizer.json").unlink()
    train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **args)  # from checkpoint-4: no step
    assert (out / "tokenizer.json").exists()
    for name, tensor in uninterrupted.items():
        torch.testing.assert_close(load_file(out / "model.safetensors")[name], tensor)
    (out / "train_args.json").unlink()  # as if the run had died after saving checkpoint-4 ...
    optimizer = out / "checkpoint-4" / "optimizer.pt"
    optimizer.write_bytes(optimizer.read_bytes()[:100])  # ... with its optimizer state cut short
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(optimizer)
    train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **args)
    resumed = load_file(out / "model.safetensors")
    for name, tensor in uninterrupted.items():  # steps 3-4 again from checkpoint-2: the same weights
        torch.testing.assert_close(resumed[name], tensor, rtol=1e-5, atol=1e-6)
