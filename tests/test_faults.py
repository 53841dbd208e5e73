"""``SCINCL_KILL_AT`` kill points: SIGKILL exactly at the named point, a no-op everywhere else."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scincl.faults import KILL_AT_ENV

REPO = Path(__file__).resolve().parent.parent
SCRIPT = ("from scincl.faults import kill_point\n"
          "for name in ('a:before', 'a:after', 'b:before'):\n"
          "    kill_point(name)\n"
          "    print('passed', name, flush=True)\n")


@pytest.mark.parametrize("kill_at, passed, killed", [
    (None, ["a:before", "a:after", "b:before"], False),
    ("a:after", ["a:before"], True),
    ("x:before, b:before", ["a:before", "a:after"], True),  # a list: the first point reached wins
    ("a", ["a:before", "a:after", "b:before"], False),  # names match exactly, not by prefix
])
def test_kill_point_sigkills_at_the_named_point_only(kill_at, passed, killed):
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    if kill_at is not None:
        env[KILL_AT_ENV] = kill_at
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    assert [line.split(" ", 1)[1] for line in done.stdout.splitlines()] == passed
    assert done.returncode == (-signal.SIGKILL if killed else 0), done.stderr
    assert ("SIGKILL at" in done.stderr) == killed
