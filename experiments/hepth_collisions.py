"""Collisions vs the k+ .. k-hard margin on hep-th (paper Fig. 5; docs/results.md); the k-hard grid is
the paper's (scincl/triples/margins.py DEFAULT_HARD_NEGATIVES_K)."""


def get_experiment():
    return {"kind": "collisions", "corpus": "hepth"}
