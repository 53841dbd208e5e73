"""Shell blocks of the Markdown docs and the label that says where each one runs.

Convention (README.md, "Commands in these docs"): every fenced shell block carries a label
after the language in its info string, e.g. a fence opening with three backticks and
``bash demo``. ``tests/test_docs.py`` runs every ``demo`` block, in document order, in one
temporary directory; the other labels say why a block is not run there.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Languages whose fenced blocks are shell commands (other fences, e.g. python, are not labelled).
SHELL_LANGUAGES = ("bash", "sh", "shell", "console")

# The labels and what they promise; one place, quoted by the README's convention paragraph.
LABELS = {
    "demo": "runs on the bundled demo corpus from the repository root; tests/test_docs.py runs it",
    "demo-slow": "runs on the demo corpus but takes minutes (make demo / make test); covered by other tests",
    "real-data": "needs the real corpora of ../shared/data (docs/data.md says how to build them)",
    "cluster": "needs S2ORC-scale data, a GPU, Docker or a Slurm cluster",
}

FENCE = re.compile(r"^```(\S*)\s*(.*)$")


@dataclass(frozen=True)
class ShellBlock:
    """One fenced shell block: where it is, its label ('' when missing) and its code."""

    path: Path
    line: int  # 1-based line of the opening fence
    label: str
    code: str

    @property
    def where(self) -> str:
        """``file:line`` of the opening fence, for error messages."""
        return f"{self.path.name}:{self.line}"


def shell_blocks(path: Path) -> list[ShellBlock]:
    """The fenced shell blocks of a Markdown file, in order, with their labels.

    Example: ``[b.where for b in shell_blocks(Path("README.md")) if b.label == "demo"]``.
    """
    blocks: list[ShellBlock] = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        start, language, rest = i, m.group(1), m.group(2).split()
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        if language in SHELL_LANGUAGES:
            blocks.append(ShellBlock(Path(path), start + 1, rest[0] if rest else "", "\n".join(body) + "\n"))
    return blocks


def doc_files(repo_root: Path) -> list[Path]:
    """The docs whose blocks are checked: README.md, then docs/*.md in name order."""
    return [repo_root / "README.md", *sorted((repo_root / "docs").glob("*.md"))]


# What a run's working directory links back to: the repository surface the commands use.
LINKED = ("cli_s2orc.py", "cli_graph.py", "cli_triples.py", "cli_pipeline.py", "scincl", "biggraph_configs",
          "experiments", "sbin", "benchmarks", "Makefile", "requirements.txt")
# Seconds one block may take before the run stops (the slowest demo block takes well under a minute).
BLOCK_TIMEOUT = 300


@dataclass(frozen=True)
class BlockRun:
    """The outcome of one block: exit code, wall seconds and the end of its output."""

    block: ShellBlock
    returncode: int
    seconds: float
    output_tail: str


def make_workspace(workdir: Path, repo_root: Path) -> Path:
    """Mirror the repository root in ``workdir`` (symlinks + ``.venv`` = this interpreter's prefix)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        (workdir / name).symlink_to(repo_root / name)
    (workdir / ".venv").symlink_to(Path(sys.prefix))
    return workdir


def run_demo_blocks(repo_root: Path, workdir: Path, env: dict | None = None) -> list[BlockRun]:
    """Run every ``demo`` block of the docs in order in ``workdir``; stop at the first failure.

    Each block runs in ``bash -e -o pipefail`` from ``workdir`` (made by :func:`make_workspace`)
    and sees the variables the earlier blocks exported; ``env`` is added to this process's
    environment (e.g. ``BASE_MODEL``), with this interpreter's directory first on ``PATH``.
    """
    run_env = {**os.environ, **(env or {}),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run_env.pop("VIRTUAL_ENV", None)
    state = workdir / ".docs_env.sh"
    state.write_text("")
    runs: list[BlockRun] = []
    for path in doc_files(repo_root):
        for block in (b for b in shell_blocks(path) if b.label == "demo"):
            script = f"source {state}\nset -e -o pipefail\n{block.code}\nexport -p > {state}\n"
            start = time.perf_counter()
            try:
                proc = subprocess.run(["bash", "-c", script], cwd=workdir, env=run_env, capture_output=True,
                                      text=True, timeout=BLOCK_TIMEOUT)
                code, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
            except subprocess.TimeoutExpired as exc:
                code, tail = -1, f"stopped after {BLOCK_TIMEOUT} s: {str(exc.stdout or '')[-2000:]}"
            runs.append(BlockRun(block, code, time.perf_counter() - start, tail))
            if code:  # failed or timed out (no `proc` then)
                return runs
    return runs
