"""MP-BERT4CR as a local citation recommender (issue 43; ``../shared/papers/001_3753c6be31fc929c.txt``).

- :mod:`~scincl.citrec.sentences`: sentence splitting with markers and formulas kept intact;
- :mod:`~scincl.citrec.formats`: S2ORC ``pdf_parses`` and unarXive: markers and the ids they cite;
- :mod:`~scincl.citrec.contexts`: one paper's sentences and citation contexts;
- :mod:`~scincl.citrec.stage`: ``get_citation_contexts``, the contexts and sentences files of a corpus;
- :mod:`~scincl.citrec.sampling`: dynamic context sampling (fundamental + supplemental sentences, per epoch);
- :mod:`~scincl.citrec.samples`: ``sample_citation_contexts``, one epoch's samples as a file;
- :mod:`~scincl.citrec.batches`: documents of sentences as ``[B, S, T]`` token tensors;
- :mod:`~scincl.citrec.hierarchical`: the hierarchical encoder, HIBERT pre-training and the fine-tuning model;
- :mod:`~scincl.citrec.pretrain`: ``pretrain_hierarchical``, HIBERT pre-training with Table 2's optimiser;
- :mod:`~scincl.citrec.groups`: training groups of eqs. 1–2 and the split by citing paper;
- :mod:`~scincl.citrec.finetune`: ``finetune_citation_recommender``;
- :mod:`~scincl.citrec.evaluate`: ``evaluate_citation_recommendation``, Recall/MAP@10 in Table 3's layout.
"""
