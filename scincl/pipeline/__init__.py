"""Orchestration: plans of stages (``scincl_plan``: run_specter, ``real_corpus``: the experiments) run by
:func:`~scincl.pipeline.runner.run_stages`, which decides reuse and writes each ``manifest.json``."""
