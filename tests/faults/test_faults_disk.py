"""Issue 41, class 7: a full disk and ``kill -9`` in every stage: one line naming the path, no partial output, a
rerun that recovers.

- BigGraph training on a full disk (a small tmpfs: root only, skipped otherwise) names the checkpoint folder and
  leaves no half-written checkpoint; with space again the rerun reuses the import and finishes;
- a BigGraph import that fails (a file-size limit) leaves no half-written ``graph/`` folder;
- a process killed (``kill -9``) while writing an output leaves its temp file; the next write of that output
  removes it (``get_papers`` left a 5 MB ``.tmp`` behind).
"""
from __future__ import annotations

import subprocess

import pytest

from scincl.io import write_jsonl
from tests.conftest import mounted_tmpfs, run_front_end
from tests.faults.test_faults_signals import file_size_limit


def _error_lines(stderr: str) -> list:
    return [line for line in stderr.splitlines() if "error:" in line]


def test_a_failed_biggraph_import_leaves_no_half_written_graph_folder(demo_citations, tmp_path):
    out = tmp_path / "graph_run"
    done = run_front_end("cli_graph.py", "train_biggraph", "demo", "--train_edges", demo_citations["train"],
                         "--test_edges", demo_citations["test"], "--output_dir", out,
                         preexec_fn=file_size_limit(60_000), timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(_error_lines(done.stderr)) == 1 and "File too large" in done.stderr
    assert not (out / "graph").exists()  # no entity names or counts of an import that did not finish


@pytest.mark.slow  # trains PyTorch-BigGraph twice
def test_biggraph_training_on_a_full_disk_names_the_path_and_the_rerun_recovers(demo_citations, tmp_path):
    with mounted_tmpfs(tmp_path / "full", "size=400k", "a small tmpfs") as target:
        argv = ["cli_graph.py", "train_biggraph", "demo", "--train_edges", demo_citations["train"], "--test_edges",
                demo_citations["test"], "--output_dir", target / "bg", "-p", "dimension=256"]  # 600 KB of embeddings
        done = run_front_end(*argv, timeout=300)
        partial = sorted(p.name for p in (target / "bg" / "checkpoints").glob("*.v*.h5"))
        subprocess.run(["mount", "-o", "remount,size=16m", str(target)], check=True)
        rerun = run_front_end(*argv, timeout=300)
        finished = (target / "bg" / "embeddings.h5").exists()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert _error_lines(done.stderr) == [f"cli_graph.py: error: no space left on device while writing "
                                         f"{target / 'bg' / 'checkpoints'} (PyTorch-BigGraph training)"]
    assert partial == []  # the half-written checkpoint was removed
    assert rerun.returncode == 0 and "reusing import" in rerun.stderr and finished, rerun.stderr[-2000:]


KILLED_WRITER = """
import os, signal, sys
from scincl.io import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    tmp.write_bytes(b"x" * 100_000)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_temp_file_left_by_kill_9_is_removed_by_the_next_write(tmp_path):
    from scincl.commands.s2orc import get_papers

    (tmp_path / "corpus").mkdir()
    write_jsonl(tmp_path / "corpus" / "papers.jsonl", [{"paper_id": "a", "title": "A"}])
    output = tmp_path / "out" / "papers.jsonl"
    output.parent.mkdir()
    killed = run_front_end("-c", KILLED_WRITER, output)
    assert killed.returncode == -9
    left = [p.name for p in output.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".papers.jsonl.")
    get_papers(str(tmp_path / "corpus"), str(output), corpus_format="plain", workers=1)
    assert not [p.name for p in output.parent.iterdir() if p.name.endswith(".tmp")] and output.exists()
