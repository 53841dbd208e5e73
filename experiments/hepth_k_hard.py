"""SciNCL's k-hard sweep on the hep-th val queries (paper Fig. 3; docs/results.md)."""


def get_experiment():
    return {"kind": "k_hard", "corpus": "hepth", "seeds": [0], "split": "val", "values": [100, 500, 2000]}
