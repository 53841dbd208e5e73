"""A tiny randomly initialised BERT with a word-level vocabulary, built offline from a config.

For tests, demos and smoke runs that must not download weights: ``build_tiny_bert(dir, words)``
writes ``config.json`` + weights + a ``vocab.txt`` tokenizer that any ``from_pretrained`` call,
``cli_pipeline.py train --base_model_name_or_path dir`` and ``embed`` accept.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def vocabulary_of(texts: Iterable[str]) -> list:
    """Sorted distinct lower-cased word and punctuation tokens of ``texts``."""
    words = set()
    for text in texts:
        words.update(re.findall(r"\w+|[^\w\s]", text.lower()))
    return sorted(words)


def build_tiny_bert(output_dir: Path, words: Iterable[str], hidden_size: int = 32, num_layers: int = 2,
                    num_heads: int = 2, max_positions: int = 128, seed: int = 0) -> Path:
    """Write a tiny ``BertModel`` + ``BertTokenizerFast`` over ``words`` to ``output_dir``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = list(SPECIAL_TOKENS) + [w for w in dict.fromkeys(words) if w not in SPECIAL_TOKENS]
    vocab_file = out / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)
    tokenizer.model_max_length = max_positions
    tokenizer.save_pretrained(out)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden_size, num_hidden_layers=num_layers,
                        num_attention_heads=num_heads, intermediate_size=hidden_size * 4,
                        max_position_embeddings=max_positions, pad_token_id=0)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(out)
    return out


TOY_TOPICS = {
    "graphs": ["graph", "node", "edge", "citation", "network", "link", "walk", "community"],
    "proteins": ["protein", "folding", "amino", "enzyme", "binding", "residue", "molecule", "cell"],
    "galaxies": ["galaxy", "star", "redshift", "telescope", "dark", "matter", "cosmic", "orbit"],
    "language": ["language", "word", "sentence", "translation", "parser", "token", "grammar", "speech"],
}
TOY_FILLER = ["we", "study", "a", "new", "method", "for", "results", "show", "the", "of", "and", "model"]


def toy_topic_corpus(papers_per_topic: int = 12, seed: int = 0) -> list:
    """Papers ``{paper_id, title, abstract, topic}`` whose words reveal one of four topics."""
    import random

    rnd = random.Random(seed)
    papers = []
    for topic, words in TOY_TOPICS.items():
        for i in range(papers_per_topic):
            title = " ".join(rnd.sample(words, 2) + rnd.sample(TOY_FILLER, 2))
            abstract = " ".join(rnd.choice(words if rnd.random() < 0.5 else TOY_FILLER) for _ in range(14))
            papers.append({"paper_id": f"{topic}-{i}", "title": title, "abstract": abstract, "topic": topic})
    return papers


def toy_triplets(papers: list, per_query: int = 5, seed: int = 0) -> list:
    """``(query, positive, negative)``: positive from the query's topic, negative from another topic."""
    import random

    rnd = random.Random(seed)
    by_topic: dict = {}
    for paper in papers:
        by_topic.setdefault(paper["topic"], []).append(paper["paper_id"])
    triples = []
    for paper in papers:
        same = [p for p in by_topic[paper["topic"]] if p != paper["paper_id"]]
        other = [p for t, ids in by_topic.items() if t != paper["topic"] for p in ids]
        for _ in range(per_query):
            triples.append((paper["paper_id"], rnd.choice(same), rnd.choice(other)))
    return triples


def toy_vocabulary() -> list:
    """Every word the toy corpus can use."""
    return sorted({w for words in TOY_TOPICS.values() for w in words} | set(TOY_FILLER))
