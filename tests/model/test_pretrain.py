"""`pretrain`: a tiny BERT pre-trained by MLM on the demo corpus (loss falls, reloads, fine-tunes, reused,
refused/rebuilt when its corpus changes), its text windows, vocabulary and masked-positions loss."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch

from scincl.errors import InputError
from scincl.model.pretrain import (
    LOG_FILE, RUN_ARGUMENTS_FILE, RUN_FINGERPRINT_FILE, bert_config, masked_lm, mlm_collator, pretrain, read_progress,
)
from scincl.model.pretrain_data import split_papers, token_windows
from tests.conftest import run_command

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# fp32 everywhere (bf16 auto would train differently per CPU); a tiny model, short windows, 40 steps
TINY = {"size": "tiny", "vocab_size": 400, "max_sequence_length": 32, "val_ratio": 0.05, "max_steps": 40,
        "per_device_train_batch_size": 16, "learning_rate": 2e-3, "warmup_ratio": 0.0, "logging_steps": 5,
        "save_steps": 20, "eval_steps": 20, "disable_tqdm": True, "bf16": "false"}


@pytest.fixture(scope="module")
def pretrained(demo_corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("pretrain") / "bert"
    pretrain([str(demo_corpus.s2orc_metadata_dir)], str(out), excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path),
             **TINY)
    return out


def test_mlm_loss_falls_and_the_run_records_its_cost(pretrained):
    history = read_progress(pretrained / LOG_FILE)
    losses = [h["loss"] for h in history if "loss" in h]
    assert len(losses) == 8  # every 5 of 40 steps
    run = json.loads((pretrained / RUN_ARGUMENTS_FILE).read_text())
    uniform = math.log(run["counts"]["vocabulary"])  # the loss of a model that knows nothing: ln V
    assert losses[-1] < losses[0] - 0.2 and losses[-1] < uniform - 0.3, (losses, uniform)
    held_out = [h["eval_loss"] for h in history if "eval_loss" in h]
    assert len(held_out) == 2 and held_out[1] < held_out[0] < uniform - 0.2, held_out
    assert run["cost"]["global_step"] == 40 and run["cost"]["tokens"] > 0 and run["cost"]["tokens_per_second"] > 0
    assert run["counts"]["val_papers"] == round(run["counts"]["papers"] * 0.05)
    assert run["corpora"][0]["excluded"] > 0  # the held-out SciDocs papers' text never reached the model
    assert (pretrained / "mlm_loss.png").stat().st_size > 1000


def test_output_dir_reloads_and_train_fine_tunes_from_it(pretrained, toy_train_files, tmp_path):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    from scincl.model.train import train

    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    assert tokenizer("Graph [SEP] nodes").input_ids[0] == tokenizer.cls_token_id
    assert len(tokenizer) == AutoModel.from_pretrained(pretrained).config.vocab_size
    mlm = AutoModelForMaskedLM.from_pretrained(pretrained)
    assert mlm.config.architectures == ["BertForMaskedLM"] and mlm.config.num_hidden_layers == 2
    out = train(str(toy_train_files["root"] / "train.csv"), str(toy_train_files["root"] / "metadata.jsonl"),
                str(tmp_path / "tuned"), base_model_name_or_path=str(pretrained), max_steps=2,
                per_device_train_batch_size=4, max_sequence_length=24, disable_tqdm=True, bf16="false")
    tuned = AutoModel.from_pretrained(out)
    base = AutoModel.from_pretrained(pretrained)
    assert not torch.equal(tuned.embeddings.word_embeddings.weight, base.embeddings.word_embeddings.weight)


def test_rerun_reuses_and_a_changed_corpus_is_refused_then_rebuilt(pretrained, demo_corpus, tmp_path, caplog):
    finished = (pretrained / RUN_ARGUMENTS_FILE).stat().st_mtime_ns
    corpus = [str(demo_corpus.s2orc_metadata_dir)]
    with caplog.at_level("INFO"):
        pretrain(corpus, str(pretrained), excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path), **TINY)
    assert "reusing it" in caplog.text and (pretrained / RUN_ARGUMENTS_FILE).stat().st_mtime_ns == finished

    changed = tmp_path / "metadata"
    shutil.copytree(demo_corpus.s2orc_metadata_dir, changed)
    next(iter(sorted(changed.glob("*.jsonl.gz")))).unlink()  # one shard fewer
    copy = tmp_path / "bert"
    shutil.copytree(pretrained, copy)
    short = {**TINY, "max_steps": 4, "save_steps": 4, "eval_steps": 4}
    with pytest.raises(InputError, match="input metadata differs"):
        pretrain([str(changed)], str(copy), excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path), **TINY)
    pretrain([str(changed)], str(copy), excluded_paper_ids=str(demo_corpus.scidocs_paper_ids_path), override=True,
             **short)
    run = json.loads((copy / RUN_ARGUMENTS_FILE).read_text())
    assert run["cost"]["global_step"] == 4 and run["corpora"][0]["papers"] < 600
    record = json.loads((copy / RUN_FINGERPRINT_FILE).read_text())
    assert [i["name"] for i in record["inputs"]] == ["metadata", "scidocs_paper_ids.json"]


def test_windows_cover_every_token_and_the_split_is_by_paper():
    texts = ["alpha beta gamma [SEP] " + " ".join(f"w{i}" for i in range(40)), "short [SEP] one"]
    train, val = split_papers(100, 0.1, seed=0)
    assert len(val) == 10 and not set(train) & set(val) and sorted(train + val) == list(range(100))
    assert split_papers(100, 0.1, seed=0) == (train, val) and split_papers(5, 0.0, seed=0)[1] == []
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "alpha", "beta", "gamma", "short", "one", "w", "##1"]
    tokenizer = BertTokenizerFast.from_pretrained(_vocab_dir(vocab))
    windows = token_windows(tokenizer, texts, 16)
    whole = tokenizer(texts[0]).input_ids[1:-1]
    first = [w["input_ids"] for w in windows[:-1]]
    assert all(len(w) <= 16 and w[0] == 2 and w[-1] == 3 for w in first)
    assert [t for w in first for t in w[1:-1]] == whole  # consecutive windows, nothing dropped
    assert windows[-1]["input_ids"] == [2, 8, 3, 9, 3]  # [CLS] short [SEP] one [SEP]


def _vocab_dir(vocab):
    import tempfile

    root = Path(tempfile.mkdtemp())
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    return root


def test_masked_positions_loss_equals_the_full_head_loss():
    import transformers

    torch.manual_seed(0)
    model = masked_lm(bert_config("tiny", 60, max_positions=32)).eval()
    ids = torch.randint(5, 60, (3, 12))
    labels = torch.full_like(ids, -100)
    labels[:, [2, 7]] = ids[:, [2, 7]]
    ours = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels).loss
    full = transformers.BertForMaskedLM.forward(model, input_ids=ids, attention_mask=torch.ones_like(ids),
                                                labels=labels).loss
    assert torch.allclose(ours, full, atol=1e-6)


def test_whole_word_masking_masks_every_piece_of_a_chosen_word():
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "super", "##con", "##duct", "##ivity", "a", "b"]
    tokenizer = BertTokenizerFast.from_pretrained(_vocab_dir(vocab))
    windows = token_windows(tokenizer, ["superconductivity a b " * 5] * 8, 64, with_offsets=True)
    collator = mlm_collator(tokenizer, 0.3, whole_word_masking=True)
    torch.manual_seed(0)
    batch = collator(windows)
    pieces = batch["labels"] != -100
    ids = torch.tensor([w["input_ids"] for w in windows])
    for row in range(len(windows)):
        starts = (ids[row] == 5).nonzero().ravel().tolist()
        for s in starts:  # super ##con ##duct ##ivity: all masked or none
            assert len(set(pieces[row, s:s + 4].tolist())) == 1
    assert pieces.any() and (batch["input_ids"][pieces] == tokenizer.mask_token_id).all()


def test_corpus_dir_flag_repeats_and_settings_are_range_checked(tmp_path, capsys):
    from scincl.cli import format_command_help, read_argv
    from scincl.commands.pipeline import COMMANDS

    shown = format_command_help("cli_pipeline.py", "pretrain", COMMANDS["pretrain"], every=True)  # `--help_all`
    assert "--vocab_size" in shown and "--corpus_dir" in shown
    assert any(line.startswith("  --learning_rate float  default: 0.0005") and line.endswith("[scincl/model/pretrain.py:PRETRAIN_TRAINING_DEFAULTS]")
               for line in shown.splitlines())

    assert "triplets per device" not in format_command_help("cli_pipeline.py", "pretrain", COMMANDS["pretrain"])
    argv = ["--corpus_dir", "a b", "--size", "tiny", "--corpus_dir=c", "--corpus_format", "s2orc"]
    assert read_argv(COMMANDS["pretrain"], argv)[0] == [
        "--size", "tiny", "--corpus_dir=['a b', 'c']", "--corpus_format=s2orc"]
    assert read_argv(COMMANDS["train"], ["--x", "1", "--x", "2"])[0] == \
        ["--x", "1", "--x", "2"]  # only commands that declare repeatable flags
    with pytest.raises(InputError, match="--vocab_size must be in 100..200000"):
        pretrain([str(tmp_path)], str(tmp_path / "out"), vocab_size=50)
    with pytest.raises(InputError, match="unknown --size 'huge'"):
        pretrain([str(tmp_path)], str(tmp_path / "out"), size="huge")
    with pytest.raises(InputError, match="2 --corpus_format for 3 --corpus_dir"):
        pretrain([str(tmp_path)] * 3, str(tmp_path / "out"), corpus_format=["s2orc", "plain"])


def test_a_killed_run_resumes_from_its_last_checkpoint(demo_corpus, tmp_path, python_exe):
    out = tmp_path / "bert"
    command = [python_exe, "cli_pipeline.py", "pretrain", "--corpus_dir", str(demo_corpus.s2orc_metadata_dir),
               "--output_dir", str(out), "--size", "tiny", "--vocab_size", "300", "--max_sequence_length", "32",
               "--val_ratio", "0", "--max_steps", "12", "--save_steps", "6", "--logging_steps", "3",
               "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--bf16", "false", "--workers", "1"]
    killed = run_command(command, env={"OMP_NUM_THREADS": "1"}, kill_at="train:step:9", timeout=300)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert (out / "checkpoint-6" / "trainer_state.json").exists() and not (out / RUN_ARGUMENTS_FILE).exists()
    resumed = run_command(command, env={"OMP_NUM_THREADS": "1"}, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming from the last checkpoint" in resumed.stderr
    run = json.loads((out / RUN_ARGUMENTS_FILE).read_text())
    assert run["cost"]["global_step"] == 12 and run["arguments"]["resume_from_checkpoint"].endswith("checkpoint-6")
    steps = [h["step"] for h in read_progress(out / LOG_FILE)]
    assert steps == [3, 6, 9, 12]  # step 9 logged by both attempts, kept once (the resumed one)
