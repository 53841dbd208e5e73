"""One SciNCL plan, one per seed, or one per k+ / k-hard value (``run_specter``, ``--seeds``, ``sweep``).

- :func:`run_specter`: one experiment (all stages), or ``seeds=...`` -> one experiment per seed
  on the same corpus (``OUTPUT_DIR/seeds/seed_N``) and a mean ± std table (paper Table 1 reports
  the mean over ten seeds);
- :func:`sweep`: the k+ and k-hard sweeps of paper Figs. 2-3 (``OUTPUT_DIR/sweep/k_pos/<k+>``,
  ``OUTPUT_DIR/sweep/k_hard/<k->``) plotted by the evaluation's ``compare``.

Experiments of one call share the demo corpus, citations, graph embeddings and the base-model
evaluation (``OUTPUT_DIR``); everything that depends on the seed or the sampling goes below.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from scincl.errors import InputError
from scincl.pipeline.flags import SeedsArg, parse_int_list, parse_seeds, settings_from_flags
from scincl.pipeline.settings import RunSettings, check_input_paths
from scincl.pipeline.scincl_plan import SciNCLPlan
from scincl.triples.config import HARD_NEGATIVES_BAND, POSITIVES_BAND

logger = logging.getLogger(__name__)

def _run_one(output_dir: Optional[str], flags: Mapping[str, Any], shared_dir: Optional[Path] = None) -> Dict[str, Any]:
    settings = check_input_paths(settings_from_flags(output_dir, flags))
    pipeline = SciNCLPlan(settings, shared_dir=shared_dir)
    arguments = {"output_dir": output_dir, **flags}
    return pipeline.run(arguments)


def run_specter(output_dir: Optional[str] = None, seeds: SeedsArg = None, **flags: Any) -> Dict[str, Any]:
    """One experiment, or one per seed (``seeds``) plus a mean ± std comparison.

    Returns ``{"table": markdown or None, "runs": [per-run result dicts], "output_dir": Path}``.
    """
    seed_list = parse_seeds(seeds)
    if not seed_list:
        result = _run_one(output_dir, flags)
        return {"table": result["table"], "runs": [result], "output_dir": result["paths"].run}
    flags = dict(flags)
    if flags.pop("seed", None) not in (None, 0):  # 0 is the CLI default
        raise InputError("give either --seed or --seeds")
    first = settings_from_flags(output_dir, flags)
    shared = Path(first.output_dir)
    runs = []
    # the same corpus for every seed (default corpus seed 0): only sampling and training randomness varies
    corpus_seed = flags.get("corpus_seed") if flags.get("corpus_seed") is not None else 0
    for seed in seed_list:
        logger.info("=== seed %d (%d of %d) ===", seed, len(runs) + 1, len(seed_list))
        per_seed = {**flags, "seed": seed, "corpus_seed": corpus_seed, "auto_output_dir": False}
        runs.append(_run_one(str(shared / "seeds" / f"seed_{seed}"), per_seed, shared_dir=shared))
    table = _compare_seeds(runs, shared, first)
    return {"table": table, "runs": runs, "output_dir": shared}


def _compare_seeds(runs: List[Dict[str, Any]], shared: Path, settings: RunSettings) -> Optional[str]:
    """Base encoder vs mean ± std over the seeds (when evaluated)."""
    from scincl.eval.compare import compare

    paths = runs[0]["paths"]
    if not (paths.eval / "results.json").exists():
        return None
    rows, names = [], []
    if (paths.base_eval / "results.json").exists():
        rows.append(paths.base_eval)
        names.append("base encoder")
    rows.append(shared / "seeds")
    names.append(f"SciNCL ({len(runs)} seeds)" if settings.triples_source == "knn" else f"SPECTER-like ({len(runs)} seeds)")
    compare(rows, shared / "comparison", names=names, split=settings.split)
    return (shared / "comparison" / "comparison.md").read_text()


def sweep(output_dir: Optional[str] = None, k_pos: Sequence[int] = (), k_hard: Sequence[int] = (),
          positives_band: int = POSITIVES_BAND, hard_negatives_band: int = HARD_NEGATIVES_BAND,
          **flags: Any) -> Dict[str, Any]:
    """Train one model per k+ (positives ``n_{k+-band+1} .. n_{k+}``) and per k-hard; plot both.

    Paper Figs. 2-3 vary k+ with k-hard fixed and vice versa (c+ = 5, c- = 2 as bands).
    """
    if not k_pos and not k_hard:
        raise InputError("give --k_pos and/or --k_hard values, e.g. --k_pos 10,25,100 --k_hard 500,1000,4000")
    first = settings_from_flags(output_dir, flags)
    shared = Path(first.output_dir)
    runs = []
    for family, values in (("k_pos", parse_int_list(k_pos, "k_pos")), ("k_hard", parse_int_list(k_hard, "k_hard"))):
        for k in values:
            per_run = dict(flags, auto_output_dir=False)
            if family == "k_pos":
                per_run.update(easy_positives_k_min=k - positives_band, easy_positives_k_max=k)
            else:
                per_run.update(hard_negatives_k_min=k - hard_negatives_band, hard_negatives_k_max=k)
            logger.info("=== sweep %s = %d ===", family, k)
            runs.append(_run_one(str(shared / "sweep" / family / str(k)), per_run, shared_dir=shared))
    from scincl.eval.compare import compare

    summary = compare([], shared / "comparison", sweep_dir=shared / "sweep", split=first.split)
    return {"runs": runs, "plots": summary.get("files", []), "output_dir": shared}


def format_stage_times(result: Dict[str, Any]) -> str:
    """One line per stage: status and seconds (for the end of a run's output)."""
    lines = []
    stages = result["manifest"]["stages"]
    for name in result["manifest"].get("stage_order", list(stages)):
        entry = stages[name]
        lines.append(f"  {name:<12} {entry['status']:<8} {entry.get('seconds', 0.0):8.1f} s")
    return "\n".join(lines)
