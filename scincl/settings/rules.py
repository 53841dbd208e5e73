"""Value ranges of settings and flags: a :class:`Rule` per quantity (:data:`FLAG_RULES` for the flags that are no
SciNCL setting), the one error line for a value outside (:func:`check_rule`, :func:`check_band`), and the plain type
a setting's type hint names (:func:`simple_type`: the kind :mod:`~scincl.settings.values` converts a flag to and the
spec's fields are checked as).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from scincl.errors import InputError


@dataclass(frozen=True)
class Rule:
    """A value's kind (``int`` or ``float``), the interval it must lie in and the named values the flag also
    takes (``words``: ``get_specter_corpus --sample_n_nodes specter``; only where the command's type hint admits
    a string, e.g. ``Union[int, str]``)."""

    kind: type
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False  # True: value > low (else >= low)
    high_open: bool = False  # True: value < high (else <= high)
    hint: str = ""  # what to do instead, for values a user might mean
    words: Tuple[str, ...] = ()  # named values taken besides numbers

    def describe(self) -> str:
        """``>= 1``, ``> 0 and <= 1``, ``>= 0 or specter``: the interval and the words (empty when unbounded)."""
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {_number(self.low)}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {_number(self.high)}")
        return " or ".join(filter(None, [" and ".join(parts), *self.words]))

    def holds(self, value: float) -> bool:
        """True when ``value`` is finite and inside the interval."""
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.high_open else value > self.high))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


AT_LEAST_ONE = Rule(int, low=1)  # sizes of batches, sequences, corpora
NON_NEGATIVE_INT = Rule(int, low=0)  # counts and neighbour ranks: zero allowed (an empty slot, the nearest neighbour)
NON_NEGATIVE = Rule(float, low=0)
POSITIVE = Rule(float, low=0, low_open=True)
SHARE = Rule(float, low=0, high=1)  # a fraction of something, 0..1
OPEN_SHARE = Rule(float, low=0, high=1, low_open=True, high_open=True)
LEARNING_RATE = Rule(float, low=0, low_open=True,  # 0 trains nothing: the "finished" model is the base model
                     hint="to score the base model untrained, run `evaluate --model_dir BASE_MODEL`")

# The rules of the flags that are not SciNCL settings (those have theirs in scincl/settings/schema.py), one per
# flag name whichever command takes it (a --batch_size is a batch size everywhere).
FLAG_RULES: Dict[str, Rule] = {
    # sizes of batches, sequences, corpora: at least one
    **{name: AT_LEAST_ONE for name in (
        "batch_size", "per_device_eval_batch_size", "ann_batch_size", "eval_max_sequence_length", "papers", "topics",
        "demo_papers", "k", "min_count", "min_cocitation_count", "cocitation_min_count", "min_coupling_count",
        "max_queries", "train_size",
        "nprobe", "faiss_nprobe", "pairs_per_relation", "triples_count")},
    # counts and neighbour ranks: zero allowed (the miner's slots have theirs in scincl/settings/spec.py:MinerSpec)
    **{name: NON_NEGATIVE_INT for name in (
        "positives_count", "negatives_count", "largest_n", "rank", "corpus_seed", "sample_classification_triples",
        "save_total_limit")},
    # get_specter_corpus: an int, 0 (all) or `specter` (SPECTER's query count), scincl/corpus/selection.py:
    # select_specter_corpus; get_citations' int-typed --sample_n_nodes takes numbers only (its type hint)
    "sample_n_nodes": Rule(int, low=0, words=("specter",)),
    "warmup_ratio": SHARE,
    "weight_decay": NON_NEGATIVE,
    "max_grad_norm": NON_NEGATIVE,
    "test_ratio": Rule(float, low=0, high=1, high_open=True),
    "graph_test_ratio": Rule(float, low=0, high=1, high_open=True),
    "sample_queries_ratio": Rule(float, low=0, high=1, low_open=True),
    "mlm_probability": OPEN_SHARE,
    "vocab_size": Rule(int, low=100, high=200_000),  # pretrain: scincl.model.pretrain.VOCAB_SIZE_RANGE
    "val_ratio": Rule(float, low=0, high=0.5, high_open=True),
    "mlm_weight": NON_NEGATIVE,
    "graph_distillation_weight": NON_NEGATIVE,
    "triplet_margin": NON_NEGATIVE,
    "temperature": POSITIVE,
    "ranking_scale": POSITIVE,
    "cosine_weight": NON_NEGATIVE,
    "ibn_weight": NON_NEGATIVE,
    "angle_weight": NON_NEGATIVE,
    "power": NON_NEGATIVE,
}


def simple_type(hint: Any) -> Optional[type]:
    """``int``/``float``/``bool``/``str`` for a hint of that type (or ``Optional`` of it), else ``None``."""
    if hint in (bool, int, float, str):
        return hint
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    if getattr(hint, "__origin__", None) is Union and len(args) == 1:
        return simple_type(args[0])
    if getattr(hint, "__origin__", None) is Union and str in args and not {int, float, bool} & set(args):
        return str  # a path (Union[str, PathLike]) or a comma-separated list given as text
    return None


def check_rule(name: str, value: Any, rule: Optional[Rule]) -> None:
    """``--name value: must be >= 1`` (:class:`InputError`) when a number breaks ``rule`` or a word is not one of
    its ``words`` (a rule without words leaves strings to the type check); other values pass."""
    if rule is not None and isinstance(value, str) and rule.words and value not in rule.words:
        raise InputError(f"--{name} {value!r}: must be {rule.describe()}")
    if rule is None or not isinstance(value, numbers.Real) or isinstance(value, bool) or rule.holds(value):
        return
    hint = f" ({rule.hint})" if rule.hint else ""
    raise InputError(f"--{name} {value}: must be {rule.describe()}{hint}")


def check_band(prefix: str, k_min: Any, k_max: Any) -> None:
    """A band of neighbour ranks ``(k_min, k_max]`` (flags ``--<prefix>_k_min`` / ``--<prefix>_k_max``)
    holds at least one rank: ``k_min < k_max`` (:class:`InputError` otherwise; ends not given pass)."""
    if isinstance(k_min, int) and isinstance(k_max, int) and not k_min < k_max:
        raise InputError(f"--{prefix}_k_min {k_min} / --{prefix}_k_max {k_max}: need k_min < k_max")


def check_steps(epochs: Any, max_steps: Any) -> None:
    """``--num_train_epochs 0`` trains only with ``--max_steps N`` (:class:`InputError` otherwise)."""
    if epochs == 0 and not isinstance(epochs, bool) and not (isinstance(max_steps, int) and max_steps > 0):
        raise InputError("--num_train_epochs 0: no training step would run (give epochs > 0 or --max_steps N)")


def check_choice(name: str, value: Any, choices: Tuple[str, ...]) -> None:
    """``--name value: choose one of a, b`` (:class:`InputError`) when ``choices`` are given and ``value`` is none."""
    if choices and value not in choices:
        raise InputError(f"--{name} {value!r}: choose one of {', '.join(choices)}")
