"""SciRepEval's results: group averages and the paper-style table (``results.md``).

A task's score is the mean of its metrics on the complete training split (SciDocs tasks: MAP and nDCG;
paper-reviewer matching: hard and soft P@5 and P@10; every other task has one metric); few-shot means are listed
beside it. A group's average (In-Train, Out-of-Train, SciDocs, the columns of BENCHMARKING.md's table) is the
mean of the scores of its tasks that are present, and says how many of the group's tasks that is; the Average
is the mean over every task present. The benchmark's own Average weighting is not in its repository (it points
to a spreadsheet), so an Average here equals the paper's only where it is a plain mean over tasks; a group with
tasks absent is not comparable with the paper's column, and the table says so.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping

import numpy as np

from scincl.eval.scirepeval.tasks import GROUPS, IN_TRAIN, OUT_OF_TRAIN, SCIDOCS, TASKS

GROUP_LABELS = {IN_TRAIN: "In-Train", OUT_OF_TRAIN: "Out-of-Train", SCIDOCS: "SciDocs"}
AVERAGE = "average"


def task_score(metrics: Mapping[str, float]) -> float:
    """The task's one number: the mean of its metrics, two decimals."""
    return float(np.round(np.mean(list(metrics.values())), 2))


def averages(tasks: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """``{group: {"value", "tasks", "of"}}`` for each group and ``average`` (``value`` None when no task is present)."""
    out: Dict[str, Dict[str, Any]] = {}
    members = {group: [t.name for t in TASKS if t.group == group] for group in GROUPS}
    members[AVERAGE] = [t.name for t in TASKS]
    for group, names in members.items():
        scores = [tasks[name]["score"] for name in names if name in tasks]
        out[group] = {"value": float(np.round(np.mean(scores), 2)) if scores else None, "tasks": len(scores),
                      "of": len(names)}
    return out


def _cell(entry: Mapping[str, Any]) -> str:
    if entry["value"] is None:
        return "n/a"
    value = f"{entry['value']:.2f}"
    return value if entry["tasks"] == entry["of"] else f"{value} ({entry['tasks']} of {entry['of']} tasks)"


def results_markdown(results: Mapping[str, Any]) -> str:
    """The benchmark's table (In-Train, Out-of-Train, SciDocs, Average), then every task with its metrics."""
    groups = results["averages"]
    lines: List[str] = [
        f"# SciRepEval: {results['model']}", "",
        "| Model | In-Train | Out-of-Train | SciDocs | Average |", "|---|---:|---:|---:|---:|",
        f"| {results['model']} | " + " | ".join(_cell(groups[g]) for g in (*GROUPS, AVERAGE)) + " |", "",
        "| Group | Task | Type | Metrics (×100) | Score |", "|---|---|---|---|---:|",
    ]
    for group in GROUPS:
        for task in (t for t in TASKS if t.group == group):
            entry = results["tasks"].get(task.name)
            if entry is None:
                reason = results["absent"].get(task.name, "not asked for")
                lines.append(f"| {GROUP_LABELS[group]} | {task.name} | {task.type} | absent: {reason} | n/a |")
                continue
            metrics = ", ".join(f"{m} {v:.2f}" for m, v in entry["metrics"].items())
            for run in entry.get("few_shot", []):
                metrics += f"; {run['sample_size']}-shot " + (
                    ", ".join(f"{m} {v:.2f}" for m, v in run["metrics"].items()) if "metrics" in run else "not run")
            lines.append(f"| {GROUP_LABELS[group]} | {task.name} | {entry['type']} | {metrics} | {entry['score']:.2f} |")
    lines += ["", "Absent tasks are never scored as 0; an average over fewer than all of its tasks says how many."]
    return "\n".join(lines) + "\n"
