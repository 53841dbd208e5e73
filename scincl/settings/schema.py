"""The settings of a SciNCL run, each declared once: type, default, where the default comes from, range, help.

The shape of PyTorch-BigGraph's ``ConfigSchema``: one frozen dataclass whose fields carry their metadata
(:func:`setting`). ``SCINCL.hard_negatives_k_max`` is the paper's k-hard (4000); every module that needs a
SciNCL default reads it here, under the flag's own name:

- the CLI's flag check (:data:`scincl.flag_checks.RANGES`) and ``--help`` rows (:mod:`scincl.cli_help`)
  take the range and help text of these fields from :func:`rule_of` / :func:`help_of`;
- ``run_specter``'s ``RunSettings`` and its paper preset (:mod:`scincl.pipeline.settings`) are checked by
  :func:`check_settings` before any stage runs;
- the triplet miner's slot defaults (:mod:`scincl.triples.config`), ``--k_scale corpus``
  (:mod:`scincl.triples.k_scale`), the trainer's paper set-up (:mod:`scincl.model.train`) and the
  encoders' input length (``max_sequence_length``) take their defaults from :data:`SCINCL`.

Sources: ``paper`` = Ostendorff et al. 2022 (../shared/papers/000_a9b5f58ad3ba2ccb.txt), ``README`` = the
original SciNCL README (003_cf855bcd212543f5.txt).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from scincl.errors import InputError
from scincl.settings.rules import AT_LEAST_ONE, LEARNING_RATE, NON_NEGATIVE, NON_NEGATIVE_INT, Rule, check_band, check_rule


def setting(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
            choices: Tuple[str, ...] = ()) -> Any:
    """One field of :class:`SciNCLSchema`: its default, the source of that default, help text and validator
    (a range :class:`~scincl.settings.rules.Rule` for numbers, ``choices`` for names)."""
    return field(default=default, metadata={"source": source, "help": help, "rule": rule, "choices": choices})


@dataclass(frozen=True)
class SciNCLSchema:
    """SciNCL's settings with the paper's values; ``SciNCLSchema(**changes)`` validates (:func:`check_settings`)."""

    # --- sampling (scincl/triples/): paper §3.2, "KNN" strategy; positives n_{k+-c+ +1} .. n_{k+},
    # hard negatives n_{k- -c- +1} .. n_{k-}, easy negatives random outside the kNN set
    triples_per_query: int = setting(
        5, "paper §3.2: 5 triplets per query paper, as SPECTER",
        "triplets per query paper; the positive counts and the negative counts each add up to it", AT_LEAST_ONE)
    easy_positives_count: int = setting(
        5, "paper §3.2: c+ = 5", "c+: positives per query, from the k+ band", NON_NEGATIVE_INT)
    easy_positives_k_min: int = setting(
        20, "k+ - c+ (paper §3.2 band (k+ - c+; k+])", "positives start after the k_min-th neighbour",
        NON_NEGATIVE_INT)
    easy_positives_k_max: int = setting(
        25, "paper §5 / §6.1 (Fig. 2): best k+ = 25 on SciDocs val",
        "k+: positives end at the k_max-th neighbour of the query in the citation-embedding space", NON_NEGATIVE_INT)
    easy_negatives_count: int = setting(
        3, "paper §3.2: c-easy = 3", "easy negatives per query (random papers outside the kNN set)", NON_NEGATIVE_INT)
    easy_negatives_strategy: str = setting(
        "random_without_knn", "paper §3.2 / §6.3: filtered random sampling",
        "how easy negatives are drawn (strategies of scincl/triples/strategies.py)")
    hard_negatives_count: int = setting(
        2, "paper §3.2: c-hard = 2", "c-: hard negatives per query, from the k-hard band", NON_NEGATIVE_INT)
    hard_negatives_k_min: int = setting(
        3998, "k-hard - c-hard (paper §3.2 band (k- - c-; k-])", "hard negatives start after the k_min-th neighbour",
        NON_NEGATIVE_INT)
    hard_negatives_k_max: int = setting(
        4000, "paper §5 / §6.2 (Fig. 3): best k-hard = 4000 on SciDocs val",
        "k-hard: hard negatives end at the k_max-th neighbour of the query", NON_NEGATIVE_INT)
    seed: int = setting(0, "paper §5: seeds 0..9, the first", "sampling and training seed", NON_NEGATIVE_INT)

    # --- training (scincl/model/): paper §4.3, SPECTER's set-up
    num_train_epochs: float = setting(2, "paper §4.3: 2 epochs", "training epochs", NON_NEGATIVE)
    per_device_train_batch_size: int = setting(8, "paper §4.3: batch size 8", "triplets per device and step",
                                               AT_LEAST_ONE)
    gradient_accumulation_steps: int = setting(
        4, "paper §4.3: effective batch size 32 = 8 x 4", "steps whose gradients are summed before an update",
        AT_LEAST_ONE)
    learning_rate: float = setting(2e-5, "paper §4.3: lambda = 2e-5 (AdamW)", "peak learning rate", LEARNING_RATE)
    max_sequence_length: int = setting(
        512, "README: the tokenizer's max_length=512 (SPECTER / SciNCL input length)",
        "tokens per paper (title [SEP] abstract)", AT_LEAST_ONE)
    pooling_strategy: str = setting("cls", "paper §3: the [CLS] token's last hidden state",
                                    "document vector: cls or mean of the last hidden states", choices=("cls", "mean"))
    loss: str = setting("triplet", "paper §3.1: triplet margin loss (Eq. 3.1)",
                        "training objective (losses of scincl/model/losses/)")

    # --- graph (scincl/graph/): paper §4.2
    graph_method: str = setting("pbg", "paper §4.2: PyTorch-BigGraph",
                                "citation-graph embeddings: pbg, prone or fastrp (scincl/graph/embed.py)")

    def __post_init__(self) -> None:
        check_settings(dataclasses.asdict(self))


FIELDS: Dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(SciNCLSchema)}
BANDS: Tuple[str, ...] = ("easy_positives", "hard_negatives")  # the (k_min, k_max] bands of the schema


def rule_of(name: str) -> Optional[Rule]:
    """The range of setting ``name`` (``None``: not a schema field or no range)."""
    return FIELDS[name].metadata["rule"] if name in FIELDS else None


def help_of(name: str) -> str:
    """``help (default D: source)`` of setting ``name`` for ``--help`` (empty when not a schema field)."""
    if name not in FIELDS:
        return ""
    meta = FIELDS[name].metadata
    return f"{meta['help']} (SciNCL default {FIELDS[name].default!r}: {meta['source']})"


def ranges() -> Dict[str, Rule]:
    """``{name: Rule}`` of every schema field with a range."""
    return {name: f.metadata["rule"] for name, f in FIELDS.items() if f.metadata["rule"] is not None}


def check_settings(values: Mapping[str, Any]) -> None:
    """The schema fields among ``values`` checked (ranges, choices, bands): one :class:`InputError` line
    naming the flag; names the schema does not know and ``None`` values are left alone."""
    for name, value in values.items():
        if name not in FIELDS or value is None:
            continue
        check_rule(name, value, FIELDS[name].metadata["rule"])
        choices = FIELDS[name].metadata["choices"]
        if choices and value not in choices:
            raise InputError(f"--{name} {value!r}: choose one of {', '.join(choices)}")
    for band in BANDS:
        check_band(band, values.get(f"{band}_k_min"), values.get(f"{band}_k_max"))


SCINCL = SciNCLSchema()  # the paper's settings
