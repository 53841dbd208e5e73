"""Documents of sentences as the hierarchical encoder's ``[B, S, T]`` token tensors.

Each sentence is tokenised on its own with the tokenizer's special tokens, so it ends with ``[SEP]``
(MP-BERT4CR §4: "At the end of each sentence, a special end-of-sentence (EOS) token is added");
a document keeps at most ``max_sentences`` sentences and a sentence at most ``max_sentence_tokens``
tokens (truncated, ``[SEP]`` kept). Padding sentences are all-zero rows of ``attention_mask``.
"""
from __future__ import annotations

from typing import Dict, Sequence

import torch
from torch import Tensor


def tokenize_documents(tokenizer, documents: Sequence[Sequence[str]], max_sentences: int,
                       max_sentence_tokens: int) -> Dict[str, Tensor]:
    """``{"input_ids", "attention_mask"}`` ``[B, S, T]`` for ``documents`` (lists of sentences)."""
    documents = [list(doc)[:max_sentences] for doc in documents]
    flat = [sentence for doc in documents for sentence in doc]
    b, s = len(documents), max([len(doc) for doc in documents] + [1])
    encoded = tokenizer(flat, truncation=True, max_length=max_sentence_tokens, padding=True,
                        return_tensors="pt") if flat else None
    t = encoded["input_ids"].shape[1] if encoded is not None else 1
    input_ids = torch.zeros((b, s, t), dtype=torch.long)
    attention_mask = torch.zeros((b, s, t), dtype=torch.long)
    row = 0
    for i, doc in enumerate(documents):
        for j in range(len(doc)):
            input_ids[i, j] = encoded["input_ids"][row]
            attention_mask[i, j] = encoded["attention_mask"][row]
            row += 1
    return {"input_ids": input_ids, "attention_mask": attention_mask}
