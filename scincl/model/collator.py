"""Batching for contrastive training: encode each distinct paper of a batch once.

SciNCL writes five triplets per query (paper §4.2); when they share a batch, encoding every row
would run the query through the transformer five times. :class:`DedupCollator` collects the
distinct papers of a batch, pads them into one tensor, and returns index tensors that say which
encoded row is the anchor/positive/negative of each triplet (or group), so a batch costs what its
unique papers cost. :class:`QueryBlockSampler` shuffles whole queries instead of rows, which keeps
a query's triplets in the same batch.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np
import torch
from torch.utils.data import Sampler

from scincl.model.data import GROUPS, TRIPLETS


class DedupCollator:
    """Collate rows of paper numbers into padded token tensors of distinct papers + index tensors.

    Args:
        papers: tokenised papers (``datasets.Dataset`` with ``input_ids``, ``attention_mask`` and
            optionally ``token_type_ids``), indexed by the row numbers in the examples.
        pad_token_id: the tokenizer's pad id.
        input_kind: ``"triplets"`` (examples ``query, positive, negative``) or ``"groups"``
            (``query, positives, negatives``).
        deduplicate: encode each distinct paper once (True) or every row separately (False: the
            baseline of ``benchmarks/bench_train.py``). Triplet-margin and mpt losses and their
            gradients are identical either way (see tests/model/test_train_data.py); in-batch losses
            (InfoNCE) recognise a shared query by its encoded row, so use them deduplicated.
        mlm_probability: when set, also return BERT-style masked copies (``mlm_input_ids``,
            ``mlm_labels``) of the batch's papers for the auxiliary MLM loss (paper A.7.8).
        mask_token_id / special_token_ids: needed with ``mlm_probability``.
        graph_embeddings / graph_mask: per-paper-row graph vectors for the student-teacher loss
            (paper A.7.9); returned for the batch's papers.
        pad_to_multiple_of: pad sequence length to a multiple (8 helps tensor cores on GPUs).
    """

    def __init__(self, papers: Any, pad_token_id: int, input_kind: str = TRIPLETS, deduplicate: bool = True,
                 mlm_probability: Optional[float] = None, mask_token_id: Optional[int] = None,
                 special_token_ids: Sequence[int] = (), vocab_size: Optional[int] = None,
                 graph_embeddings: Optional[np.ndarray] = None, graph_mask: Optional[np.ndarray] = None,
                 pad_to_multiple_of: Optional[int] = None) -> None:
        if input_kind not in (TRIPLETS, GROUPS):
            raise ValueError(f"input_kind must be {TRIPLETS!r} or {GROUPS!r}")
        if mlm_probability and (mask_token_id is None or vocab_size is None):
            raise ValueError("mlm_probability needs mask_token_id and vocab_size")
        columns = [c for c in ("input_ids", "attention_mask", "token_type_ids") if c in papers.column_names]
        self.papers = papers.select_columns(columns)
        self.pad_token_id = pad_token_id
        self.input_kind = input_kind
        self.deduplicate = deduplicate
        self.mlm_probability = mlm_probability
        self.mask_token_id = mask_token_id
        self.special_token_ids = torch.tensor(sorted(set(special_token_ids)) or [pad_token_id])
        self.vocab_size = vocab_size
        self.graph_embeddings = graph_embeddings
        self.graph_mask = graph_mask
        self.pad_to_multiple_of = pad_to_multiple_of

    # -------------------------------------------------------------------------------- indices
    def _rows_and_slots(self, features: List[Dict[str, Any]]):
        """Paper rows to encode and, per example, the slots (encoded row numbers) of its papers."""
        encode_rows: List[int] = []
        slot_of: Dict[int, int] = {}

        def slot(paper_row: int) -> int:
            if self.deduplicate and paper_row in slot_of:
                return slot_of[paper_row]
            encode_rows.append(paper_row)
            slot_of[paper_row] = len(encode_rows) - 1
            return len(encode_rows) - 1

        if self.input_kind == TRIPLETS:
            triplets = [(slot(f["query"]), slot(f["positive"]), slot(f["negative"])) for f in features]
            return encode_rows, torch.tensor(triplets, dtype=torch.long).T
        groups = [(slot(f["query"]), [slot(p) for p in f["positives"]], [slot(n) for n in f["negatives"]])
                  for f in features]
        return encode_rows, groups

    @staticmethod
    def _pad_lists(lists: List[List[int]]) -> torch.Tensor:
        width = max(len(x) for x in lists)
        out = torch.full((len(lists), width), -1, dtype=torch.long)
        for i, values in enumerate(lists):
            out[i, : len(values)] = torch.tensor(values, dtype=torch.long)
        return out

    # ------------------------------------------------------------------------------- tensors
    def _pad_tokens(self, rows: List[int]) -> Dict[str, torch.Tensor]:
        records = self.papers[rows]
        lengths = [len(ids) for ids in records["input_ids"]]
        width = max(lengths)
        if self.pad_to_multiple_of:
            width = -(-width // self.pad_to_multiple_of) * self.pad_to_multiple_of
        out: Dict[str, torch.Tensor] = {}
        for name, fill in (("input_ids", self.pad_token_id), ("attention_mask", 0), ("token_type_ids", 0)):
            if name not in records:
                continue
            tensor = torch.full((len(rows), width), fill, dtype=torch.long)
            for i, values in enumerate(records[name]):
                tensor[i, : len(values)] = torch.tensor(values, dtype=torch.long)
            out[name] = tensor
        return out

    def _mask_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Dict[str, torch.Tensor]:
        """BERT masking (Devlin et al. 2019): of the chosen tokens 80% [MASK], 10% random, 10% kept."""
        labels = input_ids.clone()
        maskable = (attention_mask == 1) & ~torch.isin(input_ids, self.special_token_ids)
        chosen = (torch.rand(input_ids.shape) < self.mlm_probability) & maskable
        labels[~chosen] = -100
        masked = input_ids.clone()
        replace = chosen & (torch.rand(input_ids.shape) < 0.8)
        masked[replace] = self.mask_token_id
        randomize = chosen & ~replace & (torch.rand(input_ids.shape) < 0.5)
        masked[randomize] = torch.randint(self.vocab_size, input_ids.shape)[randomize]
        return {"mlm_input_ids": masked, "mlm_labels": labels}

    def __call__(self, features: List[Dict[str, Any]]) -> Dict[str, torch.Tensor]:
        encode_rows, layout = self._rows_and_slots(features)
        batch = self._pad_tokens(encode_rows)
        if self.input_kind == TRIPLETS:
            batch["query_index"], batch["positive_index"], batch["negative_index"] = layout[0], layout[1], layout[2]
        else:
            batch["query_index"] = torch.tensor([g[0] for g in layout], dtype=torch.long)
            batch["positive_index"] = self._pad_lists([g[1] for g in layout])
            batch["negative_index"] = self._pad_lists([g[2] for g in layout])
        if self.mlm_probability:
            batch.update(self._mask_tokens(batch["input_ids"], batch["attention_mask"]))
        if self.graph_embeddings is not None:
            rows = np.asarray(encode_rows)
            batch["graph_embeddings"] = torch.from_numpy(np.ascontiguousarray(self.graph_embeddings[rows]))
            batch["graph_mask"] = torch.from_numpy(np.asarray(self.graph_mask)[rows].astype(bool))
        return batch


class QueryBlockSampler(Sampler[int]):
    """Shuffle whole queries, not rows: all rows of a query stay next to each other.

    Block order is a permutation drawn from ``seed + epoch`` (the Trainer calls ``set_epoch``), so
    every data-parallel process draws the same order and takes its own batches of it.
    """

    def __init__(self, query_of_row: Sequence[int], seed: int = 0) -> None:
        queries = np.asarray(query_of_row)
        _, first_index, inverse = np.unique(queries, return_index=True, return_inverse=True)
        # number blocks in order of first appearance, then list each block's rows in file order
        block_rank = np.argsort(np.argsort(first_index))[inverse]
        order = np.argsort(block_rank, kind="stable")
        boundaries = np.flatnonzero(np.diff(block_rank[order])) + 1
        self.blocks = np.split(order, boundaries)
        self.seed = seed
        self.epoch = 0
        self.num_rows = len(queries)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.num_rows

    def __iter__(self) -> Iterator[int]:
        rng = np.random.default_rng(self.seed + self.epoch)
        for block in rng.permutation(len(self.blocks)):
            yield from self.blocks[block].tolist()
