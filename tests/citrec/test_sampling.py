"""Dynamic context sampling (issue 43, deliverable 2; MP-BERT4CR §4.1.1): the fundamental context is always
there, supplemental sentences come only from before it (manuscript) or from the body (cited paper), draws are
seeded and new each epoch. The checks are run on the real sampler AND on deliberately broken ones, which
they must reject: a sampler drawing after the context, dropping a fundamental sentence, drawing a cited
paper's supplemental sentences from its abstract, or drawing the same sentences every epoch."""
from __future__ import annotations

import hashlib
import json
from typing import List

import numpy as np
import pytest

from scincl.citrec import sampling
from scincl.citrec.sampling import ContextSampler, ContextSamplingSettings, PaperText, load_paper_texts
from scincl.errors import InputError
from scincl.io import read_jsonl
from tests.conftest import run_front_end

PAPER = ContextSamplingSettings()


def check_manuscript(sampler: ContextSampler, context: dict, epoch: int) -> None:
    """One manuscript sample against §4.1.1: the whole window, then supplemental sentences only from before it."""
    paper = sampler.texts[context["citing_paper_id"]]
    sample = sampler.manuscript(context, epoch)
    a, s, w = len(paper.abstract), context["sentence"], sampler.settings.manuscript_window
    window = list(range(a + max(0, s - w), a + min(len(paper.body), s + w + 1)))
    fundamental = [p for p, f in zip(sample.positions, sample.fundamental) if f]
    supplemental = [p for p, f in zip(sample.positions, sample.fundamental) if not f]
    assert fundamental == window, f"fundamental context incomplete: {fundamental} != {window}"
    assert all(p < window[0] for p in supplemental), f"supplemental not before the context: {supplemental} {window}"
    assert len(supplemental) == min(sampler.settings.manuscript_supplemental_sentences, window[0])
    assert sample.positions == sorted(set(sample.positions))  # document order, no repeats
    assert sample.sentences == [paper.content[p] for p in sample.positions]
    assert paper.body[s] in sample.sentences


def check_cited(sampler: ContextSampler, paper_id: str, epoch: int) -> None:
    """One cited-paper sample: its first abstract sentences, then supplemental sentences only from its body."""
    paper = sampler.texts[paper_id]
    sample = sampler.cited(paper_id, epoch)
    a = len(paper.abstract)
    fundamental = [p for p, f in zip(sample.positions, sample.fundamental) if f]
    supplemental = [p for p, f in zip(sample.positions, sample.fundamental) if not f]
    assert fundamental == list(range(min(a, sampler.settings.cited_fundamental_sentences)))
    assert all(a <= p < a + len(paper.body) for p in supplemental), f"cited supplemental not from the body: {supplemental}"
    assert len(supplemental) == min(sampler.settings.cited_supplemental_sentences, len(paper.body))
    assert sample.sentences == [paper.content[p] for p in sample.positions]


def check_redrawn_per_epoch(sampler: ContextSampler, contexts: List[dict]) -> None:
    """Epochs draw other supplemental sentences where there is a choice; the same epoch draws the same."""
    choice = [c for c in contexts
              if sampler.manuscript_fundamental(sampler.texts[c["citing_paper_id"]], c["sentence"])[0]
              > sampler.settings.manuscript_supplemental_sentences]
    assert len(choice) >= 20
    first = [sampler.manuscript(c, 0).positions for c in choice]
    assert first == [sampler.manuscript(c, 0).positions for c in choice]
    changed = sum(p != q for p, q in zip(first, (sampler.manuscript(c, 1).positions for c in choice)))
    assert changed >= 0.8 * len(choice), f"not redrawn per epoch: {changed} of {len(choice)} changed"


def check_all(sampler: ContextSampler, contexts: List[dict]) -> None:
    for epoch in (0, 1):
        for context in contexts:
            check_manuscript(sampler, context, epoch)
            for paper_id in context["cited_ids"]:
                if paper_id in sampler.texts:
                    check_cited(sampler, paper_id, epoch)
    check_redrawn_per_epoch(sampler, contexts)


@pytest.fixture(scope="module")
def demo_texts(demo_contexts):
    return (load_paper_texts(read_jsonl(demo_contexts / "sentences.jsonl.gz")),
            read_jsonl(demo_contexts / "contexts.jsonl.gz"))


def small() -> ContextSamplingSettings:
    """Sizes the 30-odd-sentence demo papers leave a choice in (the paper's 27 / 30 would take them whole)."""
    return ContextSamplingSettings(manuscript_supplemental_sentences=6, cited_fundamental_sentences=2,
                                   cited_supplemental_sentences=5)


def test_paper_defaults_and_hand_computed_draws():
    assert (PAPER.manuscript_fundamental_sentences, PAPER.manuscript_supplemental_sentences,
            PAPER.cited_fundamental_sentences, PAPER.cited_supplemental_sentences) == (3, 27, 10, 30)
    paper = PaperText(abstract=["a0.", "a1."], body=[f"b{i}." for i in range(10)])
    sampler = ContextSampler({"p": paper}, ContextSamplingSettings(3, 4, 1, 3), seed=5)
    sample = sampler.manuscript({"context_id": "p:5:0", "citing_paper_id": "p", "sentence": 5}, epoch=0)
    assert sample.positions[-3:] == [6, 7, 8] and sample.sentences[-3:] == ["b4.", "b5.", "b6."]
    assert sample.fundamental == [False] * 4 + [True] * 3 and set(sample.positions[:4]) <= set(range(6))
    rng = np.random.default_rng([5, 0, int.from_bytes(hashlib.blake2b(b"manuscript\0p:5:0", digest_size=8).digest(),
                                                      "little")])
    assert sample.positions[:4] == sorted(rng.choice(6, size=4, replace=False).tolist())  # seed, epoch, context id
    first = sampler.manuscript({"context_id": "p:0:0", "citing_paper_id": "p", "sentence": 0}, epoch=0)
    assert first.sentences == ["a0.", "a1.", "b0.", "b1."] and first.fundamental == [False, False, True, True]
    cited = sampler.cited("p", epoch=3)
    assert cited.positions[0] == 0 and cited.fundamental == [True, False, False, False]
    assert all(2 <= p < 12 for p in cited.positions[1:])
    with pytest.raises(InputError, match="no sentences for paper 'q'"):
        sampler.cited("q", 0)
    with pytest.raises(InputError, match="--manuscript_fundamental_sentences 4: must be odd"):
        ContextSamplingSettings(manuscript_fundamental_sentences=4)
    with pytest.raises(InputError, match="cited_supplemental_sentences"):
        ContextSamplingSettings(cited_supplemental_sentences=-1)


@pytest.mark.parametrize("settings", [PAPER, small()], ids=["paper", "small"])
def test_sampler_keeps_the_fundamental_context_and_draws_only_where_allowed(demo_texts, settings):
    texts, contexts = demo_texts
    check_all(ContextSampler(texts, settings, seed=0), contexts)


class DrawsAfterTheContext(ContextSampler):
    def manuscript_pool(self, paper, fundamental):
        return [p for p in range(len(paper.content)) if p not in fundamental]


class DropsTheSentenceAfter(ContextSampler):
    def manuscript_fundamental(self, paper, sentence):
        return super().manuscript_fundamental(paper, sentence)[:2]


class DrawsCitedFromTheAbstract(ContextSampler):
    def cited_pool(self, paper):
        return list(range(len(paper.content)))


@pytest.mark.parametrize("broken,why", [(DrawsAfterTheContext, "supplemental not before the context"),
                                        (DropsTheSentenceAfter, "fundamental context incomplete"),
                                        (DrawsCitedFromTheAbstract, "cited supplemental not from the body")])
def test_the_checks_reject_a_broken_sampler(demo_texts, broken, why):
    texts, contexts = demo_texts
    with pytest.raises(AssertionError, match=why):
        check_all(broken(texts, small(), seed=0), contexts)


def test_the_checks_reject_a_sampler_that_ignores_the_epoch(demo_texts, monkeypatch):
    texts, contexts = demo_texts
    real = sampling.draw_rng
    monkeypatch.setattr(sampling, "draw_rng", lambda seed, epoch, role, item: real(seed, 0, role, item))
    with pytest.raises(AssertionError, match="not redrawn per epoch"):
        check_redrawn_per_epoch(ContextSampler(texts, small(), seed=0), contexts)


def test_cli_writes_one_epoch_seeded_and_redrawn(demo_contexts, tmp_path, caplog):
    from scincl.citrec.samples import sample_citation_contexts

    flags = ["--manuscript_supplemental_sentences", "6", "--cited_supplemental_sentences", "5"]
    sizes = {"manuscript_supplemental_sentences": 6, "cited_supplemental_sentences": 5}
    out0, out1 = tmp_path / "e0.jsonl.gz", tmp_path / "e1.jsonl.gz"
    run_front_end("cli_triples.py", "sample_citation_contexts", demo_contexts, out0, *flags, check=True)
    sample_citation_contexts(str(demo_contexts), str(out1), epoch=1, **sizes)  # the library call the CLI makes
    rows0, rows1 = read_jsonl(out0), read_jsonl(out1)
    contexts = read_jsonl(demo_contexts / "contexts.jsonl.gz")
    assert [r["context_id"] for r in rows0] == [c["context_id"] for c in contexts] == [r["context_id"] for r in rows1]
    assert all(len(r["manuscript"]["sentences"]) <= 9 and sum(r["manuscript"]["fundamental"]) in (2, 3) for r in rows0)
    assert sum(r["manuscript"] != s["manuscript"] for r, s in zip(rows0, rows1)) > len(rows0) // 2
    stats = json.loads((tmp_path / "e0.stats.json").read_text())
    assert stats["contexts"] == len(contexts) and stats["cited_samples"] + stats["cited_without_sentences"] == sum(
        len(c["cited_ids"]) for c in contexts)
    before = out0.read_bytes()
    with caplog.at_level("INFO"):
        sample_citation_contexts(str(demo_contexts), str(out0), **sizes)
    assert "reusing it" in caplog.text and out0.read_bytes() == before
    bad = run_front_end("cli_triples.py", "sample_citation_contexts", demo_contexts, tmp_path / "x.jsonl",
                        "--manuscript_fundamental_sentences", "2")
    assert bad.returncode == 2 and "must be odd" in bad.stderr and "Traceback" not in bad.stderr
