"""BigGraph's own distributed mode: two trainer ranks on this machine (gloo over loopback).

The demo graph is imported once with partitioned entities, then ``cli_graph.py train_biggraph
--rank R`` runs as two processes exactly as on two machines (``num_machines=2``, a tcp
``distributed_init_method``, trainers doubling as partition servers - PBG's default
``num_partition_servers=-1``). Rank 0 then evaluates and exports. Both ranks run in their own
process group under a hard timeout; on any failure every process of both groups is killed, and the
test checks that no process of either group is left behind.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from scincl.graph import biggraph
from tests.conftest import free_port

RANK_TIMEOUT_S = 240  # generous: the whole machine may be busy; a healthy run takes a fraction of it


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_two_ranks_train_demo_graph_like_single_process(demo_biggraph, demo_citations, python_exe, repo_root,
                                                        tmp_path):
    out = tmp_path / "distributed"
    overrides = ["entities.paper_id.num_partitions=2", "num_machines=2",
                 f"distributed_init_method=tcp://127.0.0.1:{free_port()}"]
    config = biggraph.load_config_dict_overrides(
        biggraph.with_output_dir(biggraph.load_config_dict("demo"), out), overrides, biggraph.resolve_config_path("demo"))
    manifest = biggraph.import_edges(config, demo_citations["train"], demo_citations["test"], seed=0)
    assert manifest["num_partitions"] == {"paper_id": 2}

    procs = []
    log_paths = [tmp_path / f"rank{rank}.log" for rank in (1, 0)]  # files, not pipes: PBG logs a lot
    try:
        for rank, log_path in zip((1, 0), log_paths):
            with open(log_path, "w") as log:
                procs.append(subprocess.Popen(
                    [python_exe, "cli_graph.py", "train_biggraph", "demo", "--output_dir", str(out), "--rank",
                     str(rank), "--random_baseline=False", "-p", *overrides],
                    cwd=repo_root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + RANK_TIMEOUT_S
        for p in procs:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for p in procs:  # on timeout or error: no rank, server or worker may outlive the test
            if p.poll() is None:
                kill_group(p.pid)
                p.wait(timeout=30)
    logs = [path.read_text() for path in log_paths]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-4000:]
    for p in procs:  # PBG's spawned servers and workers exited with their rank
        for _ in range(50):
            if not group_alive(p.pid):
                break
            time.sleep(0.1)
        alive = group_alive(p.pid)
        kill_group(p.pid)
        assert not alive, f"processes of rank group {p.pid} still running"

    assert "rank 0 of 2" in logs[1] and "rank 1 of 2" in logs[0]
    distributed = json.loads((out / "link_prediction.json").read_text())["results"]["trained"]
    single = demo_biggraph["metrics"]["trained"]
    random = demo_biggraph["metrics"]["random"]
    assert distributed["count"] == single["count"]
    assert distributed["mrr"] > 0.75 * single["mrr"]  # comparable quality ...
    assert distributed["mrr"] > 2.5 * random["mrr"]  # ... and far from untrained
    assert distributed["auc"] > random["auc"] + 0.15
    assert (out / "embeddings.h5").exists() and (out / "entity_names_paper_id_0.json").exists()
