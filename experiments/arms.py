"""The real-corpus experiments' arms, graphs and corpora as data (docs/results.md §2). Not a ``run_experiment``
definition: ``scincl/settings/arms.py`` reads it (an arm is a setting of the plan, not a code path).

- ``get_arms()``: arm -> its table label, where its triplets come from (``triples_source``: knn | specter_like,
  scincl/triples/sources.py) and, for kNN arms, the graph they are sampled from (a ``get_graphs()`` kind);
  ``DEFAULT_ARMS``: the main comparison (paper Table 1 "w/o leakage" rows, at equal budget), ``TUNING_ARMS``: the
  tuning table's, ``BUDGET_ARMS``: the budget curve's pair (its paired test: second minus first); ``DEFAULT_SPLITS``:
  the SciDocs split each experiment kind scores unless ``--split`` says otherwise (the studies choose on val);
- ``get_graphs()``: graph kind -> its edges (citations | cocitations | transductive), the embedding method
  (``embed_graph --method``; ``pbg``: PyTorch-BigGraph with ``config`` from ``biggraph_configs/``, where
  ``{comparator}`` is the run's) and, when not any, the comparators it is trained with;
- ``get_corpora()``: corpus (a folder of ``--data_dir``) -> whether SPECTER-like positives are the papers a query
  cites (hep-th) or is linked to either way (CiteSeer, whose cite task counts both directions and whose papers
  cite ~1.3 others on average).
"""

DEFAULT_ARMS = ["specter_like", "scincl", "cocite"]
TUNING_ARMS = ["specter_like", "scincl"]  # the trained arms of the tuning table (``reproduce tuning`` without --arms)
BUDGET_ARMS = ["specter_like", "scincl"]  # the budget curve's pair (issue 17): SciNCL minus SPECTER-like per seed
# the split of each kind without --split: the tables of docs/results.md are on test, the studies choose on val
DEFAULT_SPLITS = {"main": "test", "graph": "test", "budget": "test"}
DEFAULT_SPLIT = "val"  # every other kind


def get_arms():
    return {
        "specter_like": {"label": "SPECTER-like (citations)", "triples_source": "specter_like"},
        "scincl": {"label": "SciNCL (kNN on citation embeddings)", "triples_source": "knn", "graph": "cite"},
        "cocite": {"label": "continuous co-citation (kNN)", "triples_source": "knn", "graph": "cocite"},
        # issue 30: SciNCL's sampling on the citation graph embedded by another method (paper defaults)
        "scincl_fastrp": {"label": "SciNCL (kNN on FastRP citation embeddings)", "triples_source": "knn",
                          "graph": "cite_fastrp"},
        "scincl_prone": {"label": "SciNCL (kNN on ProNE citation embeddings)", "triples_source": "knn",
                         "graph": "cite_prone"},
    }


def get_graphs():
    cite = {"edges": "citations", "config": "s2orc_128d_{comparator}"}
    return {
        "cite": {**cite, "method": "pbg"},
        "cocite": {"edges": "cocitations", "method": "pbg", "config": "cocitations_768d_dot", "comparators": ["dot"]},
        "transductive": {"edges": "transductive", "method": "pbg", "config": "s2orc_128d_{comparator}"},
        "cite_fastrp": {**cite, "method": "fastrp"},
        "cite_prone": {**cite, "method": "prone"},
    }


def get_corpora():
    return {"hepth": {"bidirectional": False}, "citeseer": {"bidirectional": True}}
