"""Fixtures of the citation-recommendation tests (``scincl/citrec/``): the demo corpus with full text and
its contexts, built once per session."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def demo_full_text(tmp_path_factory):
    """A 300-paper demo corpus with ``s2orc/full_text/`` (seed 0: the words of ``demo_tiny_bert``'s vocabulary)."""
    from scincl.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo_full_text"), papers=300, seed=0, full_text=True)


@pytest.fixture(scope="session")
def demo_contexts(demo_full_text, tmp_path_factory):
    """``get_citation_contexts`` of :func:`demo_full_text`: the folder with contexts/sentences/stats."""
    from scincl.citrec.stage import get_citation_contexts

    out = tmp_path_factory.mktemp("demo_contexts")
    get_citation_contexts(str(demo_full_text.full_text_dir), str(out), workers=1)
    return out
