"""Encoder: pooling, BitFit, base-model resolution, and saved dirs that AutoModel and
sentence-transformers both reload with the same embeddings."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import torch

from scincl.model import encoder as encoder_module
from scincl.model.data import paper_text
from scincl.model.encoder import (
    DocumentEncoder, apply_bitfit, load_backbone, pool, resolve_base_model, save_encoder, saved_pooling_strategy,
)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_paper_text_joins_title_and_abstract_with_sep_token():
    assert paper_text("A title", "An abstract.", "[SEP]") == "A title[SEP]An abstract."
    # always title + sep + abstract, a missing part empty (the original SciNCL README input)
    assert paper_text("A title", None, "[SEP]") == "A title[SEP]"
    assert paper_text(None, "An abstract", "[SEP]") == "[SEP]An abstract"
    assert paper_text(None, "", "[SEP]") == "[SEP]"


def test_cls_and_mean_pooling_respect_the_attention_mask():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool(hidden, mask, "cls").tolist() == [[1.0, 2.0]]
    assert pool(hidden, mask, "mean").tolist() == [[2.0, 3.0]]
    with pytest.raises(ValueError, match="unknown pooling"):
        pool(hidden, mask, "max")


def test_bitfit_trains_bias_terms_only(toy_bert):
    model, tokenizer = load_backbone(str(toy_bert))
    trainable, total = apply_bitfit(model)
    assert 0 < trainable < total / 10
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    encoder = DocumentEncoder(model, "mean")
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    batch = tokenizer(["graph node edge", "protein folding enzyme"], padding=True, return_tensors="pt")
    encoder(batch["input_ids"], batch["attention_mask"]).pow(2).sum().backward()
    optimizer.step()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed, "no parameter changed"
    assert all(n.endswith(".bias") for n in changed)
    assert any("attention" in n for n in changed)


def test_default_base_model_falls_back_to_packaged_minilm(monkeypatch, tmp_path, caplog):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with caplog.at_level(logging.INFO, logger="scincl.model.encoder"):
        resolved = resolve_base_model(None)
    assert resolved == encoder_module.packaged_minilm_path()
    assert "all-MiniLM-L6-v2" in caplog.text and "allenai/scibert_scivocab_uncased is not in the local" in caplog.text


def test_default_base_model_is_scibert_when_cached(monkeypatch, tmp_path, caplog):
    import huggingface_hub.constants

    repo = tmp_path / "hub" / "models--allenai--scibert_scivocab_uncased"
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    (snapshot / "config.json").write_text("{}")
    (snapshot / "pytorch_model.bin").write_bytes(b"")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with caplog.at_level(logging.INFO, logger="scincl.model.encoder"):
        assert resolve_base_model(None) == str(snapshot)
    assert "allenai/scibert_scivocab_uncased (from the local Hugging Face cache)" in caplog.text
    assert resolve_base_model("my/model") == "my/model"


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_saved_encoder_reloads_with_automodel_and_sentence_transformers(toy_bert, tmp_path, pooling):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    model, tokenizer = load_backbone(str(toy_bert))
    encoder = DocumentEncoder(model, pooling)
    out = save_encoder(encoder, tokenizer, tmp_path / "saved", max_seq_length=64)
    assert json.loads((out / "modules.json").read_text())[1]["path"] == "1_Pooling"
    assert saved_pooling_strategy(str(out)) == pooling

    texts = ["graph node edge[SEP]citation network link", "protein folding"]
    reloaded, reloaded_tok = AutoModel.from_pretrained(out).eval(), AutoTokenizer.from_pretrained(out)
    batch = reloaded_tok(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = reloaded(**batch).last_hidden_state
    expected = pool(hidden, batch["attention_mask"], pooling).numpy()
    st_vectors = SentenceTransformer(str(out), device="cpu").encode(texts, convert_to_numpy=True)
    np.testing.assert_allclose(st_vectors, expected, atol=1e-5)


def test_saved_pooling_of_packaged_minilm_is_mean_and_plain_dirs_default_to_cls(toy_bert):
    assert saved_pooling_strategy(encoder_module.packaged_minilm_path()) == "mean"
    assert saved_pooling_strategy(str(toy_bert)) == "cls"


def test_loading_a_missing_model_is_one_input_error(tmp_path):
    from scincl.errors import InputError

    with pytest.raises(InputError, match="cannot load model"):
        load_backbone(str(tmp_path / "nope"))
