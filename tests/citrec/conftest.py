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


@pytest.fixture(scope="session")
def demo_pretrained(demo_contexts, demo_tiny_bert, tmp_path_factory):
    """A hierarchical encoder pre-trained for 2 updates on :func:`demo_contexts` (8 sentences, 20 tokens)."""
    from scincl.citrec.pretrain import pretrain_hierarchical

    out = tmp_path_factory.mktemp("hibert") / "model"
    pretrain_hierarchical(str(demo_contexts), str(out), str(demo_tiny_bert), max_sentences=8, max_sentence_tokens=20,
                          max_steps=2, warmup_steps=1, learning_rate=1e-3, batch_size=2)
    return out


SMALL_SAMPLES = {"manuscript_supplemental_sentences": 4, "cited_fundamental_sentences": 2,
                 "cited_supplemental_sentences": 4}  # fit the 8 sentences of demo_pretrained


@pytest.fixture(scope="session")
def demo_mb4r(demo_contexts, demo_pretrained, tmp_path_factory):
    """:func:`demo_pretrained` fine-tuned for 3 updates (mpt-src-tgt) with samples that fit it."""
    from scincl.citrec.finetune import finetune_citation_recommender

    out = tmp_path_factory.mktemp("mb4r") / "model"
    finetune_citation_recommender(str(demo_contexts), str(demo_pretrained), str(out), max_steps=3, warmup_steps=1,
                                  learning_rate=1e-3, batch_size=2, **SMALL_SAMPLES)
    return out
