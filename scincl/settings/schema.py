"""The settings of a SciNCL run, each declared once: type, default, where the default comes from, range, help.

The shape of PyTorch-BigGraph's ``ConfigSchema``: one frozen dataclass whose fields carry their metadata
(:func:`setting`). ``SCINCL.hard_negatives_k_max`` is the paper's k-hard (4000); every module that needs a
SciNCL default reads it here, under the flag's own name:

- :func:`check_settings` is the one range check of every flag (these fields' rules and
  :data:`scincl.settings.rules.FLAG_RULES`), run once before any work: by the CLI for a command's flags
  (:mod:`scincl.cli.flags`), by ``run_specter``'s settings for its resolved values
  (:mod:`scincl.settings.run`); ``--help`` rows (:mod:`scincl.cli.help`) take the range and help text
  of these fields from :func:`rule_of` / :func:`help_of`;
- a band's start is derived from its end and count (:func:`derive_bands`: ``k_max - count``) wherever
  it is not given: here, in ``RunSettings`` and in the miner's config;
- the triplet miner's slot defaults (:mod:`scincl.triples.miner`), ``--k_scale corpus``
  (:mod:`scincl.triples.k_scale`), the trainer's paper set-up (:mod:`scincl.model.train`) and the
  encoders' input length (``max_sequence_length``) take their defaults from :data:`SCINCL`.

Sources: ``paper`` = Ostendorff et al. 2022 (../shared/papers/000_a9b5f58ad3ba2ccb.txt), ``README`` = the
original SciNCL README (003_cf855bcd212543f5.txt).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from scincl.errors import InputError
from scincl.settings.rules import (AT_LEAST_ONE, FLAG_RULES, LEARNING_RATE, NON_NEGATIVE, NON_NEGATIVE_INT, Rule,
                                   check_band, check_rule)


def setting(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
            choices: Tuple[str, ...] = (), default_factory: Optional[Callable[[], Any]] = None) -> Any:
    """One field of a settings dataclass (:class:`SciNCLSchema`, :class:`scincl.settings.run.RunSettings`): its
    default, the source of that default, help text and validator (a range
    :class:`~scincl.settings.rules.Rule` for numbers, ``choices`` for names); ``default_factory`` for a mutable
    default (``dict``, ``list``). The values a run preset gives a field are data (``experiments/presets/``)."""
    metadata = {"source": source, "help": help, "rule": rule, "choices": choices}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


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
    easy_positives_k_min: Optional[int] = setting(
        None, "derived: k+ - c+ = easy_positives_k_max - easy_positives_count (paper §3.2 band (k+ - c+; k+])",
        "positives start after the k_min-th neighbour (default: easy_positives_k_max - easy_positives_count)",
        NON_NEGATIVE_INT)
    easy_positives_k_max: int = setting(
        25, "paper §5 / §6.1 (Fig. 2): best k+ = 25 on SciDocs val",
        "k+: positives end at the k_max-th neighbour of the query in the citation-embedding space", NON_NEGATIVE_INT)
    easy_positives_strategy: str = setting("knn", "paper §3.2; README: --easy_positives_strategy knn",
                                           "how positives are drawn (strategies of scincl/triples/strategies.py)")
    easy_negatives_count: int = setting(
        3, "paper §3.2: c-easy = 3", "easy negatives per query (random papers outside the kNN set)", NON_NEGATIVE_INT)
    easy_negatives_strategy: str = setting(
        "random_without_knn", "paper §3.2 / §6.3: filtered random sampling",
        "how easy negatives are drawn (strategies of scincl/triples/strategies.py)")
    hard_negatives_count: int = setting(
        2, "paper §3.2: c-hard = 2", "c-: hard negatives per query, from the k-hard band", NON_NEGATIVE_INT)
    hard_negatives_strategy: str = setting("knn", "paper §3.2; README: --hard_negatives_strategy knn",
                                           "how hard negatives are drawn (strategies of scincl/triples/strategies.py)")
    hard_negatives_k_min: Optional[int] = setting(
        None, "derived: k- - c- = hard_negatives_k_max - hard_negatives_count (paper §3.2 band (k- - c-; k-])",
        "hard negatives start after the k_min-th neighbour (default: hard_negatives_k_max - hard_negatives_count)",
        NON_NEGATIVE_INT)
    hard_negatives_k_max: int = setting(
        4000, "paper §5 / §6.2 (Fig. 3): best k-hard = 4000 on SciDocs val",
        "k-hard: hard negatives end at the k_max-th neighbour of the query", NON_NEGATIVE_INT)
    seed: int = setting(0, "paper §5: seeds 0..9, the first", "sampling and training seed", NON_NEGATIVE_INT)

    # --- the kNN index the bands are read from (scincl/knn/): the original README's build_faiss and run_specter
    ann_metric: str = setting("inner_product", "README: --ann_metric inner_product", "kNN index metric")
    ann_normalize_embeddings: bool = setting(
        True, "README: build_faiss --do_normalize (inner product = cosine)",
        "L2-normalise the graph embeddings before the kNN search")
    faiss_string_factory: str = setting("Flat", "README: ANN_FAISS_FACTORY=Flat (exact search)", "faiss index factory")

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
    # the real-corpus experiments' citation graph (scincl/pipeline/real_corpus.py), shared by every arm and seed
    shared_graph_test_ratio: float = setting(
        0.05, "issue 8 (docs/results.md): 5 % of the hep-th / CiteSeer edges held out to score the shared graph",
        "share of the citation edges the real-corpus experiments hold out for link prediction",
        FLAG_RULES["graph_test_ratio"])
    shared_graph_seed: int = setting(
        0, "issue 8: one edge split and one graph for every arm and seed, made with seed 0",
        "seed of the real-corpus experiments' edge split and graph embeddings", NON_NEGATIVE_INT)

    def __post_init__(self) -> None:
        for name, value in derive_bands(dataclasses.asdict(self)).items():
            object.__setattr__(self, name, value)  # frozen: the derived band starts, set once here
        check_settings(dataclasses.asdict(self))


FIELDS: Dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(SciNCLSchema)}
BANDS: Tuple[str, ...] = ("easy_positives", "hard_negatives")  # the (k_min, k_max] bands of the schema


def scincl_setting(name: str, default: Any = dataclasses.MISSING, choices: Tuple[str, ...] = (),
                   source: Optional[str] = None) -> Any:
    """A field of another settings dataclass that is SciNCL setting ``name``: the schema field's source, help,
    rule and choices (declared once, above; ``choices`` where the values are registered elsewhere, e.g. the graph
    methods), its default unless ``default`` is given (``None``: filled from the run's preset by
    :func:`scincl.settings.presets.resolve`; another value: ``source`` says where it comes from, e.g. the real-corpus
    recipe's)."""
    meta = FIELDS[name].metadata
    return setting(getattr(SCINCL, name) if default is dataclasses.MISSING else default, source or meta["source"],
                   meta["help"], meta["rule"], choices or meta["choices"])


def derive_bands(values: Mapping[str, Any]) -> Dict[str, int]:
    """``{<band>_k_min: k_max - count}`` for each schema band whose start is not given (``None`` or absent) and
    whose end is: paper §3.2 samples the c nearest-but-k ranks (k - c; k]. ``count`` is the value's own
    ``<band>_count``, else the schema default. Returns only the derived entries.

    >>> derive_bands({"hard_negatives_k_max": 500})
    {'hard_negatives_k_min': 498}
    """
    derived = {}
    for band in BANDS:
        k_max = values.get(f"{band}_k_max")
        if values.get(f"{band}_k_min") is None and isinstance(k_max, int) and not isinstance(k_max, bool):
            count = values.get(f"{band}_count")
            derived[f"{band}_k_min"] = k_max - (FIELDS[f"{band}_count"].default if count is None else count)
    return derived


def rule_of(name: str) -> Optional[Rule]:
    """The range of setting ``name`` (``None``: not a schema field or no range)."""
    return FIELDS[name].metadata["rule"] if name in FIELDS else None


def help_of(name: str) -> str:
    """``help (default D: source)`` of setting ``name`` for ``--help`` (empty when not a schema field)."""
    if name not in FIELDS:
        return ""
    meta = FIELDS[name].metadata
    return f"{meta['help']} (SciNCL default {getattr(SCINCL, name)!r}: {meta['source']})"


def ranges() -> Dict[str, Rule]:
    """``{name: Rule}`` of every flag with a range: the schema fields' rules, then the other flags'
    (:data:`scincl.settings.rules.FLAG_RULES`)."""
    return {**FLAG_RULES, **{name: f.metadata["rule"] for name, f in FIELDS.items() if f.metadata["rule"] is not None}}


def check_settings(values: Mapping[str, Any], bands: Optional[Mapping[str, Any]] = None,
                   fields: Optional[Mapping[str, dataclasses.Field]] = None) -> None:
    """The one range check of settings and flags, before any work: each value by its rule (a field's of
    ``fields`` or of the schema; else :data:`scincl.settings.rules.FLAG_RULES`), a field's choices, and every band
    ``<band>_k_min < <band>_k_max`` (ends from ``bands`` when given, e.g. a command's defaults and flags, else ``values``).
    One :class:`InputError` line naming the flag; unknown names and ``None`` values are left alone."""
    fields = {**FIELDS, **(fields or {})}
    # a band's start after everything else: it may be derived from its end (derive_bands), whose error comes first
    for name, value in sorted(values.items(), key=lambda item: item[0].endswith("_k_min")):
        if value is None:
            continue
        meta = fields[name].metadata if name in fields else {}
        check_rule(name, value, meta["rule"] if meta.get("rule") is not None else FLAG_RULES.get(name))
        choices = meta.get("choices", ())
        if choices and value not in choices:
            raise InputError(f"--{name} {value!r}: choose one of {', '.join(choices)}")
    bands = values if bands is None else bands
    # every (k_min, k_max] band, found by its flags' names: the miner's slots are named once, in triples/miner.py
    for end in sorted(name for name in bands if name.endswith("_k_max")):
        band = end[:-len("_k_max")]
        check_band(band, bands.get(f"{band}_k_min"), bands[end])


SCINCL = SciNCLSchema()  # the paper's settings
