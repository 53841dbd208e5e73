"""The plan before stage 1 (issue 42): what a ``run_specter`` run is about to do (corpus papers, counted from its
files and extrapolated beyond :data:`COUNT_BYTES_LIMIT`; graph; queries, triplets and optimizer steps; papers
evaluated) and an *estimate* of each heavy stage's time here, logged at the start of every run (``--dry_run``: printed).

The estimates scale the CPU seconds ``benchmarks/bench_scale.py`` measured on the project's 2-core machine
(``docs/scale/results.json``: a PyTorch-BigGraph epoch per edge and dimension; ``train`` and ``embed`` of MiniLM-L6 at
256 tokens per triplet and paper) by layers x hidden size² x length and by this machine's cores: orders of magnitude.
The ``train`` row (0.9 CPU s per triplet at 64 tokens, start-up included) overestimates short runs up to ~4x against
the hep-th runs of docs/results.md (0.2 CPU s), which errs on the side of the warning.
"""
from __future__ import annotations

import gzip
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from scincl.settings.run import REPO_ROOT

logger = logging.getLogger(__name__)

SCALE_RESULTS = REPO_ROOT / "docs" / "scale" / "results.json"
COUNT_BYTES_LIMIT = 256 << 20  # corpus files beyond this many bytes in total: lines extrapolated from the first file
REFERENCE_ENCODER = {"layers": 6, "hidden": 384, "tokens": 256}  # bench_scale's MiniLM-L6 runs (train, embed)
CPU_WARNING_HOURS = 2.0  # a run estimated longer than this on a machine without a GPU gets the warning


@dataclass
class Workload:
    """What one run is about to do (counts and settings), and the estimated hours of its heavy stages."""

    papers: Optional[int]
    graph: str
    queries: Optional[int]
    triplets: Optional[int]
    steps: Optional[int]
    max_sequence_length: int
    batch: str
    eval_papers: Optional[int]
    encoder: str
    hours: Dict[str, float] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    epochs: float = 1.0  # training epochs over the triplets

    def total_hours(self) -> float:
        """The estimated hours of the stages estimated."""
        return sum(self.hours.values())


def count_lines(files: Sequence[Path]) -> Optional[int]:
    """Lines in ``files`` (gzip read as text); beyond :data:`COUNT_BYTES_LIMIT` bytes, the first file's lines per
    byte times the total size. ``None`` when there is no file."""
    files = [Path(f) for f in files if Path(f).is_file()]
    if not files:
        return None
    total = sum(f.stat().st_size for f in files)
    sample = files if total <= COUNT_BYTES_LIMIT else files[:1]
    lines = 0
    for f in sample:
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rb") as fh:
            lines += sum(1 for _ in fh)
    if sample is files:
        return lines
    return int(lines * total / max(1, files[0].stat().st_size))


def _scale_rows() -> Dict[str, dict]:
    """The benchmark's rows this module uses: ``train``, ``embed`` and the largest ``epoch``."""
    if not SCALE_RESULTS.is_file():
        return {}
    rows = json.loads(SCALE_RESULTS.read_text())
    found = {r["stage"]: r for r in rows if r["stage"] in ("train", "embed")}
    epochs = [r for r in rows if r["stage"] == "epoch" and r.get("edges")]
    if epochs:
        found["epoch"] = max(epochs, key=lambda r: r["edges"])
    return found


def encoder_size(model_dir_or_name: str) -> Optional[Dict[str, int]]:
    """``{"layers", "hidden"}`` from a local model's ``config.json`` (``None`` when it is not a local folder)."""
    config = Path(model_dir_or_name) / "config.json"
    if not config.is_file():
        return None
    data = json.loads(config.read_text())
    layers = data.get("num_hidden_layers") or data.get("n_layers")
    hidden = data.get("hidden_size") or data.get("dim")
    return {"layers": int(layers), "hidden": int(hidden)} if layers and hidden else None


def transformer_factor(size: Dict[str, int], tokens: int) -> float:
    """The cost of ``size`` at ``tokens`` relative to the benchmark's MiniLM-L6 at 256 tokens."""
    ref = REFERENCE_ENCODER
    return (size["layers"] * size["hidden"] ** 2 * tokens) / (ref["layers"] * ref["hidden"] ** 2 * ref["tokens"])


def estimate_hours(workload: Workload, size: Optional[Dict[str, int]], edges: Optional[int], dimension: Optional[int],
                   epochs: Optional[int], cores: Optional[int] = None) -> Dict[str, float]:
    """Hours of the graph, train and evaluation stages from the benchmark's CPU seconds (see the module docstring)."""
    rows, cores = _scale_rows(), max(1, cores or os.cpu_count() or 1)
    hours: Dict[str, float] = {}
    epoch = rows.get("epoch")
    if epoch and edges and dimension and epochs:
        per_edge_dim = epoch["cpu_s"] / (epoch["edges"] * 128)  # bench_scale trains the 128-d config
        hours["graph"] = per_edge_dim * edges * dimension * epochs / cores / 3600
    if size is not None:
        train, embed = rows.get("train"), rows.get("embed")
        factor = transformer_factor(size, workload.max_sequence_length)
        if train and workload.triplets:
            hours["train"] = (train["cpu_s"] / train["units"] * factor * workload.triplets * workload.epochs
                              / cores / 3600)
        if embed and workload.eval_papers:
            hours["eval"] = embed["cpu_s"] / embed["units"] * factor * workload.eval_papers * 2 / cores / 3600
    return hours


def format_workload(workload: Workload, gpu: bool) -> str:
    """The plan as lines for the log (and ``--dry_run``'s output)."""
    def count(value: Optional[int]) -> str:
        return f"{value:,}" if value is not None else "counted when its stage runs"

    lines = ["plan of this run (before stage 1):",
             f"  corpus: {count(workload.papers)} papers",
             f"  graph: {workload.graph}",
             f"  queries -> triplets -> optimizer steps: {count(workload.queries)} -> {count(workload.triplets)} -> "
             f"{count(workload.steps)} ({workload.batch}, {workload.max_sequence_length} tokens, {workload.encoder})",
             "  evaluation: " + (f"{workload.eval_papers:,} SciDocs papers embedded per encoder"
                                 if workload.eval_papers is not None else "SciDocs papers counted when its stage runs")]
    if workload.hours:
        where = "a GPU (the estimate is this CPU's: a GPU is faster)" if gpu else f"{os.cpu_count()} CPU cores"
        parts = ", ".join(f"{name} {_duration(h)}" for name, h in workload.hours.items())
        lines.append(f"  estimate on {where}: {parts}; about {_duration(workload.total_hours())} in all "
                     "(from docs/scale/results.json, an estimate)")
    lines += [f"  note: {note}" for note in workload.notes]
    return "\n".join(lines)


def cpu_warning(workload: Workload, gpu: bool, preset_hint: str) -> Optional[str]:
    """The warning for a long recipe about to run without a GPU, naming the small-budget preset."""
    if gpu or workload.total_hours() < CPU_WARNING_HOURS:
        return None
    return (f"this run is estimated at about {_duration(workload.total_hours())} on this machine's CPU (no GPU): "
            f"the paper's recipe is sized for GPUs; for a CPU run use {preset_hint}, or stop here with Ctrl-C "
            "(--dry_run prints this plan without running)")


def _duration(hours: float) -> str:
    if hours < 1 / 60:
        return "under a minute"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:.1f} days"


def run_workload(plan: Any, encoder: str) -> Workload:
    """What a ``run_specter`` run is about to do, counted from its inputs before stage 1: ``plan`` is its
    :class:`~scincl.pipeline.scincl_plan.SciNCLPlan` (settings ``s``, ``metadata_dir``, ``builds_graph``, ...),
    ``encoder`` its base encoder's short name."""
    s, notes = plan.s, []
    papers = edges = dimension = epochs = None
    if s.demo:
        papers = s.demo_papers
    elif plan.builds_graph and plan.metadata_dir is not None:
        from scincl.corpus import open_corpus

        corpus = open_corpus(plan.metadata_dir, plan.corpus_format)
        papers = count_lines(corpus.text_files)
        if not corpus.references_grouped:  # one line per citation: the edges are countable now
            edges = count_lines(corpus.reference_files)
        else:
            notes.append("edges are counted by the citations stage: the graph's time is not estimated")
    if not plan.builds_graph:
        graph = f"given ({s.graph_embeddings_path})"
    else:
        from scincl.graph.memory_plan import check_graph_memory
        from scincl.graph.pbg_config import load_config_dict

        config = load_config_dict(s.biggraph_config or "s2orc_768d_dot.py", s.biggraph_overrides)
        dimension = int(config["dimension"])
        if s.graph_method == "pbg":
            epochs = int(config.get("num_epochs", 1))
            graph = (f"PyTorch-BigGraph, {dimension} dimensions, {epochs} epochs, "
                     f"{config.get('workers') or 'all'} worker(s)")
        else:
            graph = f"{s.graph_method}, {dimension} dimensions (one pass over the graph)"
        if papers:  # issue 45: refused before stage 1 when the graph stage cannot fit (edges None: S2ORC layout)
            partitions = (config.get("entities") or {}).get("paper_id", {}).get("num_partitions")
            estimate = check_graph_memory(s.graph_method, papers, edges, dimension, partitions=partitions)
            if estimate is not None:
                graph += f"; peak memory ~{estimate.peak_bytes / 2 ** 30:.1f} GiB (scincl/graph/memory_plan.py)"
    ratio = s.sample_queries_ratio if s.sample_queries_ratio is not None else 1.0
    queries = int(round(papers * ratio)) if papers else None
    triplets = queries * s.triples_per_query if queries is not None else None
    from scincl.model.train import PAPER_TRAINING_DEFAULTS

    training = {**PAPER_TRAINING_DEFAULTS, **s.training_options}
    batch, accumulation = int(training["per_device_train_batch_size"]), int(training["gradient_accumulation_steps"])
    epochs_trained = float(training["num_train_epochs"])
    steps = (int(-(-triplets // (batch * accumulation)) * epochs_trained) if triplets is not None else None)
    if queries is not None:
        notes.append(f"queries: up to {ratio:g} x the papers, before the graph and leakage filters")
    work = Workload(papers=papers, graph=graph, queries=queries, triplets=triplets, steps=steps,
                    max_sequence_length=int(s.max_sequence_length), encoder=encoder, notes=notes,
                    batch=f"batch {batch} x {accumulation} accumulation, {epochs_trained:g} epoch(s)",
                    eval_papers=eval_paper_count(plan.scidocs_dir, s.val_or_test_or_both), epochs=epochs_trained)
    work.hours = estimate_hours(work, encoder_size(plan.base_model), edges, dimension, epochs)
    return work


def announce(plan: Any, encoder: str) -> str:
    """The text of :func:`run_workload` (logged unless ``--dry_run``); logs the CPU warning of a long run under the
    paper's recipe."""
    from scincl.model.device import default_device

    work, gpu = run_workload(plan, encoder), default_device() == "cuda"
    text = format_workload(work, gpu)
    if not plan.s.dry_run:
        logger.info("%s", text)
    warning = cpu_warning(work, gpu, "--preset cpu")  # a long run without a GPU: name the CPU preset
    if warning and plan.s.preset in (None, "paper"):
        logger.warning("%s", warning)
    return text


def eval_paper_count(scidocs: Optional[Path], split: str) -> Optional[int]:
    """How many SciDocs papers the evaluation embeds per encoder: every paper of the folder for both splits, else
    the papers one ``split`` needs (scincl/scidocs_io.py:split_papers, as the evaluate stage embeds them); ``None``
    without a SciDocs folder."""
    if scidocs is None or not scidocs.is_dir():
        return None
    if split != "both":
        from scincl.scidocs_io import split_papers

        return len(split_papers(scidocs, split))
    return sum(len(json.loads(f.read_text())) for f in sorted(scidocs.glob("paper_metadata_*.json")))
