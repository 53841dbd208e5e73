"""Settings of a SciNCL run declared once: each field's type, default, source, range and help.

- :mod:`scincl.settings.rules`: the value ranges (:class:`Rule`) and the one place their error lines are made;
- :mod:`scincl.settings.schema`: :class:`SciNCLSchema`, the sampling, training and graph settings of a
  SciNCL run (PyTorch-BigGraph's ``ConfigSchema`` shape). The CLI checks, ``--help``, the pipeline's
  ``RunSettings``, the miner and the trainer read their defaults and ranges from it.

This package imports nothing of ``scincl`` but :mod:`scincl.errors`: every other part may import it.
"""
