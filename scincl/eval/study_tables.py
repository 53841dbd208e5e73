"""The tables and plots of the real-corpus experiments, from their scores (no file is read here).

Mean ± std tables over seeds (the Avg is :func:`scincl.eval.report.run_average`, the one definition),
the budget curve's per-budget table, paired differences and plot (issue 17), the collisions-vs-margin
table and plot (paper Fig. 5), the graph study's link-prediction and retrieval tables, and how each arm's
triplets relate to their query in the citation graph. The runs are made by ``scincl/pipeline`` and read by
``experiment_pages.py`` and ``study_reports.py``.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.report import TABLE_COLUMNS, avg_cell, avg_label, mean_std_cell, run_average

Scores = Dict[str, Dict[str, float]]  # task -> metric -> value (results.json "scores"[split])
ARM_DODGE = 1.04  # x factor between neighbouring arms on the budget plot's log axis (a display choice, 4 %)
# Paper Table 2 (SciNCL with 1 % / 10 % / 100 % of its 684k triplets, SciBERT, full SciDocs) is not
# drawn: its encoder, corpus and tasks differ, and it has no equal-budget SPECTER row (its SPECTER is
# trained on all the data).


# ---------------------------------------------------------------------- mean ± std over seeds
def metric_columns(rows: Sequence[Tuple[str, List[Dict[str, Dict[str, float]]]]]) -> List[Tuple[str, str]]:
    """The (task, metric) pairs present in any run: paper Table 1 order first, then any others sorted."""
    present = {(task, metric) for _, runs in rows for scores in runs for task, metrics in scores.items()
               for metric in metrics}
    ordered = [(task, metric) for task, metric, _ in TABLE_COLUMNS if (task, metric) in present]
    return ordered + sorted(present - set(ordered))


def mean_std_table(rows: Sequence[Tuple[str, List[Dict[str, Dict[str, float]]]]], first_column: str = "arm") -> str:
    """Markdown table: one row per group, ``mean ± std`` (sample std, n = seeds) per metric + Avg.

    The Avg is ``eval/report``'s (table metrics only); its header says how many of the 12 it covers.
    """
    columns = metric_columns(rows)
    avg_header = avg_label([run_average(r)[1] for _, runs in rows for r in runs])
    header = [first_column, "seeds"] + [f"{t} {m}" for t, m in columns] + [avg_header]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, runs in rows:
        cells = [name, str(len(runs))]
        for task, metric in columns:
            values = [r[task][metric] for r in runs if task in r and metric in r[task]]
            cells.append(mean_std_cell(values))
        cells.append(avg_cell(runs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- budget curve
def run_metric_columns(runs: Sequence[Scores]) -> List[Tuple[str, str]]:
    """The (task, metric) pairs of the budget tables, in paper Table 1 order (as the main comparison)."""
    return metric_columns([("", list(runs))])


def average(scores: Scores) -> float:
    """Avg of one run: ``eval/report.run_average`` (the one definition: the table metrics present)."""
    value, count = run_average(scores)
    if not count:
        raise InputError("a run has none of the table's metrics")
    return value


def paired_test(first: Sequence[float], second: Sequence[float]) -> Dict[str, Any]:
    """Per-seed differences ``second - first`` and a paired t-test (``nan`` below 2 pairs)."""
    from scipy import stats

    diffs = [b - a for a, b in zip(first, second)]
    if len(diffs) < 2:
        return {"diffs": diffs, "t": math.nan, "p": math.nan, "df": len(diffs) - 1}
    if len(set(diffs)) == 1:  # zero variance: t is infinite (or undefined for all-zero differences)
        return {"diffs": diffs, "t": math.nan, "p": math.nan, "df": len(diffs) - 1}
    result = stats.ttest_rel(second, first)
    return {"diffs": diffs, "t": float(result.statistic), "p": float(result.pvalue), "df": len(diffs) - 1}


def budget_tables(cells: Dict[Tuple[str, int], Dict[int, Scores]], base: Optional[Scores], seeds: Sequence[int],
                  budgets: Sequence[int], labels: Dict[str, str], arms: Sequence[str]) -> str:
    """Markdown: mean ± std per arm and budget, then the paired differences per budget (``arms``: the pair,
    second minus first; ``scincl/settings/arms.py`` DEFAULT_ARMS['budget'] by default).

    ``cells[(arm, budget)]`` maps seed -> scores of the finished runs; a cell with fewer runs than
    ``seeds`` is marked partial, a cell without runs is left out.
    """
    everything = [s for runs in cells.values() for s in runs.values()] + ([base] if base else [])
    columns = run_metric_columns(everything)
    header = ["arm", "triplets", "seeds"] + [f"{t} {m}" for t, m in columns] + [avg_label([run_average(r)[1] for r in everything])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    if base:
        lines.append("| " + " | ".join([labels.get("base", "base"), "0", "-"] + [
            mean_std_cell([base[t][m]]) if t in base and m in base[t] else "n/a" for t, m in columns]
            + [mean_std_cell([average(base)])]) + " |")
    for budget in budgets:
        for arm in arms:
            runs = cells.get((arm, budget), {})
            if not runs:
                continue
            done = [runs[s] for s in seeds if s in runs]
            count = f"{len(done)}" + ("" if len(done) == len(seeds) else f" of {len(seeds)} (partial)")
            lines.append("| " + " | ".join(
                [labels.get(arm, arm), f"{budget:,}", count]
                + [mean_std_cell([r[t][m] for r in done if t in r and m in r[t]]) for t, m in columns]
                + [mean_std_cell([average(r) for r in done])]) + " |")
    first, second = arms[0], arms[1]
    lines += ["", f"Paired differences {labels.get(second, second)} minus {labels.get(first, first)} "
              "(same seed = same query papers and training order), per budget; paired t-test on the "
              "per-seed Avg (scipy.stats.ttest_rel):", "",
              "| triplets | seeds | Δ Avg per seed | Δ Avg mean ± std | paired t | df | p | "
              + " | ".join(f"Δ {t} {m}" for t, m in columns) + " |",
              "|" + "---|" * (7 + len(columns))]
    for budget in budgets:
        a, b = cells.get((first, budget), {}), cells.get((second, budget), {})
        paired = [s for s in seeds if s in a and s in b]
        if not paired:
            continue
        test = paired_test([average(a[s]) for s in paired], [average(b[s]) for s in paired])
        per_seed = ", ".join(f"{d:+.2f} (seed {s})" for s, d in zip(paired, test["diffs"]))
        metric_diffs = [mean_std_cell([b[s][t][m] - a[s][t][m] for s in paired if t in a[s] and t in b[s]])
                        for t, m in columns]
        lines.append("| " + " | ".join([f"{budget:,}", str(len(paired)), per_seed, mean_std_cell(test["diffs"]),
                                        number_or_na(test["t"], ".2f"), str(test["df"]),
                                        p_value_text(test["p"])] + metric_diffs) + " |")
    return "\n".join(lines) + "\n"


def budget_plot(cells: Dict[Tuple[str, int], Dict[int, Scores]], base: Optional[Scores], budgets: Sequence[int],
                labels: Dict[str, str], path: Path, arms: Sequence[str]) -> Optional[Path]:
    """Avg vs budget (mean ± std over the finished seeds) for each arm, the base encoder as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if not any(cells.values()):
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for position, arm in enumerate(arms):
        # each arm a little to the side of the budget (log x axis) so error bars do not overlap
        dodge = ARM_DODGE ** (position - (len(arms) - 1) / 2)
        xs, means, stds = [], [], []
        for budget in budgets:
            runs = cells.get((arm, budget), {})
            if runs:
                values = [average(r) for r in runs.values()]
                xs.append(budget * dodge)
                means.append(float(np.mean(values)))
                stds.append(float(np.std(values, ddof=1)) if len(values) > 1 else 0.0)
        if xs:
            ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, label=labels.get(arm, arm))
    if base:
        ax.axhline(average(base), color="grey", linestyle="--", label=labels.get("base", "base"))
    ax.set(xscale="log", xlabel="training triplets (5 per query)", ylabel="Avg (cite + co-cite MAP/nDCG)",
           title="Budget curve (mean ± std over seeds)")
    ax.set_xticks(list(budgets))
    ax.set_xticklabels([f"{b:,}" for b in budgets])
    ax.set_xticks([], minor=True)  # the log axis' minor labels (2×10³, ...) would overprint the budgets
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def number_or_na(value: Optional[float], spec: str, suffix: str = "") -> str:
    """``value`` formatted by ``spec`` with ``suffix``, or ``n/a`` when it is missing or NaN (a test below 2 pairs)."""
    return "n/a" if value is None or math.isnan(value) else f"{value:{spec}}{suffix}"


def p_value_text(p: Optional[float]) -> str:
    """A test's p with three decimals, ``< 0.001`` below that (``0.000`` would read as a probability of zero)."""
    return "< 0.001" if p is not None and p < 0.001 else number_or_na(p, ".3f")


# ---------------------------------------------------------------------- collisions, graph study
def collision_table(rows: Sequence[Tuple[int, Any]]) -> str:
    """Collisions per (k+, k-hard): ``rows`` are (k+, ``sweep_collision_margins`` entries)."""
    lines = ["| k+ | k-hard | margin (k-hard - k+) | triplets | same-query collisions | collisions (either direction) "
             "| collisions % of triplets |", "|---|---|---|---|---|---|---|"]
    for kp, entries in rows:
        for e in entries:
            lines.append(f"| {kp} | {e['k_hard_negatives']} | {e['margin']} | {e['triples']} | {e['collisions']} | "
                         f"{e['symmetric_collisions']} | {100.0 * e['symmetric_collisions'] / max(1, e['triples']):.2f} |")
    return "\n".join(lines) + "\n"


def collision_plot(rows: Sequence[Tuple[int, Any]], path: Path) -> None:
    """Collisions (% of triplets) vs the margin k-hard - k+, one line per k+ (paper Fig. 5)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for kp, entries in rows:
        xs = [e["margin"] for e in entries]
        ys = [100.0 * e["symmetric_collisions"] / max(1, e["triples"]) for e in entries]
        ax.plot(xs, ys, marker="o", label=f"k+ = {kp}")
    ax.set(xscale="log", xlabel="margin k-hard - k+", ylabel="collisions (% of triplets)",
           title="Collisions vs margin")
    ax.grid(alpha=0.3)
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def link_prediction_table(rows: Sequence[Tuple[str, Dict[str, Any]]]) -> str:
    """Link prediction per graph variant: ``rows`` are (name, the BigGraph metrics JSON)."""
    keys = ("mrr", "hits@1", "hits@10", "hits@50", "auc")
    lines = ["| graph | embeddings | MRR | Hits@1 | Hits@10 | Hits@50 | AUC |", "|---|---|---|---|---|---|---|"]
    for name, metrics in rows:
        for which, values in _lp_groups(metrics):
            lines.append(f"| {name} | {which} | " + " | ".join(_num(values.get(k)) for k in keys) + " |")
    return "\n".join(lines) + "\n"


def _lp_groups(metrics: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    metrics = metrics.get("results", metrics)
    groups = []
    for which in ("trained", "random"):
        values = metrics.get(which)
        if isinstance(values, dict):
            groups.append((which, {k.lower().replace("_", "@") if k.lower().startswith("hits") else k.lower(): v
                                   for k, v in values.items()}))
    return groups or [("trained", {k.lower(): v for k, v in metrics.items() if not isinstance(v, dict)})]


def retrieval_table(rows: Sequence[Tuple[str, Dict[str, Any]]]) -> str:
    """Held-out-citation retrieval per graph variant: ``rows`` are (name, ``evaluate_graph_retrieval`` JSON)."""
    lines = ["| graph | queries | MAP | nDCG@10 | Recall@10 | MRR |", "|---|---|---|---|---|---|"]
    for name, data in rows:
        m = data.get("metrics", data)
        queries = data.get("queries", m.get("queries"))
        lines.append(f"| {name} | {int(queries) if isinstance(queries, (int, float)) else 'n/a'} | " + " | ".join(
            _num(_find(m, key), 2) for key in ("map", "ndcg@10", "recall@10", "mrr")) + " |")
    return "\n".join(lines) + "\n"


def _find(metrics: Dict[str, Any], key: str) -> Any:
    for k, v in metrics.items():
        if k.lower().replace("_", "@") == key:
            return v
    return None


def _num(value: Any, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "n/a"


# ---------------------------------------------------------------------- the main comparison's triplet relations
def triplet_relations_table(rows: Sequence[Tuple[str, Sequence[float], Sequence[float]]]) -> str:
    """Markdown: per arm (its label), the shares of its positive and of its negative (query, paper) pairs that are
    (direct citation, co-cited, within 2 hops) in the training citation graph, as percentages."""
    lines = ["How the sampled papers relate to their query in the training citation graph (seed "
             "of the first run; % of distinct pairs):", "",
             "| arm | positives: direct citation | co-cited | within 2 hops | negatives: direct citation "
             "| co-cited | within 2 hops |", "|---|---|---|---|---|---|---|"]
    for label, positives, negatives in rows:
        lines.append(f"| {label} | " + " | ".join(f"{100 * share:.1f}" for share in [*positives, *negatives]) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- the graph study's page
def graph_study_text(lp_rows: Sequence[Tuple[str, Dict[str, Any]]],
                     retrieval_rows: Sequence[Tuple[str, Dict[str, Any]]],
                     embedding_rows: Sequence[Tuple[str, List[Scores]]], split: str) -> str:
    """The graph study's tables: link prediction per graph variant, the graph as a retriever of held-out citations,
    and the graph alone vs the text encoders on the SciDocs ``split`` queries (mean ± std over their runs)."""
    text = ["## Link prediction (held-out 5 % of citation edges, PBG protocol)", "",
            link_prediction_table(lp_rows), "## Graph embeddings as a retriever of held-out citations "
            "(whole pool, OpenMSD Table 7 protocol)", "", retrieval_table(retrieval_rows),
            f"## Graph alone vs text encoders on the SciDocs {split} queries", "",
            mean_std_table(embedding_rows, "embeddings")]
    return "\n".join(text)
