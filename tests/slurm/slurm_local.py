"""A real single-node Slurm for the tests: munged + slurmctld + slurmd on localhost in a temp dir.

Debian's ``slurm-wlm`` and ``munge`` (``make slurm-test-deps``) start in about a second as root.
``slurm.conf`` describes this machine as ``slurmd -C`` reports it (CPUs, sockets, cores; 80 % of
its memory), with consumable cores and memory (``-c``/``--mem`` of several jobs share the node),
CPU binding (task/affinity), no accounting and no cgroups. :meth:`LocalSlurm.stop` cancels every
job, stops the three daemons it started (by their pid files) and removes the state directory.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from tests.conftest import free_port

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo")
TERMINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                   "BOOT_FAIL", "DEADLINE"}


def find_tool(name: str) -> Optional[str]:
    """``name`` on PATH or in /usr/sbin (root's daemons are not always on a test runner's PATH)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def unavailable_reason() -> Optional[str]:
    """Why a local Slurm cannot run here (``None`` when it can)."""
    if os.geteuid() != 0:
        return "needs root to start munged/slurmctld/slurmd (make test installs them as root)"
    missing = [t for t in DAEMONS + CLIENTS if find_tool(t) is None]
    if missing:
        return f"Slurm/munge not installed ({', '.join(missing)} missing): run `make slurm-test-deps` as root"
    return None


def node_line(memory_share: float = 0.8) -> str:
    """This machine's ``NodeName=...`` line from ``slurmd -C``, memory scaled to ``memory_share``."""
    out = subprocess.run([find_tool("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("NodeName="))
    memory = int(re.search(r"RealMemory=(\d+)", line).group(1))
    return re.sub(r"RealMemory=\d+", f"RealMemory={int(memory * memory_share)}", line)


class LocalSlurm:
    """A throw-away Slurm cluster rooted at ``root`` (see module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.node = ""
        self.started: List[str] = []
        self.stdout: Dict[str, Path] = {}  # job id (ID_TASK for array tasks) -> its log file
        self.run_time: Dict[str, str] = {}  # job id -> RunTime (HH:MM:SS)

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 60.0) -> None:
        munge = self.root / "munge"
        for sub in ("munge", "state", "spool", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        munge.chmod(0o711)
        key = munge / "munge.key"
        subprocess.run([find_tool("mungekey"), "--create", f"--keyfile={key}", "--force"], check=True,
                       capture_output=True)
        key.chmod(0o600)
        subprocess.run([find_tool("munged"), "--force", f"--key-file={key}", f"--socket={self.munge_socket}",
                        f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
                        f"--seed-file={munge / 'munged.seed'}"], check=True, capture_output=True)
        self.started.append("munged")
        line = node_line()
        self.node = re.match(r"NodeName=(\S+)", line).group(1)
        self.conf.write_text(self.slurm_conf(line))
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([find_tool(daemon), "-f", str(self.conf)], check=True, capture_output=True,
                           env=self.env())
            self.started.append(daemon)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.client("sinfo", "-h", "-o", "%T", check=False).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"local Slurm node not idle after {timeout:.0f} s (state {state!r}); "
                           f"see {self.root / 'log'}")

    def slurm_conf(self, node: str) -> str:
        r = self.root
        return "\n".join([
            "ClusterName=scincltest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "SchedulerType=sched/backfill",
            "DependencyParameters=kill_invalid_depend",
            "MpiDefault=none",
            "ReturnToService=2",
            "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none",
            "MinJobAge=3600",
            f"FirstJobId={1_000_000 + int(time.time()) % 1_000_000}",  # log names unlike a real cluster's
            f"{node} NodeAddr=127.0.0.1 State=UNKNOWN",
            f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
            "",
        ])

    def stop(self) -> None:
        """Cancel all jobs, stop the daemons this object started, remove the state directory."""
        if "slurmctld" in self.started:
            self.client("scancel", "--full", "--user", "root", check=False)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.client("squeue", "-h", check=False).stdout.strip():
                time.sleep(0.5)
        for daemon in ("slurmd", "slurmctld"):
            if daemon in self.started:
                _terminate(self.root / f"{daemon}.pid")
        if "munged" in self.started:
            subprocess.run([find_tool("munged"), "--stop", f"--socket={self.munge_socket}"], capture_output=True)
            _terminate(self.root / "munge" / "munged.pid")
        self.started.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------------ clients
    def env(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """The caller's environment without Slurm job variables, pointed at this cluster."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
        env["SLURM_CONF"] = str(self.conf)
        env.update(extra or {})
        return env

    def client(self, tool: str, *args: str, check: bool = True, cwd: Optional[Path] = None,
               env: Optional[Mapping[str, str]] = None) -> subprocess.CompletedProcess:
        done = subprocess.run([find_tool(tool), *args], capture_output=True, text=True, cwd=cwd,
                              env=self.env(env), timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)}: {done.stderr.strip()}")
        return done

    def sbatch(self, script: Path, options: Sequence[str] = (), args: Sequence[str] = (), cwd: Path = Path("."),
               env: Optional[Mapping[str, str]] = None) -> str:
        """Submit ``script`` (from ``cwd``, like a user at the repository root); returns the job id."""
        done = self.client("sbatch", "--parsable", *options, str(script), *args, cwd=cwd, env=env)
        return done.stdout.strip().split(";")[0]

    def job_states(self, job_id: str) -> Dict[str, str]:
        """``{job id (array tasks as ID_TASK): state}`` from ``scontrol show job``."""
        out = self.client("scontrol", "show", "job", "-o", job_id, check=False).stdout
        states = {}
        for line in out.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            task = fields.get("ArrayTaskId")
            key = f"{fields.get('ArrayJobId')}_{task}" if task and task != "(null)" else fields.get("JobId", job_id)
            states[key] = fields.get("JobState", "UNKNOWN")
            if fields.get("StdOut"):
                self.stdout[key] = Path(fields["StdOut"])
            self.run_time[key] = f"{fields.get('JobName', '?')} {fields.get('RunTime', '?')}"
        return states

    @property
    def job_logs(self) -> List[Path]:
        """Log files of the jobs seen so far."""
        return sorted(set(self.stdout.values()))

    def log_path(self, job_id: str, array_task: Optional[int] = None) -> Path:
        """The log file of a job (or array task), as Slurm resolved its ``--output``."""
        key = f"{job_id}_{array_task}" if array_task is not None else job_id
        if key not in self.stdout:
            self.job_states(job_id)
        return self.stdout.get(key, Path(f"<no log known for job {key}>"))

    def wait(self, job_ids: Iterable[str], timeout: float) -> Dict[str, str]:
        """Wait until every job (and array task) is finished; returns their final states."""
        job_ids = list(job_ids)
        deadline = time.monotonic() + timeout
        while True:
            states = {}
            for job_id in job_ids:
                states.update(self.job_states(job_id))
            if states and all(s in TERMINAL_STATES for s in states.values()):
                return states
            if time.monotonic() > deadline:
                raise TimeoutError(f"Slurm jobs not finished after {timeout:.0f} s: {states}")
            time.sleep(1.0)


def _terminate(pid_file: Path, timeout: float = 20.0) -> None:
    """SIGTERM the process of ``pid_file`` (a daemon this module started), SIGKILL after ``timeout``."""
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def prepare_downloads(root: Path, demo_corpus, demo_citations, base_model: Optional[Path] = None) -> Dict[str, str]:
    """What a user downloads before the sbin/ scripts run: SPECTER triples + id mapping (``SPECTER_DIR``) and a base
    model (``BASE_MODEL``), for the demo corpus."""
    import cli_triples
    from scincl.io import write_json
    from scincl.model.data import iter_metadata

    specter = root / "specter"
    cli_triples.get_specter_like_triples(citations_input_path=str(demo_citations["train"]), query_papers=60,
                                         triples_count=250, output_path=str(specter / "train_triples.csv"),
                                         triples_per_query=5, easy_negatives_count=3, hard_negatives_count=2,
                                         easy_positives_count=5, seed=0)
    papers = [p for shard in sorted(demo_corpus.s2orc_metadata_dir.glob("*.jsonl.gz")) for p in iter_metadata(shard)]
    write_json(specter / "s2id_to_s2orc_paper_id.json", {pid: pid for pid, _, _ in papers})  # demo: S2 = S2ORC ids
    return {"SPECTER_DIR": str(specter), **({"BASE_MODEL": str(base_model)} if base_model else {})}
