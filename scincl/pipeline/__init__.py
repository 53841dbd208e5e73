"""Orchestration: every pipeline and experiment runs through one stage runner.

Read in this order:

- :mod:`scincl.pipeline.runner`: :class:`Stage`, :func:`run_stages` - the one place that decides
  skip / reuse / override and records each stage in a ``manifest.json``;
- :mod:`scincl.pipeline.manifest`: ``manifest.json`` (arguments, input hashes, versions, git commit);
- the settings of one ``run_specter`` run are :mod:`scincl.settings.run`'s (``RunSettings``, paper and demo
  presets, each value's range and choices); :mod:`scincl.pipeline.run_command`: ``run_specter`` itself (its flags,
  where each goes, the checks that need the other packages -> settings -> one plan, or one per seed);
- :mod:`scincl.pipeline.scincl_plan`: the SciNCL plan: every stage wired to its API; :mod:`scincl.pipeline.layout`:
  the one plan (the order of a run's steps, :meth:`~scincl.pipeline.layout.Planner.plan`, in the base both planners
  share), where each of its files goes (run and model directories included) and the stages both planners build,
  each implemented once;
- :mod:`scincl.pipeline.experiment_commands`: ``sweep`` (one plan per k+/k-hard value), ``reproduce`` and
  ``run_experiment``;
- :mod:`scincl.pipeline.real_corpus`: the plan of the real-corpus experiments (hep-th, CiteSeer): each arm x
  seed's stages, its shared ones first, planned before they run (``CorpusPlan.cell``, as
  ``SciNCLPlan.stages()``; ``--dry_run`` prints the plan); :mod:`scincl.pipeline.experiment_kinds`: every
  experiment of ``docs/results.md`` as a base recipe x rows x seeds, each kind a generator of the rows of a grid that
  :mod:`scincl.pipeline.grid` runs (the collision and graph studies plan their steps themselves); the
  pages are written from the finished runs by ``scincl/eval`` (``experiment_pages``, ``study_reports``,
  ``paired_runs``);
  the experiments themselves are data (``experiments/*.py``, run by ``experiments/run.sh NAME``);
- :mod:`scincl.pipeline.threads`: torch thread count kept fixed for reproducible reruns.

The training corpus and query papers of ``--graph_limit`` are chosen by :mod:`scincl.corpus.selection`.
"""
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import Stage, StageResult, run_stages

__all__ = ["Manifest", "Stage", "StageResult", "run_stages"]
