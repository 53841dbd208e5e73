"""Shared pytest fixtures: a small demo corpus made once per session (offline, deterministic)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (where the cli_*.py front ends live)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (the project's venv), for subprocess CLI calls."""
    return sys.executable


@pytest.fixture(scope="session")
def demo_corpus(tmp_path_factory):
    """A small demo corpus (600 papers, seed 0) shared by all tests; see scincl.demo.make_demo."""
    from scincl.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo"), papers=600, seed=0)
