"""What every real-corpus experiment writes: timings, mean ± std tables and the results page.

Shared by the experiment kinds (``experiment_kinds``) and the budget curve (``budget_curve``), which
both only compute rows; the Avg is ``eval/report``'s one definition.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

from scincl.eval.report import TABLE_COLUMNS, avg_cell, avg_label, mean_std_cell, run_average
from scincl.io import read_json, write_json
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND

if TYPE_CHECKING:
    from scincl.pipeline.real_corpus import Recipe, Reproduction


class Timings:
    """Wall seconds of each step of an experiment, saved as ``timings.json`` next to its tables."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: Dict[str, float] = read_json(path) if path.exists() else {}

    def run(self, name: str, fn, *args, **kwargs):
        """Call ``fn``; record its wall time unless it only reused finished outputs (< 1 s)."""
        start = time.time()
        result = fn(*args, **kwargs)
        seconds = time.time() - start
        if seconds >= 1.0 or name not in self.data:
            self.data[name] = round(seconds, 1)
            write_json(self.path, self.data)
        return result


def finished_scores(run_dir: Path, split: str) -> Dict[str, Dict[str, float]]:
    """The scores of a finished run (``results.json``) on ``split``."""
    return read_json(run_dir / "results.json")["scores"][split]


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




def write_tables(exp: Path, title: str, recipe: Recipe, rep: Reproduction, table: str, seeds: Sequence[int],
                  name: str = "results.md", plots: Sequence[str] = (), budget_varies: bool = False) -> Path:
    """Write ``exp/name``: the title, the recipe and budget the runs used, the table and plots; print it."""
    exp.mkdir(parents=True, exist_ok=True)
    triplets = ("Budget: the table's triplets per run (5 per query)" if budget_varies else
                f"Budget: {recipe.triplets} triplets per run (5 per query)")
    batch, epochs = recipe.per_device_train_batch_size, recipe.num_train_epochs
    steps = "" if budget_varies else f" ({-(-recipe.triplets // batch) * epochs} steps)"
    precision = recipe.precision_key()
    budget = (f"{triplets}, {epochs} epoch(s), batch {batch}{steps}, "
              f"{'bf16' if '_bf16' in precision else 'fp32'} training, "
              f"{'bf16' if '_ebf16' in precision else 'fp32'} evaluation embeddings, "
              f"{recipe.max_sequence_length} training tokens, {rep.eval_max_sequence_length} evaluation tokens, "
              f"{recipe.pooling_strategy} pooling, lr {recipe.learning_rate:g}, {recipe.loss} loss, "
              f"k+ = {recipe.easy_positives_k_max} (c+ = {POSITIVES_BAND}), "
              f"k-hard = {recipe.hard_negatives_k_max} (c- = {HARD_NEGATIVES_BAND}), graph "
              f"{recipe.graph_dim}-d; seeds "
              f"{', '.join(map(str, seeds))}. Encoder: {recipe.encoder_label()}.")
    body = [f"# {title}", "", budget, "", table]
    body += [f"![{p}]({p})" for p in plots]
    path = exp / name
    path.write_text("\n".join(body) + "\n")
    print(path.read_text())
    return path
