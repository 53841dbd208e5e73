"""Triplet mining stage of the SciNCL pipeline (see DESIGN.md, README "Triplet mining").

- :mod:`~scincl.triples.strategies`: sampling strategies over plain arrays (kNN bands, random,
  random without kNN, sorted random, range, k-means); no files, no ids.
- :mod:`~scincl.triples.config`: the strategies' names and the samplers' constants from the papers.
- :mod:`~scincl.triples.miner`: the miner that composes strategies into (query, positive, negative) rows from its
  slot settings (``easy_positives_count`` ..., :class:`~scincl.settings.spec.MinerSpec`, checked when built).
- :mod:`~scincl.triples.knn_miner`: ``get_knn_triples`` (BigGraph export + faiss -> triples CSV).
- :mod:`~scincl.triples.specter_like`, :mod:`~scincl.triples.cocitation`, :mod:`~scincl.triples.pairs`,
  :mod:`~scincl.triples.scidocs_oracle`: citation-based and oracle samplers.
- :mod:`~scincl.triples.collisions`, :mod:`~scincl.triples.margins`: collision counts and the
  k+/k- margin sweep; :mod:`~scincl.triples.metadata`: texts and ids of a triples file.
"""
