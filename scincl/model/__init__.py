"""model stage of the SciNCL pipeline (see DESIGN.md): contrastive fine-tuning and embedding.

- ``losses``: a package, one module per objective (triplet, InfoNCE, CoSENT, AnglE and its angle
  term, MP-BERT4CR eqs. 4–6, graph distillation), documented with formula and paper; ``--loss``
  names map to classes through ``losses.registry``;
- ``encoder``: base-model resolution, pooling, BitFit, saving (through sentence-transformers);
- ``data``: triples/groups + metadata -> tokenised, cached ``datasets`` tables;
- ``collator``: the dedup collator and the query-block sampler;
- ``objective``: encoder + loss (+ MLM / graph distillation) as one trainable module;
- ``trainer``: the ``transformers.Trainer`` subclass; ``train``: ``cli_pipeline.py train``;
- ``embed``: ``cli_pipeline.py embed``; ``tiny``: a tiny offline BERT and toy data for smoke tests.
"""
