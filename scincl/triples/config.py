"""Which strategy fills which part of a triple: the miner's settings, validated before any work.

A triple ``(query, positive, negative)`` draws its positive and its negative from one of three
*slots* each (easy / medium / hard), as in the original ``run_specter`` flags
(``--easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 ...``).
The counts of the positive slots and of the negative slots each sum to ``triples_per_query``;
the i-th positive is paired with the i-th negative (positives in slot order easy, medium, hard;
negatives likewise).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, List, Optional, Set, Tuple

from scincl.errors import InputError
from scincl.settings.schema import SCINCL, derive_bands

KNN = "knn"
RANDOM = "random"
RANDOM_WITHOUT_KNN = "random_without_knn"
RANDOM_SORTED = "random_sorted"
RANDOM_WITHOUT_KNN_SORTED = "random_without_knn_sorted"
RANGE = "range"
KMEANS = "kmeans"
STRATEGIES = (KNN, RANDOM, RANDOM_WITHOUT_KNN, RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED, RANGE, KMEANS)
# strategies whose k_min/k_max select an interval of a sorted list (neighbours or clusters)
BAND_STRATEGIES = (KNN, KMEANS)

ROLES = ("positives", "negatives")

# The paper's names of SciNCL quantities, for the modules that compute with them (values and sources in
# scincl/settings/schema.py, under the flags' names):
POSITIVES_BAND = SCINCL.easy_positives_count  # c+: positives are n_{k+ - c+ + 1} .. n_{k+}
HARD_NEGATIVES_K = SCINCL.hard_negatives_k_max  # k-hard: hard negatives end at the k-hard-th neighbour
HARD_NEGATIVES_BAND = SCINCL.hard_negatives_count  # c-: hard negatives are n_{k- - c- + 1} .. n_{k-}
DEFAULT_ANN_NORMALIZE_EMBEDDINGS = SCINCL.ann_normalize_embeddings  # README build_faiss --do_normalize

# Continuous co-citation triples (get_continuous_cocitation_triples, the co-citation thesis 004): SciNCL's
# kNN bands on co-citation-graph embeddings, searched as the thesis searches them.
CONTINUOUS_COCITATION_ANN_METRIC = "l2"  # thesis §5.2.3: "an IndexFlatL2 index is created" (exhaustive search)
CONTINUOUS_COCITATION_ANN_NORMALIZE = False  # thesis §5.2.3: L2 on the graph embeddings as trained (no normalising)
CONTINUOUS_COCITATION_POSITIVES_K = 25  # thesis §6.3, Table 6.7: k+ = 25 best ("CoCite 25-5000")
CONTINUOUS_COCITATION_HARD_NEGATIVES_K = 5000  # thesis §5.2.3 (5000 nearest neighbours), §6.3: k- = 5000 best

# MP-BERT4CR co-citation groups (get_cocitation_triples, scincl/triples/cocitation.py)
COCITATION_POWER = 0.75  # MP-BERT4CR eqs. 1-2: (co-)citation frequency ** 3/4 (word2vec, Mikolov et al. 2013)
COCITATION_POSITIVES_COUNT = 3  # MP-BERT4CR §5.2: at most 3 co-cited positives per target
COCITATION_NEGATIVES_COUNT = 4  # MP-BERT4CR §5.2: 4 negatives per group


@dataclass(frozen=True)
class Slot:
    """One slot, e.g. the easy positives: how many per query and how they are drawn."""

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


@dataclass(frozen=True)
class MinerConfig:
    """The miner's flags, one field per flag under its own name (the schema's: ``hard_negatives_k_max``), with
    SciNCL's values by default (paper Table 3, README run_specter; scincl/settings/schema.py). A band's start
    left ``None`` is derived from its end and count (``k_max - count``, :func:`~scincl.settings.schema.derive_bands`);
    :attr:`slots` says which flags fill which slot. Built from flat flags by :func:`make_config`."""

    triples_per_query: int = SCINCL.triples_per_query
    easy_positives_count: int = SCINCL.easy_positives_count
    easy_positives_strategy: str = SCINCL.easy_positives_strategy
    easy_positives_k_min: Optional[int] = None  # None: k_max - count (schema)
    easy_positives_k_max: int = SCINCL.easy_positives_k_max
    easy_positives_range: Optional[float] = None
    medium_positives_count: int = 0
    medium_positives_strategy: str = KNN
    medium_positives_k_min: int = 0
    medium_positives_k_max: int = 0
    medium_positives_range: Optional[float] = None
    hard_positives_count: int = 0
    hard_positives_strategy: str = KNN
    hard_positives_k_min: int = 0
    hard_positives_k_max: int = 0
    hard_positives_range: Optional[float] = None
    easy_negatives_count: int = SCINCL.easy_negatives_count
    easy_negatives_strategy: str = SCINCL.easy_negatives_strategy
    easy_negatives_k_min: int = 0
    easy_negatives_k_max: int = 0
    easy_negatives_range: Optional[float] = None
    medium_negatives_count: int = 0
    medium_negatives_strategy: str = KNN
    medium_negatives_k_min: int = 0
    medium_negatives_k_max: int = 0
    medium_negatives_range: Optional[float] = None
    hard_negatives_count: int = SCINCL.hard_negatives_count
    hard_negatives_strategy: str = SCINCL.hard_negatives_strategy
    hard_negatives_k_min: Optional[int] = None  # None: k_max - count (schema)
    hard_negatives_k_max: int = SCINCL.hard_negatives_k_max
    hard_negatives_range: Optional[float] = None
    random_sorted_sample_n: int = 100  # candidates drawn per query by random_sorted (original default)
    min_range_results_count: int = 10  # range results required beyond the count (original default)
    range_fallback_to_random: bool = True  # too few range results -> random_without_knn (original)
    k_means_clusters: Optional[int] = None  # default: about sqrt(corpus size)

    def __post_init__(self) -> None:
        values = {**vars(self), **derive_bands(vars(self))}
        for name, value in values.items():  # flags as their kinds (a numpy int, a float from a sweep)
            if name.endswith(("_count", "_k_min", "_k_max")) or name == "triples_per_query":
                value = int(value)
            elif name.endswith("_range") and value is not None:
                value = float(value)
            elif name.endswith("_strategy"):
                value = str(value)
            object.__setattr__(self, name, value)
        validate_config(self)

    @property
    def slots(self) -> Tuple[Slot, ...]:
        """The six slots, positives then negatives, each easy, medium, hard, with the flags that fill them."""
        return (
            Slot("positives", "easy", self.easy_positives_count, self.easy_positives_strategy,
                 self.easy_positives_k_min, self.easy_positives_k_max, self.easy_positives_range),
            Slot("positives", "medium", self.medium_positives_count, self.medium_positives_strategy,
                 self.medium_positives_k_min, self.medium_positives_k_max, self.medium_positives_range),
            Slot("positives", "hard", self.hard_positives_count, self.hard_positives_strategy,
                 self.hard_positives_k_min, self.hard_positives_k_max, self.hard_positives_range),
            Slot("negatives", "easy", self.easy_negatives_count, self.easy_negatives_strategy,
                 self.easy_negatives_k_min, self.easy_negatives_k_max, self.easy_negatives_range),
            Slot("negatives", "medium", self.medium_negatives_count, self.medium_negatives_strategy,
                 self.medium_negatives_k_min, self.medium_negatives_k_max, self.medium_negatives_range),
            Slot("negatives", "hard", self.hard_negatives_count, self.hard_negatives_strategy,
                 self.hard_negatives_k_min, self.hard_negatives_k_max, self.hard_negatives_range),
        )

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


def miner_option_names() -> Set[str]:
    """Every miner flag beyond the output/input paths: the slot flags and the strategy options."""
    return {f.name for f in dataclasses.fields(MinerConfig)}


def make_config(**options: Any) -> MinerConfig:
    """A :class:`MinerConfig` from flat flags (``easy_positives_count=5, ...``), validated.

    Unset flags (absent or ``None``) take SciNCL's defaults. Unknown flags, unknown strategy names, counts
    that do not add up to ``triples_per_query`` and intervals narrower than their count are :class:`InputError`.
    """
    unknown = sorted(set(options) - miner_option_names())
    if unknown:
        raise InputError(f"unknown option(s) {', '.join('--' + u for u in unknown)}")
    return MinerConfig(**{k: v for k, v in options.items() if v is not None})


def validate_config(config: MinerConfig) -> None:
    """Raise :class:`InputError` for settings that cannot produce ``triples_per_query`` triples: how the slots
    fit together (strategies, counts, bands against counts). The flags' ranges are checked once before, by
    the entry point (the CLI, run_specter's settings: :func:`scincl.settings.schema.check_settings`)."""
    for slot in config.slots:
        if slot.count <= 0:
            continue
        if slot.strategy not in STRATEGIES:
            raise InputError(f"--{slot.name}_strategy {slot.strategy!r} is unknown; choose one of "
                             f"{', '.join(STRATEGIES)}")
        if slot.strategy in BAND_STRATEGIES:
            if slot.k_max - slot.k_min < slot.count:
                raise InputError(f"--{slot.name}: the interval ({slot.k_min}, {slot.k_max}] holds "
                                 f"{slot.k_max - slot.k_min} neighbours, fewer than the count {slot.count}")
        if slot.strategy == RANGE and slot.range is None:
            raise InputError(f"--{slot.name}_strategy range needs --{slot.name}_range (the faiss threshold)")
    for role in ROLES:
        total = sum(s.count for s in config.active(role))
        if total != config.triples_per_query:
            parts = " + ".join(f"{s.name}_count={s.count}" for s in config.slots if s.role == role)
            raise InputError(f"{role} counts must add up to --triples_per_query={config.triples_per_query}, "
                             f"got {parts} = {total}")
    if config.random_sorted_sample_n < 1:
        raise InputError(f"--random_sorted_sample_n must be positive, got {config.random_sorted_sample_n}")
