"""Choosing the query papers of a triple miner: all, a count, a ratio, or a JSON list of ids."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Dict, Optional, Sequence, Union

import numpy as np

from scincl.errors import InputError
from scincl.io import read_id_list

logger = logging.getLogger(__name__)

QueryPapers = Union[None, str, int, float, Sequence[str]]


def id_to_row(ids: Sequence[str]) -> Dict[str, int]:
    """``paper_id -> row`` for a list of ids; duplicated ids are an :class:`InputError`."""
    mapping = {str(pid): row for row, pid in enumerate(ids)}
    if len(mapping) != len(ids):
        raise InputError(f"the corpus id list has {len(ids) - len(mapping)} duplicated paper ids")
    return mapping


def rows_of_ids(ids: Sequence[str], mapping: Dict[str, int], what: str, source: Optional[str] = None) -> np.ndarray:
    """Rows of ``ids`` in ``mapping``; unknown ids are an :class:`InputError` naming how many and a few."""
    missing = [pid for pid in ids if pid not in mapping]
    if missing:
        examples = ", ".join(missing[:5])
        raise InputError(f"{len(missing)} of {len(ids)} {what} are not in the index/corpus (e.g. {examples})",
                         path=source)
    return np.fromiter((mapping[pid] for pid in ids), dtype=np.int64, count=len(ids))


def select_query_rows(query_papers: QueryPapers, corpus_ids: Sequence[str], seed: int = 0,
                      mapping: Optional[Dict[str, int]] = None) -> np.ndarray:
    """Corpus rows of the query papers (the paper samples queries from the training corpus, §4.1).

    ``query_papers`` is ``None``/``"all"`` (every corpus paper, in corpus order), an integer count
    or a ratio in ``(0, 1]`` (a uniform sample drawn with ``seed``, returned in corpus order), a
    path to a JSON list of paper ids, or such a list (its order is kept; duplicates are dropped).
    """
    n = len(corpus_ids)
    if n == 0:
        raise InputError("the corpus is empty: no papers to choose queries from")
    if isinstance(query_papers, str) and query_papers.strip().lower() in ("", "all"):
        query_papers = None
    if isinstance(query_papers, str):
        text = query_papers.strip()
        try:
            query_papers = int(text)
        except ValueError:
            try:
                query_papers = float(text)
            except ValueError:
                query_papers = text
    if query_papers is None:
        rows = np.arange(n, dtype=np.int64)
    elif isinstance(query_papers, bool):
        raise InputError(f"--query_papers must be a count, a ratio, a JSON id file or 'all', got {query_papers!r}")
    elif isinstance(query_papers, (int, np.integer)):
        count = int(query_papers)
        if count < 1 or count > n:
            raise InputError(f"--query_papers {count}: choose between 1 and the corpus size {n}")
        rows = np.sort(np.random.default_rng(seed).choice(n, size=count, replace=False))
    elif isinstance(query_papers, float):
        if not 0.0 < query_papers <= 1.0:
            raise InputError(f"--query_papers ratio must be in (0, 1], got {query_papers}")
        count = max(1, int(round(n * query_papers)))
        rows = np.sort(np.random.default_rng(seed).choice(n, size=count, replace=False))
    else:
        source = None
        if isinstance(query_papers, (str, Path)):
            source = str(query_papers)
            ids = read_id_list(query_papers)
        else:
            ids = [str(p) for p in query_papers]
        unique = list(dict.fromkeys(ids))
        if len(unique) < len(ids):
            logger.warning("query papers: dropped %d duplicated ids", len(ids) - len(unique))
        if not unique:
            raise InputError("the query paper list is empty", path=source)
        rows = rows_of_ids(unique, mapping if mapping is not None else id_to_row(corpus_ids), "query papers",
                           source)
    if rows.size == 0:
        raise InputError("no query papers selected")
    logger.info("query papers: %d of %d corpus papers", rows.size, n)
    return rows
