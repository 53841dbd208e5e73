"""Shared pytest fixtures: a small demo corpus made once per session (offline, deterministic)."""
from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict, Mapping, Optional, Sequence, Union

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# A pytest-xdist worker (`make test` runs two, tests/README.md): one OpenMP/torch thread for it and the CLIs it starts
# (they inherit the variable), so two workers keep to the two cores instead of four spinning threads on them. Set
# before torch is imported; a serial run keeps torch's default.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# The modules tests/README.md calls slow (tens of seconds to minutes each: they train, run the pipeline or a cluster
# through subprocesses), marked ``slow`` here in one place: ``pytest -m "not slow"`` is the quick subset to iterate
# with, ``make test`` runs everything.
SLOW_MODULES = {
    "test_corpus_hepth.py", "test_graph.py", "test_biggraph_distributed.py", "test_graph_embedders.py", "test_train.py",
    "test_distributed_train.py", "test_embed.py", "test_model.py", "test_train_data.py", "test_pretrain.py",
    "test_eval_cli.py", "test_pipeline_e2e.py", "test_reproduce.py", "test_demo.py", "test_faults_nonfinite.py",
    "test_faults_signals.py", "test_kill_points.py", "test_slurm.py", "test_gpu_check.py", "test_docs.py",
    "test_model_card.py", "test_triplet_dataset.py", "test_scirepeval.py",
    "test_hierarchical.py", "test_finetune.py", "test_evaluate.py", "test_eval_dir.py",
}


# Parallel runs (pytest-xdist, `make test`: ``-n 2 --dist loadgroup``): the scheduler below hands each worker whole
# groups of tests; a group is a module (its module fixtures built once), and modules that share an expensive session
# fixture form one group (built once, not once per worker): tests/citrec/ (one pre-training, two fine-tunings and a
# run_specter) and the users of ``demo_biggraph`` (a BigGraph training).
SHARED_FIXTURE_GROUPS = {
    "citrec": {"test_contexts.py", "test_sampling.py", "test_hierarchical.py", "test_finetune.py", "test_evaluate.py"},
    "demo_biggraph": {"test_graph.py", "test_biggraph_distributed.py", "test_ann_index_reuse.py", "test_leakage.py",
                      "test_triples_knn.py"},
}
# The groups whose run takes longest, longest first (the `--durations` of a serial run, tests/README.md): the workers
# start with them, so the short modules fill the end of the run on both workers instead of one long module running
# alone at the end.
LONGEST_FIRST = ["test_docs.py", "test_kill_points.py", "test_reproduce.py", "test_pipeline_e2e.py", "test_gpu_check.py",
                 "demo_biggraph", "test_slurm.py", "citrec", "test_train.py", "test_pretrain.py", "test_faults_signals.py",
                 "test_model_card.py", "test_faults_nonfinite.py", "test_embed.py"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: tens of seconds to minutes (tests/conftest.py:SLOW_MODULES)")


def test_group(nodeid: str) -> str:
    """The group of the test ``nodeid`` (``tests/x/test_y.py::test_z``): its :data:`SHARED_FIXTURE_GROUPS` name,
    else its module's path."""
    module = nodeid.split("::")[0]
    for group, modules in SHARED_FIXTURE_GROUPS.items():
        if Path(module).name in modules:
            return group
    return module


def _run_order(item: pytest.Item) -> int:
    group = test_group(item.nodeid)
    name = group if group in LONGEST_FIRST else item.path.name
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Mark every test of a :data:`SLOW_MODULES` module ``slow``; in a pytest-xdist worker, put the
    :data:`LONGEST_FIRST` groups first (a stable sort: the tests of a group keep their order), the order in which the
    scheduler hands the groups out."""
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_run_order)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup``: whole :func:`test_group` groups per worker, in collection order.

    (pytest-xdist's own loadgroup reads ``xdist_group`` marks through a node-id suffix that pytest 9.2 no longer
    takes, and groups only tests that carry the mark; this scheduler groups every test.)
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.config.option.loadscopereorder = False  # the collection's order: LONGEST_FIRST first

        def _split_scope(self, nodeid: str) -> str:
            return test_group(nodeid)

    return GroupScheduling(config, log)

# --- helpers shared by test modules (import them: ``from tests.conftest import REPO_ROOT, free_port, run_front_end``);
# a folder's own helpers live in its conftest.py

def free_port() -> int:
    """A free TCP port on localhost (torchrun's and PBG's rendezvous, the local Slurm daemons)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(kill_at: Optional[str] = None, **extra: str) -> Dict[str, str]:
    """The environment of a CLI child process: this one's, offline, with ``SCINCL_KILL_AT`` only when asked.

    A kill point inherited from the test runner's environment is dropped (it would kill the wrong run);
    ``kill_at`` sets one for this child; ``extra`` variables are added last (they may set it too).
    """
    from scincl.faults import KILL_AT_ENV

    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    env.update(HF_HUB_OFFLINE="1", WANDB_MODE="offline", TOKENIZERS_PARALLELISM="false", **extra)
    if kill_at:
        env[KILL_AT_ENV] = kill_at
    return env


def run_command(argv: Sequence, *, timeout: int = 600, check: bool = False, env: Optional[Mapping[str, str]] = None,
                kill_at: Optional[str] = None, **kwargs) -> subprocess.CompletedProcess:
    """Run ``argv`` (a whole command line, items as strings) in the repository root, output captured as text.

    The child's environment is :func:`child_env` (``kill_at``; ``env``: variables added). ``check``: assert
    exit code 0 (the assertion shows stderr's end). ``timeout`` defaults to pytest's per-test limit
    (pyproject.toml). Other ``kwargs`` go to :func:`subprocess.run` (``cwd``, ``preexec_fn``, ``input``).
    """
    kwargs.setdefault("cwd", REPO_ROOT)
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                          env=child_env(kill_at, **(env or {})), **kwargs)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def run_front_end(front_end: Union[str, Path], *args, **options) -> subprocess.CompletedProcess:
    """``python FRONT_END ARGS...`` with this interpreter (``front_end``: ``cli_*.py``, a script, or ``-c``):
    :func:`run_command`'s options."""
    return run_command([sys.executable, front_end, *args], **options)


@contextlib.contextmanager
def mounted_tmpfs(target: Path, options: str, what: str):
    """A tmpfs mounted with ``options`` (``size=4k``, ``ro,size=64k``, ...) at ``target`` (created) for the block, then
    unmounted; the test is skipped, saying why, where mounting is not allowed (not root, no mount namespace)."""
    target.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount {what} here: {mounted.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], capture_output=True)


def metadata_rows(papers) -> list:
    """The metadata records (``paper_id``, ``title``, ``abstract``) of toy papers (``toy_topic_corpus``)."""
    return [{k: p[k] for k in ("paper_id", "title", "abstract")} for p in papers]


def venv_tool(name: str) -> Optional[str]:
    """An executable from the project's venv (a pip-installed tool: hadolint, torchrun, ...) or else the PATH."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else shutil.which(name)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (where the cli_*.py front ends live)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (the project's venv), for subprocess CLI calls."""
    return sys.executable


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models on a shared 2-core box: one intra-op thread avoids oversubscription stalls.

    Use per module with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def demo_corpus(tmp_path_factory):
    """A small demo corpus (600 papers, seed 0) shared by all tests; see scincl.demo.make_demo."""
    from scincl.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo"), papers=600, seed=0)


@pytest.fixture(scope="session")
def demo_tiny_bert(demo_corpus, tmp_path_factory) -> Path:
    """A tiny randomly initialised BERT (1 layer, width 32) over the demo corpus' words: ``.../tiny_bert``."""
    from scincl.io import iter_jsonl
    from scincl.model.tiny import build_tiny_bert, vocabulary_of

    texts = [f"{r.get('title') or ''} {r.get('abstract') or ''}"
             for shard in sorted(demo_corpus.s2orc_metadata_dir.glob("*.jsonl.gz")) for _, r in iter_jsonl(shard)]
    return build_tiny_bert(tmp_path_factory.mktemp("demo_tiny_bert") / "tiny_bert", vocabulary_of(texts),
                           hidden_size=32, num_layers=1, max_positions=64)


# --- graph stage (issue 3): demo citation split + one BigGraph run shared by the graph tests ---

@pytest.fixture(scope="session")
def demo_citations(demo_corpus, tmp_path_factory):
    """``{"train", "test"}`` citation TSVs of the demo corpus (10 % test edges, seed 0)."""
    from scincl.graph.citations import extract_citations
    from scincl.corpus.shards import list_metadata_shards

    out = tmp_path_factory.mktemp("demo_citations")
    extract_citations(list_metadata_shards(demo_corpus.s2orc_metadata_dir), out, test_ratio=0.1, seed=0)
    return {"train": out / "citations.train.tsv", "test": out / "citations.test.tsv"}


@pytest.fixture(scope="session")
def demo_biggraph(demo_citations, tmp_path_factory):
    """``cli_graph.py train_biggraph demo`` on the demo split, run once: its output dir and metrics."""
    import json

    out = tmp_path_factory.mktemp("demo_biggraph")
    proc = run_front_end("cli_graph.py", "train_biggraph", "demo", "--train_edges", demo_citations["train"],
                         "--test_edges", demo_citations["test"], "--output_dir", out, timeout=300, check=True)
    metrics = json.loads((out / "link_prediction.json").read_text())["results"]
    return {"dir": out, "metrics": metrics, "stdout": proc.stdout}


@pytest.fixture(scope="session")
def toy_train_files(tmp_path_factory):
    """A tiny BERT and toy triplets + metadata (4 topics x 6 papers, 3 triplets each) for training runs."""
    from scincl.io import write_jsonl, write_triples_csv
    from scincl.model.tiny import build_tiny_bert, toy_topic_corpus, toy_triplets, toy_vocabulary

    root = tmp_path_factory.mktemp("toy_train")
    papers = toy_topic_corpus(papers_per_topic=6, seed=0)
    write_jsonl(root / "metadata.jsonl", metadata_rows(papers))
    write_triples_csv(root / "train.csv", toy_triplets(papers, per_query=3))
    return {"root": root, "bert": build_tiny_bert(root / "bert", toy_vocabulary())}


@pytest.fixture(scope="session")
def toy_bert(toy_train_files) -> Path:
    """A tiny randomly initialised BERT (2 layers, width 32, seed 0) over the toy topic corpus' words: ``.../bert``.

    One build shared read-only by every test that trains or embeds on the toy corpus
    (scincl.model.tiny.toy_topic_corpus); the same model as ``toy_train_files["bert"]``.
    """
    return toy_train_files["bert"]


# --- a hand-made S2ORC corpus (tests/corpus: shards; tests/graph: citations, co-citations) ---

# A hand-made corpus: paper -> outbound citations ("x" is outside the corpus; "b" lists "c" twice).
HAND_SHARDS = {
    "metadata_0.jsonl.gz": [("a", ["b", "c", "x"]), ("b", ["c", "c"]), ("c", []), ("d", ["a", "b", "c"])],
    "metadata_1.jsonl.gz": [("e", ["a", "d"]), ("f", None), ("g", ["a", "b"])],
    "metadata_10.jsonl.gz": [("h", ["e", "a"])],
}
BAD_LINES = [b'{"paper_id": "bad", "outbound_citations": [\n', b'{"title": "no id", "outbound_citations": ["a"]}\n',
             b'["a list"]\n']


def hand_record(pid: str, refs) -> dict:
    """One S2ORC metadata record of the hand-made corpus (``refs``: its outbound citations)."""
    return {"paper_id": pid, "title": f"Title {pid}", "abstract": None, "outbound_citations": refs,
            "inbound_citations": [], "has_outbound_citations": bool(refs)}


def hand_corpus_edges(included=None, excluded=None) -> list:
    """Independent edge computation from HAND_SHARDS (shard order: 0, 1, 10)."""
    edges = []
    for name in ("metadata_0.jsonl.gz", "metadata_1.jsonl.gz", "metadata_10.jsonl.gz"):
        for pid, refs in HAND_SHARDS[name]:
            if (included and pid not in included) or (excluded and pid in excluded):
                continue
            for ref in dict.fromkeys(refs or []):
                if not (excluded and ref in excluded):
                    edges.append((pid, ref))
    return edges


@pytest.fixture()
def hand_corpus(tmp_path) -> Path:
    """:data:`HAND_SHARDS` as S2ORC metadata shards, with :data:`BAD_LINES` as lines 2-4 of metadata_1."""
    from scincl.io import write_jsonl

    d = tmp_path / "metadata"
    for name, papers in HAND_SHARDS.items():
        write_jsonl(d / name, [hand_record(pid, refs) for pid, refs in papers])
    # metadata_1 gets three bad lines (lines 2-4) after its first record
    good = gzip.decompress((d / "metadata_1.jsonl.gz").read_bytes()).splitlines(keepends=True)
    (d / "metadata_1.jsonl.gz").write_bytes(gzip.compress(b"".join([good[0], *BAD_LINES, *good[1:]]), mtime=0))
    return d
