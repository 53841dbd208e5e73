"""Citation-graph embeddings on hep-th: link prediction (64/128-d, dot vs cos), graph retrieval of
held-out citations, and the graph alone on the SciDocs test queries (docs/results.md).

``GRAPH_DIMS`` is also the default of ``--graph_dims`` and ``COMPARATORS`` the BigGraph comparators every
``reproduce graph`` trains (``biggraph_configs/s2orc_128d_{comparator}``)."""

GRAPH_DIMS = [64, 128]  # link-prediction dimensions (paper Table 4 ablation)
COMPARATORS = ["dot", "cos"]  # BigGraph comparators compared (docs/results.md, graph study)


def get_experiment():
    return {"kind": "graph", "corpus": "hepth", "split": "test"}
