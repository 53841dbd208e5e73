"""k-nearest-neighbour search over embeddings: every kNN code path of the project in one package.

- :mod:`scincl.knn.ann`: FAISS indexes (build any factory, GPU placement, batched search, index files
  with their paper ids and settings);
- :mod:`scincl.knn.exact`: exact search by blockwise torch matrix products (``--ann_backend exact``),
  selecting only the neighbour ranks the miner's bands need;
- :mod:`scincl.knn.papers`: kNN of papers addressed by id and ``build_faiss`` (the ``cli_graph.py``
  commands ``build_faiss`` / ``get_knn``).
"""
