"""SciNCL's settings as a nested, typed spec (:class:`SciNCLSpec`: sampler = miner + search, recipe = encoder + loss +
training, graph, seed), each field declared once (type, default, its source, range or choices, help) and validated
when built (attrs validators, PyTorch-BigGraph's ``config.py`` shape). A leaf's name is its flag's, unique across
sections (:data:`LEAVES`). Sources: ``paper`` = Ostendorff et al. 2022 (../shared/papers/000_a9b5f58ad3ba2ccb.txt),
``README`` = the original SciNCL README (003_cf855bcd212543f5.txt).
"""
from __future__ import annotations

import functools
import numbers
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.errors import InputError
from scincl.settings.choices import (ANN_METRICS, BAND_STRATEGIES, GRAPH_METHODS, KNN, RANDOM_WITHOUT_KNN,
                                     RANDOM_WITHOUT_KNN_SORTED, RANGE, STRATEGIES)
from scincl.settings.rules import (AT_LEAST_ONE, FLAG_RULES, LEARNING_RATE, NON_NEGATIVE, NON_NEGATIVE_INT, Rule,
                                   check_band, check_choice, check_rule, simple_type)


@functools.lru_cache(maxsize=None)
def _plain_kinds(cls: type) -> Dict[str, type]:
    """``{field: bool | int | float}`` of the fields of ``cls`` typed so (or ``Optional`` of it)."""
    kinds = {name: simple_type(hint) for name, hint in typing.get_type_hints(cls).items()}
    return {name: kind for name, kind in kinds.items() if kind in (bool, int, float)}


def _check_kind(name: str, kind: Optional[type], value: Any) -> None:
    """:class:`InputError` when ``value`` is not of the field's plain type: a bool for a bool, an integer (not a
    bool, not 10.5) for an int, a number for a float; a spec built in Python is refused what the CLI refuses."""
    if kind is bool and not isinstance(value, bool):
        raise InputError(f"--{name}: expected true or false, got {value!r}")
    if kind in (int, float) and (isinstance(value, bool) or not isinstance(value, numbers.Real) or (
            kind is int and not isinstance(value, numbers.Integral))):
        raise InputError(f"--{name}: expected {'an integer' if kind is int else 'a number'}, got {value!r}")


def _validate(instance: Any, attribute: "attrs.Attribute", value: Any) -> None:
    """A leaf's value by its type, rule and choices (one :class:`InputError` line naming the flag); ``None``
    passes."""
    if value is None:
        return
    rule = attribute.metadata["rule"]
    if rule is None or not rule.words:  # a number-or-word flag (--graph_limit specter) is typed as a Union
        _check_kind(attribute.name, _plain_kinds(type(instance)).get(attribute.name), value)
    if rule is not None and not rule.words and not isinstance(value, numbers.Real):  # "abc" for a count
        raise InputError(f"--{attribute.name} {value!r}: must be a number {rule.describe()}")
    check_rule(attribute.name, value, rule)
    check_choice(attribute.name, value, attribute.metadata["choices"])


def spec_field(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
               choices: Tuple[str, ...] = (), converter: Any = None, option: bool = False,
               derived: bool = False) -> Any:
    """One field of the spec: default, its source, help, range :class:`~scincl.settings.rules.Rule` or ``choices``,
    checked when the spec is built (``converter`` first). ``option``: a miner flag SciNCL leaves at its default, no
    leaf; ``derived`` (a band's start): checked by its section once derived, after its end."""
    return attrs.field(default=default, validator=None if derived else _validate, converter=converter,
                       metadata={"source": source, "help": help, "rule": rule, "choices": choices, "option": option})


def section(cls: type) -> type:
    """A section of the spec: a frozen attrs class (a changed copy is :func:`attrs.evolve`)."""
    return attrs.frozen(cls)


@dataclass(frozen=True)
class Slot:
    """One slot of the miner, e.g. the easy positives: how many per query and how they are drawn (the flags
    ``--<difficulty>_<role>_count``, ``_strategy``, ``_k_min``, ``_k_max``, ``_range``)."""

    role: str  # "positives" | "negatives"
    difficulty: str  # "easy" | "medium" | "hard"
    count: int = 0
    strategy: str = KNN
    k_min: int = 0
    k_max: int = 0
    range: Optional[float] = None  # threshold passed to faiss range_search (strategy "range")

    @property
    def name(self) -> str:
        """Flag prefix, e.g. ``easy_positives``."""
        return f"{self.difficulty}_{self.role}"


def _as(kind: type, value: Any, field: "attrs.Attribute") -> Any:
    """``value`` as ``kind`` when it is a number or a number's text (a numpy integer, ``4000.0`` from a sweep, ``"5"``);
    other values as given, for the validators to name. A boolean, or a fraction for an int (``10.5``), is an
    :class:`InputError` naming the flag: refused, not truncated (issue 41), also when the spec is built in Python."""
    if isinstance(value, bool) or (kind is int and isinstance(value, numbers.Real) and not float(value).is_integer()):
        raise InputError(f"--{field.name}: expected {'an integer' if kind is int else 'a number'}, got {value!r}")
    try:
        return kind(value) if isinstance(value, (numbers.Real, str)) else value
    except ValueError:
        return value


_count, _threshold = (attrs.Converter(functools.partial(_as, kind), takes_field=True) for kind in (int, float))


UNUSED_SLOT = "the original SciNCL code's flag; SciNCL leaves this slot empty (paper §3.2)"


def _unused(default: Any, help: str, rule: Optional[Rule] = None, converter: Any = _count) -> Any:  # noqa: A002
    """A flag of a slot SciNCL does not fill (medium and hard positives, medium negatives) or of a slot's unused
    band or range: the miner takes it (:data:`UNUSED_SLOT`), ``run_specter`` passes it through ``miner_options``."""
    return spec_field(default, UNUSED_SLOT, help, rule, converter=converter, option=True)


def _range(slot: str) -> Any:
    return _unused(None, f"faiss range threshold of {slot.replace('_', ' ')} by strategy range", converter=_threshold)


def _unused_slot(slot: str) -> List[Tuple[str, str, Any]]:
    """The five flags of a slot SciNCL leaves empty (``medium_positives``: ``--medium_positives_count`` ...), as
    ``(name, type, field)``."""
    words = slot.replace("_", " ")
    return [(f"{slot}_count", "int", _unused(0, f"{words} per query", NON_NEGATIVE_INT)),
            (f"{slot}_strategy", "str", _unused(KNN, f"how {words} are drawn", converter=str)),
            (f"{slot}_k_min", "int", _unused(0, f"{words} start after the k_min-th neighbour", NON_NEGATIVE_INT)),
            (f"{slot}_k_max", "int", _unused(0, f"{words} end at the k_max-th neighbour", NON_NEGATIVE_INT)),
            (f"{slot}_range", "Optional[float]", _range(slot))]


def insert_fields(after: Mapping[str, Sequence[Tuple[str, str, Any]]]) -> Callable[[type], type]:
    """A class decorator (under the one that makes the class: ``@dataclass``, ``@section``) that adds fields
    ``(name, type, field)`` right after the class's own field named in ``after``, in that order (field order is
    ``--help``'s order and the constructor's)."""
    def add(cls: type) -> type:
        annotations: Dict[str, Any] = {}
        for own, hint in cls.__dict__.get("__annotations__", {}).items():
            annotations[own] = hint
            for name, kind, value in after.get(own, ()):
                annotations[name] = kind
                setattr(cls, name, value)
        if not set(after) <= set(annotations):
            raise TypeError(f"{cls.__name__}: no field {sorted(set(after) - set(annotations))} to place fields after")
        cls.__annotations__ = annotations
        return cls

    return add


@section
@insert_fields({"easy_positives_range": _unused_slot("medium_positives") + _unused_slot("hard_positives"),
                "easy_negatives_range": _unused_slot("medium_negatives")})
class MinerSpec:
    """The triplet miner's settings, one field per flag (paper §3.2): six slots (positives and negatives, each easy,
    medium, hard) with a count, a strategy, a band of neighbour ranks ``(k_min, k_max]`` and a range threshold.
    SciNCL fills three: positives n_{k+ -c+ +1} .. n_{k+}, hard negatives n_{k- -c- +1} .. n_{k-}, easy negatives
    random outside the kNN set. Building it derives a band's start left ``None`` (:func:`derive_bands`) and checks
    every range, band and how the slots fit: the one check of these flags. The miner reads :attr:`slots`."""

    triples_per_query: int = spec_field(
        5, "paper §3.2: 5 triplets per query paper, as SPECTER",
        "triplets per query paper; the positive counts and the negative counts each add up to it", AT_LEAST_ONE,
        converter=_count)
    easy_positives_count: int = spec_field(
        5, "paper §3.2: c+ = 5", "c+: positives per query, from the k+ band", NON_NEGATIVE_INT, converter=_count)
    easy_positives_strategy: str = spec_field("knn", "paper §3.2; README: --easy_positives_strategy knn",
                                              "how positives are drawn (strategies of scincl/triples/strategies.py)",
                                              converter=str)
    easy_positives_k_min: Optional[int] = spec_field(
        None, "derived: k+ - c+ = easy_positives_k_max - easy_positives_count (paper §3.2 band (k+ - c+; k+])",
        "positives start after the k_min-th neighbour (default: easy_positives_k_max - easy_positives_count)",
        NON_NEGATIVE_INT, converter=_count, derived=True)
    easy_positives_k_max: int = spec_field(
        25, "paper §5 / §6.1 (Fig. 2): best k+ = 25 on SciDocs val",
        "k+: positives end at the k_max-th neighbour of the query in the citation-embedding space", NON_NEGATIVE_INT,
        converter=_count)
    easy_positives_range: Optional[float] = _range("easy_positives")
    easy_negatives_count: int = spec_field(
        3, "paper §3.2: c-easy = 3", "easy negatives per query (random papers outside the kNN set)", NON_NEGATIVE_INT,
        converter=_count)
    easy_negatives_strategy: str = spec_field(
        "random_without_knn", "paper §3.2 / §6.3: filtered random sampling",
        "how easy negatives are drawn (strategies of scincl/triples/strategies.py)", converter=str)
    easy_negatives_k_min: int = _unused(0, "easy negatives start after the k_min-th neighbour (band strategies)",
                                        NON_NEGATIVE_INT)
    easy_negatives_k_max: int = _unused(0, "easy negatives end at the k_max-th neighbour (band strategies); "
                                        "random_without_knn* also exclude n_1 .. n_k_max", NON_NEGATIVE_INT)
    easy_negatives_range: Optional[float] = _range("easy_negatives")
    hard_negatives_count: int = spec_field(
        2, "paper §3.2: c-hard = 2", "c-: hard negatives per query, from the k-hard band", NON_NEGATIVE_INT,
        converter=_count)
    hard_negatives_strategy: str = spec_field(
        "knn", "paper §3.2; README: --hard_negatives_strategy knn",
        "how hard negatives are drawn (strategies of scincl/triples/strategies.py)", converter=str)
    hard_negatives_k_min: Optional[int] = spec_field(
        None, "derived: k- - c- = hard_negatives_k_max - hard_negatives_count (paper §3.2 band (k- - c-; k-])",
        "hard negatives start after the k_min-th neighbour (default: hard_negatives_k_max - hard_negatives_count)",
        NON_NEGATIVE_INT, converter=_count, derived=True)
    hard_negatives_k_max: int = spec_field(
        4000, "paper §5 / §6.2 (Fig. 3): best k-hard = 4000 on SciDocs val",
        "k-hard: hard negatives end at the k_max-th neighbour of the query", NON_NEGATIVE_INT, converter=_count)
    hard_negatives_range: Optional[float] = _range("hard_negatives")
    random_sorted_sample_n: int = spec_field(100, "the original SciNCL code", "candidates drawn per query by "
                                             "random_sorted", AT_LEAST_ONE, converter=_count, option=True)
    min_range_results_count: int = spec_field(10, "the original SciNCL code", "range results required beyond the "
                                              "count", NON_NEGATIVE_INT, converter=_count, option=True)
    range_fallback_to_random: bool = spec_field(True, "the original SciNCL code",
                                                "too few range results: fall back to random_without_knn", option=True)
    k_means_clusters: Optional[int] = spec_field(None, "None: about sqrt(corpus size) (mine_from_graph_corpus)",
                                                 "k-means clusters of the kmeans strategy", AT_LEAST_ONE,
                                                 converter=_count, option=True)

    def __attrs_post_init__(self) -> None:
        for name, value in derive_bands(attrs.asdict(self)).items():
            object.__setattr__(self, name, value)  # frozen: the derived band starts, set once here
        for band in BANDS:  # each start by its rule, then the band of a slot that draws from it
            start = attrs.fields_dict(MinerSpec)[f"{band}_k_min"]
            _validate(self, start, getattr(self, start.name))
            if getattr(self, f"{band}_count"):
                check_band(band, getattr(self, start.name), getattr(self, f"{band}_k_max"))
        check_slots(self)

    @property
    def slots(self) -> Tuple[Slot, ...]:
        """The six slots, positives then negatives, each easy, medium, hard, with the flags that fill them."""
        return tuple(Slot(role, difficulty, *(getattr(self, f"{difficulty}_{role}_{part}") for part in SLOT_FLAGS))
                     for role in ROLES for difficulty in ("easy", "medium", "hard"))

    def slot(self, name: str) -> Slot:
        """The slot of flag prefix ``name`` (``hard_negatives``: k-hard's band is ``slot("hard_negatives").k_max``)."""
        return next(slot for slot in self.slots if slot.name == name)

    def active(self, role: Optional[str] = None) -> List[Slot]:
        """Slots with a positive count (of one role when given), in easy, medium, hard order."""
        return [s for s in self.slots if s.count > 0 and (role is None or s.role == role)]

    def uses(self, *strategies: str) -> bool:
        """True when an active slot uses one of ``strategies``."""
        return any(s.strategy in strategies for s in self.active())

    def search_k(self) -> int:
        """Neighbours to search per query besides the query itself: the largest ``k_max`` of the
        slots that use the kNN matrix (``knn`` bands; ``random_without_knn*`` and ``range``'s
        fallback exclude ``n_1 .. n_K``, and their own ``k_max`` can widen ``K``)."""
        uses_matrix = (KNN, RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED, RANGE)
        return max([s.k_max for s in self.active() if s.strategy in uses_matrix], default=0)


ROLES: Tuple[str, ...] = ("positives", "negatives")
SLOT_FLAGS: Tuple[str, ...] = ("count", "strategy", "k_min", "k_max", "range")  # a slot's flags, in Slot's order


def check_slots(spec: MinerSpec) -> None:
    """:class:`InputError` for slots that cannot produce ``triples_per_query`` triples: an active slot's strategy,
    a band narrower than its count, a range strategy without its threshold, counts that do not add up."""
    for slot in spec.active():
        if slot.strategy not in STRATEGIES:
            raise InputError(f"--{slot.name}_strategy {slot.strategy!r} is unknown; choose one of "
                             f"{', '.join(STRATEGIES)}")
        if slot.strategy in BAND_STRATEGIES and slot.k_max is None:
            raise InputError(f"--{slot.name}_k_max: none given; {slot.count} {slot.name.replace('_', ' ')} are "
                             f"drawn by {slot.strategy} from the band that ends there")
        if slot.strategy in BAND_STRATEGIES and slot.k_max - slot.k_min < slot.count:
            raise InputError(f"--{slot.name}: the interval ({slot.k_min}, {slot.k_max}] holds "
                             f"{slot.k_max - slot.k_min} neighbours, fewer than the count {slot.count}")
        if slot.strategy == RANGE and slot.range is None:
            raise InputError(f"--{slot.name}_strategy range needs --{slot.name}_range (the faiss threshold)")
    for role in ROLES:
        total = sum(s.count for s in spec.active(role))
        if total != spec.triples_per_query:
            parts = " + ".join(f"{s.name}_count={s.count}" for s in spec.slots if s.role == role)
            raise InputError(f"{role} counts must add up to --triples_per_query={spec.triples_per_query}, "
                             f"got {parts} = {total}")


@section
class SearchSpec:
    """The kNN index the bands are read from (scincl/knn/): the original README's build_faiss and run_specter."""

    ann_metric: str = spec_field("inner_product", "README: --ann_metric inner_product", "kNN index metric",
                                 choices=ANN_METRICS)
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
class SharedGraphSpec:
    """The real-corpus experiments' graph (scincl/pipeline/real_corpus.py), shared by every arm and seed."""

    shared_graph_test_ratio: float = spec_field(
        0.05, "issue 8 (docs/results.md): 5 % of the hep-th / CiteSeer edges held out to score the shared graph",
        "share of the citation edges the real-corpus experiments hold out for link prediction",
        FLAG_RULES["graph_test_ratio"])
    shared_graph_seed: int = spec_field(
        0, "issue 8: one edge split and one graph for every arm and seed, made with seed 0",
        "seed of the real-corpus experiments' edge split and graph embeddings", NON_NEGATIVE_INT)


@section
class GraphSpec:
    """The citation-graph embeddings (scincl/graph/, paper §4.2) and the real-corpus experiments' shared graph."""

    graph_method: str = spec_field("pbg", "paper §4.2: PyTorch-BigGraph",
                                   "citation-graph embeddings: pbg, prone or fastrp (scincl/graph/embed.py)",
                                   choices=GRAPH_METHODS)
    shared: SharedGraphSpec = attrs.field(factory=SharedGraphSpec)


@section
class SciNCLSpec:
    """SciNCL's run with the paper's values: sampler, recipe, graph and seed."""

    sampler: SamplerSpec = attrs.field(factory=SamplerSpec)
    recipe: RecipeSpec = attrs.field(factory=RecipeSpec)
    graph: GraphSpec = attrs.field(factory=GraphSpec)
    seed: int = spec_field(0, "paper §5: seeds 0..9, the first", "sampling and training seed", NON_NEGATIVE_INT)


def is_section(attribute: "attrs.Attribute") -> bool:
    """True when a spec's attribute is a section (made by its class), not a leaf or another value."""
    return isinstance(attribute.default, attrs.Factory) and attrs.has(attribute.default.factory)


def sections_of(cls: type) -> List[type]:
    """Spec class ``cls`` and the classes of its sections, depth first in declaration order (where its leaves are
    declared: ``--help`` reads them there)."""
    return [cls, *(found for a in attrs.fields(cls) if is_section(a) for found in sections_of(a.default.factory))]


def leaves_of(cls: type, path: Tuple[str, ...] = ()) -> Dict[str, Tuple[Tuple[str, ...], "attrs.Attribute"]]:
    """``{leaf name: (path of sections, attribute)}`` of a spec class, in declaration order (a leaf is a
    :func:`spec_field`; any other attribute is a section, made by its class)."""
    out: Dict[str, Tuple[Tuple[str, ...], attrs.Attribute]] = {}
    for attribute in attrs.fields(cls):
        if attribute.metadata.get("option"):
            continue  # a miner flag SciNCL leaves at its default: not a run_specter setting of its own
        if is_section(attribute):
            found = leaves_of(attribute.default.factory, path + (attribute.name,))
        else:
            found = {attribute.name: (path, attribute)} if "source" in attribute.metadata else {}
        for name in found:
            if name in out:
                raise TypeError(f"spec leaf {name!r} declared twice")
        out.update(found)
    return out


def build_spec(cls: type, values: Mapping[str, Any], sections: Optional[Mapping[str, Any]] = None) -> Any:
    """A spec of class ``cls`` whose fields (leaves and miner options) take their value in ``values`` by name
    (absent or ``None``: the field's default), each section built from the same values (or given in ``sections`` by
    name): bottom-up, so each is validated once, when made."""
    given, sections = {}, sections or {}
    for attribute in attrs.fields(cls):
        if attribute.name in sections:
            given[attribute.name] = sections[attribute.name]
        elif is_section(attribute):
            given[attribute.name] = build_spec(attribute.default.factory, values, sections)
        elif "source" in attribute.metadata and values.get(attribute.name) is not None:
            given[attribute.name] = values[attribute.name]
    return cls(**given)


LEAVES: Dict[str, Tuple[Tuple[str, ...], "attrs.Attribute"]] = leaves_of(SciNCLSpec)
BANDS: Tuple[str, ...] = ("easy_positives", "hard_negatives")  # the (k_min, k_max] bands of the miner


def section_leaves(*path: str) -> Tuple[str, ...]:
    """The leaves of the section at ``path`` (``"sampler", "miner"``) and its subsections, in declaration order."""
    return tuple(name for name, (where, _) in LEAVES.items() if where[:len(path)] == path)


def band_flags(**bands: Tuple[int, int]) -> Dict[str, int]:
    """The flags of bands given as ``(k_min, k_max)`` by their prefix, in the order given.

    >>> band_flags(easy_positives=(20, 25))
    {'easy_positives_k_min': 20, 'easy_positives_k_max': 25}
    """
    return {f"{band}_k_{end}": k for band, ks in bands.items() for end, k in zip(("min", "max"), ks)}


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
    restart = {f"{band}_k_min": None for band in BANDS if f"{band}_k_min" not in flags and (
        f"{band}_k_max" in flags or f"{band}_count" in flags)}  # a new end without a start: the start follows it
    return evolve_spec(base, {**flags, **restart}, LEAVES)


def evolve_spec(spec: Any, flags: Mapping[str, Any], leaves: Mapping[str, Tuple[Tuple[str, ...], Any]]) -> Any:
    """``spec`` with the leaves named in ``flags`` changed (their paths in ``leaves``: :func:`leaves_of` of the
    spec's class): only their sections are rebuilt, and so validated."""
    changes: Dict[Tuple[str, ...], Dict[str, Any]] = {}
    for name, value in flags.items():
        changes.setdefault(leaves[name][0], {})[name] = value
    return _evolve(spec, (), changes)


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
    leaves = LEAVES  # the names it reads: leaves_of the spec's class

    def __init__(self, spec: SciNCLSpec) -> None:
        object.__setattr__(self, "spec", spec)

    def __getattr__(self, name: str) -> Any:
        if name not in self.leaves:
            raise AttributeError(f"no setting {name!r}")
        return functools.reduce(getattr, (*self.leaves[name][0], name), self.spec)  # down its sections

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a spec is frozen: build another with spec_from_flags")
