"""Collisions: paper pairs that are a positive *and* a negative pair in the training triples.

Two kinds are counted (paper §5, Fig. 5: the margin between k+ and k-hard controls them):

- ``collisions`` (directed): ``(q, x)`` with ``x`` a positive of query ``q`` in one triple and a
  negative of the same ``q`` in another (e.g. ``random`` easy negatives hitting a kNN positive).
- ``symmetric_collisions``: the unordered pair ``{a, b}`` is positive in one direction and negative
  in the other (``b`` is among ``a``'s positives, ``a`` among ``b``'s hard negatives). kNN is not
  symmetric, so this happens when k- is close to k+.

All counting is vectorised over integer pair keys.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from scincl.io import PathLike, iter_triples_csv
from scincl.output_lock import writes


def _pair_keys(a: np.ndarray, b: np.ndarray, n: int, symmetric: bool) -> np.ndarray:
    if symmetric:
        a, b = np.minimum(a, b), np.maximum(a, b)
    return a.astype(np.int64) * n + b.astype(np.int64)


def collision_counts(queries: np.ndarray, positives: np.ndarray, negatives: np.ndarray) -> Dict[str, int]:
    """Collision statistics of triples given as parallel integer arrays (corpus rows or codes)."""
    queries, positives, negatives = (np.asarray(x, dtype=np.int64) for x in (queries, positives, negatives))
    n = int(max(queries.max(initial=0), positives.max(initial=0), negatives.max(initial=0))) + 1
    out: Dict[str, int] = {"triples": int(len(queries)), "queries": int(np.unique(queries).size)}
    for prefix, symmetric in (("", False), ("symmetric_", True)):
        pos = _pair_keys(queries, positives, n, symmetric)
        neg = _pair_keys(queries, negatives, n, symmetric)
        both = np.intersect1d(pos, neg)
        hit = np.isin(pos, both) | np.isin(neg, both)
        out[f"{prefix}collisions"] = int(both.size)
        out[f"{prefix}collision_triples"] = int(hit.sum())
    out["self_pairs"] = int(((queries == positives) | (queries == negatives)).sum())
    return out


def encode_ids(*columns: Sequence[str]) -> Tuple[List[np.ndarray], np.ndarray]:
    """Integer codes for id columns (shared vocabulary) and the vocabulary itself."""
    sizes = [len(c) for c in columns]
    vocab, codes = np.unique(np.concatenate([np.asarray(c, dtype=str) for c in columns]), return_inverse=True)
    return list(np.split(codes.astype(np.int64), np.cumsum(sizes)[:-1])), vocab


def read_triples_columns(path: PathLike) -> Tuple[List[str], List[str], List[str]]:
    """The three columns of a triples CSV."""
    q, p, n = [], [], []
    for a, b, c in iter_triples_csv(path):
        q.append(a)
        p.append(b)
        n.append(c)
    return q, p, n


def count_collisions_in_files(paths: Iterable[PathLike]) -> Dict[str, Dict[str, int]]:
    """Collision statistics per triples file and, for several files, across all of them
    (a positive pair of one strategy that is a negative pair of another counts)."""
    paths = list(paths)
    columns = [read_triples_columns(p) for p in paths]
    report: Dict[str, Dict[str, int]] = {}
    for path, (q, p, n) in zip(paths, columns):
        (qc, pc, nc), _ = encode_ids(q, p, n)
        report[str(path)] = collision_counts(qc, pc, nc)
    if len(paths) > 1:
        q = [x for c in columns for x in c[0]]
        p = [x for c in columns for x in c[1]]
        n = [x for c in columns for x in c[2]]
        (qc, pc, nc), _ = encode_ids(q, p, n)
        report["all files"] = collision_counts(qc, pc, nc)
    return report


@writes("output_path")
def count_collisions(*triples_paths: str, output_path: Optional[str] = None) -> Dict[str, Dict[str, int]]:
    """Count pairs that are both positive and negative (same query, and symmetric {a,b}) in triples files.

    One file: collisions within it. Several files (e.g. one per strategy): each file, then all together
    (a positive pair of one file that is a negative pair of another counts). Prints a markdown table;
    --output_path writes the report as json.
    """
    from scincl.errors import InputError
    from scincl.io import write_json

    if not triples_paths:
        raise InputError("give at least one triples file")
    report = count_collisions_in_files(triples_paths)
    if output_path:
        write_json(output_path, report)
    return report


def format_collision_report(report: Dict[str, Dict[str, int]]) -> str:
    """A markdown table of :func:`count_collisions_in_files`' report."""
    cols = ["triples", "queries", "collisions", "collision_triples", "symmetric_collisions",
            "symmetric_collision_triples", "self_pairs"]
    lines = ["| file | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, stats in report.items():
        lines.append(f"| {name} | " + " | ".join(f"{stats.get(c, 0):,}" for c in cols) + " |")
    return "\n".join(lines)
