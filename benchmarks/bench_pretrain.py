#!/usr/bin/env python
"""MLM pre-training throughput (``cli_pipeline.py pretrain``): bf16 vs fp32, tokens/s and share of the machine's peak.

Setting (issue 26): BertForMaskedLM of a ``--sizes`` preset over a ``--vocab_size`` vocabulary,
batches of ``--batch_size`` windows of ``--max_sequence_length`` tokens from the demo corpus'
``title [SEP] abstract`` (a WordPiece vocabulary learned from it, as ``pretrain`` does), 15 %
masked. Each timed step is a full training step (forward, loss, backward, AdamW), in fp32 and under
``torch.autocast(cpu, bfloat16)`` (what ``pretrain --bf16 auto`` does where the CPU has native
bf16), the two alternating in rounds so CPU contention hits both alike; medians are reported.
Also the prediction head on every position (transformers' ``BertForMaskedLM``) vs on the masked
positions only (what ``pretrain`` trains), in bf16.

The machine's peak is measured in the same run: the best of a few square matmuls (``--peak_n``)
in fp32 and in bf16, FLOP/s. A step's FLOPs are counted as ``3 x forward`` with forward =
``2 x (encoder weights + the head's V x H decoder on the positions it runs on) + 4 x L x S x H``
per token (Kaplan et al. 2020, "Scaling Laws", Table 1: 2N + 2 n_layer n_ctx d per token;
attention scores and values here counted as 4 L S H); the share of the peak is achieved /
peak FLOP/s of the same precision.

    .venv/bin/python benchmarks/bench_pretrain.py [--sizes mini,small] [--vocab_size 16000]
        [--batch_size 32] [--max_sequence_length 128] [--steps 3] [--rounds 2] [--threads 0]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from scincl.demo import make_demo  # noqa: E402
from scincl.model.device import detect_cpu_flags, native_bf16  # noqa: E402
from scincl.model.pretrain import bert_config, masked_lm, mlm_collator  # noqa: E402
from scincl.model.pretrain_data import learn_wordpiece, read_corpus_texts, token_windows  # noqa: E402


def peak_flops(n: int, dtype: torch.dtype, repeats: int = 5) -> float:
    """Best FLOP/s of ``n x n`` matmuls in ``dtype`` (the machine's practical peak for that precision)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best


def step_flops(model, batch, masked_only: bool) -> float:
    """Training FLOPs of one step on ``batch`` (see the module docstring)."""
    config = model.config
    tokens = int(batch["attention_mask"].sum())
    seq = batch["input_ids"].shape[1]
    encoder = sum(p.numel() for n, p in model.bert.encoder.named_parameters() if p.dim() == 2)
    head_positions = int((batch["labels"] != -100).sum()) if masked_only else tokens
    decoder = config.vocab_size * config.hidden_size + config.hidden_size ** 2  # tied decoder + transform
    forward = 2 * encoder * tokens + 2 * decoder * head_positions \
        + 4 * config.num_hidden_layers * seq * config.hidden_size * tokens
    return 3.0 * forward


def full_head_loss(model, batch):
    """transformers' own BertForMaskedLM loss: the prediction head on every position."""
    import transformers

    return transformers.BertForMaskedLM.forward(model, **batch).loss


def timed(model, optimizer, batches, bf16: bool, masked_only: bool) -> float:
    """Seconds of full training steps over ``batches``."""
    model.train()
    start = time.perf_counter()
    for batch in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**batch).loss if masked_only else full_head_loss(model, batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--sizes", default="mini,small")
    parser.add_argument("--vocab_size", type=int, default=16000)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_sequence_length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--peak_n", type=int, default=1024)
    parser.add_argument("--papers", type=int, default=1000)
    opts = parser.parse_args()
    if opts.threads:
        torch.set_num_threads(opts.threads)
    native = native_bf16("cpu", cpu_flags=detect_cpu_flags())
    print(f"torch threads: {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}, "
          f"native bf16: {native}")
    peak = {"fp32": peak_flops(opts.peak_n, torch.float32), "bf16": peak_flops(opts.peak_n, torch.bfloat16)}
    print(f"peak (best {opts.peak_n}^3 matmul): fp32 {peak['fp32'] / 1e9:.1f} GFLOP/s, "
          f"bf16 {peak['bf16'] / 1e9:.1f} GFLOP/s (x{peak['bf16'] / peak['fp32']:.2f})")

    with tempfile.TemporaryDirectory() as tmp:
        corpus = make_demo(Path(tmp) / "demo", papers=opts.papers, seed=0)
        texts = read_corpus_texts([str(corpus.s2orc_metadata_dir)], [None], set()).texts
        tokenizer = learn_wordpiece(texts, opts.vocab_size, Path(tmp) / "tok", opts.max_sequence_length)
    # demo abstracts are short: papers joined 8 at a time give full windows (tokens/s at this length)
    joined = [" ".join(texts[i:i + 8]) for i in range(0, len(texts), 8)]
    windows = [w for w in token_windows(tokenizer, joined, opts.max_sequence_length)
               if len(w["input_ids"]) == opts.max_sequence_length]
    collator = mlm_collator(tokenizer, 0.15, whole_word_masking=False)
    need = opts.steps * opts.batch_size
    windows = (windows * (need // max(1, len(windows)) + 1))[:need]
    torch.manual_seed(0)
    batches = [collator(windows[i:i + opts.batch_size]) for i in range(0, need, opts.batch_size)]
    # the demo vocabulary is smaller than --vocab_size: the model gets --vocab_size rows, as on a real corpus
    for size in opts.sizes.split(","):
        model = masked_lm(bert_config(size, max(opts.vocab_size, len(tokenizer))))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        modes = {"fp32": (False, True), "bf16": (True, True), "bf16, head on every position": (True, False)}
        timed(model, optimizer, batches[:1], bf16=True, masked_only=True)  # warm-up
        seconds = {name: [] for name in modes}
        for _ in range(opts.rounds):
            for name, (bf16, masked_only) in modes.items():
                seconds[name].append(timed(model, optimizer, batches, bf16, masked_only))
        tokens = sum(int(b["attention_mask"].sum()) for b in batches)
        print(f"\n{size} ({model.config.num_hidden_layers}x{model.config.hidden_size}, "
              f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters), batch {opts.batch_size} x "
              f"{opts.max_sequence_length} tokens, vocabulary {model.config.vocab_size}:")
        base = None
        for name, (bf16, masked_only) in modes.items():
            median = statistics.median(seconds[name])
            flops = sum(step_flops(model, b, masked_only) for b in batches) / median
            rate = tokens / median
            base = base or rate
            print(f"  {name:30s} {rate:8.0f} tokens/s (x{rate / base:.2f} vs fp32)  {flops / 1e9:6.1f} GFLOP/s = "
                  f"{100 * flops / peak['bf16' if bf16 else 'fp32']:.0f} % of the {'bf16' if bf16 else 'fp32'} peak")


if __name__ == "__main__":
    main()
