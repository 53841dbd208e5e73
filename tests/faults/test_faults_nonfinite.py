"""Issue 29, class 1: numbers that are not numbers stop the run with one line instead of being scored.

A diverged training (``--learning_rate 1e12``) stops at the first non-finite loss, gradient or weight
and names the step; its newest checkpoint keeps the last finite weights. ``embed`` and ``evaluate``
refuse non-finite or ``null`` vectors and name the file and row.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from scincl.errors import InputError
from scincl.io import read_embeddings_jsonl, write_jsonl
from scincl.model.finite_checks import TrainingDiverged, first_non_finite
from scincl.model.train import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FAST = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_sequence_length": 24,
        "logging_steps": 1, "warmup_ratio": 0.0, "disable_tqdm": True, "bf16": "false"}


def test_a_diverged_training_stops_at_the_step_and_keeps_the_last_finite_checkpoint(toy_train_files, tmp_path):
    root = toy_train_files["root"]
    out = tmp_path / "diverged"
    with pytest.raises(TrainingDiverged, match=r"training diverged at step (\d+): .*checkpoint-\d+, holds the last "
                                               r"finite weights") as caught:
        train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out),
              base_model_name_or_path=str(toy_train_files["bert"]), learning_rate=1e12, max_steps=6, save_steps=1,
              cache_dir=str(tmp_path / "cache"), **FAST)
    step = int(str(caught.value).split("at step ")[1].split(":")[0])
    assert 1 < step <= 6
    checkpoints = sorted(int(p.name.split("-")[1]) for p in out.glob("checkpoint-*"))
    assert checkpoints == list(range(1, step)), checkpoints  # the failing step wrote no checkpoint
    newest = load_file(out / f"checkpoint-{step - 1}" / "model.safetensors")
    assert all(bool(torch.isfinite(t).all()) for t in newest.values())
    assert not (out / "model.safetensors").exists() and not (out / "train_args.json").exists()


def test_first_non_finite_names_the_parameter_or_its_gradient():
    layer = torch.nn.Linear(2, 2)
    assert first_non_finite(layer.named_parameters()) is None
    layer.weight.grad = torch.tensor([[0.0, math.inf], [0.0, 0.0]])
    assert first_non_finite(layer.named_parameters(), grads=True) == "weight"
    with torch.no_grad():
        layer.bias[1] = math.nan
    assert first_non_finite(layer.named_parameters()) == "bias"


@pytest.mark.parametrize("vector", [[None, 0.5], [0.1, None], [1e39, 0.0], [-1e39, 0.0]])
def test_null_or_overflowing_embeddings_are_refused_with_file_and_line(tmp_path, vector):
    path = tmp_path / "emb.jsonl"
    write_jsonl(path, [{"paper_id": "a", "embedding": [0.1, 0.2]}, {"paper_id": "b", "embedding": vector}])
    with pytest.raises(InputError, match=r"emb.jsonl:2, field 'embedding': embedding holds null, NaN or infinite"):
        read_embeddings_jsonl(path)


def test_evaluate_refuses_a_nan_embeddings_file(tmp_path, demo_corpus):
    from scincl.commands.pipeline import evaluate

    path = tmp_path / "nan.jsonl"
    path.write_text(json.dumps({"paper_id": "p0", "embedding": [0.5, 0.5]}) + "\n"
                    + json.dumps({"paper_id": "p1", "embedding": [None, None]}) + "\n")
    with pytest.raises(InputError, match=r"nan.jsonl:2.*null, NaN or infinite"):
        evaluate(str(demo_corpus.scidocs_dir), str(tmp_path / "eval"), embeddings=str(path))
    assert not (tmp_path / "eval" / "results.json").exists()


def test_embed_refuses_a_model_with_nan_weights(toy_train_files, tmp_path):
    from transformers import AutoModel

    from scincl.model.embed import embed

    model_dir = tmp_path / "nan_bert"
    model = AutoModel.from_pretrained(str(toy_train_files["bert"]))
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.fill_(np.nan)
    model.save_pretrained(str(model_dir))
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        if (toy_train_files["bert"] / name).exists():
            (model_dir / name).write_bytes((toy_train_files["bert"] / name).read_bytes())
    out = tmp_path / "emb.jsonl"
    with pytest.raises(InputError, match=r"NaN or infinite embeddings for 24 of 24 papers, the first paper .*row 0"):
        embed(str(model_dir), str(toy_train_files["root"] / "metadata.jsonl"), str(out), max_sequence_length=24)
    assert not out.exists()
