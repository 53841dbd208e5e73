"""One real-corpus experiment of ``docs/results.md`` as data: :class:`Experiment` (``experiments/<name>.py``
returns its fields; checked and normalised when built), how definitions and flags make them (:func:`make_experiments`:
:func:`load_definitions`, :func:`with_changes`), the kinds' defaults (data of this module, not of ``experiments/``:
issue 39) and a recipe's ``--variants`` (:func:`variant_recipes`). The kinds that turn an
experiment into a grid of runs (a base recipe x rows x seeds) are :mod:`scincl.pipeline.experiment_kinds`'.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from scincl.errors import InputError, unknown_flag_error
from scincl.settings.arms import ARMS, DEFAULT_ARMS, DEFAULT_SPLIT, DEFAULT_SPLITS
from scincl.settings.recipe import RECIPE_ALIASES, RECIPE_FIELDS, Recipe, recipe_field, recipe_fields
from scincl.settings.run import EXPERIMENTS_DIR, load_module, parse_int_list, parse_seeds
from scincl.settings.schema import setting
from scincl.settings.values import check_value

logger = logging.getLogger(__name__)

# the experiment kinds, in the order of the docs (scincl/pipeline/experiment_kinds.py KINDS builds their rows)
KIND_NAMES = ("main", "tuning", "k_pos", "k_hard", "losses", "collisions", "graph", "budget", "paired")
LOSSES = ("triplet", "infonce", "cosent", "angle")  # the loss comparison of docs/results.md
GRAPH_DIMS = (64, 128)  # the graph study's link-prediction dimensions (paper Table 4 ablation)
# the BigGraph comparators the graph study trains (biggraph_configs/s2orc_128d_*) -> the metric its retrieval ranks by
GRAPH_COMPARATORS = {"dot": "dot", "cos": "cosine"}
COLLISION_QUERIES = 2000  # query papers of the collision study, at most (docs/results.md §5)
COLLISION_K_POS = (10, 50)  # k+ values the collision study searches besides the recipe's own (docs/results.md §5)
# the kinds that need --values, with the line that says so
NEEDS_VALUES = {**{sweep: f"the {sweep} sweep needs --values, e.g. --values 10,25,50" for sweep in ("k_pos", "k_hard")},
                "budget": "the budget curve needs --values (triplets per run), e.g. --values 1000,2500,6840"}


@functools.lru_cache(maxsize=None)
def experiment_data(name: str) -> Any:
    """The definition module ``experiments/<name>.py``, loaded once (a definition may read another's data:
    ``hepth_powered`` takes ``hepth_pretrained.ENCODER``)."""
    return load_module(EXPERIMENTS_DIR / f"{name}.py", f"scincl_experiments_{name}")


def experiment_names() -> List[str]:
    """The experiments of ``experiments/`` (``bash experiments/run.sh NAME``), sorted: its modules that define
    ``get_experiment()`` (not ``choose_recipe.py``, ``paper_ablations.py``)."""
    return sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.py") if "\ndef get_experiment(" in p.read_text())


@dataclass(frozen=True)
class Experiment:
    """One experiment of ``docs/results.md`` as data (``experiments/<name>.py`` returns these).

    Every field is declared once (:func:`scincl.settings.schema.setting`: default, its source, help; ``--help``
    reads them); ``recipe`` holds :class:`Recipe` fields that differ from the default recipe.
    """

    kind: str = setting(dataclasses.MISSING, "required: the definition's, or reproduce's EXPERIMENT",
                        "one of KINDS: " + " | ".join(KIND_NAMES))
    corpus: str = setting("hepth", "docs/results.md: hep-th, the main corpus",
                          "a folder of --data_dir: hepth | citeseer")
    seeds: Tuple[int, ...] = setting((0, 1, 2), "docs/results.md: three seeds per arm",
                                     "seeds of the trained runs (sweeps and tuning usually take one)")
    split: Optional[str] = setting(None, "scincl/settings/arms.py DEFAULT_SPLITS, else its DEFAULT_SPLIT",
                                   "SciDocs split scored; None: the kind's")
    arms: Optional[Tuple[str, ...]] = setting(None, "scincl/settings/arms.py DEFAULT_ARMS of the kind",
                                              "main / tuning / budget / paired; None: the kind's default arms")
    recipe: Dict[str, Any] = setting(None, "the default Recipe (scincl/settings/recipe.py)",
                                     "Recipe fields that differ", default_factory=dict)
    values: Optional[Tuple[int, ...]] = setting(
        None, "none for the sweeps and the budget curve (required); collisions: "
        "scincl/triples/margins.py DEFAULT_HARD_NEGATIVES_K",
        "k_pos / k_hard sweep values, collisions' k-hard grid, budgets")
    variants: Tuple[str, ...] = setting((), "the default recipe alone",
                                        'tuning, paired: "field=value" recipe variants')
    losses: Tuple[str, ...] = setting(LOSSES, "scincl/settings/experiment.py LOSSES: the loss comparison of "
                                      "docs/results.md", "losses of the loss comparison")
    cocitation_min_count: int = setting(2, "docs/results.md Setup: hep-th pairs co-cited >= 2x",
                                        "co-citation graph edges: pairs co-cited at least this often")
    eval_max_sequence_length: int = setting(128, "docs/results.md Setup: 128 evaluation tokens (CPU budget)",
                                            "tokens per SciDocs paper at evaluation")
    graph_dims: Tuple[int, ...] = setting(GRAPH_DIMS, "scincl/settings/experiment.py GRAPH_DIMS (paper Table 4 "
                                          "ablation)", "graph study: link-prediction dimensions")

    def __post_init__(self) -> None:
        """Check the fields and normalise their lists (``"0..2"`` -> ``(0, 1, 2)``, ``"a,b"`` -> ``("a", "b")``): an
        :class:`Experiment` is valid once built; the loss names are the trainer's to check
        (:func:`scincl.pipeline.experiment_kinds.load_experiments`)."""
        if self.kind not in KIND_NAMES:
            raise InputError(f"unknown experiment {self.kind!r}: choose from {', '.join(KIND_NAMES)}")
        arms, values, split = self.arms, self.values, self.split
        for name, value in (("seeds", tuple(parse_seeds(self.seeds))), ("losses", name_list(self.losses)),
                            ("split", DEFAULT_SPLITS.get(self.kind, DEFAULT_SPLIT) if split is None else split),
                            ("variants", name_list(self.variants)), ("recipe", dict(self.recipe)),
                            ("graph_dims", tuple(parse_int_list(self.graph_dims, "graph_dims"))),
                            ("arms", DEFAULT_ARMS.get(self.kind) if arms is None else name_list(arms)),
                            ("values", None if values is None else tuple(parse_int_list(values, "values")))):
            object.__setattr__(self, name, value)  # a frozen dataclass normalising its own fields
        for arm in self.arms or ():
            if arm not in ARMS:
                raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
        if self.kind == "budget" and self.arms and len(self.arms) != 2:
            raise InputError(f"the budget curve compares two arms, got {', '.join(self.arms)}")
        if self.kind == "paired" and self.arms and len(self.arms) < 2:
            raise InputError(f"a paired experiment compares at least two arms, got {', '.join(self.arms)}")
        for name in ("values", "graph_dims"):  # issue 29: duplicates and non-positive values ran (or crashed) later
            values = getattr(self, name) or ()
            if any(v <= 0 for v in values) or len(set(values)) != len(values):
                raise InputError(f"--{name} {','.join(map(str, values))}: expected distinct values > 0")
        if self.kind in NEEDS_VALUES and not self.values:
            raise InputError(NEEDS_VALUES[self.kind])
        if self.split not in ("val", "test"):
            raise InputError(f"--split {self.split!r}: choose val or test")
        for name in ("cocitation_min_count", "eval_max_sequence_length"):
            check_value(name, getattr(self, name), int)
        recipe = self.full_recipe()  # the recipe's fields checked before any work (the Recipe checks itself)
        for value in self.values if self.kind in ("k_pos", "k_hard") else ():  # each swept recipe checks itself too
            miner = dataclasses.replace(recipe, **recipe_fields({self.kind: value})).miner  # k_pos: k+
            positives, negatives = miner.slot("easy_positives"), miner.slot("hard_negatives")
            if positives.k_max + positives.count > negatives.k_max - negatives.count:
                logger.warning("%s=%d: positives overlap the hard negatives (k+ %d, k-hard %d)", self.kind, value,
                               positives.k_max, negatives.k_max)

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


def make_experiment(definition: Dict[str, Any]) -> Experiment:
    """One experiment definition (a dict of :class:`Experiment` fields) as a checked :class:`Experiment` (an unknown
    field names the closest one)."""
    fields = {f.name for f in dataclasses.fields(Experiment)}
    unknown = sorted(set(definition) - fields)
    if unknown:
        raise unknown_flag_error(unknown[0], "an experiment definition", fields)
    return Experiment(**definition)


def make_experiments(definitions: Union[str, os.PathLike, List[Dict[str, Any]]], changes: Dict[str, Any],
                     command: str) -> List[Experiment]:
    """The :class:`Experiment` of each definition (a list, or :func:`load_definitions`' of a module) with
    ``command``'s flags ``changes`` (:func:`with_changes`)."""
    listed = definitions if isinstance(definitions, list) else load_definitions(definitions)
    return [make_experiment(with_changes(definition, changes, command)) for definition in listed]


def load_definitions(path_or_name: Union[str, os.PathLike]) -> List[Dict[str, Any]]:
    """The definitions of a module: ``experiments/<name>.py`` or a path to such a file.

    The module's ``get_experiment()`` returns one definition (a dict of :class:`Experiment` fields) or a list of
    them, run in order (the ``biggraph_configs/`` shape). A broken module is one line naming the file (issue 29).
    """
    path = Path(path_or_name)
    if not path.suffix:
        path = EXPERIMENTS_DIR / f"{path_or_name}.py"
    if not path.is_file():
        raise InputError(f"no experiment definition {str(path_or_name)!r} (experiments/: "
                         f"{', '.join(experiment_names())})")
    try:
        module = load_module(path, f"scincl_experiment_{path.stem}")
        if not hasattr(module, "get_experiment"):
            raise InputError("defines no get_experiment()", path=path)
        definitions = module.get_experiment()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - user code: SyntaxError, NameError, ...
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        raise InputError(f"cannot load the experiment definition ({type(exc).__name__}: {exc})", path=path,
                         line=line) from None
    items = definitions if isinstance(definitions, list) else [definitions]
    if not items or not all(isinstance(d, dict) for d in items):
        raise InputError(f"get_experiment() must return a dict of Experiment fields or a list of them, got "
                         f"{type(definitions).__name__}", path=path)
    return items


def variant_recipes(recipe: Recipe, variants: Sequence[str]) -> List[Tuple[str, Recipe]]:
    """``("default", recipe)``, then each variant ``field=value`` with the recipe it makes (:func:`variant_changes`)."""
    return [("default", recipe), *((v, dataclasses.replace(recipe, **variant_changes(recipe, v))) for v in variants)]


def variant_changes(recipe: Recipe, variant: str) -> Dict[str, Any]:
    """A variant ``field=value`` (``pooling=cls``) as the :class:`Recipe` field it changes, typed as the field."""
    if "=" not in variant:
        raise InputError(f"--variants: expected field=value (e.g. pooling=cls), got {variant!r}")
    key, value = (x.strip() for x in variant.split("=", 1))
    key = recipe_field(key)  # pooling=cls: pooling_strategy=cls
    if key not in RECIPE_FIELDS:
        raise InputError(f"--variants: unknown recipe field {key!r} (one of {', '.join(sorted(RECIPE_FIELDS))})")
    return {key: type(getattr(recipe, key))(value)}
