"""`cli_pipeline.py train` under torchrun x 2 (gloo DDP on CPU) with the flags that broke on GPU
clusters (issue 19), in one run to keep the suite fast: --bitfit (the frozen pooler bias was
re-enabled: DDP failed at step 2), --gradient_checkpointing (AttributeError), and a requeued job
(--resume_from_checkpoint auto) finding an interrupted checkpoint that only rank 0 removes."""
from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import free_port, run_command


def torchrun_train(toy, out, *flags):
    root = toy["root"]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port()),
           "cli_pipeline.py", "train", str(root / "train.csv"), str(root / "metadata.jsonl"), str(out),
           "--base_model_name_or_path", str(toy["bert"]), "--max_steps", "3", "--per_device_train_batch_size", "4",
           "--gradient_accumulation_steps", "1", "--max_sequence_length", "24", "--save_steps", "3",
           "--cache_dir", str(out.parent / "cache"), "--disable_tqdm", "true", *flags]
    return run_command(cmd, timeout=300, env={"OMP_NUM_THREADS": "1"})


def test_torchrun_bitfit_gradient_checkpointing_resumes_after_an_interrupted_checkpoint(toy_train_files, tmp_path):
    out = tmp_path / "ddp_model"
    (out / "checkpoint-2").mkdir(parents=True)  # what a SIGKILL leaves: no trainer_state.json
    (out / "checkpoint-2" / "model.safetensors").write_bytes(b"half")
    proc = torchrun_train(toy_train_files, out, "--bitfit", "--gradient_checkpointing",
                          "--resume_from_checkpoint", "auto")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("removing the interrupted checkpoint") == 1  # rank 0 only
    assert "no checkpoint in" in proc.stderr  # auto: nothing complete to resume from -> step 0
    assert "BitFit: training" in proc.stderr
    run = json.loads((out / "train_args.json").read_text())
    assert run["world_size"] == 2 and run["metrics"]["global_step"] == 3  # DDP failed at step 2 with --bitfit
    assert run["arguments"]["bitfit"] is True and run["training_arguments"]["gradient_checkpointing"] is True
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-3"]
