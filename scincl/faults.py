"""Deterministic kill points for crash-and-rerun tests.

``SCINCL_KILL_AT=<point>[,<point>...]`` makes the process ``SIGKILL`` itself (no cleanup, no
``finally``, like ``kill -9``) when it reaches a named point. Points:

* ``<stage>:before`` / ``<stage>:after`` - the pipeline stage runner, after the manifest says the
  stage is running / after the stage wrote its outputs but before the manifest says so;
* ``train:step:<N>`` - the ``Trainer``, at the end of optimiser step ``N`` (checkpoints of earlier
  steps are complete; step ``N``'s is not written yet);
* ``biggraph:imported`` - PyTorch-BigGraph edges imported, training not started.
* ``biggraph:exported`` - embeddings exported, link prediction and the run record not written yet.

* ``papers:parts_written`` - ``get_papers``: every part file written, the output not yet.

``<point>=TERM`` or ``<point>=INT`` sends SIGTERM / SIGINT (Ctrl-C) instead of SIGKILL, to test
that the process ends with one line and removes its temporary files (issue 29).

Unset (the default), every call is a no-op: one environment lookup.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any

KILL_AT_ENV = "SCINCL_KILL_AT"


def kill_point(name: str) -> None:
    """``SIGKILL`` the current process if ``$SCINCL_KILL_AT`` lists ``name``; otherwise return."""
    wanted = os.environ.get(KILL_AT_ENV)
    if not wanted:
        return
    points = dict((w.strip().partition("=")[0], w.strip().partition("=")[2] or "KILL") for w in wanted.split(","))
    if name not in points:
        return
    signum = getattr(signal, f"SIG{points[name].upper()}")
    sys.stderr.write(f"{KILL_AT_ENV}: {signum.name} at {name}\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signum)


def kill_point_callback() -> Any:
    """A ``transformers.TrainerCallback`` that calls :func:`kill_point` (``train:step:<N>``) after each step."""
    from transformers import TrainerCallback

    class KillPointCallback(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: D401 - TrainerCallback hook
            kill_point(f"train:step:{state.global_step}")

    return KillPointCallback()
