"""``bench_memory.py --report``: fit the memory cost table from measured runs, check it on the runs the
fit did not use, and write the tables of ``docs/SCALE.md`` "Will it fit?".

Each model of :mod:`scincl.graph.memory_plan` is ``base + sum(coefficient * count)``; its coefficients
are the non-negative least-squares fit over the *fit runs* (graphs of ``FIT_SIZES`` papers); every other run of the
method is a *check run*: the plan's estimate against its measured peak. The peak used is the RSS of the one
process (FastRP, ProNE, index, kNN) and the proportional set size of PBG's process tree (its workers
share the partitions' memory: RSS would count it once per worker; PSS also splits the shared
libraries with other processes, < 0.2 GiB per process). ProNE's and in-memory FastRP's runs also come from ``docs/scale/graph_methods/results.json``
(``bench_scale.py``, the same synthetic graphs).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

from scincl.graph import memory_plan

REPO_ROOT = Path(__file__).resolve().parent.parent
GRAPH_METHODS_RESULTS = REPO_ROOT / "docs" / "scale" / "graph_methods" / "results.json"
FIT_SIZES = (100_000, 1_000_000)  # the runs each model is fitted on; the others check it
MIB = 2 ** 20
S2ORC = {"papers": 52_600_000, "edges": 463_000_000, "dimension": 128, "pool": 680_967}
NODES_GIB = (32, 64, 128)


def peak_bytes(record: dict) -> float:
    """PBG's process tree: PSS (its workers share the partitions); one process: RSS (its libraries included,
    as on a node of its own; PSS would split them with whatever else runs on the machine)."""
    if record["method"] == "pbg" and record.get("peak_pss_mib"):
        return float(record["peak_pss_mib"]) * MIB
    return float(record["peak_rss_mib"]) * MIB


def fit(records: List[dict], counts: Dict[str, Callable[[dict], float]]) -> dict:
    """``{"base_bytes", "per": {count: bytes}, "runs"}``: least squares of the peaks over the counts, with
    every coefficient >= 0 (a cost; PBG's runs at 1 and 2 partitions hold the same rows, so an
    unconstrained fit trades the per-paper against the per-held-row cost within the noise)."""
    from scipy.optimize import nnls

    matrix = np.array([[1.0] + [float(f(r)) for f in counts.values()] for r in records])
    target = np.array([peak_bytes(r) for r in records])
    scale = matrix.max(axis=0)  # columns of similar size for the solver
    solution = nnls(matrix / scale, target)[0] / scale
    return {"base_bytes": round(float(solution[0])), "per": {k: round(float(v), 3) for k, v in zip(counts, solution[1:])},
            "runs": [r["run"] for r in records]}


def _bounded(r: dict) -> bool:
    return r["method"] == "fastrp" and bool(r.get("block_size"))


def _held(r: dict) -> float:
    rows = r["papers"] if r["partitions"] == 1 else 2 * -(-r["papers"] // r["partitions"])
    return rows * r["dimension"] / 128


MODELS = {  # model -> (which records, counts)
    "fastrp_blocks": (_bounded, {"papers": lambda r: r["papers"],
                                 "block_rows": lambda r: min(r["block_size"], r["papers"]) * r["dimension"] / 128}),
    "fastrp": (lambda r: r["method"] == "fastrp" and not r.get("block_size"), {"papers": lambda r: r["papers"]}),
    "prone": (lambda r: r["method"] == "prone", {"papers": lambda r: r["papers"]}),
    "pbg": (lambda r: r["method"] == "pbg", {"papers": lambda r: r["papers"], "held_rows": _held}),
    "index": (lambda r: r["method"] == "index", {"papers": lambda r: r["papers"],
                                                 "pool_values": lambda r: r["pool"] * r["dimension"]}),
    "knn": (lambda r: r["method"] == "knn", {"papers": lambda r: r["papers"],
                                             "pool_values": lambda r: r["pool"] * r["dimension"]}),
}


def embedder_records() -> List[dict]:
    """ProNE's and in-memory FastRP's 100k and 1M runs of ``bench_scale.py`` (128-d, the same synthetic graphs)."""
    rows = json.loads(GRAPH_METHODS_RESULTS.read_text())
    return [{"run": f"{r['stage']} papers={r['papers']} (bench_scale)", "method": r["stage"], "papers": r["papers"],
             "edges": r["edges"], "dimension": 128, "peak_rss_mib": r["peak_rss_mib"], "wall_s": r["wall_s"],
             "cpu_s": r["cpu_s"]}
            for r in rows if r["stage"] in ("prone", "fastrp") and r["papers"] in FIT_SIZES]


def estimate(model: str, record: dict, costs: dict) -> float:
    _, counts = MODELS[model]
    return memory_plan.linear(costs, model, {name: f(record) for name, f in counts.items()})


def s2orc_rows(costs: dict) -> List[str]:
    """The plan at S2ORC size for each method and setting, and which node sizes it fits."""
    papers, edges, pool = S2ORC["papers"], S2ORC["edges"], S2ORC["pool"]
    plans = [(128, memory_plan.in_memory_estimate("fastrp", papers, 128, costs)),
             (128, memory_plan.in_memory_estimate("prone", papers, 128, costs))]
    plans += [(128, memory_plan.fastrp_block_estimate(papers, edges, 128, rows, costs)) for rows in (1 << 20, 1 << 22)]
    plans += [(dim, memory_plan.pbg_estimate(papers, edges, dim, p, costs))
              for dim, p in ((128, 1), (128, 2), (128, 4), (128, 8), (768, 1), (768, 8), (768, 16), (768, 32))]
    plans += [(dim, stage) for dim in (128, 768) for stage in memory_plan.index_estimate(papers, pool, dim, costs)]
    out = ["| stage | setting | planned peak | disk | " + " | ".join(f"{g} GB node" for g in NODES_GIB) + " |",
           "|---|---|---:|---:|" + "---|" * len(NODES_GIB)]
    for dim, s in plans:
        fits = ["yes" if s.peak_bytes * memory_plan.SAFETY <= g * 2 ** 30 else "no" for g in NODES_GIB]
        out.append(f"| {s.stage} | {s.setting}, {dim}-d | {memory_plan.gib(s.peak_bytes)} | "
                   f"{memory_plan.gib(s.disk_bytes)} | " + " | ".join(fits) + " |")
    return out


def report(records: List[dict], table_path: Path) -> None:
    """Write ``memory_costs.json`` and ``table_path``; print the check of every run the fit did not use."""
    everything = records + embedder_records()
    costs = {"source": "benchmarks/bench_memory.py --report over docs/scale/memory/results.json "
                       "(and docs/scale/graph_methods/results.json for prone)",
             "dimension": 128, "edges_per_paper": 9.9, "models": {}}
    for model, (pick, counts) in MODELS.items():
        chosen = [r for r in everything if pick(r) and r["papers"] in FIT_SIZES]
        if len(chosen) > len(counts):
            costs["models"][model] = fit(chosen, counts)
    memory_plan.COSTS_PATH.write_text(json.dumps(costs, indent=1) + "\n")
    lines = ["| run | papers | edges | setting | measured peak (MiB) | planned (MiB) | error | fit or check | "
             "wall / CPU s | link-prediction MRR |", "|---|---:|---:|---|---:|---:|---:|---|---|---:|"]
    for r in sorted(everything, key=lambda r: (r["method"], r["papers"], str(r.get("block_size")),
                                               r.get("partitions", 0))):
        model = next((m for m, (pick, _) in MODELS.items() if pick(r)), None)
        if model not in costs["models"]:
            continue
        planned = estimate(model, r, costs)
        role = "fit" if r["run"] in costs["models"][model]["runs"] else "check"
        setting = (f"block_size {r['block_size']}" if r.get("block_size") else
                   f"{r['partitions']} partition(s), {r['epochs']} epochs" if r["method"] == "pbg" else
                   f"pool {r['pool']:,}" if r.get("pool") else "in memory")
        error = planned / peak_bytes(r) - 1
        edges = f"{r['edges']:,}" if r["edges"] else "—"
        lines.append(f"| {r['method']} | {r['papers']:,} | {edges} | {setting} | {peak_bytes(r) / MIB:,.0f} | "
                     f"{planned / MIB:,.0f} | {error:+.0%} | {role} | "
                     f"{r.get('wall_s', '—')} / {r.get('cpu_s', '—')} | {r.get('mrr', '—')} |")
        if role == "check":
            print(f"check {r['run']}: measured {peak_bytes(r) / MIB:,.0f} MiB, planned {planned / MIB:,.0f} MiB "
                  f"({error:+.0%})")
    table = ["<!-- written by benchmarks/bench_memory.py --report -->", "", "Measured runs:", ""] + lines
    if memory_plan.measured(costs, *MODELS):
        table += ["", "Planned at S2ORC size (52.6M papers, 463M edges; index and kNN over the 680,967-paper pool):",
                  ""] + s2orc_rows(costs)
    table_path.write_text("\n".join(table) + "\n")
    print("\n".join(table))
