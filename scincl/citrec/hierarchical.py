"""MP-BERT4CR's hierarchical encoder as ``transformers`` models (§4, §4.1.2, Table 2 of
``../shared/papers/001_3753c6be31fc929c.txt``; HIBERT = Zhang et al. 2019, the paper's ref. [27]).

- :class:`HierarchicalConfig` (``PretrainedConfig``) and :data:`PRESETS`: ``paper`` = Table 2 (6 blocks,
  hidden 768, 12 heads for the sentence encoder, the document encoder and the decoder) and ``cpu``
  (2 / 2 / 1 blocks, hidden 64, 4 heads: trains on 2 cores in minutes).
- :class:`HierarchicalEncoder`: a sentence-level transformer (a ``BertModel``; every sentence ends with
  the tokenizer's ``[SEP]``, the paper's EOS token) whose token states are MEAN-pooled (the paper's
  change to HIBERT's EOS pooling) into sentence vectors, plus sentence-position embeddings, then a
  document-level transformer: one contextual vector per sentence.
- :class:`HierarchicalForMaskedSentences`: HIBERT's pre-training: a share of a document's sentences is
  selected and corrupted as BERT corrupts tokens (HIBERT §3.2, Zhang et al. 2019, arXiv 1905.06566, as we
  read it; the text is not in ``../shared/papers``: of the selected sentences 80 % have every word replaced
  by ``[MASK]``, 10 % are kept unchanged, 10 % are replaced by a random sentence), and a transformer
  decoder, attending to the document-level vector of a selected position, predicts the *original*
  sentence's tokens left to right (cross-entropy). HIBERT does not say where the random sentence comes
  from; :meth:`~HierarchicalForMaskedSentences.corrupt_sentences` draws it uniformly from the other real
  sentences of the batch (a random sample of the corpus' documents), as BERT draws a random token.
- :class:`CitationRecommender`: the fine-tuning architecture (§4.1.2): a manuscript encoder and a
  citation encoder, both initialised from the pre-trained encoder; positives and negatives go through
  the *same* citation encoder (shared parameters), the manuscript encoder is updated on its own. Each
  side sums its sentence vectors (sum pooling) and applies a LayerNorm (the paper's normalisation
  layer, ref. [1]); the loss is one of the project's ``--loss`` objectives over the two sides'
  vectors (``mpt-src-tgt`` by default, §4.1.5).

Every model saves with ``save_pretrained`` and loads with ``from_pretrained`` (``AutoConfig`` /
``AutoModel`` know ``scincl-hierarchical``).

Inputs: ``input_ids`` / ``attention_mask`` ``[B, S, T]`` (B documents of S sentences of T tokens; a
sentence of padding only is absent), built by :func:`scincl.citrec.batches.tokenize_documents`.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import torch
from torch import Tensor, nn
from transformers import AutoConfig, AutoModel, BertConfig, BertModel, PretrainedConfig, PreTrainedModel

MODEL_TYPE = "scincl-hierarchical"

PRESETS: Dict[str, Dict[str, int]] = {
    # Table 2: "Params (Sent, Doc Encoder, and Decoder): Block No. (L) 6, Hidden Size (H) 768, Attention No. (A) 12"
    "paper": {"hidden_size": 768, "num_attention_heads": 12, "sentence_layers": 6, "document_layers": 6,
              "decoder_layers": 6, "intermediate_size": 3072},
    # this machine (2 CPU cores): small enough to pre-train and fine-tune on the demo in minutes
    "cpu": {"hidden_size": 64, "num_attention_heads": 4, "sentence_layers": 2, "document_layers": 2,
            "decoder_layers": 1, "intermediate_size": 256},
}


class HierarchicalConfig(PretrainedConfig):
    """Sizes of the sentence encoder, document encoder and decoder (defaults: Table 2)."""

    model_type = MODEL_TYPE

    def __init__(self, vocab_size: int = 30522, hidden_size: int = 768, num_attention_heads: int = 12,
                 sentence_layers: int = 6, document_layers: int = 6, decoder_layers: int = 6,
                 intermediate_size: int = 3072, max_sentence_tokens: int = 64, max_sentences: int = 64,
                 dropout: float = 0.1, pad_token_id: int = 0, mask_token_id: int = 103, bos_token_id: int = 101,
                 eos_token_id: int = 102, **kwargs: Any) -> None:
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id, **kwargs)
        self.vocab_size, self.hidden_size, self.num_attention_heads = vocab_size, hidden_size, num_attention_heads
        self.sentence_layers, self.document_layers, self.decoder_layers = sentence_layers, document_layers, decoder_layers
        self.intermediate_size, self.dropout = intermediate_size, dropout  # Table 2: dropout 0.1
        self.max_sentence_tokens, self.max_sentences = max_sentence_tokens, max_sentences
        self.mask_token_id = mask_token_id

    @classmethod
    def preset(cls, name: str, **changes: Any) -> "HierarchicalConfig":
        """A config of :data:`PRESETS` (``paper`` or ``cpu``) with ``changes`` (vocabulary, token ids)."""
        if name not in PRESETS:
            from scincl.errors import InputError

            raise InputError(f"unknown hierarchical preset {name!r}; one of: {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **changes})

    def sentence_bert_config(self) -> BertConfig:
        return BertConfig(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                          num_hidden_layers=self.sentence_layers, num_attention_heads=self.num_attention_heads,
                          intermediate_size=self.intermediate_size, max_position_embeddings=self.max_sentence_tokens,
                          hidden_dropout_prob=self.dropout, attention_probs_dropout_prob=self.dropout,
                          pad_token_id=self.pad_token_id)


def _transformer_layer(config: HierarchicalConfig, decoder: bool = False) -> nn.Module:
    layer = nn.TransformerDecoderLayer if decoder else nn.TransformerEncoderLayer
    return layer(config.hidden_size, config.num_attention_heads, config.intermediate_size, config.dropout,
                 activation="gelu", batch_first=True)


class HierarchicalPreTrainedModel(PreTrainedModel):
    """Weight initialisation and the config class shared by the hierarchical models."""

    config_class = HierarchicalConfig
    base_model_prefix = "hierarchical"

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(0.0, 0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(0.0, 0.02)
        elif isinstance(module, nn.LayerNorm):
            module.weight.data.fill_(1.0)
            module.bias.data.zero_()


class HierarchicalEncoder(HierarchicalPreTrainedModel):
    """Sentence encoder (mean pooling) -> document encoder: ``[B, S, T]`` tokens -> ``[B, S, H]`` sentence states."""

    def __init__(self, config: HierarchicalConfig) -> None:
        super().__init__(config)
        self.sentence_encoder = BertModel(config.sentence_bert_config(), add_pooling_layer=False)
        self.sentence_positions = nn.Embedding(config.max_sentences, config.hidden_size)
        self.document_encoder = nn.TransformerEncoder(_transformer_layer(config), config.document_layers,
                                                      enable_nested_tensor=False)
        self.post_init()

    def sentence_vectors(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        """``[B, S, H]``: each sentence's token states averaged over its real tokens (MEAN pooling, §4)."""
        b, s, t = input_ids.shape
        states = self.sentence_encoder(input_ids=input_ids.reshape(b * s, t),
                                       attention_mask=attention_mask.reshape(b * s, t)).last_hidden_state
        mask = attention_mask.reshape(b * s, t, 1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return pooled.reshape(b, s, -1)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        """The document-level state of every sentence ``[B, S, H]`` (padding sentences masked out)."""
        sentence_mask = attention_mask.any(dim=-1)  # [B, S]
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        vectors = self.sentence_vectors(input_ids, attention_mask) + self.sentence_positions(positions)[None]
        return self.document_encoder(vectors, src_key_padding_mask=~sentence_mask)


class HierarchicalForMaskedSentences(HierarchicalPreTrainedModel):
    """HIBERT pre-training: predict the tokens of masked sentences from the document-level states."""

    def __init__(self, config: HierarchicalConfig) -> None:
        super().__init__(config)
        self.hierarchical = HierarchicalEncoder(config)
        self.decoder = nn.TransformerDecoder(_transformer_layer(config, decoder=True), config.decoder_layers)
        self.decoder_positions = nn.Embedding(config.max_sentence_tokens, config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.post_init()

    def mask_sentences(self, input_ids: Tensor, attention_mask: Tensor, masked: Tensor) -> Tensor:
        """``input_ids`` with every real token of the ``masked`` ``[B, S]`` sentences replaced by ``[MASK]``."""
        hide = masked[:, :, None] & attention_mask.bool()
        return torch.where(hide, torch.full_like(input_ids, self.config.mask_token_id), input_ids)

    def corrupt_sentences(self, input_ids: Tensor, attention_mask: Tensor, selected: Tensor, kept_share: float,
                          random_share: float, generator: Optional[torch.Generator] = None
                          ) -> Tuple[Tensor, Tensor, Dict[str, int]]:
        """HIBERT's document masking of the ``selected`` ``[B, S]`` sentences: each is, independently, kept
        unchanged with probability ``kept_share``, replaced by a random other real sentence of the batch with
        probability ``random_share``, else every real token replaced by ``[MASK]`` (see the module docstring;
        HIBERT: 0.1 and 0.1, :data:`scincl.citrec.pretrain.HIBERT_KEPT_SHARE` / ``HIBERT_RANDOM_SHARE``).
        Returns the encoder's ``input_ids`` and ``attention_mask`` and the counts ``masked`` / ``kept`` /
        ``replaced``; the decoder's targets stay the original sentences (:meth:`forward`)."""
        draw = torch.rand(selected.shape, generator=generator)
        replace = selected & (draw >= 1 - random_share)
        keep = selected & ~replace & (draw >= 1 - random_share - kept_share)
        real = attention_mask.any(dim=-1)
        pool = real.nonzero()  # [R, 2] (document, sentence) of every real sentence of the batch
        ids, mask = input_ids.clone(), attention_mask.clone()
        for b, s in replace.nonzero().tolist():
            others = pool[(pool[:, 0] != b) | (pool[:, 1] != s)]
            if not len(others):  # a batch of one sentence has nothing to swap in: it is masked instead
                replace[b, s] = False
                continue
            ob, os_ = others[int(torch.randint(len(others), (1,), generator=generator))].tolist()
            ids[b, s], mask[b, s] = input_ids[ob, os_], attention_mask[ob, os_]
        hide = selected & ~keep & ~replace
        ids = self.mask_sentences(ids, mask, hide)
        return ids, mask, {"masked": int(hide.sum()), "kept": int(keep.sum()), "replaced": int(replace.sum())}

    def forward(self, input_ids: Tensor, attention_mask: Tensor, masked: Tensor,
                corrupted: Optional[Tuple[Tensor, Tensor]] = None) -> Dict[str, Tensor]:
        """``{"loss", "logits"}``: token cross-entropy of the original tokens of the ``masked`` ``[B, S]`` sentences.
        The document encoder sees ``corrupted`` (``input_ids``, ``attention_mask``: :meth:`corrupt_sentences`);
        ``None``: every masked sentence replaced by ``[MASK]`` tokens."""
        encoder_ids, encoder_mask = corrupted if corrupted is not None else (
            self.mask_sentences(input_ids, attention_mask, masked), attention_mask)
        states = self.hierarchical(encoder_ids, encoder_mask)
        memory = states[masked][:, None, :]  # [M, 1, H]: the masked sentence's document-level vector
        targets, target_mask = input_ids[masked], attention_mask[masked].bool()  # [M, T]
        # teacher forcing: [CLS]-started inputs shifted right by one token
        inputs = torch.cat([torch.full_like(targets[:, :1], self.config.bos_token_id), targets[:, :-1]], dim=1)
        embeddings = self.hierarchical.sentence_encoder.embeddings.word_embeddings(inputs)
        embeddings = embeddings + self.decoder_positions(torch.arange(inputs.shape[1], device=inputs.device))[None]
        causal = nn.Transformer.generate_square_subsequent_mask(inputs.shape[1], device=inputs.device)
        hidden = self.decoder(embeddings, memory, tgt_mask=causal, tgt_is_causal=True)
        logits = self.lm_head(hidden)
        labels = targets.masked_fill(~target_mask, -100)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        return {"loss": loss, "logits": logits}


class DocumentHead(nn.Module):
    """Sum pooling of the sentence states of real sentences, then LayerNorm (§4.1.2)."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, states: Tensor, attention_mask: Tensor) -> Tensor:
        sentence_mask = attention_mask.any(dim=-1, keepdim=True).to(states.dtype)  # [B, S, 1]
        return self.norm((states * sentence_mask).sum(dim=1))


class CitationRecommender(HierarchicalPreTrainedModel):
    """The fine-tuning model of §4.1.2: a manuscript encoder and one citation encoder shared by positives
    and negatives, each with sum pooling + LayerNorm; :meth:`forward` returns the ``loss`` of a group batch."""

    def __init__(self, config: HierarchicalConfig) -> None:
        super().__init__(config)
        self.manuscript_encoder = HierarchicalEncoder(config)
        self.citation_encoder = HierarchicalEncoder(config)
        self.manuscript_head = DocumentHead(config.hidden_size)
        self.citation_head = DocumentHead(config.hidden_size)
        self.post_init()

    @classmethod
    def from_pretrained_encoder(cls, encoder: HierarchicalEncoder) -> "CitationRecommender":
        """Both encoders initialised from the pre-trained encoder (§4.1.2), as two separate copies."""
        model = cls(encoder.config)
        model.manuscript_encoder.load_state_dict(encoder.state_dict())
        model.citation_encoder.load_state_dict(encoder.state_dict())
        return model

    def encode_manuscripts(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        """Query vectors ``[B, H]`` of sampled manuscript contexts."""
        return self.manuscript_head(self.manuscript_encoder(input_ids, attention_mask), attention_mask)

    def encode_citations(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        """Citation vectors ``[B, H]`` of sampled cited papers (the target and the co-cited positives)."""
        return self.citation_head(self.citation_encoder(input_ids, attention_mask), attention_mask)

    def encode_negatives(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        """Vectors of negative citations: the citation encoder itself ("the parameters of the citation
        encoder and negative-citation encoders are completely shared", §4.1.2)."""
        return self.encode_citations(input_ids, attention_mask)

    def forward(self, manuscript_input_ids: Tensor, manuscript_attention_mask: Tensor, positive_input_ids: Tensor,
                positive_attention_mask: Tensor, negative_input_ids: Tensor, negative_attention_mask: Tensor,
                positive_index: Tensor, negative_index: Tensor, loss_fn: Optional[nn.Module] = None
                ) -> Dict[str, Tensor]:
        """``{"loss", "manuscripts", "positives", "negatives"}`` for G groups (one per manuscript row):
        ``positive_index [G, P]`` rows of the positive inputs (target first, co-cited after it) and
        ``negative_index [G, N]`` rows of the negative inputs, ``-1`` = padding. ``loss_fn``: a
        ``scincl.model.losses`` objective (default ``mpt-src-tgt``, §4.1.5). A ``triplets`` loss (MB4R_triplet,
        eq. 3: one target, one negative per triplet) gets one triplet per group and negative, (manuscript,
        target, negative j) for each of the group's m negatives (§4.1.4: m = 4), averaged over them all."""
        from scincl.model.losses import build_loss

        manuscripts = self.encode_manuscripts(manuscript_input_ids, manuscript_attention_mask)
        positives = self.encode_citations(positive_input_ids, positive_attention_mask)
        negatives = self.encode_negatives(negative_input_ids, negative_attention_mask)
        loss_fn = loss_fn if loss_fn is not None else build_loss("mpt-src-tgt")
        embeddings = torch.cat([manuscripts, positives, negatives], dim=0)
        g, p = manuscripts.shape[0], positives.shape[0]
        rows = lambda index, offset: torch.where(index >= 0, index + offset, index)  # noqa: E731
        query_index = torch.arange(g, device=embeddings.device)
        positive_rows, negative_rows = rows(positive_index, g), rows(negative_index, g + p)
        if getattr(loss_fn, "input_kind", "groups") == "triplets":
            group, column = (negative_rows >= 0).nonzero(as_tuple=True)  # every (group, real negative)
            if not len(group):
                from scincl.errors import InputError

                raise InputError("--loss triplet: no group of the batch has a negative (every paper cited in "
                                 "training is cited by these contexts)")
            loss = loss_fn(embeddings, query_index[group], positive_rows[group, 0], negative_rows[group, column])
        else:
            loss = loss_fn(embeddings, query_index, positive_rows, negative_rows)
        return {"loss": loss, "manuscripts": manuscripts, "positives": positives, "negatives": negatives}


AutoConfig.register(MODEL_TYPE, HierarchicalConfig)
AutoModel.register(HierarchicalConfig, HierarchicalEncoder)
