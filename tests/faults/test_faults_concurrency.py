"""Issue 29, class 2: one process per output. A second command on an output another process is
writing stops with one line naming the holder (pid, host, command), or waits with ``--wait``."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scincl.errors import InputError
from scincl.output_lock import OutputLocked, is_secondary_rank, output_lock
from tests.conftest import REPO_ROOT as REPO, run_command, run_front_end

HOLD = ("import sys\nfrom scincl.output_lock import output_lock\n"
        "with output_lock([sys.argv[1]], command=['holder-of-the-test']):\n"
        "    print('held', flush=True)\n    sys.stdin.read()\n")


def _ids_command(tmp_path: Path, *extra: str) -> list:
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"s1": "p1", "s2": "p2", "s3": "p1"}))
    return [sys.executable, "cli_s2orc.py", "get_s2orc_paper_ids_from_mapping", "--mapping_path", str(mapping),
            "--output_path", str(tmp_path / "ids.json"), *extra]


@contextlib.contextmanager
def holding_lock(target: Path):
    """A process holding the output lock of ``target`` until the block ends (then its stdin closes)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(target)], cwd=REPO, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        if proc.poll() is None:
            proc.stdin.close()
            proc.wait(timeout=60)


@pytest.fixture()
def holder(tmp_path):
    """A process holding the lock of ``tmp_path/ids.json`` until the test ends."""
    with holding_lock(tmp_path / "ids.json") as proc:
        yield proc


def test_a_second_run_names_the_holder_and_writes_nothing(tmp_path, holder):
    done = run_command(_ids_command(tmp_path), timeout=120)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert f"another run is writing it (pid {holder.pid} on " in lines[0] and "holder-of-the-test" in lines[0]
    assert not (tmp_path / "ids.json").exists()


def test_wait_runs_after_the_holder_finishes(tmp_path, holder):
    waiter = subprocess.Popen(_ids_command(tmp_path, "--wait"), cwd=REPO, text=True, stderr=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
    for line in waiter.stderr:  # the waiter says whom it waits for, then the holder finishes
        if "waiting for" in line:
            assert f"pid {holder.pid}" in line
            break
    assert not (tmp_path / "ids.json").exists()
    holder.stdin.close()
    holder.wait(timeout=60)
    waiter.stderr.read()
    assert waiter.wait(timeout=120) == 0
    assert json.loads((tmp_path / "ids.json").read_text()) == ["p1", "p2"]


def test_the_lock_is_released_after_an_error_and_in_process(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(ValueError):
        with output_lock([target]):
            raise ValueError("boom")
    with output_lock([target, tmp_path / "other"]):  # free again; re-entry from another process is refused
        done = run_front_end("-c", HOLD, target, timeout=60, input="")
        assert done.returncode == 1 and "OutputLocked" in done.stderr
        assert str(os.getpid()) in done.stderr
    assert not target.exists()  # the lock lives beside the output, never creates it


def test_wait_is_a_flag_of_every_command_and_a_bad_value_is_an_error():
    """issue 39: --wait is a parameter of each command's signature (it was cut out of argv before fire ran)."""
    import importlib
    import inspect

    from scincl.cli import commands_of

    for front_end in ("cli_s2orc", "cli_graph", "cli_triples", "cli_pipeline"):
        for command in commands_of(importlib.import_module(front_end)).values():
            assert inspect.signature(command).parameters["wait"].default is False
    command = commands_of(importlib.import_module("cli_s2orc"))["get_s2orc_paper_ids_from_mapping"]
    with pytest.raises(InputError, match="^--wait: expected true or false, got 'maybe'$"):
        command(mapping_path="m.json", output_path="ids.json", wait="maybe")


def test_secondary_ranks_take_no_lock(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("SLURM_PROCID", raising=False)
    assert not is_secondary_rank() and not is_secondary_rank(0) and is_secondary_rank(1)
    monkeypatch.setenv("RANK", "1")
    assert is_secondary_rank()
    assert issubclass(OutputLocked, InputError)


def test_run_specter_without_output_dir_locks_the_demo_output_it_writes(tmp_path):
    """The demo's default output (``demo_output`` in the working directory) is locked like a given one."""
    with holding_lock(tmp_path / "demo_output") as holder:
        done = run_front_end(REPO / "cli_pipeline.py", "run_specter", cwd=tmp_path, timeout=120)
        assert done.returncode == 2 and f"pid {holder.pid} on " in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "demo_output").exists()


def test_the_library_function_locks_its_outputs_and_a_call_inside_a_held_output_takes_none(tmp_path):
    """issue 39: the function that writes an output takes its lock (scincl.output_lock.writes), also when called from
    Python; a function called while its caller holds a parent folder takes no second lock (a pipeline's stage)."""
    from scincl.corpus.stage import get_s2orc_paper_ids_from_mapping
    from scincl.output_lock import writes

    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"s1": "p1", "s2": "p2", "s3": "p1"}))
    with holding_lock(tmp_path / "ids.json") as holder:
        with pytest.raises(OutputLocked, match=f"pid {holder.pid} on "):
            get_s2orc_paper_ids_from_mapping(str(mapping), str(tmp_path / "ids.json"))
    assert not (tmp_path / "ids.json").exists()

    @writes("output_dir")
    def run(output_dir):
        get_s2orc_paper_ids_from_mapping(str(mapping), str(Path(output_dir) / "ids.json"))
        return sorted(p.name for p in tmp_path.rglob(".*.lock*"))  # the locks held while it runs

    assert run(str(tmp_path / "run")) == [".run.lock", ".run.lock.json"]  # no .ids.json.lock inside it
    assert json.loads((tmp_path / "run" / "ids.json").read_text()) == ["p1", "p2"]
    assert not list(tmp_path.rglob(".*.lock*"))  # removed on release


def test_a_finished_or_refused_command_leaves_no_lock_file_beside_its_output(tmp_path):
    """A command's lock files go when it ends, also when it stops with an error (make_demo used to leave
    .demo.lock in the folder it was given, and the folders made for it); a second process then locks the same path."""
    done = run_front_end("cli_s2orc.py", "make_demo", tmp_path / "new" / "demo", "--papers", "200", timeout=120)
    assert done.returncode == 2 and "use more papers" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with output_lock([tmp_path / "kept" / "out"]):
        (tmp_path / "kept" / "out").write_text("written")
    assert [p.name for p in tmp_path.rglob("*")] == ["kept", "out"]  # a folder that holds an output stays
    (tmp_path / "kept" / "out").unlink()
    (tmp_path / "kept").rmdir()
    assert run_command(_ids_command(tmp_path), timeout=120).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.json", "ids.json.made_by.json", "mapping.json"]
    with holding_lock(tmp_path / "ids.json") as holder:  # the path is locked again by the next holder
        with pytest.raises(OutputLocked, match=f"pid {holder.pid} on "):
            with output_lock([tmp_path / "ids.json"]):
                pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.json", "ids.json.made_by.json", "mapping.json"]
