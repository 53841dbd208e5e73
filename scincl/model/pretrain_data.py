"""Text of the ``pretrain`` stage: corpora -> ``title [SEP] abstract`` texts -> WordPiece vocabulary -> token windows.

* Texts come from one or more corpora of any format the project reads (:func:`scincl.corpus.open_corpus`,
  :func:`scincl.corpus.write_papers`); a paper id listed in ``excluded`` (the SciDocs query papers) is
  left out, as is a paper with neither title nor abstract. A paper id seen in an earlier corpus is
  kept once.
* The vocabulary is an uncased WordPiece one learned from these texts with ``tokenizers`` (SciBERT's
  SciVocab idea: a vocabulary of the domain's own text), saved as ``vocab.txt`` and wrapped in a
  ``BertTokenizerFast``. ``tokenizers``' WordPiece trainer is not deterministic (hash-map order breaks
  count ties: huggingface/tokenizers#1794, fix proposed in PR #2066): two runs from scratch can learn
  vocabularies that differ in a few entries, so a resumed run reloads the saved ``vocab.txt``.
* Each paper is cut into consecutive windows of at most ``max_sequence_length`` tokens
  (``[CLS] ... [SEP]`` each; the tokenizer's overflowing tokens), so no text is thrown away.
* A seeded share of the papers (never of windows: no paper is in both) is held out for the MLM loss.
"""
from __future__ import annotations

import logging
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from scincl.corpus import open_corpus, write_papers
from scincl.errors import InputError
from scincl.model.data import iter_metadata, paper_text

logger = logging.getLogger(__name__)

SEP_TOKEN = "[SEP]"
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # BERT's, in vocab.txt order (ids 0-4)
WORDPIECE_MIN_FREQUENCY = 2  # a token seen once is not worth a vocabulary entry (tokenizers' BERT recipe)


@dataclass
class PretrainTexts:
    """The texts of every kept paper (in corpus order) and what was read and left out, per corpus."""

    paper_ids: List[str] = field(default_factory=list)
    texts: List[str] = field(default_factory=list)
    counts: List[Dict[str, Any]] = field(default_factory=list)


def read_corpus_texts(corpus_dirs: Sequence[str], corpus_formats: Sequence[Optional[str]],
                      excluded: Set[str], workers: int = 1) -> PretrainTexts:
    """``title [SEP] abstract`` of every paper of every corpus, without the ``excluded`` ids."""
    out = PretrainTexts()
    seen: Set[str] = set()
    for corpus_dir, corpus_format in zip(corpus_dirs, corpus_formats):
        corpus = open_corpus(corpus_dir, corpus_format, workers=workers)
        tmp = Path(tempfile.mkdtemp(prefix=".pretrain_texts."))
        try:
            papers = tmp / "papers.jsonl"
            write_papers(corpus, papers, workers=workers)
            counted = {"corpus_dir": str(corpus_dir), "format": corpus.format, "papers": 0, "excluded": 0,
                       "without_text": 0, "duplicate": 0, "kept": 0}
            for paper_id, title, abstract in iter_metadata(papers):
                counted["papers"] += 1
                if paper_id in excluded:
                    counted["excluded"] += 1
                elif not (title or "").strip() and not (abstract or "").strip():
                    counted["without_text"] += 1
                elif paper_id in seen:
                    counted["duplicate"] += 1
                else:
                    seen.add(paper_id)
                    out.paper_ids.append(paper_id)
                    out.texts.append(paper_text(title, abstract, SEP_TOKEN))
                    counted["kept"] += 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        logger.info("pretrain text of %s (%s): %d papers, %d kept, %d excluded, %d without text, %d duplicates",
                    corpus_dir, corpus.format, counted["papers"], counted["kept"], counted["excluded"],
                    counted["without_text"], counted["duplicate"])
        out.counts.append(counted)
    if not out.texts:
        raise InputError("no paper text left to pre-train on (every paper excluded or empty)",
                         path=", ".join(map(str, corpus_dirs)))
    return out


def learn_wordpiece(texts: Sequence[str], vocab_size: int, output_dir: Path, max_sequence_length: int) -> Any:
    """An uncased WordPiece vocabulary of ``vocab_size`` learned from ``texts``; the tokenizer, saved to ``output_dir``."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    wordpiece = BertWordPieceTokenizer(lowercase=True, strip_accents=None, clean_text=True)
    # [SEP] inside a text is a special token, never split into "[", "sep", "]"
    wordpiece.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=WORDPIECE_MIN_FREQUENCY,
                                  special_tokens=SPECIAL_TOKENS, show_progress=False)
    output_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".vocab.", dir=output_dir))
    try:
        wordpiece.save_model(str(tmp))
        tokenizer = BertTokenizerFast(vocab_file=str(tmp / "vocab.txt"), do_lower_case=True,
                                      model_max_length=max_sequence_length)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tokenizer.save_pretrained(output_dir)
    logger.info("WordPiece vocabulary: %d tokens learned from %d texts", len(tokenizer), len(texts))
    return tokenizer


def split_papers(count: int, val_ratio: float, seed: int) -> Tuple[List[int], List[int]]:
    """``(train, val)`` indices: a seeded ``val_ratio`` share of ``count`` papers held out (at least one when > 0)."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    n_val = min(count - 1, max(1, round(count * val_ratio))) if val_ratio > 0 and count > 1 else 0
    return sorted(order[n_val:]), sorted(order[:n_val])


def token_windows(tokenizer: Any, texts: Sequence[str], max_sequence_length: int,
                  with_offsets: bool = False, batch_size: int = 1000) -> List[Dict[str, List]]:
    """Every text cut into windows of at most ``max_sequence_length`` tokens (``[CLS] ... [SEP]``).

    Each window is ``{"input_ids", "special_tokens_mask"}`` (+ ``offset_mapping`` when
    ``with_offsets``: whole-word masking finds word starts from it).
    """
    windows: List[Dict[str, List]] = []
    for start in range(0, len(texts), batch_size):
        encoded = tokenizer(list(texts[start:start + batch_size]), truncation=True, max_length=max_sequence_length,
                            return_overflowing_tokens=True, return_special_tokens_mask=True,
                            return_offsets_mapping=with_offsets, return_attention_mask=False,
                            return_token_type_ids=False)
        for i, ids in enumerate(encoded["input_ids"]):
            window = {"input_ids": ids, "special_tokens_mask": encoded["special_tokens_mask"][i]}
            if with_offsets:
                window["offset_mapping"] = [list(pair) for pair in encoded["offset_mapping"][i]]
            windows.append(window)
    return windows


def count_tokens(windows: Sequence[Dict[str, List]]) -> int:
    """Tokens in ``windows`` (special tokens included: they are what the model reads)."""
    return sum(len(w["input_ids"]) for w in windows)
