"""Helpers shared by the fault tests (import them: ``from tests.faults.conftest import child_env``)."""
from __future__ import annotations

import os
from typing import Dict, Optional

from scincl.faults import KILL_AT_ENV


def child_env(kill_at: Optional[str] = None, **extra: str) -> Dict[str, str]:
    """The environment of a CLI child process: this one's, offline, with ``SCINCL_KILL_AT`` only when asked.

    A kill point inherited from the test runner's environment is dropped (it would kill the wrong run);
    ``kill_at`` sets one for this child; ``extra`` variables are added last (they may set it too).
    """
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    env.update(HF_HUB_OFFLINE="1", WANDB_MODE="offline", TOKENIZERS_PARALLELISM="false", **extra)
    if kill_at:
        env[KILL_AT_ENV] = kill_at
    return env
