"""Citation-graph embeddings on hep-th: link prediction (64/128-d, dot vs cos), graph retrieval of
held-out citations, and the graph alone on the SciDocs test queries (docs/results.md).

The dimensions are the default of ``--graph_dims`` (scincl/settings/experiment.py GRAPH_DIMS) and the BigGraph
comparators every ``reproduce graph`` trains its GRAPH_COMPARATORS (``biggraph_configs/s2orc_128d_{comparator}``)."""


def get_experiment():
    return {"kind": "graph", "corpus": "hepth", "split": "test"}
