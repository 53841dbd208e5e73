"""Citation-graph embeddings on hep-th: link prediction (64/128-d, dot vs cos), graph retrieval of
held-out citations, and the graph alone on the SciDocs test queries (docs/results.md)."""


def get_experiment():
    return {"kind": "graph", "corpus": "hepth", "split": "test"}
