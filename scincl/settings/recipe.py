"""The real-corpus experiments' recipe: the variables of one arm's run (sampling, budget, training); its SciNCL
settings are the spec's leaves (:func:`~scincl.settings.schema.with_leaves`) with the experiments' own defaults,
each with its source (:data:`RECIPE_DEFAULTS`).

Where a recipe's run lives is named by :func:`scincl.pipeline.layout.recipe_key` (it needs the machine's device
and the loss registry, which this package does not import).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Tuple

from scincl.errors import InputError
from scincl.settings.choices import parse_bf16_request
from scincl.settings.run import CPU_TRAINING, MINER_LEAVES
from scincl.settings.schema import setting, with_leaves
from scincl.settings.spec import MinerSpec
from scincl.settings.rules import AT_LEAST_ONE, check_rule
from scincl.settings.values import check_types


# The SciNCL settings a recipe varies, with the experiments' own values and their sources (type, help and range are
# the spec's leaves': scincl/settings/spec.py), in the order the recipe lists them.
RECIPE_DEFAULTS: Dict[str, Tuple[Any, str]] = {
    "easy_positives_k_max": (25, "hep-th val, docs/results.md §1 (k+ in 10, 25, 50)"),
    "hard_negatives_k_max": (500, "hep-th val, docs/results.md §1 (k-hard in 100, 500, 2000)"),
    "pooling_strategy": ("mean", "hep-th val, docs/results.md §1 (MiniLM was trained with mean pooling)"),
    "learning_rate": (5e-5, "the demo's, not swept for lack of CPU time (docs/results.md §1)"),
    "loss": ("triplet", "docs/results.md Setup: the paper's triplet margin loss"),
    "max_sequence_length": (64, "docs/results.md Setup: 64 training tokens (CPU budget)"),
    "per_device_train_batch_size": (16, "docs/results.md Setup: batch 16 (CPU budget)"),
    "num_train_epochs": (1, "docs/results.md Setup: one epoch (CPU budget)"),
}


@dataclass(frozen=True)
@with_leaves(after={"triplets": tuple(RECIPE_DEFAULTS)}, defaults=RECIPE_DEFAULTS)
class Recipe:
    """The experiment's variables: sampling (k+, k-hard), budget and training of one arm.

    The SciNCL settings among them are the spec's leaves under their own names (scincl/settings/spec.py:
    ``easy_positives_k_max`` is k+) with this recipe's defaults (:data:`RECIPE_DEFAULTS`); the names they had before
    (``k_pos``, ``k_hard``, ``pooling``, ``batch_size``, ``epochs``, ``base_model``: :data:`RECIPE_ALIASES`) are
    accepted as flags and experiment keys and are what a run's ``recipe.json`` records (:func:`recipe_record`), so
    runs cached under them keep their folders and records.
    """

    triplets: int = setting(1000, "docs/results.md Setup: 200 hep-th query papers x 5 (CPU budget)",
                            "training triplets per run, 5 per query paper", AT_LEAST_ONE)
    graph_dim: int = setting(64, "docs/results.md Setup: the citation graph's BigGraph embeddings, 64-d",
                             "dimensions of the citation-graph embeddings SciNCL samples from", AT_LEAST_ONE)
    bf16: str = setting("auto", "train's default", "training precision: auto (bf16 where native) | true | false")
    eval_bf16: str = setting("false", "scincl.model.embed.EMBED_BF16", "evaluation embeddings: fp32 unless asked")
    base_model_name_or_path: str = setting(
        "", "the packaged all-MiniLM-L6-v2 (docs/results.md Setup)",
        "the encoder to fine-tune: empty = the packaged MiniLM, else a hub name or a directory")

    def __post_init__(self) -> None:
        """A recipe is checked when built: each field by its type and rule, the miner's settings by building
        :attr:`miner` (their one range check); the values are kept as given (a run's folder name follows them)."""
        for name in ("bf16", "eval_bf16"):  # fire gives booleans for --bf16 true: keep the words
            object.__setattr__(self, name, parse_bf16_request(getattr(self, name)))
        check_types(self)  # 10.5 triplets refused
        for field in dataclasses.fields(self):  # each by its rule (a leaf's is the spec's) but the miner's, checked once
            if field.name not in MINER_LEAVES:  # when the miner is built, below
                check_rule(field.name, getattr(self, field.name), field.metadata.get("rule"))
        self.miner  # noqa: B018 - built once, and so checked

    @functools.cached_property
    def miner(self) -> MinerSpec:
        """The kNN miner's settings: the recipe's bands; the other slots keep SciNCL's."""
        return MinerSpec(**{name: getattr(self, name) for name in RECIPE_DEFAULTS if name in MINER_LEAVES})

    def training_arguments(self) -> Dict[str, Any]:
        """``train()``'s arguments of this recipe: its loss, lengths and pooling, and the Trainer's (the fixed CPU ones
        from scincl/settings/run.py)."""
        return {**{name: getattr(self, name) for name in RECIPE_DEFAULTS if name not in MINER_LEAVES},
                "bf16": self.bf16, **CPU_TRAINING}

    def encoder_label(self) -> str:
        """The encoder as the tables name it."""
        return self.base_model_name_or_path or "all-MiniLM-L6-v2 (packaged)"

    def encoder_key(self) -> str:
        """``""`` for the packaged MiniLM (the runs keep their names), else ``_m<name>-<hash>``: the
        last path component of ``--base_model`` and 8 hex digits of its sha256, so two models with
        the same name in different places never share a run."""
        model = self.base_model_name_or_path
        if not model:
            return ""
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(model.rstrip("/")).name).strip("-") or "model"
        return f"_m{name}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"


RECIPE_FIELDS = frozenset(f.name for f in dataclasses.fields(Recipe))  # the names a recipe change may use

# the recipe fields' names before they took the settings' own (issue 27): accepted as flags, experiment keys and
# --variants, and kept in each run's recipe.json (its provenance record), so cached runs stay as they were
RECIPE_ALIASES: Dict[str, str] = {"k_pos": "easy_positives_k_max", "k_hard": "hard_negatives_k_max",
                                  "pooling": "pooling_strategy", "batch_size": "per_device_train_batch_size",
                                  "epochs": "num_train_epochs", "base_model": "base_model_name_or_path"}


for _alias, _name in RECIPE_ALIASES.items():  # recipe.k_hard reads recipe.<its field>, as the folder names do
    setattr(Recipe, _alias, property(operator.attrgetter(_name), doc=f"{_name}, under its recorded name"))


def recipe_field(name: str) -> str:
    """The :class:`Recipe` field a flag or experiment key names (a :data:`RECIPE_ALIASES` name -> its field)."""
    return RECIPE_ALIASES.get(name, name)


def recipe_fields(values: Dict[str, Any]) -> Dict[str, Any]:
    """``values`` with :data:`RECIPE_ALIASES` names replaced by the fields' names (one name given twice with
    different values is an :class:`InputError`)."""
    out: Dict[str, Any] = {}
    for name, value in values.items():
        field_name = recipe_field(name)
        if field_name in out and out[field_name] != value:
            raise InputError(f"--{name} {value!r} and --{field_name} {out[field_name]!r} name one setting; give one")
        out[field_name] = value
    return out


def recipe_record(recipe: Recipe) -> Dict[str, Any]:
    """The recipe as a run's ``recipe.json`` records it: under the names it had when the cached runs were made."""
    names = {field_name: alias for alias, field_name in RECIPE_ALIASES.items()}
    return {names.get(name, name): value for name, value in sorted(dataclasses.asdict(recipe).items(),
                                                                   key=lambda item: names.get(item[0], item[0]))}
