"""The run presets as ``--help`` shows them: the value each preset (``experiments/presets/<name>.py``, read by
:func:`scincl.settings.run.preset_values`) gives a setting. A run's settings are filled from its preset by
:func:`scincl.settings.run.resolve`.
"""
from __future__ import annotations

from scincl.settings.run import preset_names, preset_values


def preset_defaults_text(name: str) -> str:
    """``paper 4000 / demo 200``: the value each preset gives setting ``name`` (``--help``'s default column); empty
    when no preset sets it."""
    shown = []
    for preset in preset_names():
        values = preset_values(preset)
        sized_for_the_corpus = values.get("k_scale") == "corpus" and name.endswith(("_k_min", "_k_max"))
        if name in values and not sized_for_the_corpus:  # --k_scale corpus: the k come from the corpus size
            shown.append(f"{preset} {values[name]!r}")
    return " / ".join(shown)

