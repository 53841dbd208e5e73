"""The paper's run: SciNCL as published (Ostendorff et al. 2022, §4-§5; the original README's ``run_specter``
command). A preset is data: the ``run_specter`` settings it sets, by their flag names, each a typed override of
the settings' own defaults (scincl/settings/run.py:RunSettings); a flag the user gives overrides the preset in
turn. A SciNCL setting left out here (k+, k-hard, pooling, input length) takes the schema's value, which is the
paper's (scincl/settings/schema.py:SciNCLSchema, with its source), so no paper value is written twice.

It is what ``run_specter`` runs when data arguments are given (``--preset paper``).
"""


def get_preset():
    return {
        "graph_limit": "specter",  # original README: --graph_limit specter
        "biggraph_config": "s2orc_768d_dot.py",  # paper §4.2: 768-d, dot comparator (a file of biggraph_configs/)
        "graph_test_ratio": 0.01,  # original README: 1 % of the edges held out for link prediction
        "sample_queries_ratio": 1.0,  # paper §4.1: every query paper
    }
