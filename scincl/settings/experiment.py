"""One real-corpus experiment of ``docs/results.md`` as data: :class:`Experiment` (``experiments/<name>.py``
returns its fields), the kind's defaults that live in the experiments' own modules (:func:`experiment_data`) and how
command-line flags change a definition (:func:`with_changes`). The kinds that turn an experiment into a grid of runs
are in :mod:`scincl.pipeline.experiment_kinds`.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from scincl.errors import unknown_flag_error
from scincl.settings.recipe import RECIPE_ALIASES, RECIPE_FIELDS, Recipe, recipe_field, recipe_fields
from scincl.settings.run import EXPERIMENTS_DIR, load_module
from scincl.settings.schema import setting


@functools.lru_cache(maxsize=None)
def experiment_data(name: str) -> Any:
    """The data module ``experiments/<name>.py``, loaded once: a kind's defaults live in its experiment's module
    (``hepth_losses.LOSSES``, ``hepth_collisions.QUERIES`` / ``K_POS``, ``hepth_graph.GRAPH_DIMS`` /
    ``COMPARATORS``)."""
    return load_module(EXPERIMENTS_DIR / f"{name}.py", f"scincl_experiments_{name}")


def experiment_names() -> List[str]:
    """The experiments of ``experiments/`` (``bash experiments/run.sh NAME``), sorted: its modules that define
    ``get_experiment()`` (not ``arms.py``'s shared data, ``choose_recipe.py``, ``paper_ablations.py``)."""
    return sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.py") if "\ndef get_experiment(" in p.read_text())


@dataclass(frozen=True)
class Experiment:
    """One experiment of ``docs/results.md`` as data (``experiments/<name>.py`` returns these).

    Every field is declared once (:func:`scincl.settings.schema.setting`: default, its source, help; ``--help``
    reads them); ``recipe`` holds :class:`Recipe` fields that differ from the default recipe.
    """

    kind: str = setting(dataclasses.MISSING, "required: the definition's, or reproduce's EXPERIMENT",
                        "one of KINDS: main | tuning | k_pos | k_hard | losses | collisions | graph | budget | paired")
    corpus: str = setting("hepth", "docs/results.md: hep-th, the main corpus",
                          "a folder of --data_dir: hepth | citeseer")
    seeds: Tuple[int, ...] = setting((0, 1, 2), "docs/results.md: three seeds per arm",
                                     "seeds of the trained runs (sweeps and tuning usually take one)")
    split: Optional[str] = setting(None, "experiments/arms.py DEFAULT_SPLITS, else its DEFAULT_SPLIT",
                                   "SciDocs split scored; None: the kind's")
    arms: Optional[Tuple[str, ...]] = setting(None, "experiments/arms.py DEFAULT_ARMS / TUNING_ARMS / BUDGET_ARMS",
                                              "main / tuning / budget; None: the kind's default arms")
    recipe: Dict[str, Any] = setting(None, "the default Recipe (scincl/settings/recipe.py)",
                                     "Recipe fields that differ", default_factory=dict)
    values: Optional[Tuple[int, ...]] = setting(
        None, "none for the sweeps and the budget curve (required); collisions: "
        "scincl/triples/margins.py DEFAULT_HARD_NEGATIVES_K",
        "k_pos / k_hard sweep values, collisions' k-hard grid, budgets")
    variants: Tuple[str, ...] = setting((), "the default recipe alone",
                                        'tuning, paired: "field=value" recipe variants')
    losses: Optional[Tuple[str, ...]] = setting(None, "experiments/hepth_losses.py LOSSES (read when used)",
                                                "losses of the loss comparison")
    cocitation_min_count: int = setting(2, "docs/results.md Setup: hep-th pairs co-cited >= 2x",
                                        "co-citation graph edges: pairs co-cited at least this often")
    eval_max_sequence_length: int = setting(128, "docs/results.md Setup: 128 evaluation tokens (CPU budget)",
                                            "tokens per SciDocs paper at evaluation")
    graph_dims: Optional[Tuple[int, ...]] = setting(
        None, "experiments/hepth_graph.py GRAPH_DIMS (paper Table 4 ablation; read when used)",
        "graph study: link-prediction dimensions")

    def full_recipe(self) -> Recipe:
        """The default :class:`Recipe` with this experiment's changes (unknown fields: one-line error)."""
        for name in self.recipe:
            if recipe_field(name) not in RECIPE_FIELDS:
                raise unknown_flag_error(name, f"the {self.kind} experiment's recipe", RECIPE_FIELDS)
        return dataclasses.replace(Recipe(), **recipe_fields(self.recipe))


def name_list(value: Any) -> Tuple[str, ...]:
    """``"a,b"`` / ``("a", "b")`` -> ``("a", "b")``."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(x).strip() for x in items if str(x).strip())


def with_changes(definition: Dict[str, Any], changes: Dict[str, Any], command: str) -> Dict[str, Any]:
    """``definition`` with command-line ``changes``: :class:`Experiment` fields, or :class:`Recipe`
    fields (merged into its recipe). Unknown flags name the closest valid one."""
    own = {f.name for f in dataclasses.fields(Experiment)} - {"kind", "recipe"}
    changed = {**definition, "recipe": recipe_fields(dict(definition.get("recipe", {})))}
    for name, value in changes.items():
        if name in own:
            changed[name] = value
        elif recipe_field(name) not in RECIPE_FIELDS:
            raise unknown_flag_error(name, command, own | RECIPE_FIELDS | set(RECIPE_ALIASES))
    # a flag given under both its names with two values is an error; a given flag replaces the definition's value
    changed["recipe"].update(recipe_fields({k: v for k, v in changes.items() if k not in own}))
    return changed
