"""What every real-corpus experiment writes: timings and the results page around its tables.

Used by the grid runner (``grid``) and the kinds' reports; the tables themselves are rendered by
``scincl/eval/study_tables.py`` (the Avg is ``eval/report``'s one definition).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

from scincl.errors import InputError
from scincl.eval.study_tables import Scores
from scincl.io import read_json, write_json
from scincl.pipeline.layout import precision_key
from scincl.provenance import is_marker
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND

if TYPE_CHECKING:
    from scincl.pipeline.real_corpus import CorpusPlan
    from scincl.settings.recipe import Recipe


RECORDS = ("manifest.json", "recipe.json")  # rewritten by every call of a run, reused or not


class Timings:
    """Wall seconds of each step of an experiment, saved as ``timings.json`` next to its tables."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: Dict[str, float] = read_json(path) if path.exists() else {}

    def run(self, name: str, fn, *args, **kwargs):
        """Call ``fn``; record its wall time, unless an earlier time is recorded and this call only reused
        finished outputs (under 1 s, or a run dir in which it wrote nothing: :func:`wrote_since`)."""
        start = time.time()
        result = fn(*args, **kwargs)
        seconds = time.time() - start
        if name not in self.data or (seconds >= 1.0 and wrote_since(result, start)):
            self.data[name] = round(seconds, 1)
            write_json(self.path, self.data)
        return result


def wrote_since(result: Any, start: float) -> bool:
    """Whether the step that returned ``result`` made something: for a run dir, a file other than its
    records (manifests, recipe.json, stage markers) written since ``start``; any other result counts as
    work. A cached rerun on a loaded machine can take over a second without replacing the time it took."""
    if not isinstance(result, Path) or not result.is_dir():
        return True
    return any(p.stat().st_mtime >= start for p in result.rglob("*")
               if p.is_file() and p.name not in RECORDS and not is_marker(p))


def run_scores(run_dir: Path, split: str, missing_ok: bool = False) -> Optional[Scores]:
    """The scores of one run (its ``results.json``) on ``split``: the one reader of a run's scores.

    A run that has not finished (no ``results.json``, or no scores of ``split`` in it) gives ``None`` when
    ``missing_ok`` (the budget curve's tables, rewritten while it runs), else an :class:`InputError` naming it.
    """
    path = Path(run_dir) / "results.json"
    scores = read_json(path).get("scores", {}).get(split) if path.exists() else None
    if scores is None and not missing_ok:
        raise InputError(f"no {split} scores: the run has not finished", path=path)
    return scores


def write_tables(exp: Path, title: str, recipe: Recipe, rep: CorpusPlan, table: str, seeds: Sequence[int],
                  name: str = "results.md", plots: Sequence[str] = (), budget_varies: bool = False) -> Path:
    """Write ``exp/name``: the title, the recipe and budget the runs used, the table and plots; print it."""
    exp.mkdir(parents=True, exist_ok=True)
    triplets = ("Budget: the table's triplets per run (5 per query)" if budget_varies else
                f"Budget: {recipe.triplets} triplets per run (5 per query)")
    batch, epochs = recipe.per_device_train_batch_size, recipe.num_train_epochs
    steps = "" if budget_varies else f" ({-(-recipe.triplets // batch) * epochs} steps)"
    precision = precision_key(recipe)
    budget = (f"{triplets}, {epochs} epoch(s), batch {batch}{steps}, "
              f"{'bf16' if '_bf16' in precision else 'fp32'} training, "
              f"{'bf16' if '_ebf16' in precision else 'fp32'} evaluation embeddings, "
              f"{recipe.max_sequence_length} training tokens, {rep.eval_max_sequence_length} evaluation tokens, "
              f"{recipe.pooling_strategy} pooling, lr {recipe.learning_rate:g}, {recipe.loss} loss, "
              f"k+ = {recipe.k_pos} (c+ = {POSITIVES_BAND}), "
              f"k-hard = {recipe.k_hard} (c- = {HARD_NEGATIVES_BAND}), graph "
              f"{recipe.graph_dim}-d; seeds "
              f"{', '.join(map(str, seeds))}. Encoder: {recipe.encoder_label()}.")
    body = [f"# {title}", "", budget, "", table]
    body += [f"![{p}]({p})" for p in plots]
    path = exp / name
    path.write_text("\n".join(body) + "\n")
    print(path.read_text())
    return path
