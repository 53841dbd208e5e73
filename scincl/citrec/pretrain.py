"""``pretrain_hierarchical``: HIBERT masked-sentence pre-training of MP-BERT4CR's hierarchical encoder.

MP-BERT4CR §4 "adapt[s] the hierarchical transformer [27] to pre-train the model" (HIBERT: a share of
a document's sentences is masked and a decoder regenerates them from the document-level states);
§5.2 / Table 2: batch size 7, Adam (weight decay 0.01, β₁ 0.9, β₂ 0.999), learning rate 1e-4 with an
inverse-square-root schedule after a linear warm-up from 1e-7 over 2,000 updates (1,000 on ACL),
dropout 0.1, 10 iterations (50 on ACL). A document here is a window of ``max_sentences`` consecutive
sentences of a paper (abstract, then body; ``sentences.jsonl.gz`` of ``get_citation_contexts``).
Each sentence is selected with probability ``masked_sentence_share`` (HIBERT: 15 %), at least one per
document; of the selected sentences 10 % are kept unchanged, 10 % replaced by a random sentence of the batch,
the rest have every token replaced by ``[MASK]`` (HIBERT §3.2, BERT's 80 / 10 / 10 on sentences:
:meth:`~scincl.citrec.hierarchical.HierarchicalForMaskedSentences.corrupt_sentences`); the decoder regenerates
every selected sentence's original tokens.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List

from scincl.citrec.stage import SENTENCES_NAME
from scincl.citrec.training import adam_with_inverse_sqrt, run_updates
from scincl.provenance import OutputRecord
from scincl.errors import InputError
from scincl.io import iter_jsonl, write_json, write_jsonl
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

LOG_NAME = "pretrain_log.jsonl"
# HIBERT §3.2 (BERT's 80 / 10 / 10 on whole sentences): shares of the selected sentences kept unchanged and replaced by
# a random sentence; the rest (80 %) have every token replaced by [MASK]
HIBERT_KEPT_SHARE, HIBERT_RANDOM_SHARE = 0.1, 0.1


def sentence_windows(records, max_sentences: int) -> List[List[str]]:
    """Every paper's sentences (abstract, then body) cut into windows of ``max_sentences`` (2 or more sentences)."""
    windows = []
    for record in records:
        sentences = list(record.get("abstract") or []) + list(record.get("body") or [])
        windows += [sentences[i:i + max_sentences] for i in range(0, len(sentences), max_sentences)
                    if len(sentences[i:i + max_sentences]) >= 2]
    return windows


@writes("output_dir")
def pretrain_hierarchical(contexts_dir: str, output_dir: str, tokenizer_name_or_path: str, preset: str = "cpu",
                          max_sentences: int = 40, max_sentence_tokens: int = 48,
                          masked_sentence_share: float = 0.15, kept_sentence_share: float = HIBERT_KEPT_SHARE,
                          random_sentence_share: float = HIBERT_RANDOM_SHARE, epochs: int = 10, batch_size: int = 7,
                          learning_rate: float = 1e-4, warmup_learning_rate: float = 1e-7, warmup_steps: int = 2000,
                          weight_decay: float = 0.01, adam_beta2: float = 0.999, max_steps: int = 0, seed: int = 0,
                          override: bool = False) -> None:
    """Pre-train MP-BERT4CR's hierarchical encoder by HIBERT masked-sentence prediction; prints OUTPUT_DIR.

    Reads CONTEXTS_DIR/sentences.jsonl.gz (get_citation_contexts) and writes OUTPUT_DIR: the model
    (save_pretrained; AutoModel.from_pretrained(OUTPUT_DIR) gives the HierarchicalEncoder the fine-tuning
    starts from), the tokenizer, pretrain_log.jsonl (loss and learning rate per update). Defaults are
    §5.2 / Table 2 (batch 7, lr 1e-4, warm-up from 1e-7 over 2,000 updates, inverse square root,
    weight decay 0.01, β₂ 0.999, 10 iterations); --preset paper is Table 2's size (a GPU), cpu a small one.

    Example:
        python cli_pipeline.py pretrain_hierarchical data/citrec/demo data/citrec/demo/hibert \\
            --tokenizer_name_or_path runs/pretrain --epochs 1 --warmup_steps 20 --learning_rate 1e-3

    :param contexts_dir: output folder of get_citation_contexts (its sentences.jsonl.gz)
    :param output_dir: the model folder
    :param tokenizer_name_or_path: a local BERT tokenizer (a `pretrain` output, a model folder)
    :param preset: cpu (2/2/1 blocks, hidden 64) or paper (Table 2: 6/6/6 blocks, hidden 768, 12 heads)
    :param max_sentences: sentences per document window, also the most a fine-tuned encoder takes (40: §4.1.1's
        cited-paper sample)
    :param max_sentence_tokens: tokens per sentence, [SEP] (the EOS token) included
    :param masked_sentence_share: share of sentences selected for prediction (HIBERT: 0.15); at least one per document
    :param kept_sentence_share: share of the selected sentences left unchanged (HIBERT: 0.1)
    :param random_sentence_share: share of the selected sentences replaced by a random sentence of the batch
        (HIBERT: 0.1); the others are replaced by [MASK] tokens
    :param epochs: passes over the documents (paper: 10 on DBLP, 50 on ACL)
    :param batch_size: documents per update (paper §5.2: 7)
    :param learning_rate: peak learning rate (Table 2: 1e-4)
    :param warmup_learning_rate: learning rate at the first update (Table 2: 1e-7)
    :param warmup_steps: updates of linear warm-up (Table 2: 2,000 DBLP / 1,000 ACL)
    :param weight_decay: Adam's weight decay (Table 2: 0.01)
    :param adam_beta2: Adam's beta2 (Table 2: 0.999 for pre-training)
    :param max_steps: stop after this many updates (0: the epochs decide)
    :param seed: seed of the initialisation, the document order and the masks
    :param override: retrain although OUTPUT_DIR holds a run made from the same inputs and settings
    """
    import torch
    from transformers import AutoTokenizer

    from scincl.citrec.batches import tokenize_documents
    from scincl.citrec.hierarchical import HierarchicalConfig, HierarchicalForMaskedSentences

    if not 0 < float(masked_sentence_share) < 1:
        raise InputError(f"--masked_sentence_share {masked_sentence_share}: must be between 0 and 1")
    if not (0 <= float(kept_sentence_share) and 0 <= float(random_sentence_share)
            and float(kept_sentence_share) + float(random_sentence_share) <= 1):
        raise InputError(f"--kept_sentence_share {kept_sentence_share} and --random_sentence_share "
                         f"{random_sentence_share}: each at least 0, together at most 1")
    for name, value in (("max_sentences", max_sentences), ("max_sentence_tokens", max_sentence_tokens),
                        ("epochs", epochs), ("batch_size", batch_size)):
        if int(value) < 1:
            raise InputError(f"--{name} {value}: must be at least 1")
    out = Path(output_dir)
    settings: Dict[str, Any] = {
        "command": "pretrain_hierarchical", "preset": preset, "max_sentences": int(max_sentences),
        "max_sentence_tokens": int(max_sentence_tokens), "masked_sentence_share": float(masked_sentence_share),
        "kept_sentence_share": float(kept_sentence_share), "random_sentence_share": float(random_sentence_share),
        "epochs": int(epochs), "batch_size": int(batch_size), "learning_rate": float(learning_rate),
        "warmup_learning_rate": float(warmup_learning_rate), "warmup_steps": int(warmup_steps),
        "weight_decay": float(weight_decay), "adam_beta2": float(adam_beta2), "max_steps": int(max_steps),
        "seed": int(seed)}
    record = OutputRecord(out / "config.json", out / "model.safetensors", out / LOG_NAME,
                          command="pretrain_hierarchical", settings=settings,
                          inputs=[Path(contexts_dir) / SENTENCES_NAME, tokenizer_name_or_path])
    if record.reusable(override):
        print(out)
        return
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_name_or_path)
    documents = sentence_windows((r for _, r in iter_jsonl(Path(contexts_dir) / SENTENCES_NAME)), int(max_sentences))
    if not documents:
        raise InputError("no paper with two or more sentences", path=Path(contexts_dir) / SENTENCES_NAME)
    config = HierarchicalConfig.preset(
        preset, vocab_size=len(tokenizer), max_sentence_tokens=int(max_sentence_tokens),
        max_sentences=int(max_sentences), pad_token_id=tokenizer.pad_token_id, mask_token_id=tokenizer.mask_token_id,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(int(seed))
    model = HierarchicalForMaskedSentences(config)
    optimizer, schedule = adam_with_inverse_sqrt(model, learning_rate, warmup_learning_rate, warmup_steps,
                                                 weight_decay, adam_beta2)
    generator = torch.Generator().manual_seed(int(seed))

    def batches(epoch: int):
        order = torch.randperm(len(documents), generator=generator).tolist()
        for start in range(0, len(order), int(batch_size)):
            batch = tokenize_documents(tokenizer, [documents[i] for i in order[start:start + int(batch_size)]],
                                       int(max_sentences), int(max_sentence_tokens))
            present = batch["attention_mask"].any(-1)
            masked = (torch.rand(present.shape, generator=generator) < float(masked_sentence_share)) & present
            first = present.float().argmax(dim=1)  # a document without a masked sentence gets its first one
            masked[torch.arange(len(first)), first] |= ~masked.any(dim=1)
            corrupted_ids, corrupted_mask, counts = model.corrupt_sentences(
                batch["input_ids"], batch["attention_mask"], masked, float(kept_sentence_share),
                float(random_sentence_share), generator)
            fields = {"masked_sentences": int(masked.sum()), "kept_sentences": counts["kept"],
                      "replaced_sentences": counts["replaced"]}
            yield fields, lambda: model(batch["input_ids"], batch["attention_mask"], masked,
                                        corrupted=(corrupted_ids, corrupted_mask))["loss"]

    log = run_updates(model, optimizer, schedule, int(epochs), int(max_steps), batches)
    step = len(log)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_jsonl(out / LOG_NAME, log)
    write_json(out / "pretrain_summary.json", {"documents": len(documents), "updates": step,
                                               "first_loss": log[0]["loss"], "last_loss": log[-1]["loss"],
                                               "parameters": sum(p.numel() for p in model.parameters()),
                                               "settings": settings})
    record.write()
    logger.info("HIBERT pre-training: %d documents, %d updates, loss %.3f -> %.3f -> %s", len(documents), step,
                log[0]["loss"], log[-1]["loss"], out)
    print(out)
