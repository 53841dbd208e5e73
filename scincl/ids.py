"""One form for every paper id (issue 41): the reduction every reader of ids applies.

A paper id reaches the pipeline from corpus records (S2ORC, S2AG, OpenAlex, plain), id lists
(``--excluded_paper_ids``, ``--scidocs_paper_ids``, include lists), mappings, triplets, qrels and
SciDocs metadata. If one reader kept ``" 280951694 "`` and another ``"280951694"``, an evaluation
paper would pass the leakage guard as a stranger. So every reader calls :func:`canonical_id`:

- an integer becomes its decimal string; a string loses its surrounding whitespace and an
  OpenAlex URL prefix (``https://openalex.org/W1`` -> ``W1``, the adapters' form);
- an empty id, an id with whitespace or a control character inside, and any other type (a
  float, a boolean, null, a list) is refused: :class:`~scincl.errors.InputError` naming the file
  and line (or item) from the caller.

:func:`check_id_coverage` is the other half: a list of ids of which none (or only a few) occur
in the corpus is itself a finding, refused (none) or warned about with counts (few).
"""
from __future__ import annotations

import logging
import reprlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scincl.errors import InputError

logger = logging.getLogger(__name__)

OPENALEX_ID_PREFIX = "https://openalex.org/"
# below this share of a listed id set found in the corpus, the log and the stats carry a warning
FEW_IDS_MATCHED_SHARE = 0.5


def id_problem(value: Any) -> Optional[str]:
    """Why ``value`` cannot be a paper id, or None (see :func:`canonical_id`)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return f"{reprlib.repr(value)} is not a paper id (a string or an integer)"
    if isinstance(value, int):
        return None
    text = value.strip()
    if not text:
        return "an empty paper id"
    if " " in text or not text.isprintable():
        return f"paper id {value!r} holds whitespace or a control character"
    return None


def canonical_id(value: Any, path: Any = None, line: Optional[int] = None, field: Optional[str] = None) -> str:
    """``value`` as the one canonical paper id; a value that cannot be one is an InputError at ``path:line``."""
    if type(value) is str and value and value.isprintable() and " " not in value \
            and not value.startswith(OPENALEX_ID_PREFIX):
        return value  # the common case: already canonical
    problem = id_problem(value)
    if problem is not None:
        raise InputError(problem, path=path, line=line, field=field)
    text = str(value).strip()
    return text[len(OPENALEX_ID_PREFIX):] if text.startswith(OPENALEX_ID_PREFIX) else text


_CONTROL_BYTES = bytes(range(32)) + b"\x7f"


def _printable(text: str) -> bool:
    """``text.isprintable()``, faster for ASCII text (the usual ids): no control byte."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _CONTROL_BYTES)) == len(text)
    return text.isprintable()


def are_canonical(values: Sequence[Any]) -> bool:
    """True when every item of a list is already a canonical string id (C-speed checks, no Python loop)."""
    if type(values) is not list:
        return False
    try:
        joined = " ".join(values)
    except TypeError:
        return False
    return (_printable(joined) and joined.count(" ") == len(values) - 1 and "" not in values
            and OPENALEX_ID_PREFIX not in joined)


def are_canonical_lists(lists: Sequence[Sequence[str]]) -> bool:
    """:func:`are_canonical` over several lists of strings at once (the references of a block of records), joined
    list by list in C: an empty id shows as a doubled, leading or trailing separator, an id with a space as an extra
    one. A list holding a non-string fails the join (False: check item by item)."""
    lists = [ids for ids in lists if ids]
    if not lists:
        return True
    try:
        joined = " ".join(map(" ".join, lists))
    except TypeError:
        return False
    return (_printable(joined) and joined.count(" ") == sum(map(len, lists)) - 1 and "  " not in joined
            and joined[0] != " " and joined[-1] != " " and OPENALEX_ID_PREFIX not in joined)


def canonical_ids(values: Sequence[Any], path: Any = None, line: Optional[int] = None,
                  field: Optional[str] = None) -> List[str]:
    """Every item of ``values`` as :func:`canonical_id` (a list of clean strings is returned as it is)."""
    if are_canonical(values):
        return values  # type: ignore[return-value]
    return [canonical_id(v, path, line, field) for v in values]


def canonical_pair(key: Any, value: Any, path: Any = None, field: Optional[str] = None) -> Tuple[str, str]:
    """One ``{id: id}`` mapping entry with both ids canonical; a key or value that cannot be an id is an
    InputError naming both (issue 29: lists, objects and empty strings were written through)."""
    for side in (key, value):
        problem = id_problem(side)
        if problem is not None:
            raise InputError(f"id {reprlib.repr(key)} maps to {reprlib.repr(value)}: {problem}", path=path, field=field)
    return canonical_id(key), canonical_id(value)


def check_id_coverage(what: str, listed: int, matched: int, where: str) -> Dict[str, Any]:
    """Counts of a listed id set against the corpus; none found is an InputError, few a warning.

    ``what`` names the list (``excluded paper ids``), ``where`` the corpus (its folder). Returns
    ``{"listed", "in_corpus", "warning"}`` for the stats and the leakage report.
    """
    out: Dict[str, Any] = {"listed": listed, "in_corpus": matched, "warning": None}
    if listed and not matched:
        raise InputError(f"none of the {listed} {what} occurs in the corpus {where}: are they ids of this corpus, "
                         "in its own id form?")
    if listed and matched < FEW_IDS_MATCHED_SHARE * listed:
        out["warning"] = (f"only {matched} of the {listed} {what} occur in the corpus {where}: the others "
                          "cannot be excluded or included (ids of another corpus or form?)")
        logger.warning("%s", out["warning"])
    return out
