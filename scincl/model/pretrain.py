"""``cli_pipeline.py pretrain``: a BERT pre-trained from random initialisation by masked-language modelling.

SciBERT's recipe (a BERT trained on scientific text with its own vocabulary) at a size the machine
can afford: the titles and abstracts of one or more corpora (:mod:`scincl.model.pretrain_data`),
an uncased WordPiece vocabulary learned from them, ``BertForMaskedLM`` from a size preset,
``DataCollatorForLanguageModeling`` (15 % of the tokens, optionally whole words) and the
transformers ``Trainer`` (bf16 where native, checkpoints, resume, tqdm, W&B when asked).

The output dir is a Hugging Face model dir (``AutoModel``/``AutoTokenizer`` load it; ``train
--base_model_name_or_path``, ``run_specter`` and ``reproduce --base_model`` accept it) with:
``run_fingerprint.json`` (the made-by record: corpora and excluded ids fingerprinted, every setting;
checkpoints and a finished run are reused only when it matches), ``pretrain_log.jsonl`` (loss,
held-out loss, tokens and wall seconds at each log step, across restarts), ``mlm_loss.png`` (the
curve, redrawn at each checkpoint) and ``pretrain_args.json`` (written last: the run is finished).
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from scincl.errors import InputError
from scincl.io import write_json
from scincl.model.checkpoints import LOGGING_ONLY_ARGS, last_complete_checkpoint
from scincl.provenance import difference, made_by, read_record, write_record
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

# BERT sizes (layers, hidden size): the BERT miniatures of Turc et al. 2019 ("Well-Read Students Learn
# Better", google-research/bert README) for tiny/mini/small; base = BERT-base = SciBERT (12 x 768).
# Heads = hidden / 64 and feed-forward = 4 x hidden, as in BERT.
SIZE_PRESETS: Dict[str, Dict[str, int]] = {
    "tiny": {"num_hidden_layers": 2, "hidden_size": 128},
    "mini": {"num_hidden_layers": 4, "hidden_size": 256},
    "small": {"num_hidden_layers": 4, "hidden_size": 512},
    "base": {"num_hidden_layers": 12, "hidden_size": 768},
}
DEFAULT_SIZE = "mini"  # the size this 2-core CPU can pre-train in hours (docs/results.md, issue 26)
DEFAULT_VOCAB_SIZE = 31090  # SciBERT's SciVocab (Beltagy et al. 2019 §2.1: "31K")
VOCAB_SIZE_RANGE = (100, 200_000)
DEFAULT_MAX_SEQUENCE_LENGTH = 128  # BERT/SciBERT phase 1 trains on 128-token inputs (Devlin et al. 2019 §A.2)
DEFAULT_MLM_PROBABILITY = 0.15  # BERT §3.1
DEFAULT_VAL_RATIO = 0.01  # papers held out for the MLM loss (ours: ~300 of hep-th + CiteSeer)
MAX_POSITIONS = 512  # BERT's position embeddings: windows up to 512 tokens later fine-tune unchanged

# BERT §A.2: Adam (β1 0.9, β2 0.999), weight decay 0.01, linear warm-up then linear decay; the
# learning rate is ours for small models and batches (BERT-base: 1e-4 at batch 256).
PRETRAIN_TRAINING_DEFAULTS: Dict[str, Any] = {
    "learning_rate": 5e-4,
    "per_device_train_batch_size": 32,
    "gradient_accumulation_steps": 1,
    "num_train_epochs": 1,
    "weight_decay": 0.01,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "optim": "adamw_torch",
    "lr_scheduler_type": "linear",
    "warmup_ratio": 0.05,
    "seed": 0,
    "logging_steps": 50,
    "save_steps": 250,
    "save_total_limit": 2,
    "eval_strategy": "steps",
    "eval_steps": 500,
    "prediction_loss_only": True,  # the held-out loss is the only evaluation (no logits are kept)
    "report_to": "none",  # W&B only when asked (--report_to wandb), as for `train`
    "bf16": "auto",  # bf16 autocast where native (scincl.model.device.choose_bf16), fp32 elsewhere
}
RUN_FINGERPRINT_FILE = "run_fingerprint.json"
RUN_ARGUMENTS_FILE = "pretrain_args.json"  # written last: its presence marks a finished run
LOG_FILE = "pretrain_log.jsonl"
CURVE_FILE = "mlm_loss.png"


def masked_lm(config: Any) -> Any:
    """A ``BertForMaskedLM`` whose training loss runs the prediction head on the masked positions only.

    The head (transform + the tied ``vocab x hidden`` decoder) costs ``2·V·H`` FLOPs a token, more than
    a mini BERT's whole encoder at V = 16k; 85 % of those logits are thrown away by the loss (labels
    -100). Same weights, same loss value, same saved model (``architectures`` stays ``BertForMaskedLM``);
    without labels it is the plain ``BertForMaskedLM`` forward.
    """
    import torch.nn.functional as F
    import transformers
    from transformers.modeling_outputs import MaskedLMOutput

    # the same class name: save_pretrained writes it to config.json as the architecture
    class BertForMaskedLM(transformers.BertForMaskedLM):
        def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None):
            if labels is None:
                return super().forward(input_ids=input_ids, attention_mask=attention_mask,
                                       token_type_ids=token_type_ids)
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            masked = labels != -100
            logits = self.cls(hidden[masked])
            return MaskedLMOutput(loss=F.cross_entropy(logits.float(), labels[masked]))

    return BertForMaskedLM(config)


def bert_config(size: str, vocab_size: int, max_positions: int = MAX_POSITIONS) -> Any:
    """The ``BertConfig`` of a size preset over a vocabulary of ``vocab_size`` tokens."""
    from transformers import BertConfig

    if size not in SIZE_PRESETS:
        raise InputError(f"unknown --size {size!r}; choose one of {', '.join(SIZE_PRESETS)}")
    preset = SIZE_PRESETS[size]
    hidden = preset["hidden_size"]
    return BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=preset["num_hidden_layers"],
                      num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden,
                      max_position_embeddings=max_positions, pad_token_id=0)


def _check_settings(corpus_dirs: Sequence[str], vocab_size: int, size: str, max_sequence_length: int,
                    mlm_probability: float, val_ratio: float) -> None:
    if not corpus_dirs:
        raise InputError("give at least one --corpus_dir")
    if size not in SIZE_PRESETS:
        raise InputError(f"unknown --size {size!r}; choose one of {', '.join(SIZE_PRESETS)}")
    if not VOCAB_SIZE_RANGE[0] <= vocab_size <= VOCAB_SIZE_RANGE[1]:
        raise InputError(f"--vocab_size must be in {VOCAB_SIZE_RANGE[0]}..{VOCAB_SIZE_RANGE[1]}, got {vocab_size}")
    if not 8 <= max_sequence_length <= MAX_POSITIONS:
        raise InputError(f"--max_sequence_length must be in 8..{MAX_POSITIONS}, got {max_sequence_length}")
    if not 0 < mlm_probability < 1:
        raise InputError(f"--mlm_probability must be in (0, 1), got {mlm_probability}")
    if not 0 <= val_ratio < 0.5:
        raise InputError(f"--val_ratio must be in [0, 0.5), got {val_ratio}")


def _as_list(value: Any) -> List[str]:
    """A flag that names one folder, a comma-separated list or a list (``--corpus_dir`` repeated) -> list."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


@writes("output_dir")
def pretrain(corpus_dir: Union[None, str, Sequence[str]] = None, output_dir: Optional[str] = None,
             corpus_format: Union[None, str, Sequence[Optional[str]]] = None,
             excluded_paper_ids: Optional[str] = None, vocab_size: int = DEFAULT_VOCAB_SIZE,
             size: str = DEFAULT_SIZE, max_sequence_length: int = DEFAULT_MAX_SEQUENCE_LENGTH,
             mlm_probability: float = DEFAULT_MLM_PROBABILITY, whole_word_masking: bool = False,
             val_ratio: float = DEFAULT_VAL_RATIO, workers: Optional[int] = None, override: bool = False,
             **training_args: Any) -> Path:
    """Pre-train a BERT from random initialisation by masked-language modelling on corpora's titles + abstracts; prints OUTPUT_DIR.

    SciBERT's recipe at a size this machine affords (see the module docstring): the text is `title [SEP]
    abstract` of every paper cut into windows of --max_sequence_length tokens; an uncased WordPiece vocabulary
    of --vocab_size is learned from it; BertForMaskedLM from a --size preset (tiny 2x128, mini 4x256, small
    4x512: the BERT miniatures; base 12x768 = SciBERT, for a GPU); --mlm_probability of the tokens are masked
    (whole words with --whole_word_masking); a --val_ratio share of the papers is held out for an MLM loss
    every --eval_steps. Every transformers.TrainingArguments flag passes through (defaults:
    PRETRAIN_TRAINING_DEFAULTS; --max_steps N stops earlier).

    OUTPUT_DIR loads with AutoModel/AutoTokenizer and is a --base_model_name_or_path of `train`, `run_specter`
    and `reproduce`. A finished run of the same corpora, excluded ids and settings (run_fingerprint.json) is
    reused; an interrupted one resumes from its newest complete checkpoint; a run made differently is refused
    unless --override. pretrain_log.jsonl and mlm_loss.png: loss, held-out loss, tokens, wall seconds and
    tokens/s; pretrain_args.json (written last): cost and counts.

    Example: python cli_pipeline.py pretrain --corpus_dir ../shared/data/hepth/s2orc/metadata
        --corpus_dir ../shared/data/citeseer/s2orc/metadata --corpus_format s2orc
        --excluded_paper_ids ../shared/data/hepth/scidocs_paper_ids.json --output_dir runs/pretrain
        --size mini --vocab_size 16000 --max_steps 3000

    Args:
        corpus_dir: a corpus folder, or several (a list, comma-separated, or the flag repeated).
        output_dir: the model dir (checkpoints in OUTPUT_DIR/checkpoint-N).
        corpus_format: s2orc | s2ag | openalex | plain (default: detected); one for all corpora or one each.
        excluded_paper_ids: JSON list of paper ids whose text is kept out (e.g. SciDocs query papers).
        vocab_size: WordPiece vocabulary size (31090: SciBERT's SciVocab).
        size: tiny | mini | small | base.
        max_sequence_length: tokens per window (128: BERT's and SciBERT's first phase).
        mlm_probability: share of tokens masked (0.15, BERT).
        whole_word_masking: mask all pieces of a word together.
        val_ratio: share of papers held out for the MLM loss (0: none).
        workers: processes reading the corpora (default: all CPUs).
        override: start over even if OUTPUT_DIR holds this run (or another).
    """
    if not output_dir:
        raise InputError("give --output_dir")
    import torch
    from transformers import Trainer, set_seed

    from scincl.model.train import _resolve_resume, _versions, build_training_arguments
    from scincl.corpus.outputs import worker_count
    from scincl.corpus.shards import load_id_set

    corpus_dirs, workers = _as_list(corpus_dir), worker_count(workers)
    formats = [f or None for f in _as_list(corpus_format)] or [None] * len(corpus_dirs)
    if len(formats) == 1 and len(corpus_dirs) > 1:
        formats = formats * len(corpus_dirs)
    if len(formats) != len(corpus_dirs):
        raise InputError(f"{len(formats)} --corpus_format for {len(corpus_dirs)} --corpus_dir: give one, or one each")
    _check_settings(corpus_dirs, vocab_size, size, max_sequence_length, mlm_probability, val_ratio)
    for corpus_dir in corpus_dirs:
        if not Path(corpus_dir).is_dir():
            raise InputError("corpus folder not found", path=corpus_dir)
    out = Path(output_dir)
    resume_request = training_args.pop("resume_from_checkpoint", None)
    args = build_training_arguments(str(out), training_args, has_eval=False, defaults=PRETRAIN_TRAINING_DEFAULTS,
                                    label_names=["labels"])
    if val_ratio == 0:
        args.eval_strategy = "no"
    settings = {
        "corpora": [{"corpus_dir_name": Path(d).name, "corpus_format": f} for d, f in zip(corpus_dirs, formats)],
        "vocab_size": vocab_size, "size": size, "config": SIZE_PRESETS[size],
        "max_sequence_length": max_sequence_length, "mlm_probability": mlm_probability,
        "whole_word_masking": whole_word_masking, "val_ratio": val_ratio,
        # the defaults too: a changed default must not resume or reuse a run made with the old one
        "training": {k: v for k, v in {**PRETRAIN_TRAINING_DEFAULTS, **training_args}.items()
                     if k not in LOGGING_ONLY_ARGS},
        "text": "title [SEP] abstract, windows of max_sequence_length",
    }
    record = made_by(settings, [*corpus_dirs, excluded_paper_ids])
    finished = (out / RUN_ARGUMENTS_FILE).exists()
    has_checkpoint = last_complete_checkpoint(out, remove_incomplete=False) is not None
    why = difference(read_record(out / RUN_FINGERPRINT_FILE), record) if (finished or has_checkpoint) else None
    if why is not None and not override:
        raise InputError(f"holds a pre-training run made differently ({why}); pass --override to start over, "
                         "or use another output dir", path=out)
    if override or why is not None:
        logger.info("%s: %s; starting over", out, why or "--override given")
        _discard(out)
    elif finished:
        logger.info("%s holds a finished pre-training run of the same corpora and settings; reusing it "
                    "(pass --override to pre-train again)", out)
        return out
    if resume_request is None and has_checkpoint:
        resume_request = "auto"
        logger.info("resuming from the last checkpoint in %s (same corpora and settings)", out)
    resume = _resolve_resume(resume_request, out, args)
    set_seed(args.seed)

    from scincl.model.pretrain_data import (
        count_tokens, learn_wordpiece, read_corpus_texts, split_papers, token_windows,
    )

    excluded = load_id_set(excluded_paper_ids, "excluded paper ids") or set()
    texts = read_corpus_texts(corpus_dirs, formats, excluded, workers=workers)
    train_idx, val_idx = split_papers(len(texts.texts), val_ratio, args.seed)
    if resume and (out / "vocab.txt").exists():
        from transformers import BertTokenizerFast

        tokenizer = BertTokenizerFast.from_pretrained(out)  # the vocabulary the checkpoints were trained with
    else:
        tokenizer = learn_wordpiece([texts.texts[i] for i in train_idx], vocab_size, out, max_sequence_length)
    train_windows = token_windows(tokenizer, [texts.texts[i] for i in train_idx], max_sequence_length,
                                  with_offsets=whole_word_masking)
    val_windows = token_windows(tokenizer, [texts.texts[i] for i in val_idx], max_sequence_length,
                                with_offsets=whole_word_masking)
    tokens_per_epoch = count_tokens(train_windows)
    logger.info("pretrain data: %d papers (%d held out), %d windows of <= %d tokens, %d tokens an epoch",
                len(texts.texts), len(val_idx), len(train_windows), max_sequence_length, tokens_per_epoch)

    config = bert_config(size, len(tokenizer))
    model = masked_lm(config)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("BertForMaskedLM %s: %d layers x %d hidden, %d parameters, vocabulary %d", size,
                config.num_hidden_layers, config.hidden_size, n_params, len(tokenizer))
    collator = mlm_collator(tokenizer, mlm_probability, whole_word_masking,
                            pad_to_multiple_of=8 if (args.bf16 or args.fp16) else None)
    progress = progress_callback(out / LOG_FILE, out / CURVE_FILE, tokens_per_example=tokens_per_epoch /
                                 max(1, len(train_windows)),
                                 examples_per_step=args.per_device_train_batch_size * args.gradient_accumulation_steps
                                 * max(1, args.world_size))
    from scincl.faults import kill_point_callback

    trainer = Trainer(model=model, args=args, train_dataset=train_windows, eval_dataset=val_windows or None,
                      data_collator=collator, processing_class=tokenizer,
                      callbacks=[progress, kill_point_callback()])
    if args.process_index == 0:
        out.mkdir(parents=True, exist_ok=True)
        write_record(out / RUN_FINGERPRINT_FILE, record)
        tokenizer.save_pretrained(out)
    started = time.time()
    result = trainer.train(resume_from_checkpoint=resume)
    trainer.save_state()
    held_out = trainer.evaluate() if val_windows else {}
    if not trainer.is_world_process_zero():
        return out
    trainer.save_model(str(out))  # BertForMaskedLM + tokenizer: AutoModel / AutoModelForMaskedLM load it
    progress.write_curve()
    history = read_progress(out / LOG_FILE)
    last = history[-1] if history else {}
    run = {
        "command": "pretrain",
        "arguments": {"corpus_dirs": corpus_dirs, "corpus_formats": formats, "excluded_paper_ids": excluded_paper_ids,
                      "output_dir": str(out), "vocab_size": vocab_size, "size": size,
                      "max_sequence_length": max_sequence_length, "mlm_probability": mlm_probability,
                      "whole_word_masking": whole_word_masking, "val_ratio": val_ratio,
                      "resume_from_checkpoint": resume},
        "corpora": texts.counts,
        "counts": {"papers": len(texts.texts), "val_papers": len(val_idx), "train_windows": len(train_windows),
                   "val_windows": len(val_windows), "tokens_per_epoch": tokens_per_epoch, "parameters": n_params,
                   "vocabulary": len(tokenizer)},
        "cost": {"global_step": result.global_step, "tokens": last.get("tokens"),
                 "wall_seconds": last.get("wall_seconds"), "tokens_per_second": last.get("tokens_per_second"),
                 "this_session_seconds": round(time.time() - started, 1)},
        "metrics": {"training_loss": result.training_loss, "last_logged_loss": _last(history, "loss"),
                    "held_out_loss": held_out.get("eval_loss"), **result.metrics},
        "precision": "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32",
        "torch_threads": torch.get_num_threads(),
        "training_arguments": {k: v for k, v in args.to_dict().items() if not k.startswith("_")},
        "versions": _versions(),
    }
    write_json(out / RUN_ARGUMENTS_FILE, run)
    print(f"pretrain: {result.global_step} steps, {run['cost']['tokens']} tokens in {run['cost']['wall_seconds']} s "
          f"({run['cost']['tokens_per_second']} tokens/s), last MLM loss {run['metrics']['last_logged_loss']}, "
          f"held-out MLM loss {held_out.get('eval_loss')}; curve {out / CURVE_FILE}")
    return out


def mlm_collator(tokenizer: Any, mlm_probability: float, whole_word_masking: bool,
                 pad_to_multiple_of: Optional[int] = None) -> Any:
    """``DataCollatorForLanguageModeling`` masking ``mlm_probability`` of the tokens (BERT's 80/10/10 split).

    With ``whole_word_masking`` every piece of a chosen word is masked, always with ``[MASK]`` (transformers'
    whole-word rule; asked for explicitly, because its own fallback to it raises in transformers 4.57), and
    the windows' ``offset_mapping`` (which ``tokenizer.pad`` cannot pad) is padded here.
    """
    from transformers import DataCollatorForLanguageModeling

    if not whole_word_masking:
        return DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=mlm_probability,
                                               pad_to_multiple_of=pad_to_multiple_of)

    class WholeWordCollator(DataCollatorForLanguageModeling):
        def torch_call(self, examples):
            import torch

            offsets = [e["offset_mapping"] for e in examples]
            rest = [{k: v for k, v in e.items() if k != "offset_mapping"} for e in examples]
            batch = self.tokenizer.pad(rest, return_tensors="pt", pad_to_multiple_of=self.pad_to_multiple_of)
            length = batch["input_ids"].shape[1]
            padded = torch.tensor([o + [[0, 0]] * (length - len(o)) for o in offsets], dtype=torch.long)
            special = batch.pop("special_tokens_mask")
            batch["input_ids"], batch["labels"] = self.torch_mask_tokens(
                batch["input_ids"], special_tokens_mask=special, offset_mapping=padded)
            return batch

    return WholeWordCollator(tokenizer, mlm=True, mlm_probability=mlm_probability, whole_word_mask=True,
                             mask_replace_prob=1.0, random_replace_prob=0.0, pad_to_multiple_of=pad_to_multiple_of)


def _last(history: List[Dict[str, Any]], key: str) -> Optional[float]:
    values = [h[key] for h in history if h.get(key) is not None]
    return values[-1] if values else None


def _discard(out: Path) -> None:
    """Remove another run's checkpoints, records and log before starting over in ``out``."""
    import shutil

    for checkpoint in out.glob("checkpoint-*"):
        if checkpoint.is_dir():
            shutil.rmtree(checkpoint)
    for name in (RUN_ARGUMENTS_FILE, RUN_FINGERPRINT_FILE, LOG_FILE, CURVE_FILE):
        if (out / name).exists():
            (out / name).unlink()


def read_progress(path: Path) -> List[Dict[str, Any]]:
    """The rows of ``pretrain_log.jsonl`` (one per log step, restarts included), latest value of each step."""
    if not path.exists():
        return []
    rows: Dict[int, Dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows.setdefault(int(row["step"]), {}).update(row)
    return [rows[s] for s in sorted(rows)]


def plot_curve(history: List[Dict[str, Any]], path: Path) -> Optional[Path]:
    """MLM training loss (and held-out loss) against tokens seen, as a PNG; ``None`` without points."""
    train = [(h["tokens"], h["loss"]) for h in history if h.get("loss") is not None]
    held = [(h["tokens"], h["eval_loss"]) for h in history if h.get("eval_loss") is not None]
    if not train and not held:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    if train:
        ax.plot([t / 1e6 for t, _ in train], [v for _, v in train], label="training MLM loss")
    if held:
        ax.plot([t / 1e6 for t, _ in held], [v for _, v in held], "o-", label="held-out MLM loss")
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("MLM loss (cross-entropy, nats)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def progress_callback(log_path: Path, curve_path: Path, tokens_per_example: float, examples_per_step: int) -> Any:
    """A ``TrainerCallback`` writing ``pretrain_log.jsonl`` and the curve (defined here, so that importing this
    module loads no transformers)."""
    from transformers import TrainerCallback

    class ProgressCallback(TrainerCallback):
        """Appends loss, held-out loss, tokens seen and wall seconds (summed over restarts) to ``pretrain_log.jsonl``.

        Tokens are steps x examples per step x the mean tokens of a window (windows are sampled
        uniformly, so this is the expected count); tokens/s is over this session's steps. The curve PNG
        is redrawn at every checkpoint.
        """

        def __init__(self, log_path: Path, curve_path: Path, tokens_per_example: float, examples_per_step: int) -> None:
            self.log_path, self.curve_path = log_path, curve_path
            self.tokens_per_step = tokens_per_example * examples_per_step
            self.session_start = time.time()
            self.start_step: Optional[int] = None
            self.previous_wall = 0.0

        def on_train_begin(self, args, state, control, **kwargs):  # noqa: D401 - TrainerCallback hook
            self.start_step = state.global_step
            history = [h for h in read_progress(self.log_path) if h["step"] <= state.global_step]
            self.previous_wall = history[-1]["wall_seconds"] if history else 0.0
            self.session_start = time.time()

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: D401 - TrainerCallback hook
            if not state.is_world_process_zero or not logs:
                return
            session = time.time() - self.session_start
            steps = state.global_step - (self.start_step or 0)
            row = {"step": state.global_step, "tokens": round(state.global_step * self.tokens_per_step),
                   "wall_seconds": round(self.previous_wall + session, 1),
                   "tokens_per_second": round(steps * self.tokens_per_step / session, 1) if session > 0 else None}
            for key in ("loss", "eval_loss", "learning_rate"):
                if key in logs:
                    row[key] = logs[key]
            with open(self.log_path, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            if "loss" in logs:
                logger.info("step %d: MLM loss %.4f, %d tokens, %s tokens/s", row["step"], logs["loss"], row["tokens"],
                            row["tokens_per_second"])

        def on_save(self, args, state, control, **kwargs):  # noqa: D401 - TrainerCallback hook
            if state.is_world_process_zero:
                self.write_curve()

        def write_curve(self) -> Optional[Path]:
            """Redraw the loss curve PNG from the log."""
            return plot_curve(read_progress(self.log_path), self.curve_path)

    return ProgressCallback(log_path, curve_path, tokens_per_example, examples_per_step)
