"""Collisions vs the k+ .. k-hard margin on hep-th (paper Fig. 5; docs/results.md); the k-hard grid is
the paper's (scincl/triples/margins.py DEFAULT_HARD_NEGATIVES_K).

``QUERIES`` and ``K_POS`` hold for ``reproduce collisions`` on any corpus: at most ``QUERIES`` query papers
(5 triplets each), one margin search per k+ of ``K_POS`` and the recipe's own k+."""

QUERIES = 2000  # query papers of the collision study (docs/results.md §5)
K_POS = [10, 50]  # k+ values searched besides the recipe's own (docs/results.md §5)


def get_experiment():
    return {"kind": "collisions", "corpus": "hepth"}
