"""Main comparison on hep-th, w/o leakage: base vs SPECTER-like vs SciNCL vs continuous co-citation,
3 seeds, cite + co-cite MAP/nDCG on the 300 test queries (docs/results.md, Table 1)."""


def get_experiment():
    return {"kind": "main", "corpus": "hepth", "seeds": [0, 1, 2], "split": "test"}
