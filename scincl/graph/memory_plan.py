"""Will the graph stage fit? Peak memory and disk of the graph, index and kNN stages, planned before a run.

Each stage's peak resident memory is a linear model over a few counts (papers, rows held in memory,
...) whose coefficients were *measured*: ``benchmarks/bench_memory.py --report`` fits them by least
squares to the peak RSS of real runs on synthetic graphs and writes them to ``memory_costs.json``
beside this module (with the runs they come from and the graph shape they were measured on: 128-d,
~10 citations per paper; a dimension-dependent count is scaled linearly in the dimension). Disk is
the arithmetic of the files each stage writes.

:func:`plan_memory` (``cli_graph.py plan_memory``) prints the plan and refuses, in one line naming the
setting to change, when the memory is too small; :func:`check_graph_memory` is the same check at
the start of ``embed_graph`` with the real counts, and :func:`fitting_block_rows` /
:func:`fitting_partitions` turn ``--memory_limit`` into a FastRP block size / PBG partition count.
"""
from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from scincl.errors import InputError

logger = logging.getLogger(__name__)

COSTS_PATH = Path(__file__).with_name("memory_costs.json")
METHODS = ("pbg", "fastrp", "prone")
# what a run needs beyond the planned peak: the estimates are checked to 25 % (bench_memory.py --report)
SAFETY = 1.25
GIB = 2 ** 30
# FastRP's in-memory column group (FastRPSettings.column_block) and powers (k = 4): the on-disk powers
FASTRP_COLUMNS, FASTRP_POWERS = 64, 4
# PBG writes lhs, rhs, rel as int64 per edge; the largest block size the plan proposes (rows)
PBG_EDGE_BYTES = 24
MAX_BLOCK_ROWS = 1 << 24
_UNITS = {"": 1, "b": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40}


def parse_memory(text: Union[str, int, float]) -> int:
    """Bytes of ``"32GB"``, ``"32G"``, ``"32GiB"``, ``"500MB"``, ``"1TB"`` or a number of bytes (units are binary)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)(i?b)?\s*", str(text).lower())
    if not match:
        raise InputError(f"--memory_limit {text!r} is not a size like 32GB, 500MB or 1TB")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if value < 2 ** 20:
        raise InputError(f"--memory_limit {text!r} is less than 1 MiB")
    return int(value)


def available_memory() -> int:
    """Bytes of memory this machine has available now (``psutil``: free + reclaimable)."""
    import psutil

    return int(psutil.virtual_memory().available)


def load_costs(path: Optional[Path] = None) -> Dict[str, Any]:
    """The measured cost table (see the module docstring); ``{"models": {}}`` before anything was measured."""
    path = Path(path or COSTS_PATH)
    return json.loads(path.read_text()) if path.exists() else {"models": {}}


def measured(costs: Dict[str, Any], *models: str) -> bool:
    """True when the cost table has every one of ``models``."""
    return all(m in costs["models"] for m in models)


def gib(value: float) -> str:
    return f"{value / GIB:,.1f} GiB"


@dataclass
class StageEstimate:
    """One stage's planned peak RSS and disk (bytes) with the setting it assumes."""

    stage: str
    setting: str
    peak_bytes: float
    disk_bytes: float

    def row(self, limit: int) -> str:
        fits = "yes" if self.peak_bytes <= limit else "NO"
        return f"| {self.stage} | {self.setting} | {gib(self.peak_bytes)} | {gib(self.disk_bytes)} | {fits} |"


def linear(costs: Dict[str, Any], model: str, counts: Dict[str, float]) -> float:
    """``base + sum(coefficient * count)`` of one model of the cost table."""
    entry = costs["models"][model]
    return float(entry["base_bytes"]) + sum(float(c) * float(counts[name]) for name, c in entry["per"].items())


def _scaled(dimension: int, costs: Dict[str, Any]) -> float:
    return dimension / float(costs["dimension"])


def fastrp_block_estimate(papers: int, edges: int, dimension: int, block_rows: int,
                          costs: Dict[str, Any]) -> StageEstimate:
    """Bounded FastRP (``--block_size``): peak RSS and the on-disk graph, powers, norms and output."""
    rows = min(block_rows, papers)
    peak = linear(costs, "fastrp_blocks", {"papers": papers, "block_rows": rows * _scaled(dimension, costs)})
    disk = (2 * edges * (8 + 4) + papers * (8 + 2 * FASTRP_COLUMNS * 4 + FASTRP_POWERS * 8 + 2 * dimension * 4))
    return StageEstimate("graph", f"fastrp --block_size {rows}", peak, disk)


def pbg_estimate(papers: int, edges: int, dimension: int, partitions: int, costs: Dict[str, Any]) -> StageEstimate:
    """PBG: one partition held with P = 1, two (lhs and rhs) otherwise, plus the import's entity table."""
    held = papers if partitions == 1 else 2 * math.ceil(papers / partitions)
    peak = linear(costs, "pbg", {"papers": papers, "held_rows": held * _scaled(dimension, costs)})
    disk = edges * PBG_EDGE_BYTES + 3 * papers * dimension * 4  # buckets, checkpoint (+ a saved copy), export
    return StageEstimate("graph", f"pbg --num_partitions {partitions}", peak, disk)


def in_memory_estimate(method: str, papers: int, dimension: int, costs: Dict[str, Any]) -> StageEstimate:
    """FastRP or ProNE with the whole graph and matrix in memory."""
    peak = linear(costs, method, {"papers": papers * _scaled(dimension, costs)})
    return StageEstimate("graph", f"{method} (in memory)", peak, papers * dimension * 4)


def index_estimate(papers: int, pool: int, dimension: int, costs: Dict[str, Any]) -> List[StageEstimate]:
    """``build_faiss`` (Flat) over the candidate pool, then kNN mining of the pool's queries."""
    counts = {"papers": papers, "pool_values": pool * dimension}
    return [StageEstimate("index", f"build_faiss Flat over {pool:,} papers", linear(costs, "index", counts),
                          pool * dimension * 4),
            StageEstimate("knn", f"kNN mining over {pool:,} papers", linear(costs, "knn", counts), 0.0)]


def fitting_block_rows(papers: int, edges: int, dimension: int, limit: int, costs: Dict[str, Any]) -> Optional[int]:
    """The largest power-of-two block (rows) whose bounded-FastRP plan, with the safety margin, fits ``limit``."""
    rows = MAX_BLOCK_ROWS
    while rows >= 1024:
        if fastrp_block_estimate(papers, edges, dimension, rows, costs).peak_bytes * SAFETY <= limit:
            return min(rows, papers)
        rows //= 2
    return None


def fitting_partitions(papers: int, edges: int, dimension: int, limit: int, costs: Dict[str, Any]) -> Optional[int]:
    """The fewest partitions (1, 2, 4, ... 1024) whose PBG plan, with the safety margin, fits ``limit``."""
    partitions = 1
    while partitions <= 1024:
        if pbg_estimate(papers, edges, dimension, partitions, costs).peak_bytes * SAFETY <= limit:
            return partitions
        partitions *= 2
    return None


def graph_estimate(method: str, papers: int, edges: int, dimension: int, costs: Dict[str, Any],
                   block_size: Optional[int] = None, partitions: Optional[int] = None) -> StageEstimate:
    """The graph stage's plan for the method and its setting (block size, partitions; none = in memory / 1)."""
    if method not in METHODS:
        raise InputError(f"--method {method!r} is not one of {', '.join(METHODS)}")
    if method == "pbg":
        return pbg_estimate(papers, edges, dimension, int(partitions or 1), costs)
    if method == "fastrp" and block_size:
        return fastrp_block_estimate(papers, edges, dimension, int(block_size), costs)
    return in_memory_estimate(method, papers, dimension, costs)


def advice(method: str, papers: int, edges: int, dimension: int, limit: int, costs: Dict[str, Any]) -> str:
    """The setting that makes the graph stage fit ``limit`` (or the method / dimension to change)."""
    if method == "pbg":
        partitions = fitting_partitions(papers, edges, dimension, limit, costs)
        if partitions:
            estimate = pbg_estimate(papers, edges, dimension, partitions, costs)
            return f"use -p entities.paper_id.num_partitions={partitions} (peak ~{gib(estimate.peak_bytes)})"
    rows = fitting_block_rows(papers, edges, dimension, limit, costs)
    if rows:
        estimate = fastrp_block_estimate(papers, edges, dimension, rows, costs)
        switch = "" if method == "fastrp" else "--method fastrp "
        return f"use {switch}--block_size {rows} (peak ~{gib(estimate.peak_bytes)})"
    for smaller in (dimension // 2, dimension // 4, 64, 32):
        if 0 < smaller < dimension and fitting_block_rows(papers, edges, smaller, limit, costs):
            return f"use --method fastrp --dimension {smaller} with --block_size (no setting fits {dimension}-d)"
    return "no setting fits: the per-paper tables alone exceed it; use a machine with more memory"


def choose_setting(method: str, papers: int, edges: int, dimension: int, memory_limit: Optional[Any],
                   block_size: Optional[int] = None, partitions: Optional[int] = None):
    """``(block_size, partitions)`` for ``--memory_limit``: fastrp's largest block that fits (none when the
    whole graph fits in memory), pbg's fewest partitions that fit; settings the user gave are kept."""
    costs = load_costs()
    if memory_limit is None:
        return block_size, partitions
    limit = parse_memory(memory_limit)
    if method == "pbg" and partitions is None and measured(costs, "pbg"):
        partitions = fitting_partitions(papers, edges, dimension, limit, costs)
    if method == "fastrp" and block_size is None and measured(costs, "fastrp", "fastrp_blocks"):
        if in_memory_estimate(method, papers, dimension, costs).peak_bytes * SAFETY > limit:
            block_size = fitting_block_rows(papers, edges, dimension, limit, costs)
    return block_size, partitions


def memory_limit_bytes(memory_limit: Optional[Any]) -> int:
    """``--memory_limit`` in bytes, or the memory available now when it is not given."""
    return parse_memory(memory_limit) if memory_limit is not None else available_memory()


def expected_edges(papers: int, costs: Dict[str, Any]) -> int:
    """Edges of a graph of ``papers`` papers with the citations per paper of the measured graphs (for the disk
    estimate while the edges are not counted yet; no peak model counts edges, see :func:`check_graph_memory`)."""
    return max(1, round(papers * float(costs.get("edges_per_paper", 10))))


def check_graph_memory(method: str, papers: int, edges: Optional[int], dimension: int,
                       memory_limit: Optional[Any] = None, block_size: Optional[int] = None,
                       partitions: Optional[int] = None) -> Optional[StageEstimate]:
    """The graph stage's estimate, or an :class:`InputError` naming the setting that fits when it does not
    (``None``, with a warning, when the cost table has no measurement for the method).

    ``edges=None``: not counted yet, as in an S2ORC-layout corpus before its citations stage (one record per
    paper lists its references). The check is the same: every peak model counts papers and rows held
    (the per-paper costs include the edges of graphs with the measured ``edges_per_paper``, ~10, as S2ORC's
    463M / 52.6M = 8.8), so only the disk estimate assumes that many edges.
    """
    costs = load_costs()
    limit = memory_limit_bytes(memory_limit)
    model = {"pbg": "pbg", "prone": "prone"}.get(method, "fastrp_blocks" if block_size else "fastrp")
    if not measured(costs, model):
        logger.warning("memory of %s not checked: %s has no measured costs for it", method, COSTS_PATH.name)
        return None
    counted = f"{edges:,} edges" if edges is not None else "edges not counted yet"
    edges = edges if edges is not None else expected_edges(papers, costs)
    estimate = graph_estimate(method, papers, edges, dimension, costs, block_size, partitions)
    if estimate.peak_bytes > limit:
        where = f"--memory_limit {memory_limit}" if memory_limit is not None else "the memory available now"
        raise InputError(f"{estimate.setting} needs ~{gib(estimate.peak_bytes)} at {papers:,} papers / {counted} / "
                         f"{dimension}-d, more than {where} ({gib(limit)}); "
                         f"{advice(method, papers, edges, dimension, limit, costs)}")
    return estimate


def check_link_prediction_memory(papers: int, edges: Optional[int], dimension: int, partitions: int,
                                 memory_limit: Optional[Any] = None) -> Optional[StageEstimate]:
    """Link prediction of FastRP or ProNE embeddings (``embed_graph --test_edges``) before the run, or an
    :class:`InputError` naming the partitions that fit (``None``, with a warning, without PBG's measured costs).

    The embeddings are written as a checkpoint in the import's ``partitions`` and scored by PBG's evaluator,
    which loads one partition (P = 1: all ``papers x dimension`` floats) or two at a time, as PBG's
    training does, so whatever ``--block_size`` bounds, the evaluation holds what a PBG run of that many
    partitions holds. It is planned with PBG's measured model: training also holds the optimizer state
    and buffers, so this is an upper bound.
    """
    costs = load_costs()
    if not measured(costs, "pbg"):
        logger.warning("memory of link prediction not checked: %s has no measured costs for it", COSTS_PATH.name)
        return None
    limit = memory_limit_bytes(memory_limit)
    edges = edges if edges is not None else expected_edges(papers, costs)
    held = pbg_estimate(papers, edges, dimension, partitions, costs)
    estimate = StageEstimate("link prediction", f"PBG's evaluator over {partitions} partition(s)", held.peak_bytes,
                             0.0)
    if estimate.peak_bytes > limit:
        where = f"--memory_limit {memory_limit}" if memory_limit is not None else "the memory available now"
        fits = fitting_partitions(papers, edges, dimension, limit, costs)
        fix = (f"evaluate with -p entities.paper_id.num_partitions={fits} (peak "
               f"~{gib(pbg_estimate(papers, edges, dimension, fits, costs).peak_bytes)}) or leave out --test_edges"
               if fits else "leave out --test_edges")
        raise InputError(f"link prediction on --test_edges: {estimate.setting} needs ~{gib(estimate.peak_bytes)} at "
                         f"{papers:,} papers / {dimension}-d, more than {where} ({gib(limit)}); {fix}")
    return estimate


def plan_memory(papers: int, edges: int, dimension: int = 128, method: str = "fastrp",
                memory_limit: Optional[str] = None, block_size: Optional[int] = None,
                partitions: Optional[int] = None, pool: Optional[int] = None) -> Dict[str, Any]:
    """Expected peak memory and disk of the graph, index and kNN stages, before a run.

    python cli_graph.py plan_memory --papers 52600000 --edges 463000000 --dimension 128 \\
        --method fastrp --memory_limit 32GB

    --method pbg|fastrp|prone. --block_size ROWS (fastrp) and --partitions P (pbg) plan that
    setting; without them, and with --memory_limit, fastrp gets the largest block size and pbg the
    fewest partitions that fit (prone runs in memory only). --memory_limit: e.g. 32GB (binary
    units; default: the memory available now). --pool: papers of the kNN candidate pool (the
    training queries' candidates; default: all papers). Estimates come from the measured cost table
    (scincl/graph/memory_costs.json, written by benchmarks/bench_memory.py --report). Refuses with
    one line naming the setting to change when the graph stage does not fit; prints a table otherwise.
    """
    papers, edges, dimension = int(papers), int(edges), int(dimension)
    if papers < 1 or edges < 1 or not 1 <= dimension <= 4096:
        raise InputError("--papers and --edges must be positive and --dimension in [1, 4096]")
    costs = load_costs()
    if not measured(costs, "fastrp", "fastrp_blocks", "pbg", "prone", "index", "knn"):
        raise InputError(f"{COSTS_PATH} has no measured costs yet: run benchmarks/bench_memory.py and --report")
    limit = memory_limit_bytes(memory_limit)
    block_size, partitions = choose_setting(method, papers, edges, dimension, memory_limit, block_size, partitions)
    graph = check_graph_memory(method, papers, edges, dimension, memory_limit, block_size, partitions)
    stages = [graph] + index_estimate(papers, int(pool or papers), dimension, costs)
    lines = [f"memory limit {gib(limit)}; costs measured at {costs['dimension']}-d, ~{costs['edges_per_paper']} "
             f"citations per paper ({COSTS_PATH.name})", "| stage | setting | peak memory | disk | fits |",
             "|---|---|---:|---:|---|"] + [stage.row(limit) for stage in stages]
    return {"memory_limit_bytes": limit, "stages": [vars(s) for s in stages], "text": "\n".join(lines)}
