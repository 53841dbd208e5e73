"""eval stage of the SciNCL pipeline (see DESIGN.md).

- ``metrics``: AP/MAP, nDCG, P@k, Recall@k, MRR, Hits@k, F1, Kendall's tau (trec_eval semantics);
- (the readers of the official SciDocs layout are ``scincl/scidocs_io.py``, shared with triples and corpus);
- ``qrel_tasks`` / ``classification`` / ``recomm``: the SciDocs tasks (docs/scidocs_protocol.md);
- ``scidocs``: all tasks present in a SciDocs dir; ``retrieval``: full-pool retrieval (OpenMSD)
  and citation-recommendation buckets (MP-BERT4CR);
- ``evaluate``: the ``cli_pipeline.py evaluate`` stage; ``report``: Table 1 layout, mean ± std;
  ``compare``: runs side by side and sweep plots (``cli_pipeline.py compare_results``);
- the real-corpus experiments' pages, from the folders of their finished runs (planned and run by
  ``scincl/pipeline``): ``experiment_pages`` (a run's scores, ``results.md``), ``study_reports`` (sweeps, triplet
  relations, collision and graph studies, budget curve), ``paired_runs`` (``runs.csv``, the paired tables, the
  docs' copies); their Markdown and plots are ``study_tables`` / ``paired_tables``.
"""
