"""Issue 44: the model card (``README.md``) ``train`` writes into its model folder and the evaluation's scores in it."""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from scincl.io import iter_triples_csv, read_embeddings_jsonl, write_json, write_jsonl
from scincl.model.card import (PACKAGED_MINILM_HUB_ID, base_model_id, command_line, update_model_card)
from scincl.provenance import fingerprint

FAST = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_sequence_length": 24,
        "logging_steps": 1, "warmup_ratio": 0.0, "disable_tqdm": True, "bf16": "false", "max_steps": 1}
SAMPLER = {"command": "get_knn_triples", "seed": 7, "triples_per_query": 3, "made_by": {"settings": {}}}


@pytest.fixture(scope="module")
def trained(toy_train_files, tmp_path_factory):
    """A one-step training of the toy BERT, its triplets with a sampler record and a leakage check."""
    from scincl.model.train import train

    root = tmp_path_factory.mktemp("card")
    triplets = list(iter_triples_csv(toy_train_files["root"] / "train.csv"))
    (root / "train.csv").write_text((toy_train_files["root"] / "train.csv").read_text())
    write_json(root / "train.csv.args.json", SAMPLER)  # what a sampler writes beside its triplets
    write_json(root / "evaluation_ids.json", ["not-in-training-1", "not-in-training-2"])
    out = train(str(root / "train.csv"), str(toy_train_files["root"] / "metadata.jsonl"), str(root / "model"),
                base_model_name_or_path=str(toy_train_files["bert"]), cache_dir=str(root / "cache"),
                excluded_paper_ids=str(root / "evaluation_ids.json"), **FAST)
    return {"model": out, "triplets": triplets, "root": root}


def _card(model_dir):
    from huggingface_hub import ModelCard

    return ModelCard.load(model_dir / "README.md")


def test_train_writes_a_model_card_with_metadata_training_data_and_command(trained):
    card = _card(trained["model"])
    assert card.data.library_name == "sentence-transformers"
    assert card.data.pipeline_tag == "sentence-similarity"
    assert {"sentence-transformers", "scincl", "loss-triplet"} <= set(card.data.tags)
    assert card.data.base_model is None  # a local folder of unknown origin is named in the text, not as a hub id
    text = card.text
    assert f"{len(trained['triplets'])} triplets trained on" in text
    assert '"command": "get_knn_triples"' in text and '"seed": 7' in text and "made_by" not in text
    assert '"evaluation_papers": 2' in text and '"in_triplets": 0' in text
    assert "```bash\n" + command_line() + "\n```" in text  # the command that made it (here: this pytest process)
    assert "No scores yet" in text


def test_base_model_ids():
    from scincl.model.encoder import packaged_minilm_path

    assert base_model_id(packaged_minilm_path(), None) == PACKAGED_MINILM_HUB_ID
    assert base_model_id("allenai/scibert_scivocab_uncased", "allenai/scibert_scivocab_uncased") == \
        "allenai/scibert_scivocab_uncased"
    assert command_line(["cli_pipeline.py", "train", "a b.csv"]) == "python cli_pipeline.py train 'a b.csv'"


def _snippet_vectors_and_embed_vectors(model_dir, tmp_path, monkeypatch):
    """The card's snippet run as written in the model folder (``model_path = "."``), in this process (the
    snippet imports only torch and transformers: a fresh interpreter would assert the same), and ``embed``'s
    vectors of its papers."""
    from scincl.model.embed import embed

    snippet = re.search(r"```python\n(.*?)```", _card(model_dir).text, re.S).group(1)
    namespace: dict = {}
    with monkeypatch.context() as patch:
        patch.chdir(model_dir)  # model_path = "." : the folder itself
        exec(compile(snippet, str(model_dir / "README.md"), "exec"), namespace)
    vectors = namespace["embeddings"].detach().numpy()
    records = ast.literal_eval(re.search(r"papers = (\[.*?\])\n", snippet, re.S).group(1))  # the snippet's papers
    write_jsonl(tmp_path / "papers.jsonl", [{"paper_id": str(i), **p} for i, p in enumerate(records)])
    embed(str(model_dir), str(tmp_path / "papers.jsonl"), str(tmp_path / "embeddings.jsonl"))
    expected = read_embeddings_jsonl(tmp_path / "embeddings.jsonl")
    return vectors, np.stack([expected[str(i)] for i in range(len(records))])


def test_the_usage_snippet_runs_and_gives_the_vectors_of_embed(trained, tmp_path, monkeypatch):
    vectors, expected = _snippet_vectors_and_embed_vectors(trained["model"], tmp_path, monkeypatch)
    assert vectors.shape == (2, 32)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)


def test_the_usage_snippet_of_a_mean_pooling_model_gives_the_vectors_of_embed(toy_train_files, tmp_path, monkeypatch):
    from scincl.model.train import train

    root = toy_train_files["root"]
    model = train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "mean"),
                  base_model_name_or_path=str(toy_train_files["bert"]), pooling_strategy="mean",
                  cache_dir=str(tmp_path / "cache"), **FAST)
    assert "mean pooling" in _card(model).text
    vectors, expected = _snippet_vectors_and_embed_vectors(model, tmp_path, monkeypatch)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    assert not np.allclose(vectors[:, :], _cls_of(model, tmp_path), atol=1e-3)  # not the [CLS] vectors


def _cls_of(model_dir, tmp_path):
    from scincl.io import read_embeddings_jsonl as read
    from scincl.model.embed import embed

    embed(str(model_dir), str(tmp_path / "papers.jsonl"), str(tmp_path / "cls.jsonl"), pooling_strategy="cls")
    vectors = read(tmp_path / "cls.jsonl")
    return np.stack([vectors["0"], vectors["1"]])


def _other_files(model_dir):
    return {str(p.relative_to(model_dir)): p.read_bytes() for p in model_dir.rglob("*")
            if p.is_file() and p.name != "README.md"}


def test_scores_go_into_the_model_index_and_change_no_other_file(trained, tmp_path):
    model = trained["model"]
    before, files_before = fingerprint(model), _other_files(model)
    scidocs = {"scores": {"test": {"mag": {"f1": 27.11}, "mesh": {"f1": 15.2}, "cite": {"map": 26.9, "ndcg": 53.19},
                                   "co-view": {"map": 31.0}}, "val": {"mag": {"f1": 33.0}}}}
    scirepeval = {"benchmark": "scirepeval", "tasks": {"Biomimicry": {"type": "classification", "config": "biomimicry",
                                                                      "dataset": "allenai/scirepeval_test",
                                                                      "metrics": {"f1": 71.18}}}}
    write_json(tmp_path / "scidocs.json", scidocs)
    write_json(tmp_path / "scirepeval.json", scirepeval)
    assert update_model_card(model, tmp_path / "scidocs.json")
    assert update_model_card(model, tmp_path / "scirepeval.json")
    scidocs["scores"]["test"]["mag"]["f1"] = 30.0
    write_json(tmp_path / "scidocs.json", scidocs)
    assert update_model_card(model, tmp_path / "scidocs.json")  # SciDocs replaced, SciRepEval kept
    card = _card(model)
    index = {(r.dataset_name, r.dataset_split, r.metric_type): r.metric_value for r in card.data.eval_results}
    assert index == {("SciDocs mag", "test", "f1"): 30.0, ("SciDocs mesh", "test", "f1"): 15.2,
                     ("SciDocs cite", "test", "map"): 26.9, ("SciDocs cite", "test", "ndcg"): 53.19,
                     ("SciDocs co-view", "test", "map"): 31.0, ("SciDocs mag", "val", "f1"): 33.0,
                     ("SciRepEval Biomimicry", "test", "f1"): 71.18}
    assert "model-index" in (model / "README.md").read_text() and card.data.model_name == "model"
    assert "| SciDocs | mag | test | f1 | 30.0 |" in card.text
    assert f"SciRepEval scores from `{tmp_path / 'scirepeval.json'}`" in card.text
    assert fingerprint(model) == before and _other_files(model) == files_before


def test_a_base_model_folder_gets_no_card(toy_bert, tmp_path):
    write_json(tmp_path / "results.json", {"scores": {"test": {"mag": {"f1": 1.0}}}})
    assert not update_model_card(toy_bert, tmp_path / "results.json")
    assert not update_model_card("allenai/specter", tmp_path / "results.json")
    assert not (toy_bert / "README.md").exists()


def test_an_unreadable_card_is_left_alone_with_a_warning(tmp_path, caplog):
    (tmp_path / "run_fingerprint.json").write_text("{}")
    (tmp_path / "README.md").write_text("---\nlibrary_name: [unclosed\n---\ntext\n")
    write_json(tmp_path / "results.json", {"scores": {"test": {"mag": {"f1": 1.0}}}})
    assert not update_model_card(tmp_path, tmp_path / "results.json")
    assert "not a readable model card" in caplog.text
    assert (tmp_path / "README.md").read_text().startswith("---\nlibrary_name: [unclosed")
