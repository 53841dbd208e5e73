#!/usr/bin/env python
"""Pick SciNCL's pooling, k+ and k-hard on the hep-th val queries (the rule used for docs/results.md).

Reads every finished val run of the SciNCL arm under RESULTS/hepth/runs/val/ and prints, for each
variable, the candidates' val Avg (``eval/report.run_average``: on hep-th val the mean of cite/co-cite
MAP and nDCG) and the winner, holding the
other variables at the default recipe. Ties keep the default. Usage:
    python experiments/choose_recipe.py [RESULTS_DIR]   ->   last line: --pooling P --k_pos K --k_hard H
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: scincl/
from scincl.eval.report import run_average  # noqa: E402  (the one Avg definition)
from scincl.settings.recipe import Recipe, recipe_record  # noqa: E402  (the default recipe, defined once)

# under the names a run's recipe.json records (scincl/settings/recipe.py RECIPE_ALIASES; flags of the same names)
DEFAULT = {k: v for k, v in recipe_record(Recipe()).items() if k in ("pooling", "k_pos", "k_hard")}


def val_runs(root: Path):
    for results in sorted(root.glob("hepth/runs/val/*/scincl/seed_*/results.json")):
        recipe = json.loads((results.parent / "recipe.json").read_text())
        yield recipe, run_average(json.loads(results.read_text())["scores"]["val"])[0]


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    runs = list(val_runs(root))
    if not runs:  # nothing measured: printing the default recipe would look like a choice
        sys.exit(f"choose_recipe.py: error: no finished val run of the SciNCL arm under {root}/hepth/runs/val/ "
                 "(run bash experiments/run.sh hepth_tuning, hepth_k_pos and hepth_k_hard first)")
    chosen = dict(DEFAULT)
    for variable in ("pooling", "k_pos", "k_hard"):
        others = {k: v for k, v in DEFAULT.items() if k != variable}
        candidates = {}
        for recipe, avg in runs:
            if all(recipe[k] == v for k, v in others.items()):
                candidates.setdefault(recipe[variable], []).append(avg)
        means = {value: sum(v) / len(v) for value, v in candidates.items()}
        if means:
            best = max(means, key=lambda value: (round(means[value], 2), value == DEFAULT[variable]))
            chosen[variable] = best
            print(f"{variable}: " + ", ".join(f"{k}={m:.2f}" for k, m in sorted(means.items(), key=str)) + f" -> {best}")
        else:
            print(f"{variable}: no val run varies it (others at the default) -> the default {DEFAULT[variable]} kept")
    print(f"--pooling {chosen['pooling']} --k_pos {chosen['k_pos']} --k_hard {chosen['k_hard']}")


if __name__ == "__main__":
    main()
