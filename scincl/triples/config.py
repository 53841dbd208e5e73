"""The triplet samplers' names and constants: the strategies a miner slot can use and the papers' values of the
samplers (SciNCL's bands, continuous co-citation, MP-BERT4CR's co-citation groups), each with its source.

The miner's settings themselves (which strategy fills which slot, :class:`~scincl.triples.miner.MinerConfig`) are
beside the miner that uses them, in :mod:`scincl.triples.miner`.
"""
from __future__ import annotations

from scincl.settings.schema import SCINCL

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
