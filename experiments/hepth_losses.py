"""Triplet vs InfoNCE vs CoSENT vs AnglE on the same SciNCL triplets, hep-th val (docs/results.md).

The losses are the default of ``--losses`` (scincl/settings/experiment.py LOSSES; ``reproduce losses`` on any
corpus)."""


def get_experiment():
    return {"kind": "losses", "corpus": "hepth", "seeds": [0], "split": "val"}
