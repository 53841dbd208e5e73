"""The citation graph as the sparse matrices the spectral / random-projection embedders need.

Citations are read as an undirected, unweighted graph (the SciNCL kNN neighbourhood is symmetric:
a paper is near the papers it cites and those citing it). Node order is the sorted paper ids of
the training edges plus any further ids given (e.g. the test split's papers, so every paper PBG
would embed gets a row); papers without a training edge are isolated nodes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike


@dataclass
class Graph:
    """``ids[i]`` is node ``i``; ``adjacency`` is symmetric CSR (float32, ones), no self loops."""

    ids: np.ndarray
    adjacency: "object"  # scipy.sparse.csr_matrix

    @property
    def degrees(self) -> np.ndarray:
        return np.diff(self.adjacency.indptr).astype(np.float64)


def read_edges(path: PathLike):
    """``citing<TAB>cited`` pairs of a TSV (gzip ok, extra columns ignored) as a polars frame ``a, b`` (str)."""
    import polars as pl

    frame = pl.read_csv(str(path), separator="\t", has_header=False, columns=[0, 1],
                        schema_overrides=[pl.Utf8, pl.Utf8], quote_char=None)
    return frame.rename(dict(zip(frame.columns, ("a", "b"))))


def read_graph(train_edges: PathLike, extra_node_edges: Sequence[Optional[PathLike]] = ()) -> Graph:
    """The undirected graph of ``train_edges``; the papers of ``extra_node_edges`` become (maybe isolated) nodes.

    Ids are mapped to rows with polars (a sorted unique id table and two hash joins), so the string
    ids are held once in Arrow buffers, not as Python objects.
    """
    import polars as pl
    import scipy.sparse as sp

    edges = read_edges(train_edges)
    if edges.height == 0:
        raise InputError("no edges", path=train_edges)
    columns = [edges["a"], edges["b"]]
    for path in extra_node_edges:
        if path is not None:
            extra = read_edges(path)
            columns += [extra["a"], extra["b"]]
    ids = pl.concat(columns).unique().sort()
    table = pl.DataFrame({"id": ids, "row": np.arange(len(ids), dtype=np.int64)})
    coded = (edges.join(table, left_on="a", right_on="id").rename({"row": "i"})
             .join(table, left_on="b", right_on="id").rename({"row": "j"}))
    i, j = coded["i"].to_numpy(), coded["j"].to_numpy()
    keep = i != j
    i, j = i[keep], j[keep]
    n = len(ids)
    adjacency = sp.csr_matrix((np.ones(2 * len(i), dtype=np.float32), (np.concatenate([i, j]), np.concatenate([j, i]))),
                              shape=(n, n))
    adjacency.sum_duplicates()
    adjacency.data[:] = 1.0  # a citation in both directions is one undirected edge
    return Graph(ids=ids.to_numpy().astype(str), adjacency=adjacency)


def row_normalized(adjacency) -> "object":
    """``D^-1 A`` (the random-walk transition matrix); rows of isolated nodes stay zero."""
    import scipy.sparse as sp

    degrees = np.asarray(adjacency.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degrees, out=np.zeros_like(degrees), where=degrees > 0)
    return (sp.diags(inverse.astype(np.float32)) @ adjacency).tocsr()
