"""Encoder: pooling, BitFit, base-model resolution, and saved dirs that AutoModel and
sentence-transformers both reload with the same embeddings."""
from __future__ import annotations

import hashlib
import json
import logging

import numpy as np
import pytest
import torch

from scincl.model import encoder as encoder_module
from scincl.model.data import paper_text
from scincl.model.encoder import (
    DocumentEncoder, apply_bitfit, embedding_length, load_backbone, pool, resolve_base_model, save_encoder,
    saved_max_seq_length, saved_pooling_strategy,
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


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _st_and_reference_vectors(model_dir, texts, pooling, max_length):
    """SentenceTransformer(model_dir)'s vectors, and AutoModel's with our pooling at ``max_length`` tokens."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    reloaded, reloaded_tok = AutoModel.from_pretrained(model_dir).eval(), AutoTokenizer.from_pretrained(model_dir)
    batch = reloaded_tok(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.inference_mode():
        hidden = reloaded(**batch).last_hidden_state
    expected = pool(hidden, batch["attention_mask"], pooling).numpy()
    model = SentenceTransformer(str(model_dir), device="cpu")
    return model, model.encode(texts, convert_to_numpy=True), expected


# a sentence longer than 12 tokens (the saved length below), so truncation at the saved length shows
TEXTS = ["graph node edge[SEP]citation network link graph node edge citation network link graph node edge",
         "protein folding"]


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_saved_encoder_reloads_with_automodel_and_sentence_transformers(toy_bert, tmp_path, pooling):
    model, tokenizer = load_backbone(str(toy_bert))
    encoder = DocumentEncoder(model, pooling)
    out = save_encoder(encoder, tokenizer, tmp_path / "saved", max_seq_length=12)
    # written by sentence-transformers itself: its module list, its pooling config, its model config
    modules = json.loads((out / "modules.json").read_text())
    assert [(m["path"], m["type"].rsplit(".", 1)[-1]) for m in modules] == [("", "Transformer"),
                                                                          ("1_Pooling", "Pooling")]
    assert json.loads((out / "1_Pooling" / "config.json").read_text())["pooling_mode"] == pooling
    assert json.loads((out / "config_sentence_transformers.json").read_text())["model_type"] == "SentenceTransformer"
    assert not (out / "README.md").exists()  # no sentence-transformers card: train writes its own
    assert saved_pooling_strategy(str(out)) == pooling
    assert saved_max_seq_length(str(out)) == embedding_length(str(out)) == 12
    # the weights are the bytes save_pretrained writes for the same model
    model.save_pretrained(tmp_path / "plain")
    assert _sha256(out / "model.safetensors") == _sha256(tmp_path / "plain" / "model.safetensors")

    st_model, st_vectors, expected = _st_and_reference_vectors(out, TEXTS, pooling, max_length=12)
    assert st_model.max_seq_length == 12
    np.testing.assert_allclose(st_vectors, expected, atol=1e-5)


def test_saved_encoder_of_a_masked_lm_keeps_its_weights_without_a_pooler(toy_bert, tmp_path):
    """A masked-LM backbone's encoder (``--mlm_weight``) has no pooler; sentence-transformers' save must not add one."""
    from safetensors import safe_open

    backbone, tokenizer = load_backbone(str(toy_bert), with_mlm_head=True)
    encoder = DocumentEncoder(backbone, "cls")
    out = save_encoder(encoder, tokenizer, tmp_path / "saved", max_seq_length=16)
    encoder.encoder_model.save_pretrained(tmp_path / "plain")
    with safe_open(str(out / "model.safetensors"), framework="pt") as fh:
        keys = set(fh.keys())
    assert keys and not any("pooler" in key for key in keys)
    assert _sha256(out / "model.safetensors") == _sha256(tmp_path / "plain" / "model.safetensors")


# What train wrote before the folder was saved through sentence-transformers (save_pretrained + these files by
# hand); finished runs made then must keep loading.
def _write_legacy_folder(encoder, tokenizer, out, max_seq_length):
    model = encoder.encoder_model
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    pooling = encoder.pooling_strategy
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}],
        "1_Pooling/config.json": {
            "word_embedding_dimension": model.config.hidden_size, "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False},
        "sentence_bert_config.json": {"max_seq_length": max_seq_length, "do_lower_case": False},
    }
    for name, content in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(content, indent=2) + "\n")
    return out


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_a_model_folder_written_the_old_way_still_loads_everywhere(toy_bert, tmp_path, pooling):
    from scincl.io import read_embeddings_jsonl, write_jsonl
    from scincl.model.embed import embed
    from scincl.model.encoder import check_encoder
    from scincl.model.folder_check import check_model_files

    backbone, tokenizer = load_backbone(str(toy_bert))
    encoder = DocumentEncoder(backbone, pooling)
    legacy = _write_legacy_folder(encoder, tokenizer, tmp_path / "legacy", max_seq_length=12)
    current = save_encoder(encoder, tokenizer, tmp_path / "current", max_seq_length=12)
    assert json.loads((legacy / "tokenizer_config.json").read_text())["model_max_length"] != 12  # the base's

    check_model_files(str(legacy), "--model_dir")  # the folder checks (issue 41) pass
    check_encoder(str(legacy), "--model_dir")
    assert saved_pooling_strategy(str(legacy)) == pooling
    assert saved_max_seq_length(str(legacy)) == embedding_length(str(legacy)) == 12
    st_model, st_vectors, expected = _st_and_reference_vectors(legacy, TEXTS, pooling, max_length=12)
    assert st_model.max_seq_length == 12
    np.testing.assert_allclose(st_vectors, expected, atol=1e-5)

    papers = [{"paper_id": "p1", "title": "graph node edge", "abstract": " ".join(["citation network link"] * 6)},
              {"paper_id": "p2", "title": "protein folding", "abstract": None}]
    write_jsonl(tmp_path / "papers.jsonl", papers)
    vectors = {name: read_embeddings_jsonl(embed(str(folder), str(tmp_path / "papers.jsonl"),
                                                 str(tmp_path / f"{name}.jsonl"), device="cpu"))
               for name, folder in (("legacy", legacy), ("current", current))}
    for paper_id in ("p1", "p2"):  # the same pooling and length from either folder: the same vectors
        np.testing.assert_allclose(vectors["legacy"][paper_id], vectors["current"][paper_id], atol=1e-6)
    st_current = _st_encode(current, [p["title"] + tokenizer.sep_token + (p["abstract"] or "")
                                                      for p in papers])
    np.testing.assert_allclose(np.stack([vectors["legacy"]["p1"], vectors["legacy"]["p2"]]), st_current, atol=1e-5)


def _st_encode(model_dir, texts):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_dir), device="cpu").encode(texts, convert_to_numpy=True)


def test_saved_pooling_of_packaged_minilm_is_mean_and_plain_dirs_default_to_cls(toy_bert):
    assert saved_pooling_strategy(encoder_module.packaged_minilm_path()) == "mean"
    assert saved_pooling_strategy(str(toy_bert)) == "cls"


def test_loading_a_missing_model_is_one_input_error(tmp_path):
    from scincl.errors import InputError

    with pytest.raises(InputError, match="cannot load model"):
        load_backbone(str(tmp_path / "nope"))
