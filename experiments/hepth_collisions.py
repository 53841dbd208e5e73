"""Collisions vs the k+ .. k-hard margin on hep-th (paper Fig. 5; docs/results.md); the k-hard grid is
the paper's (scincl/triples/margins.py DEFAULT_HARD_NEGATIVES_K).

``reproduce collisions`` on any corpus searches at most scincl/settings/experiment.py COLLISION_QUERIES query papers
(5 triplets each), one margin search per k+ of its COLLISION_K_POS and the recipe's own k+."""


def get_experiment():
    return {"kind": "collisions", "corpus": "hepth"}
