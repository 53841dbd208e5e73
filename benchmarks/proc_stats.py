"""Resident memory of a process tree, for benchmarks that sample a running CLI, and the sampled run itself."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]


def tree_rss(process) -> int:
    """RSS bytes of a ``psutil.Process`` and all its children (0 when it is gone)."""
    import psutil

    try:
        return process.memory_info().rss + sum(c.memory_info().rss for c in process.children(recursive=True))
    except psutil.Error:
        return 0


def run_sampled(cmd: Sequence, log: Path, env: Optional[Mapping[str, str]] = None,
                sample: Optional[Callable[[object], None]] = None) -> Dict[str, float]:
    """Run ``cmd`` (cwd = repo root, output appended to ``log``): wall s, CPU s (the process and its reaped
    workers, ``os.wait4``) and the peak RSS bytes of its tree, sampled every 50 ms (``ru_maxrss`` would count
    this process's memory at fork time). ``sample(process)`` is called at every tick for further samples.
    A failed command raises ``RuntimeError`` naming the log."""
    import psutil

    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONWARNINGS": "ignore", **(env or {})}
    started, peak = time.perf_counter(), 0
    with open(log, "ab") as fh:
        fh.write(("\n$ " + " ".join(map(str, cmd)) + "\n").encode())
        fh.flush()
        proc = subprocess.Popen([str(c) for c in cmd], cwd=REPO_ROOT, stdout=fh, stderr=fh, env=env)
        ps = psutil.Process(proc.pid)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, tree_rss(ps))
            if sample is not None:
                sample(ps)
            time.sleep(0.05)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(map(str, cmd))}; see {log}")
    return {"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss": peak}
