"""Edge-list utilities around BigGraph training: reverse edges, largest connected component, node ids.

All read and write ``citing<TAB>cited`` TSVs (gzip by ``.gz`` suffix; ``#`` comment lines skipped),
the format of ``citations.tsv`` (``cli_s2orc.py get_citations``) and of
``torchbiggraph_import_from_tsv --lhs-col=0 --rhs-col=1``.
"""
from __future__ import annotations

import logging
from typing import Dict, List, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.graph.citations import read_citations_tsv
from scincl.io import PathLike, atomic_open, write_id_list
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


@writes("output_path")
def make_edges_bidirectional(input_path: PathLike, output_path: PathLike, deduplicate: bool = False) -> Dict[str, int]:
    """Write every edge ``a -> b`` followed by its reverse ``b -> a`` (streaming; co-citations and other symmetric graphs).

    python cli_graph.py make_edges_bidirectional cocitations.tsv cocitations.bidirectional.tsv [--deduplicate]

    For symmetric relations (co-citation, bibliographic coupling) whose edge list holds one
    direction, so PBG learns both. Self-loops are written once. ``deduplicate`` drops repeated
    (directed) edges, e.g. when ``a`` cites ``b`` and ``b`` cites ``a``; it keeps a set of the seen
    edges, so its memory grows with the graph.
    """
    seen: set = set()
    counts = {"input_edges": 0, "output_edges": 0, "self_loops": 0, "duplicates_dropped": 0}
    with atomic_open(output_path) as out:
        for a, b in tqdm(read_citations_tsv(input_path), desc="bidirectional edges", unit="edge", disable=None):
            counts["input_edges"] += 1
            pairs = [(a, b)] if a == b else [(a, b), (b, a)]
            counts["self_loops"] += a == b
            for edge in pairs:
                if deduplicate:
                    if edge in seen:
                        counts["duplicates_dropped"] += 1
                        continue
                    seen.add(edge)
                out.write(f"{edge[0]}\t{edge[1]}\n")
                counts["output_edges"] += 1
    if counts["input_edges"] == 0:
        raise InputError("no edges in file", path=input_path)
    logger.info("bidirectional: %(input_edges)d edges in, %(output_edges)d out (%(self_loops)d self-loops, "
                "%(duplicates_dropped)d duplicates dropped)", counts)
    return counts


def _read_indexed_edges(input_path: PathLike) -> Tuple[List[str], np.ndarray]:
    """Node names in first-appearance order and the edges as an int ``[m, 2]`` array."""
    index: Dict[str, int] = {}
    pairs: List[int] = []
    for a, b in read_citations_tsv(input_path):
        pairs.append(index.setdefault(a, len(index)))
        pairs.append(index.setdefault(b, len(index)))
    if not pairs:
        raise InputError("no edges in file", path=input_path)
    return list(index), np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def connected_components(num_nodes: int, edges: np.ndarray) -> np.ndarray:
    """Component label per node (weakly connected: edge direction ignored), labels ordered by size.

    Label 0 is the largest component; ties are broken by the component's first node index.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as scipy_components

    adjacency = coo_matrix((np.ones(len(edges), dtype=np.int8), (edges[:, 0], edges[:, 1])),
                           shape=(num_nodes, num_nodes))
    _, labels = scipy_components(adjacency, directed=True, connection="weak")
    sizes = np.bincount(labels)
    first_node = np.full(len(sizes), num_nodes, dtype=np.int64)
    np.minimum.at(first_node, labels, np.arange(num_nodes))
    order = np.lexsort((first_node, -sizes))  # by size desc, then first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[labels]


@writes("output_path")
def get_largest_connected_subgraph(input_path: PathLike, output_path: PathLike, largest_n: int = 0) -> Dict[str, int]:
    """Keep the edges of the ``largest_n``-th largest (weakly) connected component (0 = the largest).

    python cli_graph.py get_largest_connected_subgraph citations.tsv largest/citations.tsv

    Edges keep their input order. Returns counts (components, nodes/edges kept and in total).
    """
    names, edges = _read_indexed_edges(input_path)
    labels = connected_components(len(names), edges)
    num_components = int(labels.max()) + 1
    if not 0 <= largest_n < num_components:
        raise InputError(f"largest_n={largest_n} but the graph has {num_components} connected component(s)")
    keep = labels[edges[:, 0]] == largest_n  # both ends share a component label
    with atomic_open(output_path) as out:
        for a, b in edges[keep]:
            out.write(f"{names[a]}\t{names[b]}\n")
    counts = {"components": num_components, "nodes": len(names), "edges": len(edges),
              "kept_nodes": int(np.sum(labels == largest_n)), "kept_edges": int(keep.sum())}
    logger.info("connected subgraph #%d: %d of %d nodes, %d of %d edges (%d components)", largest_n,
                counts["kept_nodes"], counts["nodes"], counts["kept_edges"], counts["edges"], num_components)
    return counts


@writes("output_path")
def extract_ids_in_graph(input_path: PathLike, output_path: PathLike) -> int:
    """Write the sorted unique paper ids that occur in an edge list as a JSON list; returns their number.

    python cli_graph.py extract_ids_in_graph citations.tsv graph_paper_ids.json
    """
    ids = set()
    for a, b in read_citations_tsv(input_path):
        ids.add(a)
        ids.add(b)
    if not ids:
        raise InputError("no edges in file", path=input_path)
    write_id_list(output_path, sorted(ids))
    logger.info("graph ids: %d unique paper ids -> %s", len(ids), output_path)
    return len(ids)
