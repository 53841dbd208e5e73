"""Triplet vs InfoNCE vs CoSENT vs AnglE on the same SciNCL triplets, hep-th val (docs/results.md).

``LOSSES`` is also the default of ``--losses`` (``reproduce losses`` on any corpus)."""

LOSSES = ["triplet", "infonce", "cosent", "angle"]  # the loss comparison of docs/results.md


def get_experiment():
    return {"kind": "losses", "corpus": "hepth", "seeds": [0], "split": "val", "losses": LOSSES}
