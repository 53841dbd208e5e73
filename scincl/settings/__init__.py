"""Settings of a SciNCL run declared once: each field's type, default, source, range, choices and help.

- :mod:`scincl.settings.rules`: the value ranges (:class:`Rule`) and the one place their error lines are made;
- :mod:`scincl.settings.choices`: the named values a setting takes (graph limits, graph methods, k scales,
  triples sources, kNN backends and metrics, devices); the packages acting on them import them from here;
- :mod:`scincl.settings.spec`: :class:`~scincl.settings.spec.SciNCLSpec`, SciNCL's settings nested by what they set
  (sampler = miner + search, recipe = encoder + loss + training, graph, seed), attrs fields validated when built
  (PyTorch-BigGraph's ``ConfigSchema`` shape); :mod:`scincl.settings.schema` reads it by flag name (``SCINCL``).
  Its :class:`~scincl.settings.spec.MinerSpec` is the triplet miner's settings (every slot flag, checked when
  built: ranges, bands, how the slots fit), the object the miner takes. The CLI checks, ``--help``,
  ``RunSpec`` and ``Recipe`` (their SciNCL fields are the spec's leaves) and the trainer read their defaults
  and ranges there;
- :mod:`scincl.settings.run`: ``RunSpec``, every setting of one ``run_specter`` experiment, nested: SciNCL's
  sections with the run's own fields, and the corpus, queries, evaluation and the run's control; ``RunSettings``,
  a built spec read by flag name; the run presets as data (``experiments/presets/<name>.py``: paper, demo);
  :func:`~scincl.settings.run.resolve`, which computes a run's values from its flags and preset and builds its
  spec once (and so checks it);
- :mod:`scincl.settings.presets`: the presets' values as ``--help`` shows them;
- :mod:`scincl.settings.recipe`: ``Recipe``, the variables of one real-corpus arm's run (the same fields' names and
  metadata as the schema, with the experiments' own defaults and their sources);
- :mod:`scincl.settings.arms`: the real-corpus arms, graphs and corpora (data of the package itself);
- :mod:`scincl.settings.experiment`: ``Experiment``, one real-corpus experiment as data (``experiments/<name>.py``).

Importing it reads no file: the data modules of ``experiments/`` (experiment definitions, presets) are read when first
used. This package imports nothing of ``scincl`` but :mod:`scincl.errors` (``tests/test_layering.py`` checks it): every
other part may import it. Checks that need a package acting on the
settings (a graph method's settings, the GPU, the loss, the CLI's type converter) live above,
in :mod:`scincl.pipeline.scincl_plan`.
"""
