#!/usr/bin/env python
"""``make gpu-check``: does this GPU node run the project's GPU paths, and how fast? One table.

On the GPUs it finds, within a time budget (``--budget_minutes``, default 15 on one GPU), each row
runs one of the project's own code paths and says pass / fail / skip with its figures:

- environment: torch / CUDA / driver versions, each GPU's name, memory and bf16 support, and
  whether faiss has GPU support (when not: the exact package to install);
- training of a SciBERT-shaped encoder (12 x 768, random init, 512 tokens, batch 8 x
  accumulation 4, triplet loss, dedup collator) through ``ContrastiveTrainer`` in fp32, bf16 and
  with gradient checkpointing: triplets/s, tokens/s, peak memory, MFU against the GPU's published
  bf16 peak (``scincl.model.throughput``) and the projected time of the paper's 684,100 triplets
  x 2 epochs;
- the same step under ``torchrun`` on all local GPUs (NCCL): its per-step losses must equal one
  process that accumulates the same global batch;
- kNN at k = 4000 on 1M x 128 random vectors, 10k queries: faiss GPU, the exact backend on CUDA,
  faiss CPU (time; bands identical to faiss CPU's);
- embedding throughput (papers/s) of the evaluation's ``embed`` path;
- ``cli_pipeline.py run_specter --device cuda`` on the demo corpus, end to end.

Without a usable GPU it says so in one line, then runs the same code paths at tiny sizes on the
CPU (torchrun with two gloo processes) and exits 0 when they pass: the dry run the test suite runs.

    .venv/bin/python benchmarks/gpu_check.py [--budget_minutes 15] [--work_dir DIR] [--output table.md]
        [--json rows.json] [--peak_tflops T] [--dry_run]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]

from gpu_check_model import (  # noqa: E402
    SCIBERT_SHAPE, EncoderShape, TrainSpec, build_random_encoder, measure_embedding, specs_json, step_means,
    write_training_files,
)
from gpu_check_model import worker as run_worker  # noqa: E402
from gpu_check_rows import (  # noqa: E402
    Row, describe_training, environment_row, hours, knn_rows, knn_setting, losses_finite, markdown, training_figures,
)

DEFAULT_BUDGET_MINUTES = 15.0  # issue 31: the whole check within 15 min on one GPU
DDP_LOSS_TOLERANCE = 1e-5  # |DDP - one process| per step, relative to max(1, |loss|): fp32 sums in another order
DDP_LEARNING_RATE = 5e-4  # large enough that a step without gradient sync would change the next losses
# Shares of the budget a check may spend (training stops after its first timed step once spent;
# run_specter gets what is left, at least its share).
BUDGET_SHARES = {"train": 0.08, "ddp": 0.15, "run_specter": 0.25}


@dataclass(frozen=True)
class Sizes:
    """What each check runs on: the paper's sizes on a GPU, tiny ones in the CPU dry run."""

    shape: EncoderShape
    max_sequence_length: int
    batch_size: int
    accumulation: int
    timed_steps: int
    ddp_steps: int
    knn_vectors: int
    knn_dim: int
    knn_queries: int
    knn_k: int
    embed_papers: int
    run_specter_flags: Tuple[str, ...] = ()


def paper_sizes() -> Sizes:
    """The paper's set-up (§4.3: SciBERT, 512 tokens, batch 8 x 4, k-hard 4000) and the issue's kNN size."""
    from scincl.model.train import PAPER_TRAINING_DEFAULTS
    from scincl.triples.config import HARD_NEGATIVES_K

    return Sizes(shape=SCIBERT_SHAPE, max_sequence_length=512,
                 batch_size=PAPER_TRAINING_DEFAULTS["per_device_train_batch_size"],
                 accumulation=PAPER_TRAINING_DEFAULTS["gradient_accumulation_steps"], timed_steps=8, ddp_steps=3,
                 knn_vectors=1_000_000, knn_dim=128, knn_queries=10_000, knn_k=HARD_NEGATIVES_K, embed_papers=1000)


def dry_run_sizes() -> Sizes:
    """Tiny sizes for the CPU dry run: the same paths in seconds (batch 8 x 4 kept)."""
    full = paper_sizes()
    return dataclasses.replace(
        full, shape=EncoderShape(layers=2, hidden_size=64, heads=2, vocab_size=1000, max_positions=64),
        max_sequence_length=32, timed_steps=2, ddp_steps=2, knn_vectors=20_000, knn_dim=32, knn_queries=200,
        knn_k=400, embed_papers=64,
        run_specter_flags=("--demo_papers", "300", "--k_scale", "corpus", "--max_sequence_length", "32",
                           "--eval_max_sequence_length", "32", "--biggraph_overrides", "num_epochs=1",
                           "--evaluate_base_model", "false", "--val_or_test_or_both", "test"))


class Budget:
    """Wall-clock budget of the whole check."""

    def __init__(self, minutes: float) -> None:
        self.total = minutes * 60.0
        self.started = time.perf_counter()

    def left(self) -> float:
        return self.total - (time.perf_counter() - self.started)

    def share(self, name: str) -> float:
        return max(0.0, min(self.left(), self.total * BUDGET_SHARES[name]))


# ------------------------------------------------------------------------------- the check

class GpuCheck:
    """Runs the rows in order within the budget; see the module docstring."""

    def __init__(self, work: Path, sizes: Sizes, gpus: int, budget: Budget, peak_tflops: Optional[float],
                 log: Callable[[str], None]) -> None:
        import torch

        from scincl.model.train import PAPER_TRAINING_DEFAULTS
        from scincl.model.throughput import published_bf16_peak_tflops

        self.work, self.sizes, self.gpus, self.budget, self.log = work, sizes, gpus, budget, log
        self.device_type = "cuda" if gpus else "cpu"
        self.peak = peak_tflops if peak_tflops else (
            published_bf16_peak_tflops(torch.cuda.get_device_name(0)) if gpus else None)
        self.epochs = int(PAPER_TRAINING_DEFAULTS["num_train_epochs"])
        self.rows: List[Row] = []
        self.model_dir = self.triples = self.metadata = None
        self.fp32: Optional[Dict[str, Any]] = None
        self.single: Dict[str, List[Dict[str, Any]]] = {}
        self.worker_errors: Dict[str, Optional[str]] = {}

    def run(self, name: str, device: str, fn: Callable[[], Tuple[str, str, Dict[str, Any]]],
            needs: float = 0.0) -> Row:
        """One row: ``fn() -> (status, figures, data)``; an exception is a failed row, not a crash."""
        if self.budget.left() < needs:
            row = Row(name, "skip", device, f"time budget spent ({self.budget.total / 60:g} min, --budget_minutes)")
        else:
            self.log(f"gpu_check: {name} ...")
            started = time.perf_counter()
            try:
                status, figures, data = fn()
            except Exception as exc:  # noqa: BLE001 - a failing path is what this tool reports
                status, figures, data = "fail", f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}", {}
            row = Row(name, status, device, figures, data.get("wall_seconds", time.perf_counter() - started), data)
        self.rows.append(row)
        self.log(f"gpu_check: {name}: {row.status} ({row.seconds:.1f} s)")
        return row

    # -- training
    def prepare_training(self) -> None:
        s = self.sizes
        self.model_dir = build_random_encoder(self.work / "encoder", s.shape)
        needed = (s.timed_steps + 1) * s.batch_size * s.accumulation * max(self.gpus, 2)
        self.triples, self.metadata = write_training_files(self.work / "data", s.shape.vocab_size,
                                                           s.max_sequence_length + 8, max(needed, s.embed_papers))

    def spec(self, name: str, **changes: Any) -> TrainSpec:
        s = self.sizes
        spec = TrainSpec(model_dir=str(self.model_dir), triples_path=str(self.triples),
                         metadata_path=str(self.metadata), output_dir=str(self.work / "train" / name),
                         cache_dir=str(self.work / "cache"), max_sequence_length=s.max_sequence_length,
                         batch_size=s.batch_size, accumulation=s.accumulation, timed_steps=s.timed_steps,
                         seconds_limit=self.budget.share("train"), use_cpu=not self.gpus)
        return dataclasses.replace(spec, **changes)

    def ddp_spec(self, **changes: Any) -> TrainSpec:
        """The torchrun step: fp32, no dropout (ranks must draw no random numbers of their own)."""
        return self.spec("ddp", bf16="false", dropout=0.0, learning_rate=DDP_LEARNING_RATE,
                         timed_steps=self.sizes.ddp_steps, seconds_limit=self.budget.share("ddp"), **changes)

    def worker(self, name: str, specs: List[TrainSpec], procs: int = 0) -> List[List[Dict[str, Any]]]:
        """Run the specs in a fresh process on the first GPU (``procs=0``) or under torchrun on ``procs``.

        Returns every spec's results (one per rank); a spec the worker did not finish has none. A
        process that sees several GPUs would train with DataParallel, so the single-process worker
        sees only the first one (``CUDA_VISIBLE_DEVICES``). The CPU dry run calls the same worker in
        this process (one interpreter start less for the test suite).
        """
        import socket

        (self.work / f"{name}_specs.json").write_text(specs_json(specs))
        prefix = self.work / f"{name}_result"
        if not procs and not self.gpus:
            try:
                run_worker(str(self.work / f"{name}_specs.json"), str(prefix))
                self.worker_errors[name] = None
            except Exception as exc:  # noqa: BLE001 - reported in the rows
                self.worker_errors[name] = f"worker failed: {type(exc).__name__}: {str(exc).strip()[:300]}"
            return [[json.loads(p.read_text())] if p.exists() else []
                    for p in (Path(f"{prefix}.{i}.rank0.json") for i in range(len(specs)))]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        if not self.gpus:
            env["OMP_NUM_THREADS"] = "1"  # tiny models; as many processes as cores
        launcher = [sys.executable]
        if procs:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            launcher += ["-m", "torch.distributed.run", "--nproc_per_node", str(procs), "--master_port", str(port)]
        elif self.gpus:
            env["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
        timeout = sum(spec.seconds_limit for spec in specs) + 300  # + start-up and warm-up steps
        log = self.work / f"{name}.log"
        what = "torchrun" if procs else "worker"
        try:
            done = subprocess.run([*launcher, str(HERE / "gpu_check_model.py"), str(self.work / f"{name}_specs.json"),
                                   str(prefix)], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            log.write_text(str(exc.stdout or "") + str(exc.stderr or ""))
            self.worker_errors[name] = f"{what} did not finish within {timeout:.0f} s (--work_dir to keep {log.name})"
        else:
            log.write_text(done.stdout + done.stderr)
            tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-1:] or ["no output"]
            self.worker_errors[name] = (f"{what} exited {done.returncode}: {tail[0][:300]} (--work_dir to keep "
                                        f"{log.name})") if done.returncode else None
        out = []
        for i in range(len(specs)):
            paths = [Path(f"{prefix}.{i}.rank{r}.json") for r in range(max(procs, 1))]
            out.append([json.loads(p.read_text()) for p in paths] if all(p.exists() for p in paths) else [])
        return out

    def run_training(self) -> None:
        """fp32, bf16, gradient checkpointing and the torchrun step's one-process reference, in one worker."""
        procs = self.gpus or 2
        specs = [self.spec("fp32", bf16="false"), self.spec("bf16", bf16="true"),
                 self.spec("checkpointing", bf16="auto", gradient_checkpointing=True),
                 self.ddp_spec(accumulation=self.sizes.accumulation * procs)]
        self.single = dict(zip(("fp32", "bf16", "checkpointing", "ddp_reference"), self.worker("single", specs)))

    def training(self, name: str, bf16: str, checkpointing: bool) -> Tuple[str, str, Dict[str, Any]]:
        if not self.single.get(name):
            raise RuntimeError(self.worker_errors.get("single") or "the worker wrote no result")
        result = self.single[name][0]
        fig = training_figures([result], self.peak, self.epochs)
        ok = (result["timed_steps"] >= 1 and losses_finite([result]) and result["device"].startswith(self.device_type)
              and result["bf16"] == (bf16 != "false" and (bf16 == "true" or self._native_bf16()))
              and result["gradient_checkpointing"] == checkpointing)
        if name == "fp32":
            self.fp32 = fig
        precision = ("bf16 autocast" + ("" if self._native_bf16() else " (EMULATED: no native bf16)")
                     if result["bf16"] else "fp32")
        text = describe_training(fig, self.peak, self.device_type, self.epochs)
        if name != "fp32" and self.fp32:
            text += f"; {fig['triplets_per_s'] / self.fp32['triplets_per_s']:.2f}x fp32"
        return ("pass" if ok else "fail"), f"{precision}: {text}", {**fig, "result_bf16": result["bf16"],
                                                                    "wall_seconds": result["wall_seconds"]}

    def _native_bf16(self) -> bool:
        from scincl.model.device import resolve_bf16

        return resolve_bf16("auto", self.device_type)

    def ddp(self) -> Tuple[str, str, Dict[str, Any]]:
        """torchrun on every local GPU (2 gloo processes in the dry run) vs one process, same global batch."""
        procs = self.gpus if self.gpus else 2
        spec = self.ddp_spec()
        ranks = self.worker("torchrun", [spec], procs=procs)[0]
        if not ranks:
            return "fail", self.worker_errors["torchrun"] or "torchrun wrote no result", {}
        if not self.single.get("ddp_reference"):
            return "fail", f"no one-process reference: {self.worker_errors.get('single')}", {}
        one = self.single["ddp_reference"][0]
        ddp_losses, one_losses = step_means(ranks), step_means([one])
        steps = sorted(set(ddp_losses) & set(one_losses))
        delta = max((abs(ddp_losses[k] - one_losses[k]) / max(1.0, abs(one_losses[k])) for k in steps),
                    default=math.inf)
        backend = ranks[0]["backend"]
        expected_backend = "nccl" if self.gpus else "gloo"
        fig = training_figures(ranks, self.peak, self.epochs)
        one_fig = training_figures([one], self.peak, self.epochs)
        ok = (backend == expected_backend and ranks[0]["world_size"] == procs and len(steps) >= 2
              and delta <= DDP_LOSS_TOLERANCE and losses_finite(ranks))
        text = (f"torchrun x {procs} ({backend}), fp32: losses of {len(steps)} steps vs one process accumulating "
                f"{spec.accumulation * procs} micro-batches: max relative difference {delta:.1e} "
                f"(tolerance {DDP_LOSS_TOLERANCE:g}); {fig['triplets_per_s']:.2f} triplets/s in all "
                f"= {fig['triplets_per_s'] / one_fig['triplets_per_s']:.2f}x one process; "
                f"684,100 triplets x {self.epochs} epochs: {hours(fig['projected_seconds'])}")
        return ("pass" if ok else "fail"), text, {"losses_ddp": ddp_losses, "losses_one": one_losses, "delta": delta,
                                                  "backend": backend, "world_size": ranks[0]["world_size"], **fig}

    # -- kNN and embedding
    def knn(self) -> None:
        from gpu_check_knn import knn_checks

        from scincl.knn import ann

        s = self.sizes
        faiss_gpu = bool(self.gpus) and ann.gpu_available()
        where = knn_setting(s)
        results: Dict[str, Any] = {}

        def search() -> Tuple[str, str, Dict[str, Any]]:
            knn_checks(s.knn_vectors, s.knn_dim, s.knn_queries, s.knn_k, 0 if self.gpus else None, faiss_gpu,
                       results)
            cpu = results["faiss_cpu"]
            return "pass", (f"k={s.knn_k} on {where}: search {cpu['seconds']:.2f} s (build {cpu['build_seconds']:.2f}"
                            f" s); the reference of the band comparisons: "
                            + ", ".join(f"n_{lo + 1}..n_{hi}" for lo, hi in cpu["bands"])), cpu

        self.run("kNN faiss CPU", "cpu", search)
        cpu_row = self.rows.pop()  # shown last: the other two are compared with it
        if "faiss_cpu" in results:  # the row's wall time also holds the data and the other backends
            cpu_row.seconds = results["faiss_cpu"]["seconds"] + results["faiss_cpu"]["build_seconds"]
        self.rows += knn_rows(results, s, self.gpus, faiss_gpu)
        self.rows.append(cpu_row)

    def embedding(self) -> Tuple[str, str, Dict[str, Any]]:
        s = self.sizes
        fig = measure_embedding(str(self.model_dir), str(self.metadata), self.work / "embed", s.max_sequence_length,
                                self.device_type, s.embed_papers)
        ok = fig["written"] == fig["papers"] and fig["finite"] and fig["embed_matches_encode"]
        text = (f"{fig['papers']:,} papers x {s.max_sequence_length} tokens, batch 32: encode fp32 (evaluation's "
                f"default) {fig['fp32_papers_per_s']:.1f} papers/s, bf16 auto "
                f"({'bf16' if fig['bf16_auto_uses_bf16'] else 'fp32: no native bf16'}) "
                f"{fig['bf16_auto_papers_per_s']:.1f} papers/s; embed end to end (load, tokenise, encode, write) "
                f"{fig['embed_papers_per_s']:.1f} papers/s, {fig['written']:,} x {fig['dimension']} written"
                + ("" if fig["embed_matches_encode"] else "; embed's vectors differ from encode_texts'"))
        return ("pass" if ok else "fail"), text, fig

    def run_specter(self) -> Tuple[str, str, Dict[str, Any]]:
        """``cli_pipeline.py run_specter --device <device>`` on the demo corpus, in a fresh process."""
        out = self.work / "run_specter"
        flags = list(self.sizes.run_specter_flags)
        if not self.gpus:  # the dry run: a tiny BERT over the demo corpus' words instead of MiniLM
            flags += ["--base_model_name_or_path", str(self.demo_bert())]
        cmd = [sys.executable, "cli_pipeline.py", "run_specter", str(out), "--device", self.device_type, *flags]
        limit = max(self.budget.left(), self.budget.total * BUDGET_SHARES["run_specter"])
        try:
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=limit,
                                  env=dict(os.environ, HF_HUB_OFFLINE="1"))
        except subprocess.TimeoutExpired:
            return "fail", f"did not finish within {limit:.0f} s", {}
        (self.work / "run_specter.log").write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-1:] or ["no output"]
            return "fail", f"exited {done.returncode}: {tail[0][:300]}", {}
        manifest = json.loads((out / "manifest.json").read_text())
        results = json.loads((out / "results.json").read_text())
        stages = manifest["stages"]
        ran = [name for name in manifest["stage_order"] if stages.get(name, {}).get("completed")]
        slow = ", ".join(f"{n} {stages[n]['seconds']:.1f} s" for n in ("graph", "train", "eval_base", "eval")
                         if n in stages)
        cuda = manifest["environment"].get("cuda_available")
        ok = len(ran) == len(manifest["stage_order"]) and bool(cuda) == bool(self.gpus)
        flavour = "" if self.gpus else " (dry-run flags)"
        text = (f"run_specter --device {self.device_type} on the demo corpus{flavour}: "
                f"{len(ran)} of "
                f"{len(manifest['stage_order'])} stages in {manifest['total_seconds']:.1f} s ({slow}); "
                f"SciNCL test Avg {results['average']['test']['value']:.2f}")
        return ("pass" if ok else "fail"), text, {"total_seconds": manifest["total_seconds"],
                                                  "stages": len(ran), "average": results["average"]}

    def demo_bert(self) -> Path:
        """A tiny BERT over the demo corpus' words (the dry run's encoder; MiniLM takes minutes on a CPU)."""
        from scincl.demo import make_demo
        from scincl.io import iter_jsonl
        from scincl.model.tiny import build_tiny_bert, vocabulary_of

        corpus = make_demo(self.work / "demo_words", papers=300, seed=0)
        texts = [f"{r.get('title') or ''} {r.get('abstract') or ''}"
                 for shard in sorted(corpus.s2orc_metadata_dir.glob("*.jsonl.gz")) for _, r in iter_jsonl(shard)]
        return build_tiny_bert(self.work / "demo_bert", vocabulary_of(texts), hidden_size=32, num_layers=1,
                               max_positions=64)

    def all(self, why_no_gpu: Optional[str]) -> List[Row]:
        dev = self.device_type
        self.rows.append(environment_row(self.gpus, why_no_gpu))
        self.prepare_training()
        self.log("gpu_check: training fp32, bf16, gradient checkpointing and the torchrun reference ...")
        self.run_training()
        self.run("train fp32", dev, lambda: self.training("fp32", "false", False))
        self.run("train bf16", dev, lambda: self.training("bf16", "true", False))
        self.run("train gradient checkpointing", dev, lambda: self.training("checkpointing", "auto", True))
        self.run("train torchrun (all local GPUs)" if self.gpus else "train torchrun (2 CPU processes)", dev,
                 self.ddp, needs=30)
        self.knn()
        self.run("embedding (evaluation)", dev, self.embedding, needs=10)
        self.run("run_specter demo", dev, self.run_specter, needs=60)
        return self.rows


def detect_gpus() -> Tuple[int, Optional[str]]:
    """``(usable GPUs, why none)``."""
    import torch

    from scincl.model.device import cuda_unusable_reason

    reason = cuda_unusable_reason()
    return (0, reason) if reason else (torch.cuda.device_count(), None)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget_minutes", type=float, default=DEFAULT_BUDGET_MINUTES,
                        help="wall-clock budget of all checks (default 15: one GPU)")
    parser.add_argument("--work_dir", default=None, help="keep models, data and logs here (default: a temp dir)")
    parser.add_argument("--output", default=None, help="also write the table (Markdown) here")
    parser.add_argument("--json", default=None, help="also write the rows with their raw figures (JSON) here")
    parser.add_argument("--peak_tflops", type=float, default=None,
                        help="the GPU's dense bf16 peak, for MFU when its name is not in the known table")
    parser.add_argument("--dry_run", action="store_true", help="the CPU dry run even where a GPU works")
    args = parser.parse_args(argv)
    if args.budget_minutes <= 0:
        parser.error(f"--budget_minutes must be > 0, got {args.budget_minutes}")

    gpus, why = detect_gpus()
    if args.dry_run and gpus:
        gpus, why = 0, "--dry_run"
    sizes = paper_sizes() if gpus else dry_run_sizes()
    if not gpus:  # tiny models: one thread each, as torchrun's workers, and no stalls on a shared CPU
        import torch

        torch.set_num_threads(1)
    if gpus:
        print(f"gpu_check: {gpus} GPU(s); paper sizes; time budget {args.budget_minutes:g} min")
    else:
        print(f"gpu_check: no GPU ({why}): CPU dry run of the same code paths at tiny sizes")
    sys.stdout.flush()
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="gpu_check_"))
    work.mkdir(parents=True, exist_ok=True)
    budget = Budget(args.budget_minutes)
    try:
        check = GpuCheck(work, sizes, gpus, budget, args.peak_tflops, log=lambda m: print(m, file=sys.stderr))
        rows = check.all(why)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    table = markdown(rows)
    print(table, end="")
    failed = [r.check for r in rows if r.status == "fail"]
    print(f"{len(rows)} checks: {sum(r.status == 'pass' for r in rows)} pass, {len(failed)} fail, "
          f"{sum(r.status == 'skip' for r in rows)} skip; {time.perf_counter() - budget.started:.0f} s of the "
          f"{args.budget_minutes:g} min budget" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(table)
    if args.json:
        Path(args.json).write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
