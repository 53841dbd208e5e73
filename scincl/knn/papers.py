"""k-NN of papers in a FAISS index, addressed by paper id: the ``cli_graph.py`` commands ``build_faiss`` and ``get_knn``."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

from scincl.knn import ann
from scincl.errors import InputError
from scincl.graph.id_table import IdTable
from scincl.io import PathLike, entity_names_path, read_id_list, write_id_list, write_json
from scincl.provenance import OutputRecord
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


@dataclass
class KnnResult:
    """Neighbours of ``query_ids`` (row i of each array = query i), nearest first."""

    query_ids: List[str]
    distances: np.ndarray  # float32 [n, k]
    indices: np.ndarray  # int64 [n, k], rows of the index


def query_vectors(index, index_ids: Sequence[str], query_ids: Sequence[str],
                  embeddings_path: Optional[PathLike] = None, paper_ids_path: Optional[PathLike] = None) -> np.ndarray:
    """Vectors of ``query_ids``: from an embeddings file when given, else reconstructed from the index."""
    if embeddings_path is not None:
        from pathlib import Path

        ids_path = paper_ids_path or entity_names_path(Path(embeddings_path).parent)
        rows, _ = ann.select_rows(IdTable.read(ids_path), query_ids)
        return ann.read_embedding_rows(embeddings_path, rows)
    rows, _ = ann.select_rows(index_ids, query_ids)
    cpu_index = ann.index_to_cpu(index)
    try:
        return np.stack([cpu_index.reconstruct(int(r)) for r in rows]).astype(np.float32)
    except RuntimeError:
        raise InputError("this index type cannot return its stored vectors; pass --embeddings_path") from None


def knn_for_papers(index, index_ids: Sequence[str], k: int, query_paper_ids: Optional[PathLike] = None,
                   embeddings_path: Optional[PathLike] = None, paper_ids_path: Optional[PathLike] = None,
                   batch_size: int = ann.DEFAULT_SEARCH_BATCH_SIZE, exclude_self: bool = True, nprobe: Optional[int] = None,
                   normalize: bool = False) -> KnnResult:
    """k nearest index rows for each query paper (default: every paper of the index).

    With ``exclude_self`` a query that is itself in the index does not count as its own neighbour.
    ``normalize`` L2-normalises the query vectors (use it when the index was built normalised).
    """
    query_ids = read_id_list(query_paper_ids) if query_paper_ids else list(index_ids)
    if not query_ids:
        raise InputError("no query paper ids", path=query_paper_ids)
    if nprobe is not None:
        ann.set_search_parameter(index, "nprobe", int(nprobe))
    vectors = query_vectors(index, index_ids, query_ids, embeddings_path, paper_ids_path)
    if not exclude_self:
        distances, indices = ann.knn_search(index, vectors, k, batch_size=batch_size, normalize=normalize)
        return KnnResult(list(query_ids), distances, indices)
    if k + 1 > index.ntotal:
        raise InputError(f"k={k} (+1 for the query itself) is larger than the index ({index.ntotal} vectors)")
    position = {pid: row for row, pid in enumerate(index_ids)}
    self_rows = np.asarray([position.get(q, -1) for q in query_ids], dtype=np.int64)
    distances, indices = ann.knn_search(index, vectors, k + 1, batch_size=batch_size, normalize=normalize)
    distances, indices = ann.drop_self_matches(distances, indices, self_rows, k)
    logger.info("knn: %d queries x k=%d (self excluded)", len(query_ids), k)
    return KnnResult(list(query_ids), distances, indices)


@writes("index_path")
def build_faiss(embeddings_path: str, index_path: str, string_factory: str = "Flat", metric: str = "inner_product",
                do_normalize: bool = False, paper_ids: Optional[str] = None, include_paper_ids: Optional[str] = None,
                allow_unknown_ids: bool = False, batch_size: int = 512, workers: Optional[int] = None,
                device: int = -1, train_size: Optional[int] = None, seed: int = 0, override: bool = False) -> dict:
    """Build a FAISS index over graph embeddings (the kNN space of SciNCL's sampling).

    python cli_graph.py build_faiss embeddings.h5 Flat.faiss --string_factory Flat \\
        --paper_ids entity_names_paper_id_0.json --include_paper_ids train_paper_ids.json \\
        --do_normalize --batch_size 512 --workers 4 --device 0

    EMBEDDINGS_PATH: .h5 (dataset `embeddings`) or .npy; --paper_ids: its row order (default:
    entity_names_paper_id_0.json next to it). --include_paper_ids: index only these papers (in this
    order; unknown ids are an error unless --allow_unknown_ids). --string_factory: any faiss
    index-factory string (Flat, IVF16384_HNSW32,Flat, HNSW32, ...); IVF/PQ train on --train_size
    sampled vectors. --metric inner_product|l2|cosine. --device -1 or a faiss without GPUs -> CPU.
    Writes INDEX_PATH, INDEX_PATH.paper_ids.json (row -> paper id) and INDEX_PATH.faiss_config.json.
    An existing index is reused only when its faiss_config.json records the same inputs (fingerprints
    of the embeddings, ids and include list) and settings; otherwise one error line names the
    difference, unless --override (rebuild).
    """
    ids_path = Path(paper_ids) if paper_ids else entity_names_path(Path(embeddings_path).parent)
    factory = ",".join(map(str, string_factory)) if isinstance(string_factory, (list, tuple)) else string_factory
    record = OutputRecord(index_path, ann.index_ids_path(index_path), command="build_faiss", settings={
        "string_factory": factory, "metric": metric, "do_normalize": bool(do_normalize or metric == "cosine"),
        "train_size": train_size, "seed": int(seed), "allow_unknown_ids": bool(allow_unknown_ids)},
        inputs=[embeddings_path, ids_path, include_paper_ids], record_file=ann.index_config_path(index_path),
        key="made_by")
    if record.reusable(override):
        return {"index_path": str(index_path), "paper_ids_path": str(ann.index_ids_path(index_path))}
    all_ids = IdTable.read(ids_path)  # the whole graph's ids: no Python object per paper (issue 45)
    rows_in_file = ann.embedding_row_count(embeddings_path)
    if rows_in_file != len(all_ids):
        raise InputError(f"{rows_in_file} embedding rows but {len(all_ids)} paper ids in {ids_path}",
                         path=embeddings_path)
    subset = read_id_list(include_paper_ids) if include_paper_ids else None
    rows, index_ids = ann.select_rows(all_ids, subset, allow_unknown_ids=allow_unknown_ids, source=ids_path)
    vectors = ann.RowsOnDisk(embeddings_path, rows, ann.embedding_dimension(embeddings_path))  # read in chunks
    index = ann.build_index(vectors, string_factory=string_factory, metric=metric, do_normalize=do_normalize,
                            device=int(device), batch_size=int(batch_size), workers=workers,
                            train_sample_size=train_size, seed=int(seed))
    ann.write_index(index, index_path, index_ids, build_info={
        "string_factory": factory, "do_normalize": bool(do_normalize or metric == "cosine"), "metric_arg": metric,
        "embeddings_path": str(embeddings_path), "paper_ids": str(ids_path),
        "include_paper_ids": str(include_paper_ids) if include_paper_ids else None,
        "train_size": train_size, "seed": int(seed), "device": int(device), "batch_size": int(batch_size)})
    record.write()  # last: the index and its ids are complete
    return {"index_path": str(index_path), "paper_ids_path": str(ann.index_ids_path(index_path)),
            "rows": len(index_ids)}


@writes("output_dir")
def get_knn(index_path: str, output_dir: str, k: int = 10, query_paper_ids: Optional[str] = None,
            embeddings_path: Optional[str] = None, paper_ids: Optional[str] = None, batch_size: int = 4096,
            exclude_self: bool = True, nprobe: Optional[int] = None, workers: Optional[int] = None,
            device: int = -1, write_ids: bool = True) -> dict:
    """Batched k-nearest-neighbour search of an index built by build_faiss.

    python cli_graph.py get_knn Flat.faiss knn/ --k 25 --query_paper_ids queries.json

    Queries: --query_paper_ids (default: every paper of the index); their vectors come from
    --embeddings_path/--paper_ids when given, else from the index itself (Flat/HNSW store them).
    --exclude_self drops a query's own row from its neighbours. --nprobe for IVF indexes.
    --batch_size: queries per faiss call (4096 = faiss' own block; smaller saves memory, costs passes).
    Writes OUTPUT_DIR/knn_distances.npy (float32 [n, k]; similarity for inner product, squared L2
    otherwise), knn_indices.npy (int64 index rows), knn_ids.npy (paper ids, unless --write_ids=False)
    and knn_query_ids.json.
    """
    index, index_ids = ann.read_index(index_path, device=int(device))
    with ann.faiss_threads(workers):
        result = knn_for_papers(index, index_ids, k=int(k), query_paper_ids=query_paper_ids,
                                embeddings_path=embeddings_path, paper_ids_path=paper_ids, batch_size=int(batch_size),
                                exclude_self=exclude_self, nprobe=nprobe,
                                normalize=bool(ann.read_index_config(index_path).get("do_normalize", False)))
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "knn_distances.npy", result.distances)
    np.save(out / "knn_indices.npy", result.indices)
    if write_ids:
        np.save(out / "knn_ids.npy", np.asarray(index_ids)[result.indices])
    write_id_list(out / "knn_query_ids.json", result.query_ids)
    write_json(out / "knn_manifest.json", {"index_path": str(index_path), "k": int(k), "queries": len(result.query_ids),
                                          "exclude_self": exclude_self, "nprobe": nprobe})
    return {"output_dir": str(out), "queries": len(result.query_ids), "k": int(k)}
