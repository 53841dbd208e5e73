"""The triplet samplers' names and constants: the strategies a miner slot can use and the papers' values of the
samplers (SciNCL's bands, continuous co-citation, MP-BERT4CR's co-citation groups), each with its source.

The strategies' names are declared with the other choices (:mod:`scincl.settings.choices`), the miner's settings
(which strategy fills which slot) in :class:`scincl.settings.spec.MinerSpec`; both are named here for the samplers.
"""
from __future__ import annotations

from scincl.settings.choices import (BAND_STRATEGIES, KMEANS, KNN, RANDOM, RANDOM_SORTED,  # noqa: F401 - the
                                     RANDOM_WITHOUT_KNN, RANDOM_WITHOUT_KNN_SORTED, RANGE, STRATEGIES)  # miner's names
from scincl.settings.schema import SCINCL
from scincl.settings.spec import ROLES, MinerSpec  # noqa: F401

# The paper's names of SciNCL quantities, for the modules that compute with them (values and sources in
# scincl/settings/spec.py:MinerSpec, read through its slots as the miner reads them):
_PAPER = SCINCL.spec.sampler.miner  # the paper's miner, built once (scincl/settings/schema.py)
POSITIVES_K = _PAPER.slot("easy_positives").k_max  # k+: positives end at the k+-th neighbour
POSITIVES_BAND = _PAPER.slot("easy_positives").count  # c+: positives are n_{k+ - c+ + 1} .. n_{k+}
HARD_NEGATIVES_K = _PAPER.slot("hard_negatives").k_max  # k-hard: hard negatives end at the k-hard-th neighbour
HARD_NEGATIVES_BAND = _PAPER.slot("hard_negatives").count  # c-: hard negatives are n_{k- - c- + 1} .. n_{k-}
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
