"""Flag values checked before a command starts: types from the signature, ranges from one table.

Every ``cli_*.py`` subcommand goes through :func:`checked_command` (see :func:`scincl.cli.run_cli`):
before the library function runs, each flag's value is checked against the function's type hint
(``int``, ``float``, ``bool``, ``str``, ``Optional[...]`` of those) and, by flag name, against
:data:`RANGES`; the names are the same in every command (a ``--batch_size`` is a batch size
everywhere), so one table serves them all, including flags that reach a command through
``**kwargs`` (``train``'s ``TrainingArguments``, ``run_specter``'s miner and training flags).
A bad value is one :class:`~scincl.errors.InputError` line naming the flag, the value and the rule.
"""
from __future__ import annotations

import functools
import inspect
import os
import re
import typing
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, Union

from scincl.errors import InputError
from scincl.settings.rules import (AT_LEAST_ONE, NON_NEGATIVE, NON_NEGATIVE_INT, OPEN_SHARE, POSITIVE, SHARE, Rule,
                                   check_band, check_rule)
from scincl.settings.schema import ranges as schema_ranges


# One rule per flag name, whichever command takes it: the SciNCL settings' rules come from their
# schema (scincl/settings/schema.py: triples_per_query, the slot counts and k bands, seed, learning_rate,
# num_train_epochs, batch size, max_sequence_length, ...), the other flags' are here.
RANGES: Dict[str, Rule] = {
    # sizes of batches, sequences, corpora: at least one
    **{name: AT_LEAST_ONE for name in (
        "batch_size", "per_device_eval_batch_size", "ann_batch_size", "eval_max_sequence_length", "papers", "topics",
        "demo_papers", "k", "min_count", "min_cocitation_count", "min_coupling_count", "max_queries", "train_size",
        "nprobe", "faiss_nprobe", "pairs_per_relation", "triples_count", "k_means_clusters")},
    # counts and neighbour ranks: zero allowed (an empty slot, the nearest neighbour)
    **{name: NON_NEGATIVE_INT for name in (
        "medium_positives_count", "medium_negatives_count", "hard_positives_count", "easy_negatives_k_min",
        "easy_negatives_k_max", "medium_negatives_k_min", "medium_negatives_k_max", "medium_positives_k_min",
        "medium_positives_k_max", "hard_positives_k_min", "hard_positives_k_max", "positives_count",
        "negatives_count", "largest_n", "rank", "corpus_seed", "sample_n_nodes", "sample_classification_triples",
        "save_total_limit")},
    **schema_ranges(),
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

# the miner's slots (flags <slot>_k_min, <slot>_k_max): a band of neighbour ranks needs k_min < k_max
K_BANDS: Tuple[str, ...] = tuple(f"{difficulty}_{role}" for difficulty in ("easy", "medium", "hard")
                                 for role in ("positives", "negatives"))

BOOLEAN_WORDS = {"true": True, "false": False}

# flags naming where a command writes: output_dir, output_path, output_fp, paper_ids_output_path, ...
OUTPUT_FLAG = re.compile(r"(^|_)output(_(dir|path|fp))?$|_output_(dir|path)$")
# outputs whose flag name does not say so, by command
OUTPUT_FLAGS_OF = {"build_faiss": {"index_path"}, "get_knn_triples": {"ann_index_path"},
                   "get_continuous_cocitation_triples": {"ann_index_path"}}


def check_writable(name: str, value: Any) -> None:
    """An output flag's path can be created: its nearest existing ancestor is a writable directory."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        return
    target = Path(value)
    ancestor = target if target.is_dir() else target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"--{name} {value}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        read_only = bool(os.statvfs(ancestor).f_flag & os.ST_RDONLY)
        reason = "read-only file system" if read_only else "permission denied"
        raise InputError(f"--{name} {value}: cannot write in {ancestor} ({reason})")


def _simple_type(hint: Any) -> Optional[type]:
    """``int``/``float``/``bool``/``str`` for a hint of that type (or ``Optional`` of it), else ``None``."""
    if hint in (bool, int, float, str):
        return hint
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    if getattr(hint, "__origin__", None) is Union and len(args) == 1:
        return _simple_type(args[0])
    return None


def check_value(name: str, value: Any, kind: Optional[type]) -> Any:
    """``value`` of flag ``--name`` checked as ``kind`` and against :data:`RANGES`; returns it (converted).

    Conversions: a number given for a string flag (``--output_dir 2024``) becomes that string,
    ``true``/``false`` for a boolean flag become booleans, an integer for a float flag a float.
    """
    if value is None:
        return None
    rule = RANGES.get(name)
    kind = kind or (rule.kind if rule else None)
    if kind is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in BOOLEAN_WORDS:
            return BOOLEAN_WORDS[value.strip().lower()]
        if not isinstance(value, bool):
            raise InputError(f"--{name}: expected true or false, got {value!r}")
        return value
    if kind in (int, float):
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind is int and not (numeric and float(value).is_integer()):
            raise InputError(f"--{name}: expected an integer, got {value!r}")
        if not numeric:
            raise InputError(f"--{name}: expected a number, got {value!r}")
        value = int(value) if kind is int else value
    check_rule(name, value, rule)
    return value


def check_bands(values: Dict[str, Any]) -> None:
    """Every (k_min, k_max) pair given with both ends: k_min < k_max."""
    for band in K_BANDS:
        check_band(band, values.get(f"{band}_k_min"), values.get(f"{band}_k_max"))


def check_training_length(values: Dict[str, Any]) -> None:
    """``--num_train_epochs 0`` without ``--max_steps``: no step would run and the base model would be saved."""
    epochs, max_steps = values.get("num_train_epochs"), values.get("max_steps")
    if epochs == 0 and not (isinstance(max_steps, int) and max_steps > 0):
        raise InputError("--num_train_epochs 0: no training step would run (give epochs > 0 or --max_steps N)")


def _hints(function: Callable) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(inspect.unwrap(function))
    except Exception:  # an annotation that does not resolve: check by RANGES only
        return {}


def check_call(function: Callable, args: tuple, kwargs: dict) -> Tuple[tuple, dict]:
    """The arguments of one call of ``function``, checked and converted (see :func:`check_value`).

    Arguments ``function`` cannot take are left for the call itself to reject.
    """
    signature = inspect.signature(function)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    hints = _hints(function)
    seen: Dict[str, Any] = {}
    for name, value in list(bound.arguments.items()):
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            checked = {key: check_value(key, item, None) for key, item in value.items()}
            bound.arguments[name] = checked
            seen.update(checked)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            bound.arguments[name] = seen[name] = check_value(name, value, _simple_type(hints.get(name)))
            if OUTPUT_FLAG.search(name) or name in OUTPUT_FLAGS_OF.get(function.__name__, ()):
                check_writable(name, seen[name])
    defaults = {n: p.default for n, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
    check_bands({**defaults, **seen})
    check_training_length(seen)
    return bound.args, bound.kwargs


def output_flag_values(function: Callable, args: tuple, kwargs: dict) -> Tuple[list, Any]:
    """``([paths of the output flags given or defaulted], the --rank value)`` of one call of ``function``."""
    signature = inspect.signature(function)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return [], None
    bound.apply_defaults()
    values = dict(bound.arguments)
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            values.update(values.pop(name, {}) or {})
    for name, default in getattr(function, "_default_outputs", {}).items():  # see default_outputs()
        if values.get(name) is None:
            values[name] = default
    outputs = [Path(str(value)) for name, value in values.items()
               if (OUTPUT_FLAG.search(name) or name in OUTPUT_FLAGS_OF.get(function.__name__, ()))
               and isinstance(value, (str, os.PathLike)) and str(value)]
    return outputs, values.get("rank")



def default_outputs(**outputs: str) -> Callable:
    """Mark a command whose output flags default to ``None`` but which then writes these paths (``run_specter``
    without ``--output_dir`` writes ``demo_output``), so its lock covers the output it really writes."""
    def mark(function: Callable) -> Callable:
        function._default_outputs = dict(outputs)
        return function

    return mark


def checked_command(function: Callable, wait: bool = False) -> Callable:
    """``function`` with its flags checked (:func:`check_call`) before it runs, holding the lock of each of
    its outputs (:func:`scincl.output_lock.output_lock`; ``wait``: wait for a holder) while it runs;
    same signature and help."""
    from scincl.output_lock import is_secondary_rank, output_lock

    @functools.wraps(function)
    def run(*args, **kwargs):
        args, kwargs = check_call(function, args, kwargs)
        outputs, rank = output_flag_values(function, args, kwargs)
        if not outputs or is_secondary_rank(rank):
            return function(*args, **kwargs)
        with output_lock(outputs, wait=wait):
            return function(*args, **kwargs)

    return run
