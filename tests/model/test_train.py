"""`train`: a tiny BERT learns a toy triplet task, resume, BitFit, every loss, the real MiniLM
through the CLI (reloaded by AutoModel and sentence-transformers), and torchrun data parallelism."""
from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import sys

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from scincl.errors import InputError
from scincl.io import write_embeddings_h5, write_id_list, write_jsonl, write_triples_csv
from scincl.model.embed import encode_texts
from scincl.model.encoder import DocumentEncoder, load_backbone, packaged_minilm_path
from scincl.model.data import load_graph_teacher, load_tokenized_papers
from scincl.model.losses import InfoNCELoss
from scincl.model.objective import ContrastiveModel
from scincl.model.tiny import toy_topic_corpus, toy_triplets
from scincl.model.train import train
from tests.conftest import metadata_rows, run_command, run_front_end

# fp32 on every machine: the default --bf16 auto would train these tiny-BERT tests in bf16 only on CPUs
# with native bf16 (at lr 5e-3 the toy task then learns too little in 40 steps), i.e. differently per CPU
FAST = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_sequence_length": 24,
        "logging_steps": 1, "warmup_ratio": 0.0, "disable_tqdm": True, "bf16": "false"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def toy(tmp_path_factory, toy_bert):
    root = tmp_path_factory.mktemp("train")
    papers = toy_topic_corpus(papers_per_topic=8, seed=0)
    held_out = [dict(p, paper_id="heldout-" + p["paper_id"]) for p in toy_topic_corpus(papers_per_topic=5, seed=1)]
    write_jsonl(root / "metadata.jsonl", metadata_rows(papers + held_out))
    write_triples_csv(root / "train.csv", toy_triplets(papers, per_query=5))
    write_triples_csv(root / "eval.csv", toy_triplets(held_out, per_query=2, seed=1))
    bert = toy_bert
    return {"root": root, "papers": papers, "held_out": held_out, "bert": bert, "cache": str(root / "cache")}


def _triplet_accuracy(model_dir, papers, triplets):
    backbone, tokenizer = load_backbone(str(model_dir))
    text = {p["paper_id"]: p["title"] + tokenizer.sep_token + p["abstract"] for p in papers}
    ids = list(text)
    vectors = dict(zip(ids, encode_texts(DocumentEncoder(backbone, "cls"), tokenizer, [text[i] for i in ids],
                                         max_sequence_length=24, show_progress=False)))
    hits = [np.linalg.norm(vectors[q] - vectors[p]) < np.linalg.norm(vectors[q] - vectors[n]) for q, p, n in triplets]
    return float(np.mean(hits))


def test_tiny_bert_learns_a_toy_triplet_task(toy):
    out = train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(toy["root"] / "learn"),
                base_model_name_or_path=str(toy["bert"]), eval_triples_path=str(toy["root"] / "eval.csv"),
                cache_dir=toy["cache"], learning_rate=5e-3, max_steps=40, **FAST)
    state = json.loads((out / "trainer_state.json").read_text())
    losses = [e["loss"] for e in state["log_history"] if "loss" in e]
    assert len(losses) == 40 and np.mean(losses[-8:]) < 0.5 * np.mean(losses[:8])
    assert any("eval_loss" in e for e in state["log_history"])
    held_out_triplets = toy_triplets(toy["held_out"], per_query=2, seed=2)
    before = _triplet_accuracy(toy["bert"], toy["held_out"], held_out_triplets)
    after = _triplet_accuracy(out, toy["held_out"], held_out_triplets)
    assert after > before and after >= 0.85, (before, after)
    run = json.loads((out / "train_args.json").read_text())
    assert run["counts"]["train_rows"] == 8 * 4 * 5 and run["counts"]["papers_missing_from_metadata"] == 0
    assert run["training_arguments"]["learning_rate"] == 5e-3 and run["metrics"]["global_step"] == 40
    # a finished run of the same inputs and settings is reused (no training without --override); one
    # made with other settings is refused (issue 16: it was reused for any settings)
    args = dict(base_model_name_or_path=str(toy["bert"]), eval_triples_path=str(toy["root"] / "eval.csv"),
                cache_dir=toy["cache"], learning_rate=5e-3, max_steps=40, **FAST)
    assert train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(out), **args) == out
    with pytest.raises(InputError, match="holds a run made differently"):
        train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(out))


def test_resume_from_checkpoint_continues_the_step_count(toy, monkeypatch):
    args = dict(base_model_name_or_path=str(toy["bert"]), cache_dir=toy["cache"], max_steps=6, save_steps=3,
                learning_rate=1e-3, **FAST)
    first = train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(toy["root"] / "resume"),
                  **args)
    final_weights = load_file(first / "model.safetensors")
    calls = []
    original_forward = ContrastiveModel.forward
    monkeypatch.setattr(ContrastiveModel, "forward",
                        lambda self, *a, **k: calls.append(1) or original_forward(self, *a, **k))
    (first / "checkpoint-6" / "trainer_state.json").unlink()  # as if a SIGKILL hit while saving step 6
    again = train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(first),
                  resume_from_checkpoint=True, **args)  # = the newest *complete* checkpoint: checkpoint-3
    assert len(calls) == 3  # steps 4, 5, 6 only
    state = json.loads((again / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    assert [e["step"] for e in state["log_history"] if "loss" in e] == [1, 2, 3, 4, 5, 6]
    resumed = load_file(again / "model.safetensors")
    for name, tensor in final_weights.items():  # same data order and optimiser state: same model
        torch.testing.assert_close(resumed[name], tensor, rtol=1e-5, atol=1e-6)


def test_bitfit_run_saves_changed_biases_and_untouched_weights(toy):
    out = train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(toy["root"] / "bitfit"),
                base_model_name_or_path=str(toy["bert"]), bitfit=True, cache_dir=toy["cache"], max_steps=2, **FAST)
    base, tuned = load_file(toy["bert"] / "model.safetensors"), load_file(out / "model.safetensors")
    changed = {n for n in base if not torch.equal(base[n], tuned[n])}
    assert changed and all(n.endswith(".bias") for n in changed)
    assert json.loads((out / "train_args.json").read_text())["training_arguments"]["learning_rate"] == 1e-4


@pytest.mark.parametrize("loss, extra", [
    ("infonce", {"mlm_weight": 0.5}),
    ("cosent", {"pooling_strategy": "mean"}),
    ("angle", {}),
    ("mpt-src-tgt", {"graph_distillation_weight": 1.0}),
])
def test_every_loss_and_auxiliary_objective_trains(toy, loss, extra):
    root = toy["root"]
    rows = root / "train.csv"
    if loss.startswith("mpt"):  # groups jsonl, as written by the multi-positive miner
        rows = root / "groups.jsonl"
        write_jsonl(rows, [{"query": q, "positives": [p, p2], "negatives": [n]} for (q, p, n), (_, p2, _) in
                           zip(toy_triplets(toy["papers"], 1, seed=3), toy_triplets(toy["papers"], 1, seed=4))])
        ids = [p["paper_id"] for p in toy["papers"]]
        topics = sorted({p["topic"] for p in toy["papers"]})
        topic_vectors = {topic: np.eye(4, dtype=np.float32)[i] for i, topic in enumerate(topics)}
        write_id_list(root / "entity_names_paper_id_0.json", ids)
        write_embeddings_h5(root / "embeddings_paper_id_0.v10.h5",
                            np.stack([topic_vectors[p["topic"]] for p in toy["papers"]]))
        extra = dict(extra, graph_embeddings_path=str(root / "embeddings_paper_id_0.v10.h5"))
    out = train(str(rows), str(root / "metadata.jsonl"), str(root / f"loss-{loss}"), loss=loss,
                base_model_name_or_path=str(toy["bert"]), cache_dir=toy["cache"], max_steps=2, **extra, **FAST)
    logs = [e for e in json.loads((out / "trainer_state.json").read_text())["log_history"] if "loss" in e]
    assert len(logs) == 2 and all(np.isfinite(e["loss"]) and e["contrastive_loss"] > 0 for e in logs)
    if "mlm_weight" in extra:
        assert all(e["mlm_loss"] > 0 for e in logs)
    if "graph_distillation_weight" in extra:
        assert all(e["graph_distillation_loss"] > 0 for e in logs)
    for e in logs:  # one forward per logged step: L = L_contrastive + w_mlm·L_MLM + w_graph·L_graph (4-digit logs)
        total = (e["contrastive_loss"] + extra.get("mlm_weight", 0) * e.get("mlm_loss", 0)
                 + extra.get("graph_distillation_weight", 0) * e.get("graph_distillation_loss", 0))
        assert e["loss"] == pytest.approx(total, abs=2e-4), e
    pooling = json.loads((out / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode"] == extra.get("pooling_strategy", "cls")  # sentence-transformers' Pooling config


def test_objective_total_is_the_weighted_sum_of_its_terms(toy):
    backbone, tokenizer = load_backbone(str(toy["bert"]), with_mlm_head=True)
    model = ContrastiveModel(DocumentEncoder(backbone, "cls"), InfoNCELoss(), mlm_weight=0.3,
                             graph_distillation_weight=2.0)
    texts = [p["title"] + " " + p["abstract"] for p in toy["papers"][:3]]
    batch = tokenizer(texts, padding=True, truncation=True, max_length=24, return_tensors="pt")
    labels = batch["input_ids"].clone()
    labels[:, 2:] = -100  # predict the first two tokens of each paper
    masked = batch["input_ids"].clone()
    masked[:, :2] = tokenizer.mask_token_id
    index = torch.tensor([0])
    out = model(batch["input_ids"], batch["attention_mask"], index, index + 1, index + 2,
                mlm_input_ids=masked, mlm_labels=labels,
                graph_embeddings=torch.eye(3, 4), graph_mask=torch.ones(3, dtype=torch.bool))
    assert min(out["contrastive_loss"], out["mlm_loss"], out["graph_distillation_loss"]) > 0
    expected = out["contrastive_loss"] + 0.3 * out["mlm_loss"] + 2.0 * out["graph_distillation_loss"]
    torch.testing.assert_close(out["loss"].detach(), expected)


def test_graph_teacher_rows_follow_the_paper_ids(toy, tmp_path):
    _, tokenizer = load_backbone(str(toy["bert"]))
    wanted = [p["paper_id"] for p in toy["papers"][:6]]
    papers = load_tokenized_papers(toy["root"] / "metadata.jsonl", tokenizer, 24, paper_ids=wanted,
                                   cache_dir=toy["cache"])
    names = list(reversed(wanted[1:])) + ["not-a-paper"]  # PBG's order differs; wanted[0] has no vector
    matrix = np.arange(len(names) * 3, dtype=np.float32).reshape(len(names), 3)
    write_id_list(tmp_path / "entity_names_paper_id_0.json", names)
    write_embeddings_h5(tmp_path / "embeddings_paper_id_0.v10.h5", matrix)
    vectors, has = load_graph_teacher(tmp_path / "embeddings_paper_id_0.v10.h5", papers)
    assert vectors.shape == (6, 3) and int(has.sum()) == 5 and not has[papers.row_of[wanted[0]]]
    for paper_id in wanted[1:]:
        np.testing.assert_array_equal(vectors[papers.row_of[paper_id]], matrix[names.index(paper_id)])
    np.testing.assert_array_equal(vectors[papers.row_of[wanted[0]]], np.zeros(3))
    write_id_list(tmp_path / "short.json", names[:2])
    with pytest.raises(InputError, match="2 entity names but 6 embeddings"):
        load_graph_teacher(tmp_path / "embeddings_paper_id_0.v10.h5", papers, tmp_path / "short.json")


def test_bad_arguments_are_one_line_errors(toy):
    with pytest.raises(InputError, match="unknown training argument"):
        train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(toy["root"] / "x"),
              base_model_name_or_path=str(toy["bert"]), no_such_flag=1)
    with pytest.raises(InputError, match="unknown --loss 'hinge'"):
        train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"), str(toy["root"] / "x"), loss="hinge")


def test_minilm_trains_through_the_cli_and_reloads_identically(toy, tmp_path):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    papers = toy["papers"][::4]  # 8 hand-made papers, 2 per topic
    write_jsonl(tmp_path / "metadata.jsonl", metadata_rows(papers))
    write_triples_csv(tmp_path / "triples.csv", toy_triplets(papers, per_query=1))
    out = tmp_path / "minilm"
    proc = run_front_end("cli_pipeline.py", "train", tmp_path / "triples.csv", tmp_path / "metadata.jsonl", out,
                         "--base_model_name_or_path", packaged_minilm_path(), "--max_steps", "2",
                         "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "1",
                         "--max_sequence_length", "32", "--cache_dir", tmp_path / "cache", "--loss", "infonce",
                         "--learning_rate", "1e-4", "--warmup_ratio", "0", "--eval_max_sequence_length", "48",
                         timeout=240, check=True, env={"OMP_NUM_THREADS": "1"})
    assert proc.stdout.strip().endswith(str(out))
    assert "training rows: 8 triplets" in proc.stderr
    tuned = load_file(out / "model.safetensors")
    base = load_file(os.path.join(packaged_minilm_path(), "model.safetensors"))
    assert any(not tuned[name].equal(base[name]) for name in base if name in tuned)

    # the original SciNCL README snippet: [CLS] of title [SEP] abstract, at the length the model was saved with
    # (--eval_max_sequence_length: the one its scores are measured at, issue 42); texts longer than it
    tokenizer, model = AutoTokenizer.from_pretrained(out), AutoModel.from_pretrained(out).eval()
    long_papers = [{**p, "abstract": " ".join([p["abstract"]] * 8)} for p in papers]
    texts = [p["title"] + tokenizer.sep_token + p["abstract"] for p in long_papers]
    assert min(len(tokenizer(t)["input_ids"]) for t in texts) > 48
    with torch.inference_mode():
        inputs = tokenizer(texts, padding=True, truncation=True, max_length=48, return_tensors="pt")
        cls = model(**inputs).last_hidden_state[:, 0, :].numpy()
    st = SentenceTransformer(str(out), device="cpu")
    assert st.max_seq_length == 48
    np.testing.assert_allclose(st.encode(texts, convert_to_numpy=True), cls, atol=1e-5)
    # `embed` without a length embeds at the saved one too: the same vectors
    from scincl.io import read_embeddings_jsonl
    from scincl.model.embed import embed

    write_jsonl(tmp_path / "long.jsonl", metadata_rows(long_papers))
    embed(str(out), str(tmp_path / "long.jsonl"), str(tmp_path / "long_emb.jsonl"), device="cpu")
    vectors = read_embeddings_jsonl(tmp_path / "long_emb.jsonl")
    np.testing.assert_allclose(np.stack([vectors[p["paper_id"]] for p in long_papers]), cls, atol=1e-5)
    assert json.loads((tmp_path / "long_emb.jsonl.made_by.json").read_text())["settings"]["max_sequence_length"] == 48


def _flat(weights):
    return torch.cat([weights[name].flatten() for name in sorted(weights)])


def test_torchrun_data_parallel_training_equals_one_process_with_the_global_batch(toy, repo_root, tmp_path):
    # no dropout and plain SGD: the runs differ only in how each global batch's gradient is computed
    # (Adam would blow float noise in near-zero gradients up to full-size steps)
    base = tmp_path / "bert_no_dropout"
    shutil.copytree(toy["bert"], base)
    config = json.loads((base / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (base / "config.json").write_text(json.dumps(config))
    budget = dict(max_steps=3, gradient_accumulation_steps=1, max_sequence_length=24, save_steps=3, optim="sgd",
                  learning_rate=0.5, warmup_ratio=0.0, bf16="false")  # 1e-5 equality is a float32 property
    env = {"OMP_NUM_THREADS": "1"}  # the ranks' environment, for the references too

    def train_cmd(output: Path, batch_size: int) -> list:
        return [str(repo_root / "cli_pipeline.py"), "train", str(toy["root"] / "train.csv"),
                str(toy["root"] / "metadata.jsonl"), str(output), "--base_model_name_or_path", str(base),
                "--per_device_train_batch_size", str(batch_size), "--cache_dir", str(tmp_path / "cache"),
                *[f"--{k}={v}" for k, v in budget.items()]]

    out = tmp_path / "ddp"
    # --standalone: a local rendezvous on a free port (no fixed --master_port to collide with)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *train_cmd(out, 4)]
    proc = run_command(cmd, timeout=240, env=env, check=True)
    assert proc.stderr.count("saved encoder to") == 1  # rank 0 saves
    run = json.loads((out / "train_args.json").read_text())
    assert run["world_size"] == 2 and run["metrics"]["global_step"] == 3
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["train_batch_size"] == 4 and state["global_step"] == 3
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-3"]
    from transformers import AutoModel

    assert AutoModel.from_pretrained(out).config.hidden_size == 32
    # 2 ranks x 4 triplets = one process x 8: the same shuffled triplets, gradients averaged over the ranks.
    # The single-process references run in this process with the ranks' thread count (the module's
    # one_torch_thread) and the same flags. This check once found ACCELERATE_MIXED_PRECISION=bf16 leaking from
    # an earlier in-process bf16 run into fp32 runs (max diff 4.7e-4 in the full suite); train now pins the
    # precision to its own flags, and a leak would fail here again.
    single = {}
    for size in (8, 4):
        single[size] = train(str(toy["root"] / "train.csv"), str(toy["root"] / "metadata.jsonl"),
                             str(tmp_path / f"single{size}"), base_model_name_or_path=str(base),
                             per_device_train_batch_size=size, cache_dir=str(tmp_path / "cache"), **budget)
    ddp, start = _flat(load_file(out / "model.safetensors")), _flat(load_file(base / "model.safetensors"))
    eight, four = (_flat(load_file(single[size] / "model.safetensors")) for size in (8, 4))
    moved = float(torch.linalg.norm(ddp - start))
    assert moved > 0.01
    assert float((ddp - eight).abs().max()) < 1e-5 and float(torch.linalg.norm(ddp - eight)) < 1e-3 * moved
    # each rank saw its own half of the global batch: one rank's 4 triplets per step end elsewhere
    assert float(torch.linalg.norm(ddp - four)) > 0.1 * moved


def test_a_training_flag_of_the_wrong_type_is_refused_before_the_triplets_are_read(tmp_path):
    """``train --fp16 maybe`` was refused only after the leakage guard had read the triplets (and written its report
    into OUTPUT_DIR); the training flags are now checked first: the missing triplets file is never opened."""
    write_id_list(tmp_path / "eval_ids.json", ["p1"])
    with pytest.raises(InputError, match=r"^--fp16: expected true or false, got 'maybe'$"):
        train(str(tmp_path / "missing.csv"), str(tmp_path / "missing.jsonl"), str(tmp_path / "out"), fp16="maybe",
              excluded_paper_ids=str(tmp_path / "eval_ids.json"))
    assert not (tmp_path / "out").exists()
