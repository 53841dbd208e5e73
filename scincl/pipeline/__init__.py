"""Stage orchestration (``cli_pipeline.py run_specter`` and the experiment commands).

- :mod:`scincl.pipeline.stages`: :class:`Stage`, :func:`run_stages` (skip / reuse / override, timings);
- :mod:`scincl.pipeline.manifest`: ``manifest.json`` (arguments, input hashes, versions, git commit);
- :mod:`scincl.pipeline.corpus`: training corpus and query paper selection (``--graph_limit``);
- :mod:`scincl.pipeline.specter`: the ``run_specter`` plan wiring every stage's API;
- :mod:`scincl.pipeline.experiments`: seeds loops, k+/k-hard sweeps, ablations.
"""
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.stages import Stage, StageResult, run_stages

__all__ = ["Manifest", "Stage", "StageResult", "run_stages"]
