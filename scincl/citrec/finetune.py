"""``finetune_citation_recommender``: MP-BERT4CR's fine-tuning (§4.1, §5.2, Table 2) on citation contexts.

The citing papers are split into train / test (seeded; ``split.json``): groups (:mod:`scincl.citrec.groups`)
come from the training papers' contexts only. Every epoch draws new context samples
(:mod:`scincl.citrec.sampling`) and new co-cited positives and negatives; a batch of groups is encoded by
:class:`~scincl.citrec.hierarchical.CitationRecommender` (both encoders initialised from the pre-trained
one) and scored by the ``--loss`` objective. Table 2 / §5.2 defaults: batch 1, learning rate 2e-5 after a
warm-up from 1e-9 over 2,000 updates (inverse square root), Adam β₂ 0.98, weight decay 0.01, 2 epochs.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, Sequence

from scincl.citrec.groups import Group, GroupSampler, counts_table, split_citing_papers
from scincl.citrec.samples import PAPER_SAMPLING
from scincl.citrec.sampling import ContextSampler, ContextSamplingSettings, load_paper_texts
from scincl.citrec.stage import CONTEXTS_NAME, SENTENCES_NAME
from scincl.citrec.training import adam_with_inverse_sqrt, run_updates
from scincl.provenance import OutputRecord
from scincl.errors import InputError
from scincl.io import iter_jsonl, read_jsonl, write_id_list, write_json, write_jsonl
from scincl.triples.config import COCITATION_NEGATIVES_COUNT, COCITATION_POSITIVES_COUNT
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

SPLIT_NAME = "split.json"
TEST_PAPERS_NAME = "test_papers.json"  # the split's test citing papers as a JSON list: --excluded_paper_ids elsewhere
LOG_NAME = "finetune_log.jsonl"
DEFAULT_LOSS = "mpt-src-tgt"  # §4.1.5: "Mpt-src-tgt is set to be the default objective"
DEFAULT_TEST_RATIO = 0.2  # §5.1 Table 1: 40,000 / 10,000 (DBLP) train / test papers


def group_batch(groups: Sequence[Group], sampler: ContextSampler, epoch: int, tokenize) -> Dict[str, Any]:
    """The model inputs of a batch of groups: manuscripts, the distinct positives and negatives, index matrices."""
    import torch

    positives = list(dict.fromkeys(p for g in groups for p in g.positives))
    negatives = list(dict.fromkeys(n for g in groups for n in g.negatives))
    width_p = max(len(g.positives) for g in groups)
    width_n = max([len(g.negatives) for g in groups] + [1])
    positive_index = torch.tensor([[positives.index(p) for p in g.positives] + [-1] * (width_p - len(g.positives))
                                   for g in groups])
    negative_index = torch.tensor([[negatives.index(n) for n in g.negatives] + [-1] * (width_n - len(g.negatives))
                                   for g in groups])
    manuscripts = tokenize([sampler.manuscript(g.context, epoch).sentences for g in groups])
    cited = tokenize([sampler.cited(p, epoch).sentences for p in positives + negatives])
    k = len(positives)
    return {"manuscript_input_ids": manuscripts["input_ids"], "manuscript_attention_mask": manuscripts["attention_mask"],
            "positive_input_ids": cited["input_ids"][:k], "positive_attention_mask": cited["attention_mask"][:k],
            "negative_input_ids": cited["input_ids"][k:], "negative_attention_mask": cited["attention_mask"][k:],
            "positive_index": positive_index, "negative_index": negative_index}


@writes("output_dir")
def finetune_citation_recommender(
        contexts_dir: str, pretrained_dir: str, output_dir: str, loss: str = DEFAULT_LOSS,
        test_ratio: float = DEFAULT_TEST_RATIO, epochs: int = 2, batch_size: int = 1, learning_rate: float = 2e-5,
        warmup_learning_rate: float = 1e-9, warmup_steps: int = 2000, weight_decay: float = 0.01,
        adam_beta2: float = 0.98, max_steps: int = 0, positives_count: int = COCITATION_POSITIVES_COUNT,
        negatives_count: int = COCITATION_NEGATIVES_COUNT,
        manuscript_fundamental_sentences: int = PAPER_SAMPLING.manuscript_fundamental_sentences,
        manuscript_supplemental_sentences: int = PAPER_SAMPLING.manuscript_supplemental_sentences,
        cited_fundamental_sentences: int = PAPER_SAMPLING.cited_fundamental_sentences,
        cited_supplemental_sentences: int = PAPER_SAMPLING.cited_supplemental_sentences,
        seed: int = 0, override: bool = False) -> None:
    """Fine-tune MP-BERT4CR (manuscript encoder + shared citation encoder) on citation contexts; prints OUTPUT_DIR.

    Reads CONTEXTS_DIR/contexts.jsonl.gz and sentences.jsonl.gz (get_citation_contexts) and the pre-trained
    encoder PRETRAINED_DIR (pretrain_hierarchical); splits the citing papers into train / test by
    --test_ratio (OUTPUT_DIR/split.json: no test manuscript is trained on, and the co-citation and citation
    counts of eqs. 1-2 come from the training contexts only; OUTPUT_DIR/test_papers.json lists the test
    papers for --excluded_paper_ids of a baseline's training); writes the CitationRecommender
    (save_pretrained), its tokenizer and finetune_log.jsonl (loss and learning rate per update).

    Example:
        python cli_pipeline.py finetune_citation_recommender data/citrec/demo data/citrec/demo/hibert \\
            data/citrec/demo/mb4r --loss mpt-src-tgt --max_steps 20

    :param contexts_dir: output folder of get_citation_contexts
    :param pretrained_dir: output folder of pretrain_hierarchical (both encoders start from it)
    :param output_dir: the fine-tuned model folder
    :param loss: mpt-src-tgt (paper default), mpt-src, mpt-tgt or triplet (MB4R_triplet: eq. 3)
    :param test_ratio: share of citing papers held out for evaluation
    :param epochs: passes over the groups, each with new samples (paper: 2 on DBLP, 5 on ACL)
    :param batch_size: groups per update (paper §5.2: 1)
    :param learning_rate: peak learning rate (Table 2: 2e-5)
    :param warmup_learning_rate: learning rate of the first update (Table 2: 1e-9)
    :param warmup_steps: updates of linear warm-up (Table 2: 2,000 DBLP / 1,000 ACL)
    :param weight_decay: Adam's weight decay (Table 2: 0.01)
    :param adam_beta2: Adam's beta2 (Table 2: 0.98 for fine-tuning)
    :param max_steps: stop after this many updates (0: the epochs decide)
    :param positives_count: co-cited positives per group besides the target (paper: at most 3)
    :param negatives_count: negatives per group (paper: 4)
    :param manuscript_fundamental_sentences: see sample_citation_contexts (paper: 3)
    :param manuscript_supplemental_sentences: see sample_citation_contexts (paper: 27)
    :param cited_fundamental_sentences: see sample_citation_contexts (paper: 10)
    :param cited_supplemental_sentences: see sample_citation_contexts (paper: 30)
    :param seed: seed of the split, the draws and the batch order
    :param override: retrain although OUTPUT_DIR holds a run made from the same inputs and settings
    """
    import torch
    from transformers import AutoTokenizer

    from scincl.citrec.batches import tokenize_documents
    from scincl.citrec.hierarchical import CitationRecommender, HierarchicalEncoder
    from scincl.model.losses import LOSSES, build_loss

    if loss not in ("triplet", "mpt-tgt", "mpt-src", "mpt-src-tgt") or loss not in LOSSES:
        raise InputError(f"--loss {loss!r}: one of mpt-src-tgt, mpt-src, mpt-tgt, triplet")
    if not 0 <= float(test_ratio) < 1:
        raise InputError(f"--test_ratio {test_ratio}: must be in [0, 1)")
    sampling = ContextSamplingSettings(int(manuscript_fundamental_sentences), int(manuscript_supplemental_sentences),
                                       int(cited_fundamental_sentences), int(cited_supplemental_sentences))
    out, folder = Path(output_dir), Path(contexts_dir)
    settings = {"command": "finetune_citation_recommender", "loss": loss, "test_ratio": float(test_ratio),
                "epochs": int(epochs), "batch_size": int(batch_size), "learning_rate": float(learning_rate),
                "warmup_learning_rate": float(warmup_learning_rate), "warmup_steps": int(warmup_steps),
                "weight_decay": float(weight_decay), "adam_beta2": float(adam_beta2), "max_steps": int(max_steps),
                "positives_count": int(positives_count), "negatives_count": int(negatives_count),
                "seed": int(seed), **vars(sampling)}
    record = OutputRecord(out / "config.json", out / "model.safetensors", out / SPLIT_NAME, out / TEST_PAPERS_NAME,
                          out / LOG_NAME, command="finetune_citation_recommender", settings=settings,
                          inputs=[folder / CONTEXTS_NAME, folder / SENTENCES_NAME, pretrained_dir])
    if record.reusable(override):
        print(out)
        return
    encoder = HierarchicalEncoder.from_pretrained(pretrained_dir)
    longest = max(sampling.manuscript_fundamental_sentences + sampling.manuscript_supplemental_sentences,
                  sampling.cited_fundamental_sentences + sampling.cited_supplemental_sentences)
    if longest > encoder.config.max_sentences:
        raise InputError(f"the pre-trained encoder takes at most {encoder.config.max_sentences} sentences, the "
                         f"samples have up to {longest}; lower the *_sentences flags or pre-train with --max_sentences "
                         f"{longest}", path=pretrained_dir)
    tokenizer = AutoTokenizer.from_pretrained(pretrained_dir)
    texts = load_paper_texts(r for _, r in iter_jsonl(folder / SENTENCES_NAME))
    contexts = read_jsonl(folder / CONTEXTS_NAME)
    train_papers, test_papers = split_citing_papers((c["citing_paper_id"] for c in contexts), test_ratio, seed)
    train_set = set(train_papers)
    groups = GroupSampler([c for c in contexts if c["citing_paper_id"] in train_set], texts,
                          int(positives_count), int(negatives_count), seed=int(seed))
    context_sampler = ContextSampler(texts, sampling, seed=int(seed))
    config = encoder.config
    tokenize = lambda docs: tokenize_documents(tokenizer, docs, config.max_sentences, config.max_sentence_tokens)  # noqa: E731
    torch.manual_seed(int(seed))
    model = CitationRecommender.from_pretrained_encoder(encoder)
    loss_fn = build_loss(loss)
    optimizer, schedule = adam_with_inverse_sqrt(model, learning_rate, warmup_learning_rate, warmup_steps,
                                                 weight_decay, adam_beta2)
    generator = torch.Generator().manual_seed(int(seed))

    def batches(epoch: int):
        epoch_groups = groups.groups(epoch)
        if not epoch_groups:
            raise InputError("no training group: no training context cites a paper with sentences", path=folder)
        order = torch.randperm(len(epoch_groups), generator=generator).tolist()
        for start in range(0, len(order), int(batch_size)):
            batch = group_batch([epoch_groups[i] for i in order[start:start + int(batch_size)]], context_sampler,
                                epoch, tokenize)
            yield {}, lambda: model(**batch, loss_fn=loss_fn)["loss"]

    log = run_updates(model, optimizer, schedule, int(epochs), int(max_steps), batches)
    step = len(log)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_json(out / SPLIT_NAME, {"seed": int(seed), "test_ratio": float(test_ratio), "train": train_papers,
                                  "test": test_papers})
    write_id_list(out / TEST_PAPERS_NAME, test_papers)
    write_jsonl(out / LOG_NAME, log)
    write_json(out / "finetune_summary.json", {**counts_table(groups), "updates": step, "first_loss": log[0]["loss"],
                                               "last_loss": log[-1]["loss"], "settings": settings})
    record.write()
    logger.info("MP-BERT4CR fine-tuning (%s): %d updates on %d training contexts, loss %.3f -> %.3f -> %s", loss,
                step, len(groups.contexts), log[0]["loss"], log[-1]["loss"], out)
    print(out)
