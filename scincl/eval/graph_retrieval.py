"""Citation-graph embeddings used directly as a retriever (OpenMSD Table 7 protocol for its teacher).

Held-out pairs (``citing<TAB>cited``, e.g. the test split that BigGraph never trained on, or
co-citation pairs) define the relevance: each citing paper is a query and the papers it cites are
relevant. Every paper with an embedding is in the pool; MAP (full ranking) and nDCG@10 come from
:func:`scincl.eval.retrieval.full_pool_retrieval`.
"""
from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any, Dict, Optional, Set

from scincl.errors import InputError
from scincl.graph.citations import read_citations_tsv
from scincl.io import PathLike, entity_names_path, read_embeddings_matrix, read_id_list, write_json
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


def relevance_from_pairs(pairs_path: PathLike, known_ids: Set[str]) -> Dict[str, Any]:
    """``{query: set(relevant)}`` from a pairs TSV, keeping pairs whose two papers have embeddings.

    Returns ``{"relevant": ..., "pairs": n, "skipped_pairs": n}`` (skipped = a paper without embedding
    or a self-pair).
    """
    relevant: Dict[str, Set[str]] = {}
    pairs = skipped = 0
    for citing, cited in read_citations_tsv(pairs_path):
        pairs += 1
        if citing == cited or citing not in known_ids or cited not in known_ids:
            skipped += 1
            continue
        relevant.setdefault(citing, set()).add(cited)
    if pairs == 0:
        raise InputError("no pairs in file", path=pairs_path)
    return {"relevant": relevant, "pairs": pairs, "skipped_pairs": skipped}


@writes("output_path")
def evaluate_graph_retrieval(embeddings_path: PathLike, pairs_path: PathLike, output_path: Optional[PathLike] = None,
                             paper_ids_path: Optional[PathLike] = None, metric: str = "cosine", k: int = 10,
                             max_queries: Optional[int] = None, seed: int = 0) -> Dict[str, Any]:
    """Graph embeddings used directly as a retriever on held-out citation (or co-citation) pairs.

    python cli_graph.py evaluate_graph_retrieval out/embeddings.h5 citations.test.tsv --output_path retrieval.json

    Each citing paper of PAIRS_PATH (citing<TAB>cited, e.g. the test split BigGraph never saw) is a
    query; its cited papers are the relevant ones; the pool is every paper with an embedding
    (OpenMSD Table 7 protocol: MAP and nDCG@10 over the whole pool, self excluded). Pairs with a
    paper without embedding are counted and skipped. --max_queries samples queries with --seed.
    --paper_ids_path: the embeddings' ids (default: entity_names_paper_id_0.json beside them).
    Returns MAP / nDCG@k (×100), also written to --output_path as JSON when given.
    """
    from scincl.eval.retrieval import full_pool_retrieval

    ids_path = Path(paper_ids_path) if paper_ids_path else entity_names_path(Path(embeddings_path).parent)
    paper_ids = read_id_list(ids_path)
    embeddings = read_embeddings_matrix(embeddings_path)
    if len(paper_ids) != len(embeddings):
        raise InputError(f"{len(embeddings)} embedding rows but {len(paper_ids)} paper ids in {ids_path}",
                         path=embeddings_path)
    rel = relevance_from_pairs(pairs_path, set(paper_ids))
    queries = sorted(rel["relevant"])
    if not queries:
        raise InputError("no pair has both papers in the embeddings (nothing to evaluate)", path=pairs_path)
    if max_queries and len(queries) > int(max_queries):
        queries = sorted(random.Random(seed).sample(queries, int(max_queries)))
    logger.info("graph retrieval: %d queries, %d pairs (%d skipped: paper without embedding or self-pair), pool %d",
                len(queries), rel["pairs"], rel["skipped_pairs"], len(paper_ids))
    metrics = full_pool_retrieval(queries, rel["relevant"], paper_ids, embeddings, metric=metric, k=int(k),
                                  exclude_self=True)
    result = {"metrics": metrics, "pairs": rel["pairs"], "skipped_pairs": rel["skipped_pairs"],
              "pool": len(paper_ids), "metric": metric, "k": int(k), "embeddings_path": str(embeddings_path),
              "pairs_path": str(pairs_path)}
    if output_path is not None:
        write_json(output_path, result)
    return result
