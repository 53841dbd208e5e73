"""Table, power-law fits, S2ORC extrapolation and log-log plots of ``bench_scale.py`` results.

Each stage grows with one quantity (its *unit*); ``cpu = a * unit^b`` is fitted on the measured
sizes (the two largest when there are more) and evaluated at S2ORC's value of that unit
(``bench_scale.S2ORC``); "linear" scales the largest measured size proportionally (b = 1), the
conservative figure when start-up costs flatten the small sizes. CPU time (core-seconds) is
fitted rather than wall time because the
machine was shared: wall time depends on the other jobs, CPU time much less. Mining also scales
with the number of queries: its CPU time per query is fitted against the index size and
multiplied by S2ORC's query count. The S2ORC columns turn core-seconds into hours on a stated
machine: ``cpu / cores`` for the stages that run in parallel (ideal scaling: a lower bound of
the time), ``cpu`` for single-threaded ones (PBG's importer).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

# stage -> (record field the time grows with, S2ORC key of bench_scale.S2ORC, label)
UNITS = {
    "extract": ("papers", "papers", "papers"),
    "import": ("edges", "edges", "train edges"),
    "import_pbg": ("edges", "edges", "train edges"),
    "epoch": ("edges", "edges", "train edges"),
    "prone": ("edges", "edges", "train edges"),
    "fastrp": ("edges", "edges", "train edges"),
    "export": ("papers", "papers", "papers"),
    "faiss": ("papers", "index", "index rows"),
    "mine": ("papers", "index", "index rows (x queries)"),
    "metadata": ("papers", "papers", "papers scanned"),
}
ONCE_S2ORC = {"tokenize": "index", "embed": "index", "train": "triples"}  # per paper / per triple
# cores of the stated target machine; parallel stages are scaled by 2 / TARGET_CORES (ideal, an upper
# bound on the gain), PBG's own importer is single-threaded and keeps its time.
TARGET_CORES = 64
SINGLE_THREADED = {"import_pbg"}
LABELS = {
    "extract": "citation extraction (get_citations)", "import": "edge import, fast (import_edges)",
    "import_pbg": "edge import, PBG's importer (--importer pbg)", "epoch": "one BigGraph epoch, 128-d (train_biggraph)",
    "prone": "ProNE, 128-d, whole embedding (embed_graph --method prone)",
    "fastrp": "FastRP, 128-d, whole embedding (embed_graph --method fastrp)",
    "export": "export (export_embeddings)", "faiss": "FAISS Flat build (build_faiss)",
    "mine": "kNN mining, k = 4000 (get_knn_triples --ann_backend exact)",
    "metadata": "metadata extraction (get_metadata)", "tokenize": "tokenisation (MiniLM tokenizer, 256 tokens)",
    "embed": "embedding (embed, MiniLM-L6, CPU)", "train": "training (train, MiniLM-L6, CPU, batch 8)",
}


def fit(x: List[float], y: List[float]) -> Optional[tuple]:
    """``(a, b)`` with ``y = a * x^b`` (least squares in log-log); None with fewer than two points."""
    if len(x) < 2:
        return None
    b, log_a = np.polyfit(np.log(x), np.log(y), 1)
    return float(np.exp(log_a)), float(b)


def human(seconds: float) -> str:
    """``12.3 s`` / ``4.5 min`` / ``6.7 h`` / ``8.9 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def per_unit(stage: str, r: dict, what: str) -> float:
    """The fitted quantity of a record: its time, per query for mining."""
    return r[what] / r["queries"] if stage == "mine" else r[what]


def extrapolate(stage: str, rows: List[dict], s2orc: Dict[str, int]) -> Optional[dict]:
    """Fits (CPU and wall) of one size-dependent stage and its S2ORC core-seconds."""
    field, key, _ = UNITS[stage]
    rows = sorted(rows, key=lambda r: r[field])[-2:]
    f = fit([r[field] for r in rows], [per_unit(stage, r, "cpu_s") for r in rows])
    w = fit([r[field] for r in rows], [per_unit(stage, r, "wall_s") for r in rows])
    if f is None:
        return None
    a, b = f
    scale = s2orc["queries"] if stage == "mine" else 1
    largest = rows[-1]
    linear = per_unit(stage, largest, "cpu_s") * s2orc[key] / largest[field] * scale
    return {"a": a, "b": b, "b_wall": w[1], "s2orc_cpu_s": a * s2orc[key] ** b * scale, "linear_cpu_s": linear}


def write_report(records: List[dict], out_dir: Path, s2orc: Optional[Dict[str, int]] = None) -> Path:
    """``out_dir/SCALE_TABLE.md`` and ``out_dir/<stage>.png``; returns the markdown path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benchmarks.bench_scale import S2ORC

    s2orc = s2orc or S2ORC
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = sorted({r["papers"] for r in records if r.get("papers")})
    head = "| stage | grows with | " + " | ".join(f"{n:,} papers: wall / CPU / peak RSS" for n in sizes)
    head += (f" | exponent b (CPU; wall) | S2ORC core-hours: fit; linear | S2ORC, 2 cores (linear) | "
             f"S2ORC, {TARGET_CORES} cores (linear) |")
    lines = [head, "|" + "---|" * (6 + len(sizes))]
    for stage in UNITS:
        rows = [r for r in records if r["stage"] == stage and r.get("papers")]
        if not rows:
            continue
        by_size = {r["papers"]: r for r in rows}
        cells = []
        for n in sizes:
            r = by_size.get(n)
            cells.append("—" if r is None else f"{human(r['wall_s'])} / {human(r['cpu_s'])} / {r['peak_rss_mib']:,.0f} MiB")
        ex = extrapolate(stage, rows, s2orc)
        if ex is None:
            lines.append(f"| {LABELS[stage]} | {UNITS[stage][2]} | " + " | ".join(cells) + " | — | — | — | — |")
        else:
            cpu = ex["linear_cpu_s"]
            on = [cpu if stage in SINGLE_THREADED else cpu / cores for cores in (2, TARGET_CORES)]
            lines.append(f"| {LABELS[stage]} | {UNITS[stage][2]} | " + " | ".join(cells) +
                         f" | {ex['b']:.2f}; {ex['b_wall']:.2f} | {ex['s2orc_cpu_s'] / 3600:,.1f}; {cpu / 3600:,.1f} | "
                         f"{human(on[0])} | {human(on[1])} |")
        _plot(plt, stage, rows, ex, s2orc, out_dir)
    once = [r for r in records if r["stage"] in ONCE_S2ORC]
    if once:
        lines += ["", "| stage (size-independent) | measured: wall / CPU / peak RSS | CPU per unit | S2ORC core-hours | "
                  f"S2ORC, 2 cores | S2ORC, {TARGET_CORES} cores |", "|---|---|---|---|---|---|"]
        for r in once:
            per = r["cpu_s"] / r["units"]
            n = s2orc[ONCE_S2ORC[r["stage"]]]
            unit = "triple" if r["stage"] == "train" else "paper"
            lines.append(f"| {LABELS[r['stage']]} | {r['units']:,} {unit}s: {human(r['wall_s'])} / "
                         f"{human(r['cpu_s'])} / {r['peak_rss_mib']:,.0f} MiB | {per * 1000:.2f} ms per {unit} | "
                         f"{per * n / 3600:,.1f} for {n:,} | {human(per * n / 2)} | {human(per * n / TARGET_CORES)} |")
    path = out_dir / "SCALE_TABLE.md"
    path.write_text("\n".join(lines) + "\n")
    if any(r["stage"] in ("prone", "fastrp") for r in records):
        (out_dir / "GRAPH_METHODS_TABLE.md").write_text(method_ratios(records, s2orc))
    return path


PBG_EPOCHS = 20  # SciNCL §4.2: 20 epochs


def method_ratios(records: List[dict], s2orc: Optional[Dict[str, int]] = None) -> str:
    """Each embedder against PBG's 20 epochs (epoch x 20, the same run's records): core-seconds per size,
    the S2ORC extrapolation (linear in the edges from that size, as the main table), the ratio, and the
    peak RSS at S2ORC's paper count (the per-paper growth since the previous size; linear for the first)."""
    from benchmarks.bench_scale import EMBEDDER_STAGES, S2ORC

    s2orc = s2orc or S2ORC
    epochs = {r["papers"]: r for r in records if r["stage"] == "epoch" and r.get("papers")}
    lines = [f"| method | papers | core-s (CPU) | wall | peak RSS | PBG {PBG_EPOCHS} epochs core-s | ratio PBG / method | "
             "S2ORC core-hours (linear) | PBG S2ORC core-hours | peak RSS at S2ORC (marginal per paper) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for method in EMBEDDER_STAGES:
        rows = sorted((r for r in records if r["stage"] == method and r.get("papers")), key=lambda r: r["papers"])
        for k, r in enumerate(rows):
            epoch = epochs.get(r["papers"])
            pbg = epoch["cpu_s"] * PBG_EPOCHS if epoch else float("nan")
            s2orc_cpu = r["cpu_s"] * s2orc["edges"] / r["edges"]
            pbg_s2orc = pbg * s2orc["edges"] / epoch["edges"] if epoch else float("nan")
            if k:  # the memory per paper between this size and the previous one (the interpreter's fixed part out)
                slope = (r["peak_rss_mib"] - rows[k - 1]["peak_rss_mib"]) / (r["papers"] - rows[k - 1]["papers"])
                rss_gib = (r["peak_rss_mib"] + slope * (s2orc["papers"] - r["papers"])) / 1024
            else:
                rss_gib = r["peak_rss_mib"] * s2orc["papers"] / r["papers"] / 1024
            lines.append(f"| {method} | {r['papers']:,} | {r['cpu_s']:.1f} | {human(r['wall_s'])} | "
                         f"{r['peak_rss_mib']:,.0f} MiB | {pbg:,.0f} | {pbg / r['cpu_s']:.1f}x | "
                         f"{s2orc_cpu / 3600:,.2f} | {pbg_s2orc / 3600:,.1f} | {rss_gib:,.0f} GiB |")
    return "\n".join(lines) + "\n"


def _plot(plt, stage: str, rows: List[dict], ex: Optional[dict], s2orc: Dict[str, int], out_dir: Path) -> None:
    field, key, label = UNITS[stage]
    rows = sorted(rows, key=lambda r: r[field])
    x = np.array([r[field] for r in rows], dtype=float)
    ax_unit = " per query" if stage == "mine" else ""
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    ax.loglog(x, [per_unit(stage, r, "wall_s") for r in rows], "o", label="measured wall (shared machine)")
    ax.loglog(x, [per_unit(stage, r, "cpu_s") for r in rows], "x", label="measured CPU")
    if ex is not None:
        xs = np.geomspace(x.min(), s2orc[key], 50)
        ax.loglog(xs, ex["a"] * xs ** ex["b"], "--", label=f"CPU fit: b = {ex['b']:.2f}")
        ax.loglog([s2orc[key]], [ex["a"] * s2orc[key] ** ex["b"]], "s", label=f"S2ORC ({s2orc[key]:,})")
    ax.set_xlabel(label.replace(" (x queries)", ""))
    ax.set_ylabel("seconds" + ax_unit)
    ax.set_title(LABELS[stage], fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / f"{stage}.png", dpi=110)
    plt.close(fig)
