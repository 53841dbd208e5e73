"""FAISS nearest-neighbour index: build, save/load with a row -> paper_id mapping, batched k-NN search.

The index is the SciNCL hard-negative / positive miner's view of the citation-graph embedding
space (paper §3.2: k-NN in the BigGraph embedding space). Everything is plain FAISS
(``faiss.index_factory`` strings such as ``Flat``, ``IVF16384_HNSW32,Flat``, ``HNSW32``,
``PCA64,IVF4096,PQ16``), so the usual scale-out knobs (GPU, IVF/PQ compression) pass through
unchanged. GPU is used when ``device >= 0`` and the installed faiss reports GPUs; otherwise the CPU
index is used and the log says so.

Files written by :func:`write_index` (all atomic):

- ``INDEX_PATH``                   the faiss index (always a CPU index, loadable anywhere)
- ``INDEX_PATH.paper_ids.json``     JSON list, row ``i`` of the index = ``paper_ids[i]``
- ``INDEX_PATH.faiss_config.json``  how it was built (factory string, metric, normalisation, ...)

Distances returned by :func:`knn_search` are faiss' own: for ``inner_product`` a similarity (higher
= nearer), for ``l2`` the *squared* euclidean distance (lower = nearer); rows are sorted nearest
first either way.
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.io import PathLike, atomic_path, check_finite, read_id_list, read_json, write_id_list, write_json

if TYPE_CHECKING:
    from scincl.graph.id_table import IdTable

logger = logging.getLogger(__name__)

# faiss GPU k-selection limit (faiss/gpu/utils/DeviceDefs.cuh: GPU_MAX_SELECTION_K); larger k -> CPU.
GPU_MAX_SELECTION_K = 2048
# Queries per faiss call in knn_search: faiss' own query block for exhaustive search
# (faiss.cvar.distance_compute_blas_query_bs = 4096); every call makes one pass over the database, so
# smaller batches add passes (measured 2x slower with 1024-query batches, benchmarks/bench_knn.py).
DEFAULT_SEARCH_BATCH_SIZE = 4096
# Upper bound of training vectors for IVF/PQ factories when no sample size is given: 256 points per
# centroid for up to 4096 lists, the faiss wiki's recommended upper range (Guidelines-to-choose-an-index).
DEFAULT_MAX_TRAIN_SAMPLE = 1_048_576
# Bytes of embedding rows read per h5 block when selecting a subset (bounds the reader's extra memory;
# 16 MiB = 5,461 rows of 768 float32: few enough calls that h5py's per-call overhead does not matter).
READ_BLOCK_BYTES = 16 * 1024 * 1024
# Rows of a RowsOnDisk source read per file pass when building an index (each pass scans the file's
# blocks that hold them): 65,536 x 768 float32 = 192 MiB.
READ_CHUNK_ROWS = 1 << 16

_METRIC_ALIASES = {
    "inner_product": "inner_product", "ip": "inner_product", "dot": "inner_product",
    "cosine": "cosine",  # = inner product over L2-normalised vectors
    "l2": "l2", "euclidean": "l2",
}
# keep GPU resources alive as long as the process lives (a GpuIndex does not own its resources)
_GPU_RESOURCES: List[Any] = []


def _faiss():
    import faiss  # imported lazily: importing faiss costs ~0.3 s and pulls in OpenMP

    return faiss


def index_ids_path(index_path: PathLike) -> Path:
    """The row -> paper_id mapping written next to an index: ``INDEX_PATH.paper_ids.json``."""
    return Path(str(index_path) + ".paper_ids.json")


def index_config_path(index_path: PathLike) -> Path:
    """The build manifest written next to an index: ``INDEX_PATH.faiss_config.json``."""
    return Path(str(index_path) + ".faiss_config.json")


def resolve_metric(metric: Union[str, int]) -> Tuple[int, bool]:
    """``(faiss metric constant, force_normalize)`` for a metric name (or a raw faiss metric int).

    ``cosine`` is inner product over L2-normalised vectors, so it forces normalisation.
    """
    faiss = _faiss()
    if isinstance(metric, (int, np.integer)) and not isinstance(metric, bool):
        if int(metric) not in (faiss.METRIC_INNER_PRODUCT, faiss.METRIC_L2):
            raise InputError(f"unsupported faiss metric type {metric} (0 = inner product, 1 = L2)")
        return int(metric), False
    name = _METRIC_ALIASES.get(str(metric).lower())
    if name is None:
        raise InputError(f"unknown metric {metric!r}; choose one of {sorted(_METRIC_ALIASES)}")
    if name == "l2":
        return faiss.METRIC_L2, False
    return faiss.METRIC_INNER_PRODUCT, name == "cosine"


def _as_float32_matrix(arr: np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-d array (rows x dimension), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise InputError(f"{what} is empty (0 rows)")
    if not np.issubdtype(arr.dtype, np.number):
        raise InputError(f"{what} must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float32)


class RowsOnDisk:
    """Rows ``rows`` of an embeddings file (``.h5``/``.npy``), read when sliced: ``build_index`` adds them
    ``READ_CHUNK_ROWS`` at a time instead of holding a second copy of what the index stores."""

    def __init__(self, path: PathLike, rows: np.ndarray, dimension: int) -> None:
        self.path, self.rows = Path(path), np.asarray(rows, dtype=np.int64)
        self.shape = (len(self.rows), int(dimension))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, which) -> np.ndarray:
        return read_embedding_rows(self.path, self.rows[which])


def embedding_dimension(path: PathLike) -> int:
    """Columns of an ``.h5``/``.npy`` embeddings file without loading it."""
    p = Path(path)
    if str(p).endswith(".npy"):
        return int(np.load(p, mmap_mode="r").shape[1])
    import h5py

    from scincl.io import EMBEDDINGS_DATASET

    with h5py.File(p, "r") as f:
        return int(f[EMBEDDINGS_DATASET].shape[1])


def _normalized_copy(batch: np.ndarray) -> np.ndarray:
    out = np.array(batch, dtype=np.float32, copy=True, order="C")
    _faiss().normalize_L2(out)
    return out


def set_workers(workers: Optional[int]) -> None:
    """Set faiss' OpenMP thread count (process-wide) when ``workers`` is given.

    faiss and torch share one OpenMP runtime, so this also changes ``torch.get_num_threads()``;
    library code uses :func:`faiss_threads`, which restores the previous count.
    """
    if workers is not None and workers > 0:
        _faiss().omp_set_num_threads(int(workers))


@contextlib.contextmanager
def faiss_threads(workers: Optional[int]) -> Iterator[None]:
    """Run a block with ``workers`` OpenMP threads (when given), then restore the previous count.

    Without the restore, a later torch training step in the same process would run with faiss'
    thread count, summing floats in another order (a different model than a fresh process trains).
    """
    previous = _faiss().omp_get_max_threads()
    set_workers(workers)
    try:
        yield
    finally:
        _faiss().omp_set_num_threads(previous)


def gpu_available() -> bool:
    """True when the installed faiss is a GPU build and sees at least one GPU."""
    faiss = _faiss()
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


# --------------------------------------------------------------------------- GPU placement
# Index types faiss can clone to a GPU (faiss/gpu/GpuCloner.cpp ToGpuCloner; HNSW, IndexPQ, LSH, ...
# are not implemented there and index_cpu_to_gpu throws) and wrappers whose inner index is cloned.
GPU_INDEX_TYPES = ("IndexFlat", "IndexFlatIP", "IndexFlatL2", "IndexIVFFlat", "IndexIVFPQ", "IndexIVFScalarQuantizer")
GPU_WRAPPER_TYPES = ("IndexPreTransform", "IndexIDMap", "IndexIDMap2")
GPU_FLAT_QUANTIZERS = ("IndexFlat", "IndexFlatIP", "IndexFlatL2")
# GpuIndexIVFPQ: code sizes (bytes = sub-quantizers at 8 bits) it implements (faiss/gpu/impl/IVFPQ.cu,
# isSupportedPQCodeLength) and the per-block shared memory its lookup tables must fit (48 KiB on
# every CUDA GPU since Kepler): M x 2^nbits x 4 B in float32, half of it with float16 tables.
GPU_PQ_CODE_SIZES = (1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96)
GPU_SHARED_MEMORY_BYTES = 48 * 1024


@dataclass(frozen=True)
class IndexLayout:
    """What decides whether and how a faiss index can live on a GPU (see :func:`index_layout`).

    ``classes`` lists the index classes from the outermost wrapper to the innermost index, e.g.
    ``("IndexPreTransform", "IndexIVFPQ")`` for ``PCA64,IVF4096,PQ16``; a GPU copy has
    ``("IndexPreTransform", "GpuIndexIVFPQ")``.
    """

    classes: Tuple[str, ...]
    quantizer: Optional[str] = None  # coarse quantizer class of an IVF index
    pq_m: Optional[int] = None  # PQ sub-quantizers of an IVFPQ index
    pq_nbits: Optional[int] = None


@dataclass(frozen=True)
class GpuPlan:
    """Whether to clone an index to a GPU, with which ``faiss.GpuClonerOptions`` fields, and why."""

    use_gpu: bool
    options: Dict[str, Any]
    reason: str


def index_layout(index) -> IndexLayout:
    """The :class:`IndexLayout` of a (CPU or GPU) faiss index, walking through wrapper indexes."""
    faiss = _faiss()
    classes: List[str] = []
    current = index
    while True:
        current = faiss.downcast_index(current) if type(current).__name__ == "Index" else current
        classes.append(type(current).__name__)
        inner = getattr(current, "index", None) if type(current).__name__ in GPU_WRAPPER_TYPES else None
        if inner is None:
            break
        current = inner
    quantizer = pq_m = pq_nbits = None
    if hasattr(current, "nlist") and getattr(current, "quantizer", None) is not None:
        quantizer = type(faiss.downcast_index(current.quantizer)).__name__
    pq = getattr(current, "pq", None)
    if pq is not None:
        pq_m, pq_nbits = int(pq.M), int(pq.nbits)
    return IndexLayout(tuple(classes), quantizer, pq_m, pq_nbits)


def is_gpu_layout(layout: IndexLayout) -> bool:
    """True when any level of the index is a GPU index (a wrapper around a GPU index counts)."""
    return any(name.startswith("Gpu") for name in layout.classes)


def gpu_plan(layout: IndexLayout) -> GpuPlan:
    """Decide whether an index of this layout can be cloned to a GPU, and with which options.

    Pure decision logic (unit-tested on CPU): HNSW, IndexPQ and other types without a GPU
    implementation, and IVF indexes with a non-flat coarse quantizer, stay on the CPU;
    IVFPQ with float32 lookup tables beyond the GPU's shared memory (e.g. ``IVF65536,PQ64``) gets
    float16 lookup tables (``useFloat16``), and stays on the CPU when even those do not fit.
    """
    *wrappers, core = layout.classes
    unsupported = [w for w in wrappers if w not in GPU_WRAPPER_TYPES]
    if unsupported or core not in GPU_INDEX_TYPES:
        name = unsupported[0] if unsupported else core
        return GpuPlan(False, {}, f"{name} is not implemented on GPU in faiss")
    if layout.quantizer is not None and layout.quantizer not in GPU_FLAT_QUANTIZERS:
        return GpuPlan(False, {}, f"the coarse quantizer {layout.quantizer} of {core} is not implemented on GPU")
    options: Dict[str, Any] = {}
    reason = f"{core} on GPU"
    if core == "IndexIVFPQ" and layout.pq_m is not None:
        m, nbits = layout.pq_m, layout.pq_nbits or 8
        if nbits != 8 or m not in GPU_PQ_CODE_SIZES:
            return GpuPlan(False, {}, f"IVFPQ with {m} x {nbits}-bit codes is not implemented on GPU "
                                      f"(8-bit codes of {', '.join(map(str, GPU_PQ_CODE_SIZES))} bytes are)")
        table_bytes = m * (1 << nbits) * 4
        if table_bytes > GPU_SHARED_MEMORY_BYTES:
            if table_bytes // 2 > GPU_SHARED_MEMORY_BYTES:
                return GpuPlan(False, {}, f"IVFPQ lookup tables of {table_bytes // 2} B exceed the GPU's "
                                          f"{GPU_SHARED_MEMORY_BYTES} B shared memory even in float16")
            options["useFloat16"] = True  # = GpuIndexIVFPQConfig.useFloat16LookupTables
            reason += f" with float16 lookup tables ({table_bytes} B in float32 > {GPU_SHARED_MEMORY_BYTES} B)"
    return GpuPlan(True, options, reason)


def index_to_device(index, device: int = -1):
    """Move a CPU index to GPU ``device`` when possible (:func:`gpu_plan`); otherwise return it unchanged (logged).

    GPU-only path: needs a GPU build of faiss; the decision it follows is :func:`gpu_plan`.
    """
    if device is None or int(device) < 0:
        logger.info("faiss: using CPU (device=%s)", device)
        return index
    if not gpu_available():
        logger.info("faiss: device=%s requested but this faiss build has no GPU; using CPU", device)
        return index
    plan = gpu_plan(index_layout(index))
    if not plan.use_gpu:
        logger.warning("faiss: using CPU although device=%s was requested: %s", device, plan.reason)
        return index
    faiss = _faiss()
    res = faiss.StandardGpuResources()
    _GPU_RESOURCES.append(res)
    options = faiss.GpuClonerOptions()
    for name, value in plan.options.items():
        setattr(options, name, value)
    logger.info("faiss: using GPU %d of %d (%s)", int(device), faiss.get_num_gpus(), plan.reason)
    return faiss.index_cpu_to_gpu(res, int(device), index, options)


def is_gpu_index(index) -> bool:
    """True for a faiss GPU index, also when wrapped (``IndexPreTransform`` around a ``GpuIndexIVFPQ``)."""
    return is_gpu_layout(index_layout(index))


def index_to_cpu(index):
    """A CPU copy of a GPU index (a CPU index is returned as is)."""
    return _faiss().index_gpu_to_cpu(index) if is_gpu_index(index) else index


def build_index(
    embeddings: Union[np.ndarray, RowsOnDisk],
    string_factory: str = "Flat",
    metric: Union[str, int] = "inner_product",
    do_normalize: bool = False,
    device: int = -1,
    batch_size: int = 512,
    workers: Optional[int] = None,
    train_sample_size: Optional[int] = None,
    seed: int = 0,
):
    """Build a faiss index over ``embeddings`` (rows = papers) from an index-factory string.

    Args:
        embeddings: float matrix ``[n, d]``; not modified (normalisation works on copies); or a
            :class:`RowsOnDisk`, read ``READ_CHUNK_ROWS`` rows at a time (the index's copy only).
        string_factory: faiss index-factory string (``Flat`` = exact search, as the paper uses).
        metric: ``inner_product`` (default; the paper's dot-product graph embeddings), ``l2``,
            or ``cosine`` (= inner product with ``do_normalize``).
        do_normalize: L2-normalise vectors before adding (inner product then ranks by cosine).
        device: GPU id; ``-1`` or a faiss without GPUs -> CPU.
        batch_size: vectors added per ``index.add`` call (bounded extra memory for normalised copies).
        workers: faiss OpenMP threads (process-wide); ``None`` keeps faiss' default.
        train_sample_size: training vectors for factories that need training (IVF, PQ, PCA);
            default ``min(n, DEFAULT_MAX_TRAIN_SAMPLE)``, drawn uniformly with ``seed``.
        seed: seed of the training sample and of faiss' k-means.

    Returns:
        The filled index (a GPU index when a GPU was used; :func:`write_index` stores a CPU copy).
    """
    faiss = _faiss()
    if isinstance(string_factory, (list, tuple)):  # fire turns "IVF16,Flat" into a tuple
        string_factory = ",".join(str(s) for s in string_factory)
    if batch_size <= 0:
        raise InputError(f"batch_size must be positive, got {batch_size}")
    vectors = embeddings if isinstance(embeddings, RowsOnDisk) else _as_float32_matrix(embeddings, "embeddings")
    metric_type, force_normalize = resolve_metric(metric)
    do_normalize = bool(do_normalize or force_normalize)
    n, dim = vectors.shape
    with faiss_threads(workers):
        try:
            index = faiss.index_factory(dim, string_factory, metric_type)
        except RuntimeError as exc:
            reason = str(exc).strip().splitlines()[0].split(": ")[-1] if str(exc).strip() else "invalid factory string"
            raise InputError(f"faiss cannot build index {string_factory!r} for dimension {dim}: {reason}") from None
        _seed_clustering(index, seed)
        index = index_to_device(index, device)
        logger.info("faiss: building %s index over %d x %d vectors (metric=%s, normalize=%s)",
                    string_factory, n, dim, "l2" if metric_type == faiss.METRIC_L2 else "inner_product", do_normalize)

        if not index.is_trained:
            size = min(n, int(train_sample_size) if train_sample_size else DEFAULT_MAX_TRAIN_SAMPLE)
            rows = np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False)) if size < n else slice(None)
            sample = vectors[rows]
            sample = _normalized_copy(sample) if do_normalize else sample
            logger.info("faiss: training on %d of %d vectors", len(sample), n)
            started = time.perf_counter()
            index.train(sample)
            logger.info("faiss: trained in %.1f s", time.perf_counter() - started)
            del sample

        chunk_rows = READ_CHUNK_ROWS if isinstance(vectors, RowsOnDisk) else n
        for chunk_start in range(0, n, chunk_rows):
            chunk = vectors[chunk_start:chunk_start + chunk_rows]
            for start in tqdm(range(0, len(chunk), batch_size), desc=f"faiss add (batch_size={batch_size:,})",
                              unit="batch", disable=len(chunk) <= batch_size):
                batch = chunk[start:start + batch_size]
                index.add(_normalized_copy(batch) if do_normalize else batch)
            del chunk
        logger.info("faiss: index holds %d vectors", index.ntotal)
        return index


def _seed_clustering(index, seed: int) -> None:
    """Make faiss' k-means (IVF coarse quantiser, PQ codebooks) use ``seed`` where it is exposed."""
    faiss = _faiss()
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        ivf.cp.seed = int(seed)


def write_index(index, index_path: PathLike, paper_ids: Sequence[str],
                build_info: Optional[Dict[str, Any]] = None) -> None:
    """Write ``index`` (as a CPU index) and its row -> paper_id mapping next to it, atomically.

    ``build_info`` (factory string, metric, ...) is stored in ``INDEX_PATH.faiss_config.json``.
    """
    faiss = _faiss()
    paper_ids = [str(p) for p in paper_ids]
    if len(paper_ids) != index.ntotal:
        raise InputError(f"{len(paper_ids)} paper ids for an index of {index.ntotal} rows", path=index_path)
    cpu_index = index_to_cpu(index)
    with atomic_path(index_path) as tmp:
        faiss.write_index(cpu_index, str(tmp))
    write_id_list(index_ids_path(index_path), paper_ids)
    config = {"faiss_version": faiss.__version__, "ntotal": int(index.ntotal), "dimension": int(index.d),
              "metric": "l2" if index.metric_type == faiss.METRIC_L2 else "inner_product"}
    config.update(build_info or {})
    write_json(index_config_path(index_path), config)
    logger.info("faiss: wrote %s (%d rows) + %s", index_path, index.ntotal, index_ids_path(index_path).name)


def read_index(index_path: PathLike, device: int = -1) -> Tuple[Any, List[str]]:
    """Load an index written by :func:`write_index` and its row -> paper_id list (GPU when ``device >= 0``)."""
    faiss = _faiss()
    path = Path(index_path)
    if not path.exists():
        raise InputError("index file not found", path=path)
    ids_path = index_ids_path(path)
    if not ids_path.exists():
        raise InputError(f"row -> paper_id mapping {ids_path.name} missing next to the index", path=path)
    try:
        index = faiss.read_index(str(path))
    except RuntimeError:
        raise InputError("not a readable faiss index", path=path) from None
    paper_ids = read_id_list(ids_path)
    if len(paper_ids) != index.ntotal:
        raise InputError(f"{len(paper_ids)} paper ids but the index holds {index.ntotal} rows", path=ids_path)
    return index_to_device(index, device), paper_ids


def read_index_config(index_path: PathLike) -> Dict[str, Any]:
    """The build manifest of an index (empty dict when absent)."""
    p = index_config_path(index_path)
    return read_json(p) if p.exists() else {}


def knn_search(
    index,
    queries: np.ndarray,
    k: int,
    batch_size: int = DEFAULT_SEARCH_BATCH_SIZE,
    normalize: bool = False,
    show_progress: bool = True,
) -> Tuple[np.ndarray, np.ndarray]:
    """Batched k-nearest-neighbour search.

    Results are written straight into preallocated output arrays, so peak memory is the output
    (``n * k * 12`` bytes) plus one batch of faiss work space.

    Args:
        index: a faiss index (CPU or GPU).
        queries: ``[n, d]`` query vectors (not modified).
        k: neighbours per query; must be ``1 <= k <= index.ntotal``.
        batch_size: queries per faiss call (default: faiss' own query block, see
            ``DEFAULT_SEARCH_BATCH_SIZE``); memory per batch is ``batch_size * k * 12`` bytes of
            results plus faiss' work space for them.
        normalize: L2-normalise the queries first (use with an index built with ``do_normalize``).
        show_progress: tqdm bar over batches.

    Returns:
        ``(distances float32 [n, k], row indices int64 [n, k])``, nearest first (see module doc).
    """
    q = _as_float32_matrix(queries, "queries")
    k = int(k)
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if k > index.ntotal:
        raise InputError(f"k={k} is larger than the index ({index.ntotal} vectors)")
    if q.shape[1] != index.d:
        raise InputError(f"queries have dimension {q.shape[1]} but the index has dimension {index.d}")
    if batch_size <= 0:
        raise InputError(f"batch_size must be positive, got {batch_size}")
    if is_gpu_index(index) and k > GPU_MAX_SELECTION_K:
        logger.info("faiss: k=%d exceeds the GPU limit %d; searching on a CPU copy", k, GPU_MAX_SELECTION_K)
        index = index_to_cpu(index)
    n = q.shape[0]
    distances = np.empty((n, k), dtype=np.float32)
    indices = np.empty((n, k), dtype=np.int64)
    for start in tqdm(range(0, n, batch_size), desc=f"faiss search (k={k:,})", unit="batch",
                      disable=not show_progress or n <= batch_size):
        end = min(start + batch_size, n)
        batch = _normalized_copy(q[start:end]) if normalize else q[start:end]
        index.search(batch, k, D=distances[start:end], I=indices[start:end])
    return distances, indices


# ------------------------------------------------------------------------- files -> index rows

def select_rows(paper_ids: Union[Sequence[str], IdTable], include_paper_ids: Optional[Sequence[str]] = None,
                allow_unknown_ids: bool = False, source: Optional[PathLike] = None) -> Tuple[np.ndarray, List[str]]:
    """Rows of ``paper_ids`` (a list, or the :class:`~scincl.graph.id_table.IdTable` of a whole graph's ids)
    to index, in the order of ``include_paper_ids`` (all rows when None).

    Unknown ids are an :class:`InputError` (count + examples) unless ``allow_unknown_ids``, which
    skips them with a logged count; repeated ids in the subset are kept once, in ``paper_ids`` an error.
    """
    from scincl.graph.id_table import IdTable

    table = paper_ids if isinstance(paper_ids, IdTable) else IdTable(paper_ids, source=source)
    if include_paper_ids is None:
        return np.arange(len(table), dtype=np.int64), table.ids.to_list()
    unique = list(dict.fromkeys(str(p) for p in include_paper_ids))
    if len(unique) < len(include_paper_ids):
        logger.info("include_paper_ids: %d repeated ids ignored", len(include_paper_ids) - len(unique))
    rows = table.find(unique)
    unknown = [p for p, row in zip(unique, rows) if row < 0]
    if unknown:
        message = (f"{len(unknown)} of {len(unique)} include_paper_ids have no embedding "
                   f"(e.g. {', '.join(map(repr, unknown[:3]))})")
        if not allow_unknown_ids:
            raise InputError(message + "; pass --allow_unknown_ids to skip them")
        logger.warning("%s: skipped", message)
    if not np.any(rows >= 0):
        raise InputError("the paper id subset is empty: no embeddings to index")
    return rows[rows >= 0], [p for p, row in zip(unique, rows) if row >= 0]


def read_embedding_rows(path: PathLike, rows: np.ndarray, block_rows: Optional[int] = None) -> np.ndarray:
    """``embeddings[rows]`` from an ``.h5`` (dataset ``embeddings``) or ``.npy`` file, read block-wise.

    Memory is the selected rows plus one block (``block_rows``, default ``READ_BLOCK_BYTES`` worth of
    rows), so a subset of a huge matrix can be indexed. A row with NaN/inf is an :class:`InputError`
    naming the file and the first such row (a kNN search would silently skip it).
    """
    p = Path(path)
    if not p.exists():
        raise InputError("embeddings file not found", path=p)
    return check_finite(_read_rows(p, rows, block_rows), p, rows)


def _read_rows(p: Path, rows: np.ndarray, block_rows: Optional[int]) -> np.ndarray:
    from scincl.io import EMBEDDINGS_DATASET, read_embeddings_h5

    if str(p).endswith(".npy"):
        matrix = np.load(p, mmap_mode="r")
        return np.ascontiguousarray(matrix[np.asarray(rows)], dtype=np.float32)
    import h5py

    try:
        f = h5py.File(p, "r")
    except OSError as exc:
        raise InputError(f"not a readable h5 file ({exc})", path=p) from None
    with f:
        if EMBEDDINGS_DATASET not in f:
            read_embeddings_h5(p)  # raises the standard "no dataset" error
        data = f[EMBEDDINGS_DATASET]
        rows = np.asarray(rows, dtype=np.int64)
        if block_rows is None:
            block_rows = max(1, READ_BLOCK_BYTES // max(1, data.shape[1] * data.dtype.itemsize))
        if len(rows) == data.shape[0] and np.array_equal(rows, np.arange(len(rows))):
            return np.ascontiguousarray(data[...], dtype=np.float32)
        out = np.empty((len(rows), data.shape[1]), dtype=np.float32)
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        for start in range(0, data.shape[0], block_rows):
            lo, hi = np.searchsorted(sorted_rows, [start, start + block_rows])
            if lo == hi:
                continue
            block = data[start:start + block_rows]
            out[order[lo:hi]] = block[sorted_rows[lo:hi] - start]
            del block  # free it before the next read allocates one: one block in memory, not two
        return out


def embedding_row_count(path: PathLike) -> int:
    """Number of rows of an ``.h5``/``.npy`` embeddings file without loading it."""
    p = Path(path)
    if not p.exists():
        raise InputError("embeddings file not found", path=p)
    if str(p).endswith(".npy"):
        return int(np.load(p, mmap_mode="r").shape[0])
    import h5py

    from scincl.io import EMBEDDINGS_DATASET, read_embeddings_h5

    try:
        with h5py.File(p, "r") as f:
            if EMBEDDINGS_DATASET not in f:
                read_embeddings_h5(p)
            return int(f[EMBEDDINGS_DATASET].shape[0])
    except OSError as exc:
        raise InputError(f"not a readable h5 file ({exc})", path=p) from None


def drop_self_matches(distances: np.ndarray, indices: np.ndarray, query_rows: np.ndarray,
                      k: int) -> Tuple[np.ndarray, np.ndarray]:
    """From a ``k + 1`` search, drop each query's own row (or the last hit when it is absent) -> ``k`` columns."""
    is_self = indices == np.asarray(query_rows)[:, None]
    has_self = is_self.any(axis=1)
    is_self[~has_self, -1] = True  # self not found (ties / approximate index): drop the farthest
    keep = ~is_self
    n = len(indices)
    return distances[keep].reshape(n, k), indices[keep].reshape(n, k)


def set_search_parameter(index, name: str, value: Any) -> None:
    """Set a faiss search-time parameter (e.g. ``nprobe`` of IVF, ``efSearch`` of HNSW) on any index."""
    faiss = _faiss()
    try:
        if is_gpu_index(index):
            faiss.GpuParameterSpace().set_index_parameter(index, name, value)
        else:
            faiss.ParameterSpace().set_index_parameter(index, name, value)
    except RuntimeError:
        raise InputError(f"index {type(index).__name__} has no search parameter {name!r}") from None
