"""The multi-positive groups format (jsonl), shared by the groups sampler and the training reader.

One group per line::

    {"query_paper_id": s, "positives": [t, c1, c2, ...], "negatives": [n1, n2, ...]}

For MP-BERT4CR groups (:mod:`scincl.triples.cocitation`) ``s`` is the citing (source) paper, the
**first positive is the target** ``t`` (a paper ``s`` cites) and the others are papers co-cited
with ``t``. Files written before this format used the key ``"query"`` for ``s``; readers accept
both. A group becomes triplets by pairing the i-th positive with the i-th negative, the shorter
list cycling (:func:`group_triplets`), so a triples CSV and its groups train triplet losses alike.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

QUERY_KEY = "query_paper_id"
LEGACY_QUERY_KEY = "query"  # groups files written before the MP-BERT4CR groups sampler
POSITIVES_KEY = "positives"
NEGATIVES_KEY = "negatives"


def group_record(query: str, positives: Sequence[str], negatives: Sequence[str]) -> Dict[str, Any]:
    """One jsonl record of a group (first positive = the target)."""
    return {QUERY_KEY: query, POSITIVES_KEY: list(positives), NEGATIVES_KEY: list(negatives)}


def group_query(record: Mapping[str, Any]) -> Optional[Any]:
    """The query (source) paper id of a record, under the current or the legacy key."""
    value = record.get(QUERY_KEY)
    return record.get(LEGACY_QUERY_KEY) if value in (None, "") else value


def group_members(record: Any, path: Any = None, line: Optional[int] = None) -> Tuple[str, List[str], List[str]]:
    """``(query, positives, negatives)`` of one groups-file record, every id canonical
    (:func:`scincl.ids.canonical_id`); a record that is not a group is an InputError naming file and line."""
    from scincl.errors import InputError
    from scincl.ids import canonical_id, canonical_ids

    if not isinstance(record, dict):
        raise InputError(f"expected an object {{{QUERY_KEY}, positives, negatives}}", path=path, line=line)
    query = group_query(record)
    if query in (None, ""):
        raise InputError(f"group without '{QUERY_KEY}'", path=path, line=line, field=QUERY_KEY)
    members = []
    for name in (POSITIVES_KEY, NEGATIVES_KEY):
        value = record.get(name)
        if not isinstance(value, list) or not value:
            raise InputError(f"'{name}' must be a non-empty list of paper ids", path=path, line=line, field=name)
        members.append(canonical_ids(value, path, line, name))
    return canonical_id(query, path, line, QUERY_KEY), members[0], members[1]


def group_triplets(query: str, positives: Sequence[str], negatives: Sequence[str]) -> Iterator[Tuple[str, str, str]]:
    """``(query, positive_i, negative_i)`` for i < max(P, N), the shorter list cycling.

    >>> list(group_triplets("s", ["t", "c"], ["x", "y", "z"]))
    [('s', 't', 'x'), ('s', 'c', 'y'), ('s', 't', 'z')]
    """
    for i in range(max(len(positives), len(negatives))):
        yield query, positives[i % len(positives)], negatives[i % len(negatives)]


__all__: List[str] = ["LEGACY_QUERY_KEY", "NEGATIVES_KEY", "POSITIVES_KEY", "QUERY_KEY", "group_query",
                      "group_record", "group_triplets"]
