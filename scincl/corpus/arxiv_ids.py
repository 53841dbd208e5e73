"""arXiv ids as the corpus formats spell them: the keys an id matches under, the id of a landing-page URL."""
from __future__ import annotations

from typing import List, Optional


def arxiv_keys(arxiv_id: Optional[str]) -> List[str]:
    """An arXiv id and, for old-style ids (``hep-th/0001001``), its number alone (``0001001``)."""
    if not arxiv_id:
        return []
    arxiv_id = arxiv_id.strip()
    return [arxiv_id, arxiv_id.rsplit("/", 1)[1]] if "/" in arxiv_id else [arxiv_id]


def arxiv_id_of_url(url: Optional[str]) -> Optional[str]:
    """The arXiv id of an ``arxiv.org/abs/…`` (or ``/pdf/…``) landing page, else None."""
    if not url or "arxiv.org/" not in url:
        return None
    for marker in ("/abs/", "/pdf/"):
        if marker in url:
            tail = url.split(marker, 1)[1].split("?")[0].rstrip("/")
            return tail[:-4] if tail.endswith(".pdf") else tail
    return None
