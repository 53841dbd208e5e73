"""``cli_pipeline.py train``: fine-tune a BERT-style encoder on citation triplets with the ``Trainer``.

``train()`` wires the parts together: resolve + load the base model, read rows and metadata,
tokenise (cached), build the dedup collator and the loss, hand everything to
:class:`ContrastiveTrainer` with ``TrainingArguments`` (SciNCL defaults, every flag passed through),
then save the encoder (through sentence-transformers: ``save_pretrained`` files + its module files) and
``train_args.json``.
The same call runs under ``torchrun``/``accelerate launch`` for data-parallel training.
"""
from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import platform
import shutil
from pathlib import Path
import typing
from typing import Any, Dict, List, Mapping, Optional, Sequence

from scincl.errors import InputError
from scincl.io import file_fingerprint, write_json
from scincl.leakage import guard_training
from scincl.model import data as model_data
from scincl.model.checkpoints import LOGGING_ONLY_ARGS, last_complete_checkpoint
from scincl.provenance import (RUN_RECORD_NAME, difference, made_by, outputs_changed, outputs_record, read_record,
                               write_record)
from scincl.settings.schema import SCINCL
from scincl.settings.values import check_value, simple_type
from scincl.model.device import check_gpu_usable, default_device, resolve_bf16
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

RUN_ARGUMENTS_FILE = "train_args.json"  # written last: its presence marks a finished run
RUN_FINGERPRINT_FILE = RUN_RECORD_NAME  # inputs + settings of the run, written before step 1

# SPECTER (Cohan et al. 2020) / SciNCL (paper §4.3) training set-up; any key can be overridden. The
# paper's values are in scincl/settings/schema.py (learning rate, batch 8 x 4 = 32, 2 epochs).
PAPER_TRAINING_DEFAULTS: Dict[str, Any] = {
    "learning_rate": SCINCL.learning_rate,
    "per_device_train_batch_size": SCINCL.per_device_train_batch_size,
    "gradient_accumulation_steps": SCINCL.gradient_accumulation_steps,
    "num_train_epochs": SCINCL.num_train_epochs,
    "optim": "adamw_torch",
    "lr_scheduler_type": "linear",
    "warmup_ratio": 0.1,  # SPECTER's slanted triangular schedule (cut_frac 0.1)
    "seed": 0,
    "logging_steps": 10,
    "save_total_limit": 2,
    "report_to": "none",  # W&B only when asked (--report_to wandb), offline unless WANDB_MODE says otherwise
    # bf16 autocast where the device computes bf16 natively, fp32 elsewhere (issue 17: 1.7x per training
    # step on an AVX512-BF16 CPU; scincl.model.device.choose_bf16). --bf16 false for fp32 everywhere.
    "bf16": "auto",
}
BITFIT_LEARNING_RATE = 1e-4  # paper §7.2


def checked_training_arguments(training_args: Mapping[str, Any]) -> Dict[str, Any]:
    """``training_args`` (``transformers.TrainingArguments`` fields) converted to their fields' types, a wrong one
    refused in one line (``--fp16 maybe``); ``--bf16`` also takes ``auto`` (scincl/model/device.py:resolve_bf16)."""
    from transformers import TrainingArguments

    hints = typing.get_type_hints(TrainingArguments)
    out = {}
    for name, value in training_args.items():
        kind = simple_type(hints.get(name))
        keep = kind not in (bool, int, float) or (name == "bf16" and str(value).strip().lower() == "auto")
        out[name] = value if keep else check_value(name, value, kind, check_range=False)
    return out


def build_training_arguments(output_dir: str, training_args: Dict[str, Any], bitfit: bool = False,
                             has_eval: bool = False, defaults: Optional[Dict[str, Any]] = None,
                             label_names: Sequence[str] = ()):
    """``TrainingArguments`` from the defaults (the paper's unless given) + user flags (unknown flags: one-line error).

    ``label_names``: the batch keys the Trainer treats as labels (none for the contrastive model; ``labels``
    for a masked-LM, so its evaluation loss is computed).
    """
    from transformers import TrainingArguments

    known = {f.name for f in dataclasses.fields(TrainingArguments)}
    unknown = sorted(set(training_args) - known)
    if unknown:
        raise InputError(f"unknown training argument(s): {', '.join('--' + k for k in unknown)} "
                         "(see transformers.TrainingArguments)")
    merged = dict(PAPER_TRAINING_DEFAULTS if defaults is None else defaults)
    if bitfit:
        merged["learning_rate"] = BITFIT_LEARNING_RATE
    if has_eval:
        merged.update(eval_strategy="epoch")
    merged.update(checked_training_arguments(training_args))
    if "use_cpu" not in training_args and not _has_accelerator():
        merged["use_cpu"] = True  # makes torchrun on CPU-only machines use gloo DDP (accelerate's MULTI_CPU)
    if _is_true(merged.get("fp16")) and str(merged.get("bf16")).strip().lower() == "auto":
        merged["bf16"] = "false"  # --fp16 asked explicitly: no bf16 on top
    if "bf16" in merged:  # --bf16 auto|true|false: auto = bf16 autocast only where the device has it natively
        merged["bf16"] = resolve_bf16(merged["bf16"], "cpu" if _is_true(merged.get("use_cpu")) else default_device())
    merged.update(
        output_dir=str(output_dir),
        remove_unused_columns=False,  # the collator needs the row-number columns
        label_names=list(label_names),
        ddp_find_unused_parameters=merged.get("ddp_find_unused_parameters", False),
    )
    report_to = merged.get("report_to")
    if report_to and "wandb" in (report_to if isinstance(report_to, (list, tuple)) else [report_to]):
        os.environ.setdefault("WANDB_MODE", "offline")
    _pin_mixed_precision(merged)
    return one_gpu_per_process(TrainingArguments(**merged))


def one_gpu_per_process(args: Any) -> Any:
    """Train on one GPU when a process started without torchrun sees several (data parallelism is DDP's).

    The ``Trainer`` would wrap the model in ``DataParallel`` there (``ParallelMode.NOT_DISTRIBUTED``),
    which cuts the papers and the triplet index tensors of a dedup batch into chunks independently:
    a replica's indices would point at papers another replica holds. Under torchrun each process
    has one GPU and this changes nothing.
    """
    from transformers.training_args import ParallelMode

    if args.parallel_mode == ParallelMode.NOT_DISTRIBUTED:
        logger.warning("%d GPUs visible to one process: training on %s only; for data parallelism run under "
                       "torchrun --nproc_per_node %d", args.n_gpu, args.device, args.n_gpu)
        args._n_gpu = 1  # what TrainingArguments.n_gpu returns; the Trainer then uses no DataParallel
    return args


def _pin_mixed_precision(merged: Dict[str, Any]) -> None:
    """The run's own --fp16/--bf16 decide its precision, never ``ACCELERATE_MIXED_PRECISION``.

    transformers takes the precision from that variable when neither flag is set, and a bf16 run sets it
    for the rest of the process: an fp32 run after a bf16 one in the same process (or under a shell that
    exported it) silently trained under bf16 autocast while its run record said fp32.
    """
    wanted = "fp16" if _is_true(merged.get("fp16")) else "bf16" if _is_true(merged.get("bf16")) else "no"
    inherited = os.environ.get("ACCELERATE_MIXED_PRECISION")
    if inherited not in (None, wanted):
        logger.info("ignoring ACCELERATE_MIXED_PRECISION=%s from the environment: the flags ask for %s",
                    inherited, wanted)
    os.environ["ACCELERATE_MIXED_PRECISION"] = wanted


def _is_true(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


def _has_accelerator() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return torch.cuda.is_available() or bool(mps is not None and mps.is_available())


def _finished_run(output_dir: Path) -> bool:
    return (output_dir / RUN_ARGUMENTS_FILE).exists() and (output_dir / "config.json").exists()


@writes("output_dir")
def train(
    train_triples_path: str,
    train_metadata_path: str,
    output_dir: str,
    base_model_name_or_path: Optional[str] = None,
    loss: str = SCINCL.loss,
    pooling_strategy: str = SCINCL.pooling_strategy,
    bitfit: bool = False,
    max_sequence_length: int = SCINCL.max_sequence_length,
    eval_max_sequence_length: Optional[int] = None,
    eval_triples_path: Optional[str] = None,
    mlm_weight: float = 0.0,
    mlm_probability: float = 0.15,
    graph_embeddings_path: Optional[str] = None,
    graph_entity_names_path: Optional[str] = None,
    graph_distillation_weight: float = 0.0,
    deduplicate_papers: bool = True,
    keep_query_triplets_together: bool = True,
    cache_dir: Optional[str] = None,
    override: bool = False,
    other_run: str = "refuse",
    excluded_paper_ids: Optional[str] = None,
    graph_paper_ids_path: Optional[str] = None,
    citations_path: Optional[str] = None,
    graph_leakage: bool = False,
    **training_args: Any,
) -> Path:
    """Contrastive fine-tuning of a BERT-style encoder on triplets (transformers Trainer); prints OUTPUT_DIR.

    SciNCL/SPECTER defaults (scincl/settings/schema.py, :data:`PAPER_TRAINING_DEFAULTS`): triplet margin
    loss (L2, margin 1), [CLS] pooling, 512 tokens of title [SEP] abstract, lr 2e-5, batch 8 x gradient
    accumulation 4, 2 epochs, AdamW, linear warmup (10%) and decay, seed 0. Every
    transformers.TrainingArguments flag passes through (--fp16, --bf16 auto|true|false (auto: bf16 only
    where the device has it natively), --save_steps, --eval_steps, --report_to wandb (offline unless
    WANDB_MODE is set), --resume_from_checkpoint PATH|true|auto (auto: the newest complete checkpoint if
    any), --gradient_checkpointing, --max_steps, ...). A GPU requested (CUDA_VISIBLE_DEVICES, Slurm) but
    unusable is an error. Multi-GPU/multi-node: run the same command under
    `torchrun --nproc_per_node N cli_pipeline.py train ...`. OUTPUT_DIR gets the model (save_pretrained:
    AutoModel.from_pretrained works), its tokenizer, sentence-transformers files (SentenceTransformer(OUTPUT_DIR)
    uses the same pooling) and train_args.json; returns OUTPUT_DIR.

    Args:
        train_triples_path: ``query_paper_id,positive_id,negative_id`` CSV(.gz), or groups
            jsonl(.gz) ``{"query", "positives", "negatives"}``.
        train_metadata_path: metadata jsonl(.gz) ``{"paper_id","title","abstract"}`` or a SciDocs
            ``paper_metadata_*.json``.
        output_dir: model dir (``save_pretrained`` + sentence-transformers files + train_args.json);
            checkpoints go to ``output_dir/checkpoint-N``. ``run_fingerprint.json`` records the
            inputs and settings (:mod:`scincl.provenance`): a finished run of the same ones is reused
            unless ``override``; checkpoints of the same ones are resumed from (the newest
            complete one) unless ``--resume_from_checkpoint`` says otherwise; a run made
            differently is refused with one line unless ``override`` (start over).
        base_model_name_or_path: HF checkpoint; default SciBERT when in the local HF cache, else
            the packaged all-MiniLM-L6-v2.
        loss: one of triplet, infonce, cosent, angle-term, angle, mpt-tgt, mpt-src, mpt-src-tgt
            (``scincl.model.losses``; README's loss table).
        pooling_strategy: ``cls`` (paper) or ``mean``.
        bitfit: train bias terms only (paper §7.2; learning rate 1e-4 unless given).
        max_sequence_length: tokens per paper (title [SEP] abstract).
        eval_max_sequence_length: the length the model's embeddings are made and scored at (run_specter's
            --eval_max_sequence_length), saved as its max_seq_length (by sentence-transformers: the tokenizer's
            model_max_length), which
            ``SentenceTransformer(OUTPUT_DIR)``, ``embed`` and ``evaluate`` use by default; default max_sequence_length.
        eval_triples_path: optional held-out rows; evaluation loss each epoch (or ``--eval_steps``).
        The loss's own options (``--triplet_margin``, ``--distance``, ``--temperature``, ``--ranking_scale``,
            ...) are declared by the losses (``flags`` of each class in ``scincl/model/losses/``, with the
            constructor's type and default; ``--help`` lists them) and pass through ``**training_args``; one
            not given takes the loss's default.
        mlm_weight / mlm_probability: auxiliary MLM loss (paper A.7.8), off at weight 0.
        graph_embeddings_path / graph_entity_names_path / graph_distillation_weight: student-teacher
            MSE between text and graph similarities (paper A.7.9), off at weight 0.
        deduplicate_papers: encode each distinct paper of a batch once.
        keep_query_triplets_together: shuffle whole queries so a query's triplets share a batch.
        cache_dir: ``datasets`` cache for the tokenised papers (default ``HF_DATASETS_CACHE``).
        other_run: what to do when ``output_dir`` holds a run made differently: ``refuse`` (the
            command) or ``restart`` (the pipeline's reuse-or-build: discard it, logged).
        excluded_paper_ids: JSON list of the evaluation papers (SciDocs queries): the leakage guard
            (:func:`scincl.leakage.guard_training`) counts them in the triplets, the graph's nodes
            (``graph_paper_ids_path``) and the citation edges it was trained from (``citations_path``,
            comma-separated), writes ``OUTPUT_DIR/leakage_report.json`` and refuses to train when
            any is found, unless ``graph_leakage`` (the paper's "w/ leakage" setting).
        **training_args: any ``transformers.TrainingArguments`` field (``--fp16``, ``--bf16``,
            ``--save_steps``, ``--eval_steps``, ``--report_to wandb``, ``--resume_from_checkpoint``...).
    """
    from transformers import set_seed

    from scincl.model.card import write_model_card
    from scincl.model.collator import DedupCollator
    from scincl.model.folder_check import check_model_files
    from scincl.model.encoder import (POOLING_STRATEGIES, DocumentEncoder, apply_bitfit, freeze_unused_pooler,
                                      load_backbone, resolve_base_model, save_encoder)
    from scincl.model.losses import build_loss, check_loss_name, loss_settings, take_loss_options
    from scincl.model.objective import ContrastiveModel
    from scincl.model.trainer import ContrastiveTrainer

    check_loss_name(loss)
    try:
        loss_flags, training_args = take_loss_options(training_args)
        loss_module = build_loss(loss, **loss_flags)
    except ValueError as exc:
        raise InputError(f"--loss {loss}: {exc}") from None
    if pooling_strategy not in POOLING_STRATEGIES:
        raise InputError(f"unknown --pooling_strategy {pooling_strategy!r}; "
                         f"choose one of {', '.join(POOLING_STRATEGIES)}")
    if graph_distillation_weight > 0 and not graph_embeddings_path:
        raise InputError("--graph_distillation_weight needs --graph_embeddings_path")
    if base_model_name_or_path:  # its files before any output (issue 41); loading names any other problem
        check_model_files(str(base_model_name_or_path), "--base_model_name_or_path")
    out = Path(output_dir)
    if not _is_true(training_args.get("use_cpu")):
        check_gpu_usable()  # a GPU job whose CUDA is broken must not train on CPU without a word
    resume_request = training_args.pop("resume_from_checkpoint", None)
    # the training flags (--fp16 maybe, an unknown one) are refused before any data is read or written
    args = build_training_arguments(str(out), training_args, bitfit=bitfit, has_eval=bool(eval_triples_path))
    guard_training(excluded_paper_ids, train_triples_path, graph_paper_ids=graph_paper_ids_path,
                   citations=str(citations_path).split(",") if citations_path else (),
                   with_leakage=_is_true(graph_leakage), output_dir=out)
    record = made_by({
        "base_model_name_or_path": base_model_name_or_path, "loss": loss, "loss_settings": loss_settings(loss_module),
        "pooling_strategy": pooling_strategy, "bitfit": bitfit, "max_sequence_length": max_sequence_length,
        "mlm_weight": mlm_weight, "mlm_probability": mlm_probability,
        "graph_distillation_weight": graph_distillation_weight, "deduplicate_papers": deduplicate_papers,
        "keep_query_triplets_together": keep_query_triplets_together,
        **({"eval_max_sequence_length": int(eval_max_sequence_length)} if eval_max_sequence_length else {}),
        "training": {k: v for k, v in training_args.items() if k not in LOGGING_ONLY_ARGS}},
        [train_triples_path, train_metadata_path, eval_triples_path, graph_embeddings_path,
         base_model_name_or_path if base_model_name_or_path and Path(base_model_name_or_path).exists() else None])
    explicit_resume = str(resume_request).lower() not in ("none", "false", "auto")  # a path or true: as asked
    why = None if explicit_resume else _other_run(out, record)
    if why is not None and not override and other_run != "restart":
        raise InputError(f"holds a run made differently ({why}); pass --override to start over, or use "
                         "another output dir", path=out)
    if override or why is not None:
        logger.info("%s: %s; starting over", out, why or "--override given")
        _discard_run(out)
    elif _finished_run(out) and not explicit_resume and _finished_files_changed(out):
        logger.info("%s: %s; training again (from its last checkpoint when there is one)", out,
                    _finished_files_changed(out))
        (out / RUN_ARGUMENTS_FILE).unlink()  # no longer a finished run
    elif _finished_run(out) and not explicit_resume:
        logger.info("%s holds a finished run of the same inputs and settings; reusing it (pass --override to "
                    "retrain)", out)
        return out
    if resume_request is None and last_complete_checkpoint(out, remove_incomplete=False) is not None:
        resume_request = "auto"  # checkpoints of this very run (same fingerprint): continue it
        logger.info("resuming from the last checkpoint in %s (same inputs and settings)", out)
    resume = _resolve_resume(resume_request, out, args)
    if mlm_weight > 0 and "save_safetensors" not in training_args:
        # the MLM head ties its weights to the embeddings; safetensors refuses shared tensors
        args.save_safetensors = False
    set_seed(args.seed)

    base_model = resolve_base_model(base_model_name_or_path)
    backbone, tokenizer = load_backbone(base_model, with_mlm_head=mlm_weight > 0)
    encoder = DocumentEncoder(backbone, pooling_strategy)
    if bitfit:
        trainable, total = apply_bitfit(backbone)
        logger.info("BitFit: training %d of %d parameters (bias terms)", trainable, total)
    freeze_unused_pooler(encoder.encoder_model)  # after BitFit, which would re-enable the pooler's bias
    max_positions = getattr(encoder.encoder_model.config, "max_position_embeddings", None)
    if max_positions and max_sequence_length > max_positions:
        logger.warning("max_sequence_length %d > the model's %d positions; using %d", max_sequence_length,
                       max_positions, max_positions)
        max_sequence_length = int(max_positions)

    rows = model_data.as_kind(model_data.read_training_rows(Path(train_triples_path)), loss_module.input_kind)
    eval_rows = None
    if eval_triples_path:
        eval_rows = model_data.as_kind(model_data.read_training_rows(Path(eval_triples_path)), loss_module.input_kind)
    needed = rows.paper_ids() + (eval_rows.paper_ids() if eval_rows else [])
    logger.info("training rows: %d %s from %s (%d distinct papers)", len(rows.rows), rows.kind,
                train_triples_path, len(rows.paper_ids()))
    with args.main_process_first(desc="tokenising papers"):
        papers = model_data.load_tokenized_papers(Path(train_metadata_path), tokenizer, max_sequence_length,
                                                  paper_ids=needed, cache_dir=cache_dir)
    empty = model_data.nothing_to_learn(rows, papers)
    if empty is not None:
        raise InputError(f"nothing to learn: {empty}", path=train_triples_path)
    train_dataset, train_report = model_data.build_example_dataset(rows, papers)
    train_report.log("train")
    eval_dataset = eval_report = None
    if eval_rows is not None:
        eval_dataset, eval_report = model_data.build_example_dataset(eval_rows, papers)
        eval_report.log("eval")

    graph_vectors = graph_mask = None
    if graph_distillation_weight > 0:
        graph_vectors, graph_mask = model_data.load_graph_teacher(
            Path(graph_embeddings_path), papers, Path(graph_entity_names_path) if graph_entity_names_path else None)

    collator = DedupCollator(
        papers.dataset, pad_token_id=tokenizer.pad_token_id, input_kind=loss_module.input_kind,
        deduplicate=deduplicate_papers, mlm_probability=mlm_probability if mlm_weight > 0 else None,
        mask_token_id=tokenizer.mask_token_id, special_token_ids=tokenizer.all_special_ids,
        vocab_size=len(tokenizer), graph_embeddings=graph_vectors, graph_mask=graph_mask,
        pad_to_multiple_of=8 if (args.fp16 or args.bf16) else None)
    model = ContrastiveModel(encoder, loss_module, mlm_weight=mlm_weight,
                             graph_distillation_weight=graph_distillation_weight)
    trainer = ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, eval_dataset=eval_dataset,
                                 data_collator=collator, keep_query_triplets_together=keep_query_triplets_together)
    if args.process_index == 0:  # after every input was read: a bad input leaves no output dir
        out.mkdir(parents=True, exist_ok=True)
        write_record(out / RUN_FINGERPRINT_FILE, record)
    try:
        result = trainer.train(resume_from_checkpoint=resume)
    except BaseException:
        if args.process_index == 0:  # a full disk, Ctrl-C or SIGTERM mid-save: leave only resumable checkpoints
            last_complete_checkpoint(out, remove_incomplete=True)
        raise
    trainer.save_state()
    _destroy_process_group_at_exit()

    if trainer.is_world_process_zero():
        save_encoder(encoder, tokenizer, out, max_seq_length=int(eval_max_sequence_length or max_sequence_length))
        embedding_check = check_trained_embeddings(encoder, tokenizer, train_metadata_path, rows.paper_ids(),
                                                   max_sequence_length, out)
        run = {
            "command": "train",
            "arguments": {
                "train_triples_path": str(train_triples_path), "train_metadata_path": str(train_metadata_path),
                "output_dir": str(out), "base_model_name_or_path": base_model_name_or_path,
                "resolved_base_model": base_model, "loss": loss, "pooling_strategy": pooling_strategy,
                "bitfit": bitfit, "max_sequence_length": max_sequence_length,
                "eval_max_sequence_length": eval_max_sequence_length, "eval_triples_path": eval_triples_path, "loss_settings": loss_settings(loss_module),
                "mlm_weight": mlm_weight,
                "mlm_probability": mlm_probability, "graph_embeddings_path": graph_embeddings_path,
                "graph_entity_names_path": graph_entity_names_path,
                "graph_distillation_weight": graph_distillation_weight, "deduplicate_papers": deduplicate_papers,
                "keep_query_triplets_together": keep_query_triplets_together,
                "resume_from_checkpoint": resume,
            },
            "training_arguments": {k: v for k, v in args.to_dict().items() if not k.startswith("_")},
            "inputs": [file_fingerprint(p, hash_bytes_limit=1 << 24)
                       for p in (train_triples_path, train_metadata_path) if p],
            "counts": {
                "train_rows": len(train_dataset), "train_rows_in_file": train_report.rows_in,
                "papers_missing_from_metadata": train_report.missing_papers, "papers_tokenised": len(papers.row_of),
                "papers_without_text": papers.empty_papers,
                "eval_rows": len(eval_dataset) if eval_dataset is not None else 0,
            },
            "metrics": {"global_step": result.global_step, "training_loss": result.training_loss, **result.metrics},
            "embedding_check": embedding_check,
            "world_size": args.world_size,
            "versions": _versions(),
        }
        write_model_card(out, run)  # README.md (scincl/model/card.py), before train_args.json says "finished"
        write_json(out / RUN_ARGUMENTS_FILE, run)
        write_record(out / RUN_FINGERPRINT_FILE, {**record, "outputs": _run_files(out)})  # what "finished" means
        logger.info("saved encoder to %s (%d steps, training loss %.4f)", out, result.global_step,
                    result.training_loss)
    return out


def check_trained_embeddings(encoder: Any, tokenizer: Any, metadata_path: Any, paper_ids: List[str],
                             max_sequence_length: int, out: Path) -> Dict[str, Any]:
    """Embed up to :data:`~scincl.model.collapse.CHECK_PAPERS` training papers with the trained encoder and check the
    vectors are not collapsed (:mod:`scincl.model.collapse`); the report goes to ``OUTPUT_DIR/embedding_check.json``
    before a collapse is refused, so the run is never marked finished (nor scored) with collapsed embeddings."""
    from scincl.model.collapse import CHECK_PAPERS, EMBEDDING_CHECK_NAME, check_embeddings, embedding_check
    from scincl.model.data import iter_metadata, paper_text
    from scincl.model.embed import encode_texts

    wanted = set(paper_ids[:CHECK_PAPERS])
    texts = [paper_text(title, abstract, tokenizer.sep_token)
             for pid, title, abstract in iter_metadata(Path(metadata_path)) if pid in wanted]
    device = next(encoder.parameters()).device
    vectors = encode_texts(encoder, tokenizer, texts, max_sequence_length=max_sequence_length, device=device,
                           show_progress=False)
    write_json(out / EMBEDDING_CHECK_NAME, embedding_check(vectors, texts))
    return check_embeddings(vectors, texts, out, hint="; the training collapsed (lower --learning_rate?)")


def _destroy_process_group_at_exit() -> None:
    """Under torchrun, destroy the process group the Trainer made when the interpreter exits.

    A rank that exits without ``destroy_process_group()`` can abort (SIGABRT, "terminate called
    without an active exception") while the interpreter tears down Gloo's worker threads; PyTorch's
    docs ask every trainer process to destroy its groups at the end (docs/distributed.rst,
    "Shutdown"). At exit, not now, so that code running after ``train`` in the same process keeps
    the group the Trainer's accelerate state expects.
    """
    import torch.distributed as dist

    def destroy() -> None:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()

    if dist.is_available() and dist.is_initialized():
        atexit.register(destroy)


def _other_run(out: Path, record: Dict[str, Any]) -> Optional[str]:
    """How the run in ``out`` (checkpoints or a finished model) differs from ``record``; None: same or none."""
    if not (_finished_run(out) or last_complete_checkpoint(out, remove_incomplete=False) is not None):
        return None  # nothing to reuse or resume (an interrupted checkpoint-N is removed, not resumed)
    return difference(read_record(out / RUN_FINGERPRINT_FILE), record)


def _run_files(out: Path) -> list:
    """The fingerprints of a finished run's files (its record file left out: it holds them)."""
    entry = outputs_record([out])[0]
    entry["files"] = [f for f in entry.get("files", []) if f["path"] != RUN_FINGERPRINT_FILE]
    return [entry]


def _finished_files_changed(out: Path) -> Optional[str]:
    """How the files of the finished run in ``out`` changed since it finished (e.g. a deleted
    ``model.safetensors``), or ``None``; a run recorded before issue 29 lists no files and is trusted."""
    stored = read_record(out / RUN_FINGERPRINT_FILE) or {}
    return outputs_changed(stored["outputs"], [out]) if stored.get("outputs") else None


def _discard_run(out: Path) -> None:
    """Remove another run's checkpoints and run record before starting over in ``out``."""
    for checkpoint in out.glob("checkpoint-*"):
        if checkpoint.is_dir():
            shutil.rmtree(checkpoint)
    for name in (RUN_ARGUMENTS_FILE, RUN_FINGERPRINT_FILE):
        if (out / name).exists():
            (out / name).unlink()


def _resolve_resume(resume: Any, out: Path, args: Any) -> Optional[str]:
    """``--resume_from_checkpoint``: a path, ``true`` (the newest complete checkpoint, required) or
    ``auto`` (the newest complete checkpoint when there is one, e.g. after a Slurm requeue).

    Only the main process removes half-written checkpoints; the other ranks wait for it and skip them.
    """
    if resume is None or resume is False:
        return None
    wanted = str(resume).strip().lower()
    if wanted not in ("true", "auto"):
        return str(resume)
    with args.main_process_first(desc="looking for checkpoints"):
        checkpoint = last_complete_checkpoint(out, remove_incomplete=args.process_index == 0)
    if checkpoint is None:
        if wanted == "true":
            raise InputError(f"--resume_from_checkpoint: no complete checkpoint-N in {out}")
        logger.info("--resume_from_checkpoint auto: no checkpoint in %s; starting from step 0", out)
        return None
    logger.info("resuming from %s (the newest complete checkpoint)", checkpoint)
    return str(checkpoint)


def _versions() -> Dict[str, str]:
    from importlib.metadata import version

    return {"python": platform.python_version(),
            **{name: version(name) for name in ("torch", "transformers", "sentence-transformers", "datasets")}}
