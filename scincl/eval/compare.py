"""Put evaluation runs side by side and plot hyper-parameter sweeps (paper Figs. 2, 3 and 5).

A *run group* (one table row) is any of:

* a ``results.json`` written by ``cli_pipeline.py evaluate`` (several runs inside -> mean ± std),
* a directory holding such a ``results.json``,
* a directory whose sub-directories each hold a ``results.json`` (e.g. one per seed) -> mean ± std.

Sweep directory layout for the plots (every ``<value>`` is a number, e.g. ``25`` or ``0.5``;
a value directory holds ``results.json`` itself or one sub-directory per seed that does)::

    SWEEP/k_pos/<k+>/results.json             # Fig. 2: metric vs k+ (positives' neighbourhood size)
    SWEEP/k_hard/<k-hard>/results.json        # Fig. 3: metric vs k-hard (hard negatives' start)
    SWEEP/margin/<margin>/collisions.json     # Fig. 5: collisions vs margin; {"collisions": N} or N
    SWEEP/margin/<margin>/results.json        #   optional: metric vs margin on a second axis

Each family is optional; PNGs are written for the families present.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from scincl.errors import InputError
from scincl.eval.report import markdown_table, run_average, runs_average
from scincl.io import PathLike, atomic_open, atomic_path, read_json, write_json
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

SWEEP_FAMILIES = {"k_pos": "k+ (positive neighbourhood size)", "k_hard": "k-hard (hard negative start)"}
_NUMBER = re.compile(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?")


def _runs_of_results(path: Path) -> List[Dict[str, Any]]:
    data = read_json(path)
    if not isinstance(data, dict) or "scores" not in data:
        raise InputError("not a results.json of cli_pipeline.py evaluate (no 'scores')", path=path)
    return list(data["runs"]) if data.get("runs") else [data]


def load_run_group(path: PathLike) -> List[Dict[str, Any]]:
    """The runs of a run group (see module docstring); each a one-run results dict."""
    p = Path(path)
    if p.is_file():
        return _runs_of_results(p)
    if (p / "results.json").is_file():
        return _runs_of_results(p / "results.json")
    if p.is_dir():
        found = sorted(p.glob("*/results.json"))
        if found:
            return [run for f in found for run in _runs_of_results(f)]
        raise InputError("no results.json in directory or its sub-directories", path=p)
    raise InputError("results file or directory not found", path=p)


def _split_scores(runs: Sequence[Dict[str, Any]], split: str, source: PathLike) -> List[Dict[str, Any]]:
    missing = [r.get("name", "?") for r in runs if split not in r["scores"]]
    if missing:
        raise InputError(f"no {split!r} split in results (runs {', '.join(map(str, missing))}); "
                         f"choose --split val or test", path=source)
    return [r["scores"][split] for r in runs]


def metric_value(scores: Dict[str, Dict[str, float]], metric: str) -> Optional[float]:
    """``avg`` (the table's Avg) or ``task/metric`` such as ``cite/map``; None when absent."""
    if metric == "avg":
        value, n = run_average(scores)
        return value if n else None
    task, _, name = metric.partition("/")
    return scores.get(task, {}).get(name)


def _numeric_subdirs(directory: Path) -> List[Tuple[float, Path]]:
    out = []
    for sub in sorted(d for d in directory.iterdir() if d.is_dir()):
        match = _NUMBER.search(sub.name)
        if match is None:
            logger.warning("sweep: skipping %s (its name is not a number)", sub)
            continue
        out.append((float(match.group()), sub))
    return sorted(out)


def _sweep_points(family_dir: Path, split: str, metric: str) -> List[Tuple[float, float, float, int]]:
    """(value, mean, std, runs) of ``metric`` per sweep value that has results."""
    points = []
    for value, sub in _numeric_subdirs(family_dir):
        try:
            runs = load_run_group(sub)
        except InputError:
            continue
        values = [v for v in (metric_value(s, metric) for s in _split_scores(runs, split, sub)) if v is not None]
        if values:
            std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
            points.append((value, float(np.mean(values)), std, len(values)))
    return points


def _read_collisions(path: Path) -> float:
    data = read_json(path)
    value = data.get("collisions") if isinstance(data, dict) else data
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError("expected a number or {\"collisions\": number}", path=path, field="collisions")
    return float(value)


def _save(fig, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    return path


def _log_scale_if_wide(ax, xs: Sequence[float]) -> None:
    positive = [x for x in xs if x > 0]
    if len(positive) == len(xs) and positive and max(positive) / min(positive) >= 100:
        ax.set_xscale("log")


def sweep_plots(sweep_dir: PathLike, output_dir: PathLike, split: str = "test", metric: str = "avg") -> List[Path]:
    """Plot the sweep families present in ``sweep_dir`` (layout in the module docstring) as PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    root, out = Path(sweep_dir), Path(output_dir)
    if not root.is_dir():
        raise InputError("sweep directory not found", path=root)
    written: List[Path] = []
    label = "Avg. over SciDocs metrics" if metric == "avg" else metric
    for family, xlabel in SWEEP_FAMILIES.items():
        if not (root / family).is_dir():
            continue
        points = _sweep_points(root / family, split, metric)
        if not points:
            logger.warning("sweep: no results under %s", root / family)
            continue
        xs, means, stds, _ = zip(*points)
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3)
        _log_scale_if_wide(ax, xs)
        ax.set(xlabel=xlabel, ylabel=f"{label} ({split})", title=f"{label} vs {family}")
        ax.grid(alpha=0.3)
        written.append(_save(fig, out / f"{family}_{metric.replace('/', '_')}.png"))
        plt.close(fig)
    margin_dir = root / "margin"
    if margin_dir.is_dir():
        rows = [(v, _read_collisions(d / "collisions.json")) for v, d in _numeric_subdirs(margin_dir)
                if (d / "collisions.json").is_file()]
        if rows:
            fig, ax = plt.subplots(figsize=(5, 3.5))
            ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="s", color="tab:red")
            ax.set(xlabel="margin", ylabel="collisions (positives sampled as negatives)", title="collisions vs margin")
            ax.grid(alpha=0.3)
            metric_points = _sweep_points(margin_dir, split, metric)
            if metric_points:
                twin = ax.twinx()
                twin.errorbar([p[0] for p in metric_points], [p[1] for p in metric_points],
                              yerr=[p[2] for p in metric_points], marker="o", capsize=3)
                twin.set_ylabel(f"{label} ({split})")
            written.append(_save(fig, out / "collisions_vs_margin.png"))
            plt.close(fig)
    return written


def compare(paths: Sequence[PathLike], output_dir: PathLike, names: Optional[Sequence[str]] = None,
            split: str = "test", sweep_dir: Optional[PathLike] = None, metric: str = "avg") -> Dict[str, Any]:
    """Write ``comparison.md`` / ``comparison.json`` (one row per run group) and the sweep plots."""
    if not paths and sweep_dir is None:
        raise InputError("nothing to compare: give result paths and/or --sweep_dir")
    if names is not None and len(names) != len(paths):
        raise InputError(f"{len(names)} names for {len(paths)} result paths")
    out = Path(output_dir)
    rows = []
    summary: Dict[str, Any] = {"split": split, "rows": []}
    for i, path in enumerate(paths):
        runs = load_run_group(path)
        source = Path(path)
        name = names[i] if names else (source.parent.name if source.is_file() else source.name) or f"run{i}"
        split_runs = _split_scores(runs, split, path)
        rows.append((name, split_runs))
        summary["rows"].append({"name": name, "source": str(path), "runs": len(runs), "scores": split_runs,
                                "average_mean": runs_average(split_runs)["value"]})
    written: List[Path] = []
    if rows:
        with atomic_open(out / "comparison.md") as fh:
            fh.write(f"# Comparison ({split} split)\n\n" + markdown_table(rows))
        written.append(out / "comparison.md")
    if sweep_dir is not None:
        written += sweep_plots(sweep_dir, out, split=split, metric=metric)
    summary["files"] = [str(p) for p in written]
    write_json(out / "comparison.json", summary)
    return summary


def compare_with_base(base_eval: Path, row: Path, name: str, out: Path, split: str, base_name: str) -> str:
    """The table of ``row`` (named ``name``) under the base encoder's results in ``base_eval`` (when evaluated),
    written to ``out``; returns its markdown (``run_specter``'s table, one run or its seeds)."""
    based = (base_eval / "results.json").exists()
    compare([base_eval] * based + [row], out, names=[base_name] * based + [name], split=split)
    return (out / "comparison.md").read_text()


@writes("output_dir")
def compare_results(*results: str, output_dir: str = "comparison", names: Union[None, str, Sequence[str]] = None,
                    split: str = "test", sweep_dir: Optional[str] = None, metric: str = "avg") -> None:
    """Put evaluation runs side by side (OUTPUT_DIR/comparison.md, .json) and plot sweeps (PNG).

    Each RESULTS argument is a results.json of `evaluate`, a directory holding one, or a directory
    of per-seed sub-directories holding one (shown as mean ± std), e.g.
    `compare_results runs/base runs/specter runs/scincl --names base,SPECTER-like,SciNCL`.

    Args:
        results: results.json files or directories (one table row each).
        output_dir: where comparison.md, comparison.json and the plots go.
        names: row names, comma-separated (default: directory names).
        split: val | test.
        sweep_dir: sweep layout SWEEP/k_pos/<k+>/, SWEEP/k_hard/<k-hard>/ (results.json in each, or one
            sub-directory per seed) and SWEEP/margin/<margin>/collisions.json ({"collisions": N}):
            plots metric vs k+ and vs k-hard (paper Figs. 2-3) and collisions vs margin (Fig. 5).
        metric: what the sweep plots show: avg (the table's Avg.) or task/metric, e.g. cite/map.
    """
    from scincl.eval.evaluate import as_list

    compare(list(results), output_dir, names=as_list(names) or None, split=split, sweep_dir=sweep_dir,
            metric=metric)
