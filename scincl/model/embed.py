"""``cli_pipeline.py embed``: paper metadata -> SciDocs embeddings jsonl ``{"paper_id","embedding"}``.

Papers are batched longest-first (little padding), encoded under ``torch.inference_mode`` on the
GPU (CPU otherwise), with bf16 autocast only where the device computes bf16 natively
(:func:`scincl.model.device.choose_bf16`; float32 elsewhere), and written in input order.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import torch

from scincl.errors import InputError
from scincl.io import write_embeddings_jsonl
from scincl.model.collapse import check_embeddings
from scincl.model.data import iter_metadata, paper_text
from scincl.model.device import check_gpu_usable, parse_bf16_request, resolve_bf16
from scincl.model.encoder import (DocumentEncoder, default_device, embedding_length, load_backbone,
                                  saved_pooling_strategy)
from scincl.settings.schema import SCINCL
from scincl.provenance import OutputRecord, local_path

logger = logging.getLogger(__name__)

DEFAULT_EMBED_BATCH_SIZE = 32
# Evaluation embeddings are fp32 unless asked (issue 17): the SciDocs protocol rounds scores to 5
# decimals, and bf16 embeddings move them in the 3rd-4th; ``--bf16 auto|true`` trades that for speed.
EMBED_BF16 = "false"


def read_papers(metadata_path: Path) -> Tuple[List[str], List[Tuple[Optional[str], Optional[str]]]]:
    """``(paper_ids, [(title, abstract)])`` of a metadata jsonl(.gz) or SciDocs json; a repeated id keeps the first."""
    ids: List[str] = []
    titles_abstracts: List[Tuple[Optional[str], Optional[str]]] = []
    seen = set()
    duplicates = 0
    for paper_id, title, abstract in iter_metadata(Path(metadata_path)):
        if paper_id in seen:
            duplicates += 1
            continue
        seen.add(paper_id)
        ids.append(paper_id)
        titles_abstracts.append((title, abstract))
    if not ids:
        raise InputError("no papers in metadata", path=metadata_path)
    if duplicates:
        logger.warning("%s: %d repeated paper ids ignored (first record kept)", metadata_path, duplicates)
    return ids, titles_abstracts


def encode_texts(encoder: DocumentEncoder, tokenizer: Any, texts: Sequence[str],
                 batch_size: int = DEFAULT_EMBED_BATCH_SIZE,
                 max_sequence_length: int = SCINCL.max_sequence_length, device: Optional[torch.device] = None,
                 show_progress: bool = True, bf16: Optional[str] = None) -> np.ndarray:
    """Embed texts (longest first, in batches) and return float32 ``[len(texts), dim]`` in input order.

    ``bf16``: ``auto`` (bf16 autocast where the device has native bf16), ``true`` or ``false``;
    default ``auto`` on CUDA and ``false`` (float32) on CPU.
    """
    from tqdm.auto import tqdm

    device = device or default_device()
    encoder.to(device).eval()
    use_bf16 = resolve_bf16(bf16 if bf16 is not None else ("auto" if device.type == "cuda" else "false"),
                            device.type)
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: Optional[np.ndarray] = None
    with torch.inference_mode():
        for start in tqdm(range(0, len(order), batch_size), desc="embedding papers", unit="batch",
                          disable=not show_progress):
            chunk = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in chunk], padding=True, truncation=True,
                              max_length=max_sequence_length, return_tensors="pt").to(device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_bf16):
                vectors = encoder(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))
            vectors = vectors.float().cpu().numpy()
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
    assert out is not None
    return out


def embed(
    model_dir_or_name: str,
    metadata_path: str,
    output_path: str,
    batch_size: int = DEFAULT_EMBED_BATCH_SIZE,
    max_sequence_length: Optional[int] = None,
    pooling_strategy: Optional[str] = None,
    device: Optional[str] = None,
    override: bool = False,
    bf16: str = EMBED_BF16,
) -> Path:
    """Embed every paper of ``metadata_path`` with a (trained) encoder; returns ``output_path``.

    Args:
        model_dir_or_name: a ``train`` output dir or any HF checkpoint (``malteos/scincl``, ...).
        metadata_path: metadata jsonl(.gz) ``{"paper_id","title","abstract"}`` or a SciDocs
            ``paper_metadata_*.json`` dict.
        output_path: SciDocs embeddings jsonl(.gz) ``{"paper_id","embedding"}``, in input order.
        max_sequence_length: tokens per paper; default: the length saved in the model dir
            (:func:`scincl.model.encoder.saved_max_seq_length`, where ``SentenceTransformer(dir)`` reads it: for a
            ``train`` output, the length its scores were measured at), 512 when none is saved.
        pooling_strategy: ``cls`` or ``mean``; default: the one saved in the model dir
            (``1_Pooling/config.json``), ``cls`` when none is saved.
        device: ``cuda``, ``cpu``, ... (default: CUDA when present).
        override: recompute an existing output. Without it an existing output is reused when its
            record (``<output>.made_by.json``: model, papers, settings) matches, else refused.
        bf16: ``false`` (fp32, the default: SciDocs scores are compared to 5 decimals), ``auto``
            (bf16 autocast where the device has it natively) or ``true``.
    """
    out = Path(output_path)
    if batch_size < 1:
        raise InputError(f"--batch_size must be >= 1, got {batch_size}")
    bf16 = parse_bf16_request(bf16)  # a bad value fails before the model loads
    model_path = local_path(model_dir_or_name)
    max_sequence_length = embedding_length(str(model_dir_or_name), max_sequence_length)
    record = OutputRecord(out, command="embed", settings={
        "model": None if model_path else str(model_dir_or_name), "pooling_strategy": pooling_strategy,
        "max_sequence_length": int(max_sequence_length), "bf16": str(bf16)}, inputs=[model_path, metadata_path])
    if record.reusable(override):
        return out
    pooling = pooling_strategy or saved_pooling_strategy(model_dir_or_name)
    paper_ids, parts = read_papers(Path(metadata_path))
    backbone, tokenizer = load_backbone(str(model_dir_or_name))
    encoder = DocumentEncoder(backbone, pooling)
    max_positions = getattr(backbone.config, "max_position_embeddings", None)
    if max_positions and max_sequence_length > max_positions:
        max_sequence_length = int(max_positions)
    texts = [paper_text(title, abstract, tokenizer.sep_token) for title, abstract in parts]
    empty = sum(1 for title, abstract in parts if not title and not abstract)
    if empty:
        logger.warning("%d papers have neither title nor abstract (embedded from the separator alone)", empty)
    check_gpu_usable(device)  # a GPU job whose CUDA is broken must not embed on CPU without a word
    target = torch.device(device) if device else default_device()
    logger.info("embedding %d papers with %s (%s pooling, %d tokens, %s)", len(texts), model_dir_or_name, pooling,
                max_sequence_length, target)
    vectors = encode_texts(encoder, tokenizer, texts, batch_size=batch_size,
                           max_sequence_length=max_sequence_length, device=target, bf16=bf16)
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():  # a diverged model: refuse, never write null embeddings (issue 29)
        row = int(np.flatnonzero(~finite)[0])
        raise InputError(f"the model gives NaN or infinite embeddings for {int((~finite).sum())} of {len(finite)} "
                         f"papers, the first paper {paper_ids[row]!r} (row {row} of {metadata_path}); a diverged "
                         "training?", path=model_dir_or_name)
    check_embeddings(vectors, texts, model_dir_or_name)  # collapsed: an error, never scored (issue 41)
    count = write_embeddings_jsonl(out, paper_ids, vectors)
    record.write()  # last: the embeddings are complete
    logger.info("wrote %d embeddings (dim %d) to %s", count, vectors.shape[1], out)
    return out
