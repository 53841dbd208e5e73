"""MP-BERT4CR fine-tuning (issue 43, deliverable 3): the groups of eqs. 1–2 from training contexts only, the
split by citing paper, and ``cli_pipeline.py finetune_citation_recommender`` on the demo contexts."""
from __future__ import annotations

import json

import pytest
import torch

from scincl.citrec.groups import GroupSampler, split_citing_papers
from scincl.citrec.sampling import draw_rng
from scincl.errors import InputError
from scincl.io import read_jsonl

CONTEXTS = [{"context_id": "s1:0:0", "citing_paper_id": "s1", "cited_ids": ["A", "B", "C"]},
            {"context_id": "s2:0:0", "citing_paper_id": "s2", "cited_ids": ["A", "B"]},
            {"context_id": "s3:0:0", "citing_paper_id": "s3", "cited_ids": ["D", "X"]}]  # X: no sentences


def test_groups_draw_cocited_positives_by_eq1_and_negatives_by_eq2():
    sampler = GroupSampler(CONTEXTS, has_text={"A", "B", "C", "D", "E"}, positives_count=1, negatives_count=4)
    assert (sampler.frequency("A", "B"), sampler.frequency("A", "C"), sampler.frequency("C", "D")) == (2, 1, 0)
    assert dict(sampler.counts) == {"A": 2, "B": 2, "C": 1, "D": 1}  # E is never cited: never a negative
    groups = sampler.groups(epoch=0)
    assert [(g.context["context_id"], g.positives[0]) for g in groups] == [
        ("s1:0:0", "A"), ("s1:0:0", "B"), ("s1:0:0", "C"), ("s2:0:0", "A"), ("s2:0:0", "B"), ("s3:0:0", "D")]
    for g in groups:
        assert len(g.positives) <= 2 and set(g.positives) <= set(g.context["cited_ids"])
        assert not set(g.negatives) & set(g.context["cited_ids"])
    assert groups[0].negatives == ["D"] and sorted(groups[-1].negatives) == ["A", "B", "C"]
    # eq. 1: for target A of s1, B (co-cited twice) is drawn with probability 2^.75 / (2^.75 + 1^.75)
    picks = [sampler.cocited(CONTEXTS[0], "A", draw_rng(seed, 0, "test", "x"))[0] for seed in range(3000)]
    assert picks.count("B") / len(picks) == pytest.approx(2 ** 0.75 / (2 ** 0.75 + 1), abs=0.03)
    # eq. 2: for s3, A and B (cited by 2 contexts) are drawn before C (1) in proportion count^.75
    one = GroupSampler(CONTEXTS, has_text={"A", "B", "C", "D"}, negatives_count=1)
    firsts = [one.negatives(CONTEXTS[2], draw_rng(seed, 0, "test", "y"))[0] for seed in range(3000)]
    assert firsts.count("C") / len(firsts) == pytest.approx(1 / (2 * 2 ** 0.75 + 1), abs=0.03)
    assert [g.positives for g in sampler.groups(1)] != [g.positives for g in sampler.groups(2)] or \
        [g.negatives for g in sampler.groups(1)] != [g.negatives for g in sampler.groups(3)]


def test_split_by_citing_paper_is_seeded_and_disjoint():
    ids = [f"p{i}" for i in range(50)]
    train, test = split_citing_papers(ids + ids[:10], 0.2, seed=0)
    assert len(test) == 10 and not set(train) & set(test) and sorted(train + test) == sorted(ids)
    assert split_citing_papers(reversed(ids), 0.2, seed=0) == (train, test)
    assert split_citing_papers(ids, 0.2, seed=1)[1] != test


def test_finetune_cli_trains_on_training_papers_only_and_saves_the_recommender(demo_contexts, demo_pretrained,
                                                                               demo_mb4r_triplet, tmp_path):
    from scincl.citrec.finetune import finetune_citation_recommender
    from scincl.citrec.hierarchical import CitationRecommender

    out = demo_mb4r_triplet.path  # the session's --loss triplet run, made by the CLI
    assert demo_mb4r_triplet.done.stdout.strip().endswith(str(out))
    split = json.loads((out / "split.json").read_text())
    contexts = read_jsonl(demo_contexts / "contexts.jsonl.gz")
    papers = {c["citing_paper_id"] for c in contexts}
    assert set(split["train"]) | set(split["test"]) == papers and not set(split["train"]) & set(split["test"])
    assert len(split["test"]) == round(0.2 * len(papers))
    assert json.loads((out / "test_papers.json").read_text()) == split["test"]  # --excluded_paper_ids of a baseline
    summary = json.loads((out / "finetune_summary.json").read_text())
    texts = {r["paper_id"] for r in read_jsonl(demo_contexts / "sentences.jsonl.gz")}
    assert summary["training_contexts"] == sum(1 for c in contexts if c["citing_paper_id"] in set(split["train"])
                                               and set(c["cited_ids"]) & texts)
    assert summary["settings"]["loss"] == "triplet"
    log = read_jsonl(out / "finetune_log.jsonl")
    assert [r["step"] for r in log] == [1, 2, 3] and log[0]["learning_rate"] == pytest.approx(1e-9)
    model = CitationRecommender.from_pretrained(out)
    assert model.manuscript_encoder.config.max_sentences == 8
    assert not torch.equal(model.manuscript_encoder.sentence_positions.weight,
                           model.citation_encoder.sentence_positions.weight)  # updated apart
    with pytest.raises(InputError, match="takes at most 8 sentences, the samples have up to 40"):
        # the paper's 30 / 40 sentences do not fit an 8-sentence encoder
        finetune_citation_recommender(str(demo_contexts), str(demo_pretrained.path), str(tmp_path / "x"))
