"""SciNCL's k+ sweep on the hep-th val queries (paper Fig. 2; docs/results.md)."""


def get_experiment():
    return {"kind": "k_pos", "corpus": "hepth", "seeds": [0], "split": "val", "values": [10, 25, 50]}
