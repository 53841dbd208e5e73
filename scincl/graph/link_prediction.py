"""Link-prediction evaluation of BigGraph checkpoints and its report (paper Table 5 / thesis Table 6).

PBG's ranking protocol (``torchbiggraph.eval``): each test edge is scored against the config's
negatives (``num_batch_negs`` in-batch + ``num_uniform_negs`` uniform) on both sides; the metrics are
mean rank, MRR, Hits@1/10/50 and AUC, plus the training loss function on the test edges. A random
baseline evaluates random embeddings of the trained shape and scale with the same protocol.
"""
from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from scincl.errors import InputError
from scincl.graph.pbg_compat import import_torchbiggraph, subprocess_initializer
from scincl.graph.pbg_config import parse_config
from scincl.io import PathLike, write_json

logger = logging.getLogger(__name__)

# link-prediction columns of the paper's Table 5 / thesis Table 6 (PBG eval metric -> our name)
METRIC_NAMES = {"loss": "loss", "pos_rank": "mean_rank", "mrr": "mrr", "r1": "hits@1", "r10": "hits@10",
                "r50": "hits@50", "auc": "auc"}
CHECKPOINT_FILE_PREFIXES = ("checkpoint_version", "config.json", "embeddings_", "model", "training_stats")


def read_training_losses(checkpoint_path: PathLike) -> List[float]:
    """Mean training loss per epoch (count-weighted over buckets) from PBG's ``training_stats.json``."""
    from scincl.io import iter_jsonl

    path = Path(checkpoint_path) / "training_stats.json"
    if not path.exists():
        return []
    totals: Dict[int, List[float]] = {}
    for _, record in iter_jsonl(path):
        stats = record["stats"]
        acc = totals.setdefault(int(record["epoch_idx"]), [0.0, 0])
        acc[0] += stats["metrics"]["loss"] * stats["count"]
        acc[1] += stats["count"]
    return [totals[e][0] / max(1, totals[e][1]) for e in sorted(totals)]


def evaluate(config_dict: Mapping[str, Any], edge_path: str, seed: int = 0,
             checkpoint_path: Optional[PathLike] = None) -> Dict[str, float]:
    """Link-prediction metrics of a trained checkpoint on ``edge_path`` (PBG's ranking protocol).

    Each positive edge is ranked against the config's negatives (``num_batch_negs`` in-batch +
    ``num_uniform_negs`` uniform). Returns ``loss, mean_rank, mrr, hits@1, hits@10, hits@50, auc,
    count``.
    """
    import_torchbiggraph()
    import torch
    from torchbiggraph.eval import do_eval_and_report_stats

    from scincl.graph.pbg_evaluator import LossAndRankingEvaluator

    overrides: Dict[str, Any] = {"edge_paths": [str(edge_path)]}
    if checkpoint_path is not None:
        overrides["checkpoint_path"] = str(checkpoint_path)
    config = parse_config(dict(config_dict, **overrides))
    torch.manual_seed(seed)
    final = None
    for edge_path_idx, bucket, stats in do_eval_and_report_stats(
            config, evaluator=LossAndRankingEvaluator(config.loss_fn, config.margin),
            subprocess_init=subprocess_initializer(seed)):
        if edge_path_idx is None:
            final = stats
    if final is None or final.count == 0:
        raise InputError("no edges to evaluate", path=edge_path)
    metrics = {METRIC_NAMES[k]: float(v) for k, v in final.metrics.items() if k in METRIC_NAMES}
    metrics["count"] = int(final.count)
    return {name: metrics[name] for name in [*METRIC_NAMES.values(), "count"] if name in metrics}


def evaluate_random_baseline(config_dict: Mapping[str, Any], edge_path: str, seed: int = 0) -> Dict[str, float]:
    """The same evaluation with the trained embeddings replaced by random ones (same shape and scale).

    A reference row: what link prediction scores without any training signal.
    """
    import h5py
    import numpy as np

    source = Path(config_dict["checkpoint_path"])
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix=".random_baseline_", dir=source.parent) as tmp:
        for p in source.iterdir():
            if p.is_file() and p.name.startswith(CHECKPOINT_FILE_PREFIXES):
                shutil.copy2(p, tmp)
        for p in Path(tmp).glob("embeddings_*.h5"):
            with h5py.File(p, "r+") as f:
                trained = f["embeddings"]
                scale = float(np.sqrt(np.mean(np.square(trained[...])))) or 1.0
                trained[...] = rng.standard_normal(trained.shape).astype(trained.dtype) * scale
        return evaluate(config_dict, edge_path, seed=seed, checkpoint_path=tmp)


def metrics_markdown(rows: Mapping[str, Mapping[str, float]]) -> str:
    """A markdown table (paper Table 5 columns): one row per named run."""
    header = "| embeddings | loss | mean rank | MRR | Hits@1 | Hits@10 | Hits@50 | AUC | test edges |"
    lines = [header, "|---|" + "---:|" * 8]
    for name, m in rows.items():
        cells = [f"{m.get(key, float('nan')):.4f}" for key in ("loss", "mean_rank", "mrr", "hits@1", "hits@10",
                                                                "hits@50", "auc")]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {int(m.get('count', 0))} |")
    return "\n".join(lines) + "\n"


def write_metrics(output_dir: PathLike, rows: Mapping[str, Mapping[str, float]],
                  extra: Optional[Mapping[str, Any]] = None) -> Tuple[Path, Path]:
    """Write ``link_prediction.json`` and ``link_prediction.md`` into ``output_dir``."""
    from scincl.io import atomic_open

    json_path = Path(output_dir) / "link_prediction.json"
    md_path = Path(output_dir) / "link_prediction.md"
    write_json(json_path, dict(extra or {}, results=rows))
    with atomic_open(md_path) as fh:
        fh.write(metrics_markdown(rows))
    return json_path, md_path
