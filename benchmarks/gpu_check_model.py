#!/usr/bin/env python
"""gpu_check's model rows. Training: full training steps of a randomly initialised encoder through the
project's own training path (``build_training_arguments`` -> ``ContrastiveTrainer`` with the dedup
collator, the query-block sampler and the triplet loss), so bf16, gradient checkpointing and DDP
are the ``Trainer``'s, as in ``cli_pipeline.py train``. Embedding: ``scincl.model.embed`` (what evaluation runs).

Run as a script it is the worker: ``gpu_check_model.py SPECS.json RESULT_PREFIX`` measures each spec
of the list in turn on its rank and writes ``RESULT_PREFIX.<i>.rank<R>.json``; gpu_check runs it in a
fresh process on one GPU (a ``Trainer`` in a process that sees several GPUs would use DataParallel)
and under ``torchrun`` on all of them.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TRIPLETS_PER_QUERY = 5  # paper §3.2 (scincl/settings/schema.py: SCINCL.triples_per_query)


@dataclass(frozen=True)
class EncoderShape:
    """Sizes of a BERT encoder built with random weights."""

    layers: int
    hidden_size: int
    heads: int
    vocab_size: int
    max_positions: int


# allenai/scibert_scivocab_uncased's config.json: BERT-base with SciBERT's 31,090-word vocabulary
SCIBERT_SHAPE = EncoderShape(layers=12, hidden_size=768, heads=12, vocab_size=31_090, max_positions=512)


@dataclass
class TrainSpec:
    """One measured training run (JSON-serialisable: it crosses to the torchrun workers)."""

    model_dir: str
    triples_path: str
    metadata_path: str
    output_dir: str
    cache_dir: str
    max_sequence_length: int
    batch_size: int
    accumulation: int
    timed_steps: int
    warmup_steps: int = 1
    bf16: str = "false"  # --bf16 of train: false | true | auto
    gradient_checkpointing: bool = False
    learning_rate: float = 2e-5  # paper §4.3 (PAPER_TRAINING_DEFAULTS)
    dropout: Optional[float] = None  # None: the model's own (0.1); 0 for the DDP equality run
    seconds_limit: float = 600.0  # stop after the first timed step once this is spent
    use_cpu: bool = False
    seed: int = 0


def build_random_encoder(output_dir: Path, shape: EncoderShape, seed: int = 0) -> Path:
    """A randomly initialised BERT of ``shape`` with a word-level tokenizer over ``w0 w1 ...`` (offline)."""
    from scincl.model.tiny import SPECIAL_TOKENS, build_tiny_bert

    words = [f"w{i}" for i in range(shape.vocab_size - len(SPECIAL_TOKENS))]
    return build_tiny_bert(output_dir, words, hidden_size=shape.hidden_size, num_layers=shape.layers,
                           num_heads=shape.heads, max_positions=shape.max_positions, seed=seed)


def write_training_files(root: Path, vocab_size: int, words_per_paper: int, triplets: int, seed: int = 0):
    """Triplets CSV (5 per query, random positives/negatives) and metadata of papers longer than the input."""
    from scincl.io import write_jsonl, write_triples_csv
    from scincl.model.tiny import SPECIAL_TOKENS

    rnd = random.Random(seed)
    queries = math.ceil(triplets / TRIPLETS_PER_QUERY)
    papers = [f"p{i}" for i in range(max(queries * 3, 2 * TRIPLETS_PER_QUERY + 1))]
    vocab = vocab_size - len(SPECIAL_TOKENS)
    rows = []
    for q in range(queries):
        others = rnd.sample([p for p in papers if p != papers[q]], 2 * TRIPLETS_PER_QUERY)
        rows += [(papers[q], others[i], others[TRIPLETS_PER_QUERY + i]) for i in range(TRIPLETS_PER_QUERY)]
    root.mkdir(parents=True, exist_ok=True)
    write_triples_csv(root / "triples.csv", rows)

    def text(n: int) -> str:
        return " ".join(f"w{rnd.randrange(vocab)}" for _ in range(n))

    write_jsonl(root / "metadata.jsonl", ({"paper_id": p, "title": text(12), "abstract": text(words_per_paper)}
                                          for p in papers))
    return root / "triples.csv", root / "metadata.jsonl"


def _sync(device_type: str) -> None:
    import torch

    if device_type == "cuda":
        torch.cuda.synchronize()


def measure_training(spec: TrainSpec) -> Dict[str, Any]:
    """Train ``warmup_steps + timed_steps`` optimizer steps; time the timed ones (this rank's figures)."""
    import torch
    import torch.distributed as dist
    from transformers import TrainerCallback, set_seed
    from transformers.trainer_callback import PrinterCallback

    from scincl.model import data as model_data
    from scincl.model.collator import DedupCollator
    from scincl.model.encoder import DocumentEncoder, freeze_unused_pooler, load_backbone
    from scincl.model.losses import build_loss
    from scincl.model.objective import ContrastiveModel
    from scincl.model.train import build_training_arguments
    from scincl.model.trainer import ContrastiveTrainer

    options = {"per_device_train_batch_size": spec.batch_size, "gradient_accumulation_steps": spec.accumulation,
               "max_steps": spec.warmup_steps + spec.timed_steps, "bf16": spec.bf16,
               "gradient_checkpointing": spec.gradient_checkpointing, "learning_rate": spec.learning_rate,
               "warmup_ratio": 0.0, "logging_steps": 1, "save_strategy": "no", "disable_tqdm": True,
               "seed": spec.seed, "dataloader_num_workers": 0}
    if spec.use_cpu:
        options["use_cpu"] = True
    args = build_training_arguments(spec.output_dir, options)
    set_seed(spec.seed)
    backbone, tokenizer = load_backbone(spec.model_dir)
    encoder = DocumentEncoder(backbone, "cls")
    freeze_unused_pooler(encoder.encoder_model)
    loss = build_loss("triplet")
    model = ContrastiveModel(encoder, loss)
    if spec.dropout is not None:  # nn.Dropout modules and the float SDPA attention takes (BertSdpaSelfAttention)
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = float(spec.dropout)
            if isinstance(getattr(module, "dropout_prob", None), float):
                module.dropout_prob = float(spec.dropout)
    rows = model_data.read_training_rows(Path(spec.triples_path))
    with args.main_process_first(desc="tokenising papers"):
        papers = model_data.load_tokenized_papers(Path(spec.metadata_path), tokenizer, spec.max_sequence_length,
                                                  paper_ids=rows.paper_ids(), cache_dir=spec.cache_dir)
    dataset, _ = model_data.build_example_dataset(rows, papers)
    collator = DedupCollator(papers.dataset, pad_token_id=tokenizer.pad_token_id, input_kind=loss.input_kind,
                             deduplicate=True, pad_to_multiple_of=8 if args.bf16 else None)
    device_type = args.device.type
    deadline = time.perf_counter() + spec.seconds_limit
    micro: List[tuple] = []  # (step, loss tensor, input_ids shape) of every micro-batch

    class Recorder(ContrastiveTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            if model.training:
                value = result[0] if return_outputs else result
                micro.append((self.state.global_step, value.detach(), tuple(inputs["input_ids"].shape)))
            return result

    class StepTimer(TrainerCallback):
        start: Optional[float] = None
        end: Optional[float] = None
        timed = 0

        def on_step_end(self, args_, state, control, **kwargs):
            _sync(device_type)
            now = time.perf_counter()
            if state.global_step == spec.warmup_steps:
                self.start = now
            elif state.global_step > spec.warmup_steps:
                self.end, self.timed = now, state.global_step - spec.warmup_steps
                if now > deadline:
                    control.should_training_stop = True

    timer = StepTimer()
    trainer = Recorder(model=model, args=args, train_dataset=dataset, data_collator=collator, callbacks=[timer])
    trainer.remove_callback(PrinterCallback)  # the loss lines would land in the middle of gpu_check's table
    if device_type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    if device_type == "cuda":
        peak = torch.cuda.max_memory_allocated()
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux; the process' peak
    timed = [(step, shape) for step, _, shape in micro if step >= spec.warmup_steps]
    seconds = (timer.end - timer.start) if timer.start is not None and timer.end is not None else float("nan")
    losses: Dict[int, List[float]] = {}
    for step, value, _ in micro:
        losses.setdefault(int(step), []).append(float(value))
    backend = dist.get_backend() if dist.is_available() and dist.is_initialized() else None
    result = {
        "rank": args.process_index, "world_size": args.world_size, "backend": backend, "device": str(args.device),
        "bf16": bool(args.bf16), "gradient_checkpointing": bool(args.gradient_checkpointing),
        "timed_steps": timer.timed, "seconds": seconds,
        "triplets": timer.timed * spec.batch_size * spec.accumulation,
        "papers_encoded": sum(shape[0] for _, shape in timed), "tokens": sum(shape[0] * shape[1] for _, shape in timed),
        "micro_batches": len(timed), "shapes": [list(shape) for _, shape in timed], "peak_memory_bytes": int(peak),
        "non_embedding_params": sum(p.numel() for p in backbone.encoder.parameters()),
        "layers": int(backbone.config.num_hidden_layers), "hidden_size": int(backbone.config.hidden_size),
        "step_losses": {str(k): v for k, v in sorted(losses.items())},
    }
    del trainer, model
    if device_type == "cuda":
        torch.cuda.empty_cache()
    return result


def measure_embedding(model_dir: str, metadata_path: str, output_dir: Path, max_sequence_length: int,
                      device: str, papers: int, batch_size: int = 32) -> Dict[str, Any]:
    """Papers/s of ``encode_texts`` in fp32 (evaluation's default) and bf16 ``auto``, and one ``embed`` run.

    ``encode_texts`` is timed alone (encoding, longest first, batches of ``batch_size``); the ``embed``
    call (what evaluation runs: load, tokenise, encode, write the jsonl) is timed end to end in fp32.
    """
    import numpy as np
    import torch

    from scincl.io import iter_jsonl
    from scincl.model.data import paper_text
    from scincl.io import write_jsonl
    from scincl.model.device import resolve_bf16
    from scincl.model.embed import embed, encode_texts, read_papers
    from scincl.model.encoder import DocumentEncoder, load_backbone

    ids, parts = read_papers(Path(metadata_path))
    ids, parts = ids[:papers], parts[:papers]
    backbone, tokenizer = load_backbone(model_dir)
    encoder = DocumentEncoder(backbone, "cls")
    texts = [paper_text(title, abstract, tokenizer.sep_token) for title, abstract in parts]
    target = torch.device(device)
    rates, vectors = {}, {}
    encode_texts(encoder, tokenizer, texts[:batch_size], batch_size=batch_size, max_sequence_length=max_sequence_length,
                 device=target, show_progress=False, bf16="false")  # warm-up: kernels, allocator
    for bf16 in ("false", "auto"):
        _sync(target.type)
        started = time.perf_counter()
        vectors[bf16] = encode_texts(encoder, tokenizer, texts, batch_size=batch_size,
                                     max_sequence_length=max_sequence_length, device=target, show_progress=False,
                                     bf16=bf16)
        _sync(target.type)
        rates[bf16] = len(texts) / (time.perf_counter() - started)
    subset = Path(output_dir) / "papers.jsonl"
    write_jsonl(subset, ({"paper_id": i, "title": t, "abstract": a} for i, (t, a) in zip(ids, parts)))
    started = time.perf_counter()
    out = embed(model_dir, str(subset), str(Path(output_dir) / "embeddings.jsonl"), batch_size=batch_size,
                max_sequence_length=max_sequence_length, pooling_strategy="cls", device=device, override=True)
    embed_rate = len(ids) / (time.perf_counter() - started)
    written = [rec for _, rec in iter_jsonl(out)]
    written_vectors = np.asarray([rec["embedding"] for rec in written], dtype=np.float32)
    return {"papers": len(ids), "fp32_papers_per_s": rates["false"], "bf16_auto_papers_per_s": rates["auto"],
            "embed_papers_per_s": embed_rate, "written": len(written), "dimension": int(written_vectors.shape[1]),
            "finite": bool(np.isfinite(written_vectors).all() and np.isfinite(vectors["auto"]).all()),
            # embed (fp32) and encode_texts (fp32) must give the same vectors: one code path
            "embed_matches_encode": bool(np.allclose(written_vectors, vectors["false"], atol=1e-4)),
            "bf16_auto_uses_bf16": resolve_bf16("auto", target.type)}


def step_means(results: List[Dict[str, Any]]) -> Dict[int, float]:
    """Mean micro-batch loss of each optimizer step over all ranks' results (what one process logs)."""
    sums: Dict[int, List[float]] = {}
    for result in results:
        for step, values in result["step_losses"].items():
            sums.setdefault(int(step), []).extend(values)
    return {step: sum(v) / len(v) for step, v in sorted(sums.items())}


def worker(specs_path: str, result_prefix: str) -> None:
    """Worker entry: this rank's :func:`measure_training` of every spec, to ``RESULT_PREFIX.<i>.rank<R>.json``."""
    import torch.distributed as dist

    for i, fields in enumerate(json.loads(Path(specs_path).read_text())):
        started = time.perf_counter()
        result = measure_training(TrainSpec(**fields))
        result["wall_seconds"] = time.perf_counter() - started
        Path(f"{result_prefix}.{i}.rank{result['rank']}.json").write_text(json.dumps(result))
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def specs_json(specs: List[TrainSpec]) -> str:
    """The specs as the worker reads them."""
    return json.dumps([dataclasses.asdict(spec) for spec in specs])


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    worker(sys.argv[1], sys.argv[2])
