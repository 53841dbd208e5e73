"""Orchestration, in reading order: ``scincl_plan`` (``run_specter``, ``run_specter_like``, ``sweep``: flags -> one
built spec -> the plan's stages), ``runner`` (:class:`~scincl.pipeline.runner.Stage`, ``run_stages``: reuse, skip or
rebuild each stage by its marker; ``manifest.json``), ``layout`` (the stages both plans build, and folder names),
``real_corpus`` (``CorpusPlan``: the real-corpus experiments' stages), ``grid`` (an experiment's rows x seeds) and
``experiment_kinds`` (``reproduce``, ``run_experiment``, ``collect_runs``)."""
