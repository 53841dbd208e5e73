#!/usr/bin/env python
"""Training throughput: the dedup collator vs encoding every row (same process, same batches).

Setting (issue 5): all-MiniLM-L6-v2 (the packaged copy), 128 tokens per paper, triplets from the
bundled demo corpus with 5 per query (SPECTER-like: positives are papers the query cites,
negatives random corpus papers, as the SciNCL miner writes them: 5 consecutive rows per query),
the paper's per-device batch of 8 triplets (and 10 = two whole queries per batch), batches drawn
by the training sampler (whole queries shuffled). Each timed step is a full training step
(forward, triplet loss, backward, AdamW). The two modes alternate in rounds so CPU contention hits both alike; the median of the rounds is
reported. Prints triplets/s of both, the ratio (target >= 1.3x), distinct papers encoded per
batch, and peak RSS.

Precision (issue 17): the same dedup batches as full training steps in fp32 and under
``torch.autocast(<device>, bfloat16)`` (what ``train --bf16 auto`` does where the CPU has native bf16),
alternating in rounds like the collators; prints the bf16/fp32 speed ratio and whether the CPU
computes bf16 natively (emulated bf16 is slower than fp32). ``--precision_rounds 0`` skips it.

    .venv/bin/python benchmarks/bench_train.py [--steps 4] [--rounds 2] [--batch_sizes 8,10] [--threads 0]
        [--precision_rounds 2]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402
import torch  # noqa: E402

from scincl.demo import make_demo  # noqa: E402
from scincl.io import iter_jsonl, write_jsonl, write_triples_csv  # noqa: E402
from scincl.model import data as model_data  # noqa: E402
from scincl.model.collator import DedupCollator, QueryBlockSampler  # noqa: E402
from scincl.model.encoder import DocumentEncoder, load_backbone, packaged_minilm_path  # noqa: E402
from scincl.model.losses import TripletMarginLoss  # noqa: E402
from scincl.model.objective import ContrastiveModel  # noqa: E402

TRIPLETS_PER_QUERY = 5  # paper §4.2
MAX_SEQUENCE_LENGTH = 128


def demo_triples(root: Path, papers: int, queries: int, seed: int = 0):
    """Metadata + 5 triplets per query (cited papers as positives, random papers as negatives)."""
    corpus = make_demo(root / "demo", papers=papers, seed=seed)
    records = []
    for shard in sorted(corpus.s2orc_metadata_dir.glob("*.jsonl.gz")):
        records.extend(rec for _, rec in iter_jsonl(shard))
    ids = [r["paper_id"] for r in records]
    known = set(ids)
    write_jsonl(root / "metadata.jsonl", ({"paper_id": r["paper_id"], "title": r.get("title"),
                                           "abstract": r.get("abstract")} for r in records))
    rnd = random.Random(seed)
    triples = []
    for record in records:
        cited = [c for c in record.get("outbound_citations") or [] if c in known and c != record["paper_id"]]
        if not cited:
            continue
        for i in range(TRIPLETS_PER_QUERY):
            negative = rnd.choice(ids)
            while negative == record["paper_id"] or negative in cited:
                negative = rnd.choice(ids)
            triples.append((record["paper_id"], cited[i % len(cited)], negative))
        if len(triples) >= queries * TRIPLETS_PER_QUERY:
            break
    write_triples_csv(root / "triples.csv", triples)
    return root / "triples.csv", root / "metadata.jsonl"


def timed_steps(model, optimizer, batches, bf16: bool = False) -> float:
    """Seconds for full training steps over ``batches`` (under CPU bf16 autocast when ``bf16``)."""
    start = time.perf_counter()
    for batch in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**batch)["loss"]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - start


def full_batches(dataset, batch_size: int, count: int):
    """The first ``count`` full batches of ``batch_size`` triplets in the training sampler's order."""
    order = list(QueryBlockSampler(dataset["query"], seed=0))
    features = [dataset[i] for i in order]
    chunks = [features[i:i + batch_size] for i in range(0, len(features), batch_size)]
    return [c for c in chunks if len(c) == batch_size][:count]


def bench_batch_size(model, optimizer, dataset, papers, pad_token_id: int, batch_size: int, steps: int,
                     rounds: int) -> None:
    """Time both collators on the same batches of ``batch_size`` triplets and print the comparison."""
    chunks = full_batches(dataset, batch_size, steps * rounds + 1)
    collators = {
        "dedup": DedupCollator(papers.dataset, pad_token_id, deduplicate=True),
        "every_row": DedupCollator(papers.dataset, pad_token_id, deduplicate=False),
    }
    batches = {name: [collate(c) for c in chunks] for name, collate in collators.items()}
    timed_steps(model, optimizer, batches["every_row"][:1])  # warm-up (allocator, kernels)
    timed_steps(model, optimizer, batches["dedup"][:1])
    seconds = {name: [] for name in batches}
    rss_after = {}
    for r in range(rounds):
        window = slice(1 + r * steps, 1 + (r + 1) * steps)
        for name in (("every_row", "dedup") if r % 2 == 0 else ("dedup", "every_row")):
            seconds[name].append(timed_steps(model, optimizer, batches[name][window]))
            rss_after[name] = psutil.Process().memory_info().rss
    rate = {name: steps * batch_size / statistics.median(s) for name, s in seconds.items()}
    encoded = {name: statistics.mean(int(b["input_ids"].shape[0]) for b in bs[1:]) for name, bs in batches.items()}
    print(f"batch {batch_size} triplets ({steps} steps x {rounds} rounds):")
    for name in ("every_row", "dedup"):
        print(f"  {name:9s}: {rate[name]:7.2f} triplets/s  ({encoded[name]:.1f} papers encoded per batch; "
              f"round times {', '.join(f'{s:.2f}s' for s in seconds[name])}; "
              f"RSS after {rss_after[name] / 2**20:.0f} MiB)")
    print(f"  ratio dedup / every_row: {rate['dedup'] / rate['every_row']:.2f}x (target >= 1.3x; "
          f"papers-encoded ratio {encoded['every_row'] / encoded['dedup']:.2f}x)")


def bench_precision(model, optimizer, dataset, papers, pad_token_id: int, batch_size: int, steps: int,
                    rounds: int) -> None:
    """Time fp32 and bf16-autocast training steps on the same dedup batches; print the bf16/fp32 ratio."""
    from scincl.model.device import detect_cpu_flags, native_bf16

    chunks = full_batches(dataset, batch_size, steps * rounds + 1)
    collate = DedupCollator(papers.dataset, pad_token_id, deduplicate=True)
    batches = [collate(c) for c in chunks]
    timed_steps(model, optimizer, batches[:1], bf16=True)  # warm-up of the bf16 kernels
    seconds = {"fp32": [], "bf16": []}
    for r in range(rounds):
        window = batches[1 + r * steps:1 + (r + 1) * steps]
        for name in (("fp32", "bf16") if r % 2 == 0 else ("bf16", "fp32")):
            seconds[name].append(timed_steps(model, optimizer, window, bf16=name == "bf16"))
    rate = {name: steps * batch_size / statistics.median(s) for name, s in seconds.items()}
    native = native_bf16("cpu", cpu_flags=detect_cpu_flags())
    print(f"precision, batch {batch_size} triplets ({steps} steps x {rounds} rounds; CPU bf16 "
          f"{'native' if native else 'EMULATED'}):")
    for name in ("fp32", "bf16"):
        print(f"  {name}: {rate[name]:7.2f} triplets/s  (round times {', '.join(f'{s:.2f}s' for s in seconds[name])})")
    print(f"  ratio bf16 / fp32: {rate['bf16'] / rate['fp32']:.2f}x (train --bf16 auto uses bf16 "
          f"{'here' if native else 'only where native: not here'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="timed training steps per mode and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch_sizes", type=str, default="8",
                        help="triplets per batch, comma-separated (paper: 8; 10 = two whole queries)")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch default)")
    parser.add_argument("--papers", type=int, default=600, help="demo corpus size")
    parser.add_argument("--precision_rounds", type=int, default=2,
                        help="rounds of the fp32 vs bf16-autocast comparison (0: skip it)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    batch_sizes = [int(b) for b in str(args.batch_sizes).split(",")]
    print(f"bench_train: MiniLM-L6 (packaged), {MAX_SEQUENCE_LENGTH} tokens, {TRIPLETS_PER_QUERY} triplets per "
          f"query, full training steps (forward, triplet loss, backward, AdamW), torch threads "
          f"{torch.get_num_threads()}, CPU")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        most = max(batch_sizes) * (args.steps * max(args.rounds, args.precision_rounds) + 1)
        triples_path, metadata_path = demo_triples(root, args.papers, queries=most // TRIPLETS_PER_QUERY + 2)
        backbone, tokenizer = load_backbone(packaged_minilm_path())
        rows = model_data.read_training_rows(triples_path)
        papers = model_data.load_tokenized_papers(metadata_path, tokenizer, MAX_SEQUENCE_LENGTH, rows.paper_ids(),
                                                  cache_dir=str(root / "cache"))
        dataset, _ = model_data.build_example_dataset(rows, papers)
        lengths = papers.dataset["length"]
        print(f"data: {len(dataset)} triplets, {len(lengths)} papers, tokens per paper mean "
              f"{statistics.mean(lengths):.0f}, {sum(n == MAX_SEQUENCE_LENGTH for n in lengths)} truncated at "
              f"{MAX_SEQUENCE_LENGTH}")
        model = ContrastiveModel(DocumentEncoder(backbone, "cls"), TripletMarginLoss()).train()
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-5)
        for batch_size in batch_sizes:
            bench_batch_size(model, optimizer, dataset, papers, tokenizer.pad_token_id, batch_size, args.steps,
                             args.rounds)
            if args.precision_rounds:
                bench_precision(model, optimizer, dataset, papers, tokenizer.pad_token_id, batch_size, args.steps,
                                args.precision_rounds)
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
