"""The one place where torchbiggraph 1.0.0 (2019) is adapted to the pinned torch (2.x).

Import torchbiggraph through :func:`import_torchbiggraph`; it applies these patches once per
process, and :func:`apply_patches` is registered as a subprocess initialiser, so the workers,
parameter/partition/lock servers that PBG spawns (``multiprocessing`` "spawn" context) get them too.

Patches (each names what broke and why the fix is safe):

1. ``torchbiggraph.rpc._deserialize`` calls ``torch.load(buf)``. Since torch 2.6 ``torch.load``
   defaults to ``weights_only=True`` and refuses PBG's own RPC messages (``Bucket`` tuples, stats),
   so distributed training (``num_machines > 1``) dies at the first lock-server call
   ("Weights only load failed ... torchbiggraph.types.Bucket"). The bytes on that channel are
   produced by ``torch.save`` in the peer ranks of the same training job, so restoring the
   pre-2.6 behaviour (``weights_only=False``) for this channel only is safe.
   (PBG's other ``torch.load``, of optimizer states in checkpoints, loads fine with
   ``weights_only=True`` - plain dicts of tensors - and is left alone.)
2. Not a torch incompatibility but a PBG 1.0.0 size trap: its edge writer
   (``graph_storages.BufferedDataset``) creates every h5 dataset with fixed 50 MiB chunks, so each
   imported bucket occupies >= 150 MiB on disk however few edges it holds (a 4-partition demo graph
   became 2.4 GB). :func:`edge_chunk_size` caps the chunk at the size of the input for the duration
   of one import; big graphs keep PBG's 50 MiB.
3. ``torchbiggraph.schema.unpack_optional`` recognises ``Optional[X]`` by identity
   (``type_ is Optional[X]``), which only holds while ``typing``'s LRU cache (128 entries) still
   holds the object PBG created at import. In a long process that also imports transformers (or any
   typing-heavy library) the entry is evicted, a fresh ``Optional[X]`` is a different object, and
   config validation fails with "Unknown type: typing.Optional[float]". The patch compares by
   equality (``typing`` unions compare by their arguments), which is what was meant.
4. Not an incompatibility but a reproducibility hole: PBG's single-machine bucket scheduler orders each epoch's
   buckets with an unseeded ``random.Random()``, so a graph with more than one partition trained differently on
   every run, even with one worker. :func:`seeded_bucket_order` draws each epoch's generator from one seeded with
   the training's seed, for the duration of one training (one bucket, as in the demo: nothing to order).

Also silences two deprecation warnings that every PBG process would print: ``pkg_resources is
deprecated`` (``import torchbiggraph``; ``setuptools<81`` provides it, see requirements.txt),
``TypedStorage is deprecated`` (``tensorlist.py``) and ``Converting a tensor with requires_grad=True
to a scalar`` (``train.py`` logging its loss) and ``The given NumPy array is not writable``
(``rpc.py``, read-only message buffers); all harmless. Spawned processes import torchbiggraph before
any initialiser runs, so the filters also go into ``PYTHONWARNINGS``, which they inherit.
"""
from __future__ import annotations

import contextlib
import functools
import io
import itertools
import os
import random
import types
import warnings
from typing import Iterator

_PATCHED = False
_WARNING_FILTERS = ("ignore:pkg_resources is deprecated:UserWarning",
                    "ignore:TypedStorage is deprecated:UserWarning",
                    "ignore:Converting a tensor with requires_grad=True to a scalar:UserWarning",
                    "ignore:The given NumPy array is not writable:UserWarning")


def _rpc_deserialize(t):
    import torch

    buf = io.BytesIO(t.numpy().tobytes())
    return torch.load(buf, weights_only=False)  # peer ranks of the same job (see module doc, 1.)


def _unpack_optional(type_):
    """``X`` for ``Optional[X]`` compared by equality, not identity (see module doc, 3.)."""
    from typing import Optional

    args = getattr(type_, "__args__", None)
    if not args or type_ != Optional[args[0]]:
        raise TypeError("Not an optional type")
    return args[0]


def apply_patches() -> None:
    """Patch torchbiggraph for the installed torch (idempotent; safe in spawned subprocesses)."""
    global _PATCHED
    if _PATCHED:
        return
    for spec in _WARNING_FILTERS:
        _, message, _category = spec.split(":")
        warnings.filterwarnings("ignore", message=message, category=UserWarning)
    existing = [f for f in os.environ.get("PYTHONWARNINGS", "").split(",") if f]
    os.environ["PYTHONWARNINGS"] = ",".join(existing + [f for f in _WARNING_FILTERS if f not in existing])
    import torchbiggraph  # noqa: F401
    import torchbiggraph.rpc as rpc

    rpc._deserialize = _rpc_deserialize
    import torchbiggraph.schema as schema

    schema.unpack_optional = _unpack_optional
    _PATCHED = True


def _seed_subprocess(seed: int, slot: int) -> None:
    """Seed torch in one PBG subprocess (after PBG's own ``torch.manual_seed(os.getpid())``)."""
    import torch

    torch.manual_seed(int(seed) + 1000 * int(slot))


class SlotSeeds:
    """Seeds torch in each process PBG starts with one initialiser: ``seed + 1000 * slot``, ``slot`` the process's
    place in the order this initialiser's processes were started (1, 2, ...: on one machine the training's Hogwild!
    pool comes first, so its workers are ``1..workers``; then the background-I/O process, if any).

    The slot is fixed in the parent when it hands the initialiser to the new process: PBG starts every process
    with the "spawn" method, which pickles the initialiser once per process, in start order, so ``__reduce__`` gives
    each its number. The seeds thus depend on this training's own pools only, not on what the caller's process
    started before (PBG seeds with the pid; seeding from ``multiprocessing``'s ``_identity``, a counter of every
    process the parent ever started, made a graph trained after other pools in the same process differ). Numbered
    from 1 as that identity was in a fresh process, so a graph trained by ``cli_graph.py`` keeps its bytes.

    What this makes reproducible: with one worker (``workers=1``), the same config, seed and inputs give the same
    embeddings bytes in any process, whatever ran before (demo graph: three trainings in one process with pools
    between, ``make demo`` and its rerun from the graph stage: one sha256; two partitions, with the bucket order
    seeded (patch 4): three runs, one sha256; before it, three). Not with several workers: PBG hands each bucket's
    edge slices to whichever worker is free and the workers update the shared embeddings without locks (Hogwild!),
    so which seed stream draws a slice's negatives and the order of the updates vary from run to run (demo graph,
    ``workers=2``: five runs, five different files, in one process or in fresh ones; test MRR 0.277-0.301).
    """

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self._started = itertools.count(1)

    def __reduce__(self):
        return functools.partial, (_seed_subprocess, self.seed, next(self._started))

    def __call__(self) -> None:
        """Run in this process (not handed to a new one): seed as the next process would be."""
        _seed_subprocess(self.seed, next(self._started))


def subprocess_initializer(seed: int):
    """PBG ``subprocess_init`` for its spawned processes: logging, these patches, torch seeded (:class:`SlotSeeds`).

    Make one per training or evaluation: the slots count the processes started with this initialiser.
    """
    apply_patches()
    from torchbiggraph.util import SubprocessInitializer, setup_logging

    init = SubprocessInitializer()
    init.register(setup_logging, 0)
    init.register(apply_patches)
    init.register(SlotSeeds(seed))
    return init


@contextlib.contextmanager
def edge_chunk_size(max_edges_per_bucket: int) -> Iterator[None]:
    """Shrink PBG's edge-file chunk (and write buffer) to fit ``max_edges_per_bucket`` (patch 2)."""
    apply_patches()
    from torchbiggraph.graph_storages import BufferedDataset

    default = BufferedDataset.BUFFER_SIZE
    BufferedDataset.BUFFER_SIZE = max(1024, min(default, int(max_edges_per_bucket)))
    try:
        yield
    finally:
        BufferedDataset.BUFFER_SIZE = default


@contextlib.contextmanager
def seeded_bucket_order(seed: int) -> Iterator[None]:
    """PBG's bucket order (``torchbiggraph.bucket_scheduling``) drawn from ``seed`` for the block (patch 4)."""
    apply_patches()
    import torchbiggraph.bucket_scheduling as scheduling

    epochs = random.Random(int(seed))
    unseeded = scheduling.random
    # the module calls random.Random() once per epoch (new_pass) and nothing else of the random module
    scheduling.random = types.SimpleNamespace(Random=lambda: random.Random(epochs.getrandbits(64)))
    try:
        yield
    finally:
        scheduling.random = unseeded


def import_torchbiggraph():
    """``import torchbiggraph`` with the patches of this module applied; returns the package."""
    apply_patches()
    import torchbiggraph

    return torchbiggraph
