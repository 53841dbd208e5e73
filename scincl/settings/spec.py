"""SciNCL's settings as a nested, typed spec: each field declared once (type, default, its source, range or choices,
help) in the section it belongs to, validated when the spec is built (attrs validators, PyTorch-BigGraph's
``config.py`` shape).

:class:`SciNCLSpec` is the paper's run: ``sampler`` (``miner``: the kNN bands and counts of paper §3.2; ``search``:
the index they are read from), ``recipe`` (``encoder``, ``loss``, ``training``: paper §3-§4.3), ``graph`` (paper
§4.2) and ``seed``. A leaf's name is its flag's (``hard_negatives_k_max`` is k-hard, 4000), unique across sections,
so a flat set of flags maps onto the spec without naming paths (:data:`LEAVES`, :func:`spec_from_flags`) and the
spec reads back by flag name (:class:`FlatView`, e.g. ``scincl.settings.schema.SCINCL.hard_negatives_k_max``).

Sources: ``paper`` = Ostendorff et al. 2022 (../shared/papers/000_a9b5f58ad3ba2ccb.txt), ``README`` = the
original SciNCL README (003_cf855bcd212543f5.txt).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

import attrs

from scincl.errors import InputError
from scincl.settings.rules import (AT_LEAST_ONE, FLAG_RULES, LEARNING_RATE, NON_NEGATIVE, NON_NEGATIVE_INT, Rule,
                                   check_band, check_choice, check_rule)


def _validate(instance: Any, attribute: "attrs.Attribute", value: Any) -> None:
    """A leaf's value by its rule and choices (one :class:`InputError` line naming the flag); ``None`` passes."""
    if value is None:
        return
    check_rule(attribute.name, value, attribute.metadata["rule"])
    check_choice(attribute.name, value, attribute.metadata["choices"])


def spec_field(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
               choices: Tuple[str, ...] = ()) -> Any:
    """One leaf of the spec: its default, the source of that default, help text and validator (a range
    :class:`~scincl.settings.rules.Rule` for numbers, ``choices`` for names), checked whenever the spec is built."""
    return attrs.field(default=default, validator=_validate,
                       metadata={"source": source, "help": help, "rule": rule, "choices": choices})


def section(cls: type) -> type:
    """A section of the spec: a frozen attrs class (a changed copy is :func:`attrs.evolve`)."""
    return attrs.frozen(cls)


@section
class MinerSpec:
    """The kNN sampler's slots (paper §3.2, "KNN" strategy): positives n_{k+-c+ +1} .. n_{k+}, hard negatives
    n_{k- -c- +1} .. n_{k-}, easy negatives random outside the kNN set. A band's start left ``None`` is derived
    from its end and count (:func:`derive_bands`), then every band is checked to hold a rank."""

    triples_per_query: int = spec_field(
        5, "paper §3.2: 5 triplets per query paper, as SPECTER",
        "triplets per query paper; the positive counts and the negative counts each add up to it", AT_LEAST_ONE)
    easy_positives_count: int = spec_field(
        5, "paper §3.2: c+ = 5", "c+: positives per query, from the k+ band", NON_NEGATIVE_INT)
    easy_positives_k_min: Optional[int] = spec_field(
        None, "derived: k+ - c+ = easy_positives_k_max - easy_positives_count (paper §3.2 band (k+ - c+; k+])",
        "positives start after the k_min-th neighbour (default: easy_positives_k_max - easy_positives_count)",
        NON_NEGATIVE_INT)
    easy_positives_k_max: int = spec_field(
        25, "paper §5 / §6.1 (Fig. 2): best k+ = 25 on SciDocs val",
        "k+: positives end at the k_max-th neighbour of the query in the citation-embedding space", NON_NEGATIVE_INT)
    easy_positives_strategy: str = spec_field("knn", "paper §3.2; README: --easy_positives_strategy knn",
                                              "how positives are drawn (strategies of scincl/triples/strategies.py)")
    easy_negatives_count: int = spec_field(
        3, "paper §3.2: c-easy = 3", "easy negatives per query (random papers outside the kNN set)", NON_NEGATIVE_INT)
    easy_negatives_strategy: str = spec_field(
        "random_without_knn", "paper §3.2 / §6.3: filtered random sampling",
        "how easy negatives are drawn (strategies of scincl/triples/strategies.py)")
    hard_negatives_count: int = spec_field(
        2, "paper §3.2: c-hard = 2", "c-: hard negatives per query, from the k-hard band", NON_NEGATIVE_INT)
    hard_negatives_strategy: str = spec_field(
        "knn", "paper §3.2; README: --hard_negatives_strategy knn",
        "how hard negatives are drawn (strategies of scincl/triples/strategies.py)")
    hard_negatives_k_min: Optional[int] = spec_field(
        None, "derived: k- - c- = hard_negatives_k_max - hard_negatives_count (paper §3.2 band (k- - c-; k-])",
        "hard negatives start after the k_min-th neighbour (default: hard_negatives_k_max - hard_negatives_count)",
        NON_NEGATIVE_INT)
    hard_negatives_k_max: int = spec_field(
        4000, "paper §5 / §6.2 (Fig. 3): best k-hard = 4000 on SciDocs val",
        "k-hard: hard negatives end at the k_max-th neighbour of the query", NON_NEGATIVE_INT)

    def __attrs_post_init__(self) -> None:
        for name, value in derive_bands(attrs.asdict(self)).items():
            object.__setattr__(self, name, value)  # frozen: the derived band starts, set once here
        attrs.validate(self)  # the derived starts by their rule too
        for band in BANDS:
            check_band(band, getattr(self, f"{band}_k_min"), getattr(self, f"{band}_k_max"))


@section
class SearchSpec:
    """The kNN index the bands are read from (scincl/knn/): the original README's build_faiss and run_specter."""

    ann_metric: str = spec_field("inner_product", "README: --ann_metric inner_product", "kNN index metric")
    ann_normalize_embeddings: bool = spec_field(
        True, "README: build_faiss --do_normalize (inner product = cosine)",
        "L2-normalise the graph embeddings before the kNN search")
    faiss_string_factory: str = spec_field("Flat", "README: ANN_FAISS_FACTORY=Flat (exact search)",
                                           "faiss index factory")


@section
class SamplerSpec:
    """How the triplets are sampled: the miner's slots and the index they search."""

    miner: MinerSpec = attrs.field(factory=MinerSpec)
    search: SearchSpec = attrs.field(factory=SearchSpec)


@section
class EncoderSpec:
    """The document encoder's input and pooling (scincl/model/encoder.py)."""

    max_sequence_length: int = spec_field(
        512, "README: the tokenizer's max_length=512 (SPECTER / SciNCL input length)",
        "tokens per paper (title [SEP] abstract)", AT_LEAST_ONE)
    pooling_strategy: str = spec_field("cls", "paper §3: the [CLS] token's last hidden state",
                                       "document vector: cls or mean of the last hidden states", choices=("cls", "mean"))


@section
class TrainingSpec:
    """The trainer's set-up (paper §4.3, SPECTER's; scincl/model/train.py)."""

    num_train_epochs: float = spec_field(2, "paper §4.3: 2 epochs", "training epochs", NON_NEGATIVE)
    per_device_train_batch_size: int = spec_field(8, "paper §4.3: batch size 8", "triplets per device and step",
                                                  AT_LEAST_ONE)
    gradient_accumulation_steps: int = spec_field(
        4, "paper §4.3: effective batch size 32 = 8 x 4", "steps whose gradients are summed before an update",
        AT_LEAST_ONE)
    learning_rate: float = spec_field(2e-5, "paper §4.3: lambda = 2e-5 (AdamW)", "peak learning rate", LEARNING_RATE)


@section
class RecipeSpec:
    """What the encoder is fine-tuned with: the encoder, the loss and the trainer."""

    encoder: EncoderSpec = attrs.field(factory=EncoderSpec)
    loss: str = spec_field("triplet", "paper §3.1: triplet margin loss (Eq. 3.1)",
                           "training objective (losses of scincl/model/losses/)")
    training: TrainingSpec = attrs.field(factory=TrainingSpec)


@section
class GraphSpec:
    """The citation-graph embeddings (scincl/graph/, paper §4.2) and the real-corpus experiments' shared graph
    (scincl/pipeline/real_corpus.py), shared by every arm and seed."""

    graph_method: str = spec_field("pbg", "paper §4.2: PyTorch-BigGraph",
                                   "citation-graph embeddings: pbg, prone or fastrp (scincl/graph/embed.py)")
    shared_graph_test_ratio: float = spec_field(
        0.05, "issue 8 (docs/results.md): 5 % of the hep-th / CiteSeer edges held out to score the shared graph",
        "share of the citation edges the real-corpus experiments hold out for link prediction",
        FLAG_RULES["graph_test_ratio"])
    shared_graph_seed: int = spec_field(
        0, "issue 8: one edge split and one graph for every arm and seed, made with seed 0",
        "seed of the real-corpus experiments' edge split and graph embeddings", NON_NEGATIVE_INT)


@section
class SciNCLSpec:
    """SciNCL's run with the paper's values: sampler, recipe, graph and seed."""

    sampler: SamplerSpec = attrs.field(factory=SamplerSpec)
    recipe: RecipeSpec = attrs.field(factory=RecipeSpec)
    graph: GraphSpec = attrs.field(factory=GraphSpec)
    seed: int = spec_field(0, "paper §5: seeds 0..9, the first", "sampling and training seed", NON_NEGATIVE_INT)


def _leaves(cls: type, path: Tuple[str, ...] = ()) -> Dict[str, Tuple[Tuple[str, ...], "attrs.Attribute"]]:
    """``{leaf name: (path of sections, attribute)}`` of a spec class, in declaration order (a leaf is a
    :func:`spec_field`; any other attribute is a section, made by its class)."""
    out: Dict[str, Tuple[Tuple[str, ...], attrs.Attribute]] = {}
    for attribute in attrs.fields(cls):
        if "source" in attribute.metadata:
            found = {attribute.name: (path, attribute)}
        else:
            found = _leaves(attribute.default.factory, path + (attribute.name,))
        for name in found:
            if name in out:
                raise TypeError(f"spec leaf {name!r} declared twice")
        out.update(found)
    return out


LEAVES: Dict[str, Tuple[Tuple[str, ...], "attrs.Attribute"]] = _leaves(SciNCLSpec)
BANDS: Tuple[str, ...] = ("easy_positives", "hard_negatives")  # the (k_min, k_max] bands of the miner


def derive_bands(values: Mapping[str, Any]) -> Dict[str, int]:
    """``{<band>_k_min: k_max - count}`` for each band whose start is not given (``None`` or absent) and whose end
    is: paper §3.2 samples the c nearest-but-k ranks (k - c; k]. ``count`` is the value's own ``<band>_count``,
    else the spec's default. Returns only the derived entries.

    >>> derive_bands({"hard_negatives_k_max": 500})
    {'hard_negatives_k_min': 498}
    """
    derived = {}
    for band in BANDS:
        k_max = values.get(f"{band}_k_max")
        if values.get(f"{band}_k_min") is None and isinstance(k_max, int) and not isinstance(k_max, bool):
            count = values.get(f"{band}_count")
            derived[f"{band}_k_min"] = k_max - (LEAVES[f"{band}_count"][1].default if count is None else count)
    return derived


def spec_from_flags(flags: Mapping[str, Any], base: Optional[SciNCLSpec] = None) -> SciNCLSpec:
    """``base`` (default: the paper's spec) with the leaves named in ``flags`` changed, each section rebuilt and so
    validated; a band's start not given is derived anew from its end. An unknown name is an :class:`InputError`."""
    unknown = sorted(set(flags) - set(LEAVES))
    if unknown:
        raise InputError(f"--{unknown[0]}: not a SciNCL setting")
    base = SciNCLSpec() if base is None else base
    changes: Dict[Tuple[str, ...], Dict[str, Any]] = {}
    for name, value in flags.items():
        changes.setdefault(LEAVES[name][0], {})[name] = value
    for band in BANDS:  # a new end without a start: the start follows the end (k - c), not the old start
        if any(f"{band}_k_max" in c or f"{band}_count" in c for c in changes.values()) and \
                f"{band}_k_min" not in flags:
            changes.setdefault(LEAVES[f"{band}_k_min"][0], {})[f"{band}_k_min"] = None
    return _evolve(base, (), changes)


def _evolve(spec: Any, path: Tuple[str, ...], changes: Mapping[Tuple[str, ...], Dict[str, Any]]) -> Any:
    own = dict(changes.get(path, {}))
    for attribute in attrs.fields(type(spec)):
        sub = getattr(spec, attribute.name)
        if attrs.has(type(sub)) and any(p[:len(path) + 1] == path + (attribute.name,) for p in changes):
            own[attribute.name] = _evolve(sub, path + (attribute.name,), changes)
    return attrs.evolve(spec, **own) if own else spec


class FlatView:
    """A spec read by its leaves' names (the flags): ``FlatView(spec).hard_negatives_k_max``."""

    __slots__ = ("spec",)

    def __init__(self, spec: SciNCLSpec) -> None:
        object.__setattr__(self, "spec", spec)

    def __getattr__(self, name: str) -> Any:
        if name not in LEAVES:
            raise AttributeError(f"no SciNCL setting {name!r}")
        value: Any = self.spec
        for part in LEAVES[name][0] + (name,):
            value = getattr(value, part)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a spec is frozen: build another with spec_from_flags")

    def as_dict(self) -> Dict[str, Any]:
        """Every leaf by name."""
        return {name: getattr(self, name) for name in LEAVES}
