"""SciDocs recommendation task: a small click ranker over embedding + metadata features.

Re-implementation in plain PyTorch of the official AllenNLP model (allenai/scidocs
``recommender/``, config ``train_similar_papers_model.json``; docs/scidocs_protocol.md):

* 11 features per (query, candidate): author Jaccard, a position feature that is always 0
  (the official reader overwrites it), title-token Jaccard, cosine of the embeddings (missing
  embedding = zero vector; ``project_query`` is false), cited-by and reference Jaccard,
  candidate-cites-query and query-cites-candidate flags, candidate oldness
  ``clip((2020 - year) / 20)``, relative oldness ``clip((year_q - year_c) / 20)``, and
  ``log(1 + #cited_by) / 10``;
* feed-forward 11 -> 50 (ReLU, dropout 0.4) -> 1 (sigmoid), margin ranking loss (margin 0.1)
  over (clicked, other shown paper) pairs, at most 10 pairs per click row; the loss is divided by
  the rescaled propensity at index -1 (the official position feature is 0, so ``round(0*10-1)``
  picks the last propensity: a constant factor, reproduced as is);
* Adadelta (rho 0.95, lr 1.0), gradient values clipped to ±5, batch 128, 5 epochs, seed 7; with
  a validation split the weights of the epoch with the lowest validation loss are kept
  (AllenNLP's default ``-loss`` criterion), as the official run on ``test`` does.

Test: ``ranked_above`` = shown papers scoring above the clicked one (ties 0.5);
nDCG = 1 / log2(2 + ranked_above), P@1 = [ranked_above == 0]; each row weighted by
1 / propensity at the click position (propensities rescaled to mean 1). Not bit-reproducible
even officially (different frameworks, float order).

Deviation: titles are tokenised with a regex (words and single punctuation marks) instead of
spaCy, which changes the title-Jaccard feature slightly.
"""
from __future__ import annotations

import logging
import math
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from scincl.scidocs_io import RecommClick

logger = logging.getLogger(__name__)

N_FEATURES = 11
MAX_PAIRS_PER_CLICK = 10  # official config: max_results_per_query
HIDDEN_DIM, DROPOUT = 50, 0.4  # official config: feedforward
MARGIN = 0.1  # official config: ranking_loss_margin
BATCH_SIZE, EPOCHS, SEED = 128, 5, 7  # official config: iterator, trainer, random_seed
ADADELTA_RHO, GRAD_CLIP_VALUE = 0.95, 5.0  # official config: optimizer, grad_clipping
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _jaccard(a: Sequence, b: Sequence) -> float:
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


class PaperFeatures:
    """Pairwise metadata features of the official ``simclick_data_reader`` from ``paper_metadata_recomm.json``."""

    def __init__(self, papers: Mapping[str, dict], embeddings: Mapping[str, np.ndarray]) -> None:
        self.papers = papers
        self.embeddings = embeddings
        self.dim = len(next(iter(embeddings.values())))
        self._title_tokens: Dict[str, List[str]] = {}

    def _field(self, pid: str, name: str) -> list:
        return list(self.papers[pid].get(name) or [])

    def _overlap(self, a: str, b: str, name: str) -> float:
        if a not in self.papers or b not in self.papers:
            return 0.0
        return _jaccard(self._field(a, name), self._field(b, name))

    def _cites(self, source: str, candidate: str) -> float:
        """1 when ``candidate`` cites ``source`` by either paper's lists (official ``candidate_cites_source``)."""
        flag = (source in self.papers and candidate in self._field(source, "cited_by")) or (
            candidate in self.papers and source in self._field(candidate, "references"))
        return float(flag)

    def _year(self, pid: str) -> Optional[float]:
        if pid not in self.papers or self.papers[pid].get("year") is None:
            return None
        try:
            return float(self.papers[pid]["year"])
        except (TypeError, ValueError):
            return None

    def _tokens(self, pid: str) -> List[str]:
        if pid not in self._title_tokens:
            title = (self.papers.get(pid) or {}).get("title") or ""
            self._title_tokens[pid] = _TOKEN.findall(title) or ["<blank>"]
        return self._title_tokens[pid]

    def _title_match(self, a: str, b: str) -> float:
        ta, tb = self._tokens(a), self._tokens(b)
        if ta == ["<blank>"] and tb == ["<blank>"]:
            return 0.0
        return _jaccard(ta, tb)

    def _cosine(self, a: str, b: str) -> float:
        va, vb = self.embeddings.get(a), self.embeddings.get(b)
        if va is None or vb is None:
            return 0.0  # a zero vector: torch's cosine_similarity gives 0
        denominator = max(float(np.linalg.norm(va)) * float(np.linalg.norm(vb)), 1e-8)
        return float(np.dot(va, vb) / denominator)

    def pair(self, query: str, candidate: str) -> np.ndarray:
        """The 11 features in the official order (author, position, title, cosine, ...)."""
        cand_year, query_year = self._year(candidate), self._year(query)
        oldness = 0.0 if cand_year is None else max(-1.0, min(1.0, (2020.0 - cand_year) / 20.0))
        relative = 0.0 if cand_year is None or query_year is None else max(-1.0, min(1.0, (query_year - cand_year) / 20.0))
        n_cited = math.log(len(set(self._field(candidate, "cited_by"))) + 1) / 10.0 if candidate in self.papers else 0.0
        return np.array([
            self._overlap(query, candidate, "authors"),
            0.0,  # position: always 0 in the official reader
            self._title_match(query, candidate),
            self._cosine(query, candidate),
            self._overlap(query, candidate, "cited_by"),
            self._overlap(query, candidate, "references"),
            self._cites(query, candidate),
            self._cites(candidate, query),
            oldness,
            relative,
            n_cited,
        ], dtype=np.float32)


def training_pairs(clicks: Sequence[RecommClick], features: PaperFeatures) -> Tuple[np.ndarray, np.ndarray]:
    """(clicked, other) feature pairs: up to 10 per click row, in shown order (official triplet sampler)."""
    positives, negatives = [], []
    for click in clicks:
        pos = features.pair(click.query_id, click.clicked_id)
        others = [o for o in click.shown_ids if o != click.clicked_id][:MAX_PAIRS_PER_CLICK]
        for other in others:
            positives.append(pos)
            negatives.append(features.pair(click.query_id, other))
    return np.asarray(positives, dtype=np.float32).reshape(-1, N_FEATURES), \
        np.asarray(negatives, dtype=np.float32).reshape(-1, N_FEATURES)


def _scorer():
    import torch

    return torch.nn.Sequential(
        torch.nn.Linear(N_FEATURES, HIDDEN_DIM), torch.nn.ReLU(), torch.nn.Dropout(DROPOUT),
        torch.nn.Linear(HIDDEN_DIM, 1), torch.nn.Sigmoid(),
    )


def train_ranker(train: Tuple[np.ndarray, np.ndarray], val: Optional[Tuple[np.ndarray, np.ndarray]],
                 propensities: Sequence[float], device: Optional[str] = None):
    """Train the click ranker; returns the model in eval mode (best validation epoch when ``val``)."""
    import copy

    import torch

    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = _scorer().to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=ADADELTA_RHO)
    loss_fn = torch.nn.MarginRankingLoss(margin=MARGIN, reduction="none")
    weight = float(rescaled_propensities(propensities)[-1])  # see module docstring
    pos_all = torch.from_numpy(train[0]).to(device)
    neg_all = torch.from_numpy(train[1]).to(device)

    def batch_loss(pos: "torch.Tensor", neg: "torch.Tensor") -> "torch.Tensor":
        pos_score, neg_score = model(pos), model(neg)
        return (loss_fn(pos_score, neg_score, torch.ones_like(pos_score)) / weight).mean()

    best_state, best_val = None, math.inf
    for epoch in range(EPOCHS):
        model.train()
        order = torch.from_numpy(rng.permutation(len(pos_all))).to(device)
        for start in range(0, len(order), BATCH_SIZE):
            idx = order[start:start + BATCH_SIZE]
            optimizer.zero_grad()
            loss = batch_loss(pos_all[idx], neg_all[idx])
            loss.backward()
            torch.nn.utils.clip_grad_value_(model.parameters(), GRAD_CLIP_VALUE)
            optimizer.step()
        if val is not None and len(val[0]):
            model.eval()
            with torch.no_grad():
                val_loss = float(batch_loss(torch.from_numpy(val[0]).to(device), torch.from_numpy(val[1]).to(device)))
            logger.info("recomm ranker epoch %d: validation loss %.5f", epoch + 1, val_loss)
            if val_loss < best_val:
                best_val, best_state = val_loss, copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    return model.eval()


def rescaled_propensities(propensities: Sequence[float]) -> np.ndarray:
    """Propensities scaled to mean 1 (official ``adjClickDistribution``)."""
    p = np.asarray(propensities, dtype=np.float64)
    return p * len(p) / p.sum()


def ranking_metrics(model, clicks: Sequence[RecommClick], features: PaperFeatures,
                    propensities: Sequence[float]) -> Dict[str, float]:
    """Propensity-adjusted nDCG and P@1 (×100, 2 decimals) plus unadjusted values and the row count."""
    import torch

    adjust = rescaled_propensities(propensities)
    device = next(model.parameters()).device
    ndcg, p_at_1, weights = [], [], []
    with torch.no_grad():
        for click in clicks:
            feats = np.stack([features.pair(click.query_id, pid) for pid in click.shown_ids])
            scores = model(torch.from_numpy(feats).to(device)).squeeze(1).cpu().numpy()
            clicked = click.shown_ids.index(click.clicked_id)
            others = np.delete(scores, clicked)
            above = float(np.sum(others > scores[clicked]) + 0.5 * np.sum(others == scores[clicked]))
            position = min(click.clicked_position, len(adjust)) - 1
            weights.append(1.0 / adjust[position])
            ndcg.append(1.0 / math.log2(2 + above))
            p_at_1.append(1.0 if above == 0 else 0.0)
    w = np.asarray(weights)
    return {
        "adj-NDCG": float(np.round(100 * np.sum(w * ndcg) / w.sum(), 2)),
        "adj-P@1": float(np.round(100 * np.sum(w * p_at_1) / w.sum(), 2)),
        "ndcg": float(np.round(100 * np.mean(ndcg), 2)),
        "P@1": float(np.round(100 * np.mean(p_at_1), 2)),
        "clicks": len(clicks),
    }


def evaluate_recommendation(train_clicks: Sequence[RecommClick], val_clicks: Optional[Sequence[RecommClick]],
                            eval_clicks: Sequence[RecommClick], papers: Mapping[str, dict],
                            embeddings: Mapping[str, np.ndarray], propensities: Sequence[float],
                            device: Optional[str] = None) -> Dict[str, float]:
    """Train on ``train_clicks`` (model selection on ``val_clicks`` when given) and score ``eval_clicks``."""
    features = PaperFeatures(papers, embeddings)
    train = training_pairs(train_clicks, features)
    val = training_pairs(val_clicks, features) if val_clicks else None
    logger.info("recomm: %d training pairs, %d validation pairs, %d evaluation clicks",
                len(train[0]), 0 if val is None else len(val[0]), len(eval_clicks))
    model = train_ranker(train, val, propensities, device=device)
    return ranking_metrics(model, eval_clicks, features, propensities)
