"""The checks of ``run_specter``'s settings that need other packages, run once before any stage.

:mod:`scincl.settings.run` declares the run's settings and checks each value against its field's rule and
choices (:func:`~scincl.settings.run.check_ranges`); it imports no package that acts on a value (the settings
package sits below them all). What only those packages can judge is checked here, in the layer that plans the
run: the flags' types (the CLI's converter), the corpus format, the graph method's own settings, a GPU asked
for and the loss with its flags (the miner's flags are checked once, when the run's miner spec is built). :func:`check_run` runs them all, in that order.
"""
from __future__ import annotations

import typing
from typing import Any, Dict

from scincl.errors import InputError
from scincl.settings.run import RunSettings, check_ranges
from scincl.settings.values import check_value, simple_type


def check_types(flags: Dict[str, Any]) -> Dict[str, Any]:
    """run_specter's flags converted once, by the flags' converter (:func:`scincl.settings.values.check_value`:
    ``--output_dir 2024`` a string, ``true``/``false`` booleans, a wrong type one line): a :class:`RunSettings`
    field to its field's type, another flag (the miner's, the trainer's) to its rule's; ranges are
    :func:`check_run`'s. ``None`` keeps a field's default."""
    hints = typing.get_type_hints(RunSettings)
    return {name: check_value(name, value, (simple_type(hints[name]) or object) if name in hints else None,
                              check_range=False)
            for name, value in flags.items()}


def check_run(s: RunSettings) -> RunSettings:
    """Every error of resolved settings, before any stage runs (one-line :class:`InputError`): the corpus format
    (``None``/``auto``: detected from the folder, stored as ``None``), every value by its field's or its flag's
    rule and choices, a kNN run's miner flags by building its miner spec once (ranges, bands, how the slots fit:
    :func:`scincl.settings.run.check_ranges`), then the graph method's settings, a GPU asked for, and the loss
    with its flags."""
    from scincl.corpus import check_format

    s.corpus_format = check_format(s.corpus_format)
    check_ranges(s)
    if s.graph_method != "pbg":  # the method's own range checks (scincl/graph/embedders/settings.py)
        from scincl.graph.embedders import EMBEDDERS
        from scincl.graph.embedders.settings import parse_settings

        parse_settings(EMBEDDERS[s.graph_method].settings, s.graph_method_settings)
    elif s.graph_method_settings:
        raise InputError("--graph_method_settings is for prone/fastrp; PBG takes --biggraph_overrides")
    if s.device == "cuda":  # asked for a GPU: one line now, not a CPU run or a failure hours later
        from scincl.model.device import check_gpu_usable

        check_gpu_usable(s.device)
    from scincl.model.losses import LOSS_NAMES, build_loss

    if s.loss not in LOSS_NAMES:  # the loss and its flags build (issue 29: refused only after the graph stage ran)
        raise InputError(f"unknown --loss {s.loss!r}; choose one of {', '.join(LOSS_NAMES)}")
    try:
        build_loss(s.loss, **dict(s.training_options))
    except (TypeError, ValueError) as exc:
        raise InputError(f"--loss {s.loss}: {exc}") from None
    return s
