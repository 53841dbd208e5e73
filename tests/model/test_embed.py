"""`embed`: metadata jsonl or SciDocs json -> SciDocs embeddings jsonl, in input order, with the
pooling saved in the model dir; CLI errors are one line."""
from __future__ import annotations

import os

import numpy as np
import orjson
import pytest
import torch

from scincl.errors import InputError
from scincl.io import read_embeddings_jsonl, write_json, write_jsonl
from scincl.model.embed import embed
from scincl.model.encoder import DocumentEncoder, load_backbone, pool, save_encoder
from scincl.model.tiny import toy_topic_corpus
from tests.conftest import metadata_rows, run_front_end


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, toy_bert):
    root = tmp_path_factory.mktemp("embed")
    papers = toy_topic_corpus(papers_per_topic=3, seed=5)
    papers[1]["abstract"] = None  # a paper without abstract is embedded from "title[SEP]" (original input)
    records = metadata_rows(papers)
    write_jsonl(root / "metadata.jsonl.gz", records)
    bert = toy_bert
    backbone, tokenizer = load_backbone(str(bert))
    mean_dir = save_encoder(DocumentEncoder(backbone, "mean"), tokenizer, root / "mean-model", max_seq_length=64)
    return {"root": root, "records": records, "bert": bert, "mean_dir": mean_dir}


def _reference(model_dir, records, pooling):
    backbone, tokenizer = load_backbone(str(model_dir))
    backbone.eval()
    out = []
    for r in records:  # one paper at a time: no padding at all
        text = r["title"] + tokenizer.sep_token + (r["abstract"] or "")
        batch = tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            hidden = backbone(**batch).last_hidden_state
        out.append(pool(hidden, batch["attention_mask"], pooling)[0].numpy())
    return np.stack(out)


@pytest.mark.parametrize("model_key, pooling", [("bert", "cls"), ("mean_dir", "mean")])
def test_embed_writes_scidocs_jsonl_in_input_order_with_saved_pooling(corpus, tmp_path, model_key, pooling):
    out = embed(str(corpus[model_key]), str(corpus["root"] / "metadata.jsonl.gz"), str(tmp_path / "emb.jsonl"),
                batch_size=4, device="cpu")
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [line["paper_id"] for line in lines] == [r["paper_id"] for r in corpus["records"]]
    assert set(lines[0]) == {"paper_id", "embedding"} and len(lines[0]["embedding"]) == 32
    vectors = np.array([line["embedding"] for line in lines], dtype=np.float32)
    np.testing.assert_allclose(vectors, _reference(corpus[model_key], corpus["records"], pooling), atol=1e-5)


def test_embed_reads_scidocs_metadata_json_and_reuses_existing_output(corpus, tmp_path):
    scidocs = {r["paper_id"]: {"paper_id": r["paper_id"], "title": r["title"], "abstract": r["abstract"]}
               for r in corpus["records"][:4]}
    write_json(tmp_path / "paper_metadata_view_cite_read.json", scidocs)
    out = embed(str(corpus["bert"]), str(tmp_path / "paper_metadata_view_cite_read.json"),
                str(tmp_path / "emb.jsonl.gz"), device="cpu")
    embeddings = read_embeddings_jsonl(out)
    assert sorted(embeddings) == sorted(scidocs)
    stamp = os.stat(out).st_mtime_ns
    embed(str(corpus["bert"]), str(tmp_path / "paper_metadata_view_cite_read.json"), str(out), device="cpu")
    assert os.stat(out).st_mtime_ns == stamp
    cls = read_embeddings_jsonl(out)
    with pytest.raises(InputError, match="exists but was made differently: setting pooling_strategy differs "
                                         r"\(made with null, now \"mean\"\); pass --override"):
        embed(str(corpus["bert"]), str(tmp_path / "paper_metadata_view_cite_read.json"), str(out),
              pooling_strategy="mean", device="cpu")
    assert os.stat(out).st_mtime_ns == stamp  # refused, not rewritten
    mean = read_embeddings_jsonl(embed(str(corpus["bert"]), str(tmp_path / "paper_metadata_view_cite_read.json"),
                                       str(out), pooling_strategy="mean", override=True, device="cpu"))
    assert not np.allclose(cls[next(iter(cls))], mean[next(iter(mean))])
    other_papers = dict(list(scidocs.items())[:3])  # other papers into the same output: refused
    write_json(tmp_path / "paper_metadata_view_cite_read.json", other_papers)
    with pytest.raises(InputError, match="input paper_metadata_view_cite_read.json differs from the one it was made from"):
        embed(str(corpus["bert"]), str(tmp_path / "paper_metadata_view_cite_read.json"), str(out),
              pooling_strategy="mean", device="cpu")


def test_embed_cli_reports_a_missing_metadata_file_in_one_line(corpus, tmp_path):
    proc = run_front_end("cli_pipeline.py", "embed", corpus["bert"], tmp_path / "missing.jsonl", tmp_path / "out.jsonl",
                         timeout=120, env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 2
    last_line = proc.stderr.strip().splitlines()[-1]
    assert last_line == f"cli_pipeline.py: error: {tmp_path / 'missing.jsonl'}: file not found"
    assert not (tmp_path / "out.jsonl").exists()
