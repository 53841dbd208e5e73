"""Triplet vs InfoNCE vs CoSENT vs AnglE on the same SciNCL triplets, hep-th val (docs/results.md)."""


def get_experiment():
    return {"kind": "losses", "corpus": "hepth", "seeds": [0], "split": "val",
            "losses": ["triplet", "infonce", "cosent", "angle"]}
