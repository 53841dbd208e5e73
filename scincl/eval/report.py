"""Result tables in the paper's Table 1 layout (12 SciDocs metrics + Avg), single runs or mean ± std.

``results.json`` written by ``cli_pipeline.py evaluate`` (one run)::

    {"scores":  {split: {task: {metric: value}}},       # ×100, 2 decimals (official rounding)
     "average": {split: {"value": avg, "metrics": n}},  # report.average: mean of the n (of 12) values present
     "absent":  {split: {task: reason}},                # tasks without data: never scored as 0
     "details": {split: {task: {counts, classifier backend, chosen C, ...}}},
     "runs": [...]  # only when several runs (seeds) were evaluated: each a one-run dict like this
     "std": {split: {task: {metric: std}}}               # ... and then "scores" holds the means
     ...}                                                # plus inputs, link prediction, full-pool retrieval

With several runs, ``scores`` holds per-metric means and ``std`` the sample standard deviations
(ddof=1) across runs, as "mean ± std" in the tables.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

# (task, metric, column label) in the order of the paper's Table 1 / the official suite
TABLE_COLUMNS: Tuple[Tuple[str, str, str], ...] = (
    ("mag", "f1", "MAG F1"), ("mesh", "f1", "MeSH F1"),
    ("co-view", "map", "Co-View MAP"), ("co-view", "ndcg", "Co-View nDCG"),
    ("co-read", "map", "Co-Read MAP"), ("co-read", "ndcg", "Co-Read nDCG"),
    ("cite", "map", "Cite MAP"), ("cite", "ndcg", "Cite nDCG"),
    ("co-cite", "map", "Co-Cite MAP"), ("co-cite", "ndcg", "Co-Cite nDCG"),
    ("recomm", "adj-NDCG", "Recomm adj-nDCG"), ("recomm", "adj-P@1", "Recomm adj-P@1"),
)
N_TABLE_METRICS = len(TABLE_COLUMNS)
SplitScores = Mapping[str, Mapping[str, float]]


def table_values(scores: SplitScores) -> List[Optional[float]]:
    """The 12 table values of one run and split (None where the task is absent)."""
    return [scores.get(task, {}).get(metric) for task, metric, _ in TABLE_COLUMNS]


def run_average(scores: SplitScores) -> Tuple[float, int]:
    """The one Avg definition: mean of the 12 table metrics present in one run, and how many there are.

    The metric values are the protocol's (×100, already rounded to 2 decimals); the mean itself is
    not rounded here, so an Avg over several runs (seeds) is the mean of the unrounded per-run Avgs.
    Metrics outside the table (``TABLE_COLUMNS``) never enter the Avg. NaN when none is present.
    """
    present = [v for v in table_values(scores) if v is not None]
    return (float(np.mean(present)) if present else float("nan")), len(present)


def average(scores: SplitScores) -> Dict[str, float]:
    """``results.json``'s Avg of one run: ``run_average`` rounded to 2 decimals, with its metric count."""
    value, n = run_average(scores)
    return {"value": float(np.round(value, 2)) if n else float("nan"), "metrics": n}


def runs_average(runs: Sequence[SplitScores]) -> Dict[str, float]:
    """The Avg over several runs: mean and sample std (ddof=1) of their unrounded ``run_average``.

    Both rounded to 2 decimals; ``metrics`` is the first run's count.
    """
    values = [run_average(run) for run in runs]
    present = [v for v, n in values if n]
    return {"value": float(np.round(np.mean(present), 2)) if present else float("nan"),
            "std": float(np.round(np.std(present, ddof=1), 2)) if len(present) > 1 else 0.0,
            "metrics": values[0][1] if values else 0}


def avg_label(counts: Sequence[int]) -> str:
    """The Avg column's header, saying which metrics it covers: all 12, or how many of them were present."""
    counts = sorted(set(counts))
    if counts == [N_TABLE_METRICS]:
        return "Avg."
    return f"Avg. (over {'/'.join(str(c) for c in counts)} of {N_TABLE_METRICS} metrics present)"


def avg_cell(runs: Sequence[SplitScores]) -> str:
    """The Avg cell of one table row: the runs' ``run_average`` as a value or mean ± std."""
    return mean_std_cell([v for v, n in (run_average(run) for run in runs) if n])


def aggregate_runs(runs: Sequence[SplitScores]) -> Tuple[Dict[str, Dict[str, float]], Dict[str, Dict[str, float]]]:
    """Per-metric mean and sample std (ddof=1; 0 for one run) over runs of one split.

    A metric is aggregated only over the runs that have it.
    """
    means: Dict[str, Dict[str, float]] = {}
    stds: Dict[str, Dict[str, float]] = {}
    tasks = {t: None for run in runs for t in run}
    for task in tasks:
        metrics = {m: None for run in runs for m in run.get(task, {})}
        for metric in metrics:
            values = [run[task][metric] for run in runs if metric in run.get(task, {})]
            means.setdefault(task, {})[metric] = float(np.round(np.mean(values), 2))
            stds.setdefault(task, {})[metric] = float(np.round(np.std(values, ddof=1), 2)) if len(values) > 1 else 0.0
    return means, stds


def mean_std_cell(values: Sequence[float]) -> str:
    """A table cell: ``n/a``, one value, or ``mean ± std`` (sample std, ddof=1), 2 decimals."""
    if not values:
        return "n/a"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f}"


def markdown_table(rows: Sequence[Tuple[str, Sequence[SplitScores]]]) -> str:
    """A Markdown table, one row per (name, runs of that row); cells are a value or mean ± std.

    ``n/a`` marks absent tasks; when some are absent the Avg column says over how many of the 12
    metrics it averages.
    """
    avg_header = avg_label([run_average(run)[1] for _, runs in rows for run in runs])
    header = ["Model"] + [label for _, _, label in TABLE_COLUMNS] + [avg_header]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for name, runs in rows:
        cells = [name]
        for col in range(N_TABLE_METRICS):
            cells.append(mean_std_cell([table_values(run)[col] for run in runs if table_values(run)[col] is not None]))
        cells.append(avg_cell(runs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _absent_notes(absent: Mapping[str, str]) -> List[str]:
    return [f"- {task}: absent ({reason})" for task, reason in absent.items()]


def _extra_sections(results: Mapping[str, Any]) -> List[str]:
    out: List[str] = []
    retrieval = results.get("full_pool_retrieval")
    if retrieval:
        out += ["", "## Full-pool retrieval (held-out pairs, whole pool ranked)", "",
                "| " + " | ".join(retrieval["metrics"]) + " |", "|" + "---:|" * len(retrieval["metrics"]),
                "| " + " | ".join(f"{retrieval['metrics'][k]:g}" for k in retrieval["metrics"]) + " |"]
        buckets = retrieval.get("citation_recommendation")
        if buckets:
            out += ["", "Citation recommendation by number of positives:", "",
                    "| Positives | Recall@10 | MAP@10 | Queries |", "|---|---:|---:|---:|"]
            for name, vals in buckets.items():
                out.append(f"| {name} | {vals.get('recall@10', 'n/a')} | {vals.get('map@10', 'n/a')} | "
                           f"{int(vals.get('queries', 0))} |")
    link = results.get("link_prediction")
    if link:
        out += ["", f"## Link prediction of graph embeddings (from {link.get('source', 'graph stage')})", ""]
        out += [f"- {k}: {v}" for k, v in link.get("metrics", {}).items()]
    return out


def results_markdown(results: Mapping[str, Any], name: str = "this model") -> str:
    """``results.md``: per split the Table 1 row (mean ± std over runs when several), absent tasks, extras."""
    lines = ["# SciDocs results", ""]
    runs = results.get("runs")
    for split, scores in results["scores"].items():
        split_runs = [r["scores"][split] for r in runs] if runs else [scores]
        lines += [f"## {split} split" + (f" (mean ± std over {len(runs)} runs)" if runs else ""), "",
                  markdown_table([(name, split_runs)]).rstrip("\n")]
        absent = results.get("absent", {}).get(split, {})
        if absent:
            lines += ["", *_absent_notes(absent)]
        backends = {d.get("backend") for d in results.get("details", {}).get(split, {}).values() if d.get("backend")}
        if backends:
            lines += ["", f"Classifier: LinearSVC from {', '.join(sorted(backends))}."]
        lines.append("")
    lines += _extra_sections(results)
    return "\n".join(lines).rstrip("\n") + "\n"
