"""Every loss against values computed by hand on small tensors, and the direction of its gradient."""
from __future__ import annotations

import math

import pytest
import torch

from scincl.model.losses import (
    AnglELoss, CoSENTLoss, GraphDistillationLoss, InfoNCELoss, MultiPositiveTripletLoss, TripletMarginLoss,
    angle_similarity, build_loss,
)


def t(values):
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def idx(values):
    return torch.tensor(values, dtype=torch.long)


# rows: 0 q_a, 1 p_a, 2 n_a, 3 q_b, 4 p_b, 5 n_b (two triplets with different queries)
TWO_TRIPLETS = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [-1.0, 0.0]]


def test_triplet_margin_loss_hand_values_and_gradient():
    emb = t([[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]])
    loss_fn = TripletMarginLoss(margin=1.0)
    # triplet 1: max(5 - 1 + 1, 0) = 5; triplet 2 (positive/negative swapped): max(1 - 5 + 1, 0) = 0
    loss = loss_fn(emb, idx([0, 0]), idx([1, 2]), idx([2, 1]))
    assert loss.item() == pytest.approx(2.5, abs=1e-4)
    loss.backward()
    # d/dp ||q - p|| = (p - q) / ||p - q||, halved by the mean over two triplets: (0.3, 0.4)
    assert emb.grad[1].tolist() == pytest.approx([0.3, 0.4], abs=1e-4)
    # d/dn of -||q - n|| = -(n - q) / ||n - q|| / 2: descent pushes the negative away from the anchor
    assert emb.grad[2].tolist() == pytest.approx([-0.5, 0.0], abs=1e-4)


def test_triplet_margin_loss_cosine_distance_and_margin():
    emb = t([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    loss = TripletMarginLoss(margin=0.5, distance="cosine")(emb, idx([0]), idx([1]), idx([2]))
    assert loss.item() == pytest.approx(1.0 - 0.0 + 0.5)  # d(q,p) = 1, d(q,n) = 0


def test_infonce_in_batch_and_explicit_negatives_hand_values():
    emb = t(TWO_TRIPLETS)
    loss = InfoNCELoss(temperature=1.0)(emb, idx([0, 3]), idx([1, 4]), idx([2, 5]))
    e = math.e
    # candidates p_a, n_a, p_b, n_b; q_a scores 1, 0, 0, -1; q_b scores 0, 1, 1, 0
    expected = (-math.log(e / (e + 1 + 1 + 1 / e)) - math.log(e / (1 + e + e + 1))) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-5)


def test_infonce_masks_other_positives_of_the_same_query():
    # one query (row 0), two triplets; p2 must not be a negative of the (q, p1) triplet and vice versa
    emb = t([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [-1.0, 0.0]])
    loss = InfoNCELoss(temperature=1.0)(emb, idx([0, 0]), idx([1, 2]), idx([3, 4]))
    e = math.e
    first = -math.log(e / (e + 1 + 1 / e))
    second = -math.log(e**0.6 / (e**0.6 + 1 + 1 / e))
    assert loss.item() == pytest.approx((first + second) / 2, abs=1e-5)


def test_cosent_hand_values():
    emb = t(TWO_TRIPLETS)
    loss = CoSENTLoss(scale=1.0)(emb, idx([0, 3]), idx([1, 4]), idx([2, 5]))
    # positive pair scores 1, 1; negative pair scores 0, 0 -> log(1 + 4 e^-1)
    assert loss.item() == pytest.approx(math.log(1 + 4 / math.e), abs=1e-6)


def test_angle_similarity_matches_complex_formula():
    x, y = [1.0, 2.0, 3.0, 4.0], [2.0, 0.0, 1.0, 1.0]
    z = [complex(x[0], x[2]), complex(x[1], x[3])]
    w = [complex(y[0], y[2]), complex(y[1], y[3])]
    norm = math.sqrt(sum(abs(v) ** 2 for v in z)) * math.sqrt(sum(abs(v) ** 2 for v in w))
    q = sum(zk * wk.conjugate() for zk, wk in zip(z, w)) / norm
    expected = abs(q.real + q.imag)
    assert angle_similarity(torch.tensor([x]), torch.tensor([y])).item() == pytest.approx(expected, rel=1e-6)


def test_angle_loss_is_cosent_over_angle_scores():
    emb = t([[1.0, 2.0, 3.0, 4.0], [2.0, 0.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.0]])
    loss = AnglELoss(scale=1.0)(emb, idx([0]), idx([1]), idx([2]))
    s_pos = angle_similarity(emb[[0]], emb[[1]]).item()
    s_neg = angle_similarity(emb[[0]], emb[[2]]).item()
    assert loss.item() == pytest.approx(math.log(1 + math.exp(s_neg - s_pos)), abs=1e-6)


# groups: q=[0], positives p1=[1], p2=[3]; negatives n1=[2], n2=[10] (points on a line)
GROUP_EMB = [[0.0], [1.0], [3.0], [2.0], [10.0]]


@pytest.mark.parametrize("variant, expected", [("mpt-src", 0.5), ("mpt-tgt", 1.0), ("mpt-src-tgt", 1.5)])
def test_multi_positive_triplet_hand_values(variant, expected):
    # src: (p1,n1) 1+1-2=0, (p2,n1) 1+3-2=2, others < 0 -> 2/4
    # tgt: (p1,p2,n1) 1+2-1=2, (p2,p1,n1) 1+2-1=2, with n2 < 0 -> 4/4
    emb = t(GROUP_EMB)
    loss = MultiPositiveTripletLoss(variant)(emb, idx([0]), idx([[1, 2]]), idx([[3, 4]]))
    assert loss.item() == pytest.approx(expected, abs=1e-4)


def test_multi_positive_padding_and_single_positive_groups():
    emb = t(GROUP_EMB + [[5.0], [4.5], [5.2]])
    # group 2: query 5, one positive (6), one negative (7) padded with -1
    q, pos, neg = idx([0, 5]), idx([[1, 2], [6, -1]]), idx([[3, 4], [7, -1]])
    src = MultiPositiveTripletLoss("mpt-src")(emb, q, pos, neg)
    # group 2 adds one src term: 1 + 0.5 - 0.2 = 1.3 -> (2 + 1.3) / 5
    assert src.item() == pytest.approx(3.3 / 5, abs=1e-4)
    tgt = MultiPositiveTripletLoss("mpt-tgt")(emb, q, pos, neg)
    assert tgt.item() == pytest.approx(1.0, abs=1e-4)  # a single positive has no target terms


def test_graph_distillation_hand_values_and_mask():
    text = t([[1.0, 0.0], [0.0, 1.0]])
    graph = torch.tensor([[1.0, 0.0], [2.0, 0.0]])
    loss = GraphDistillationLoss()(text, graph)
    assert loss.item() == pytest.approx(0.5)  # student [[1,0],[0,1]] vs teacher all ones
    loss.backward()
    assert torch.isfinite(text.grad).all()
    assert GraphDistillationLoss()(text, graph, torch.tensor([True, False])).item() == 0.0


def _similarities(name, emb, anchor, positive, negative):
    if name == "angle":
        return angle_similarity(emb[anchor], emb[positive]), angle_similarity(emb[anchor], emb[negative])
    cos = torch.nn.functional.cosine_similarity
    if name in ("infonce", "cosent"):
        return cos(emb[anchor], emb[positive]), cos(emb[anchor], emb[negative])
    l2 = torch.linalg.norm
    return -l2(emb[anchor] - emb[positive], dim=-1), -l2(emb[anchor] - emb[negative], dim=-1)


@pytest.mark.parametrize("name", ["triplet", "infonce", "cosent", "angle"])
def test_gradient_step_pulls_positives_and_pushes_negatives(name):
    torch.manual_seed(0)
    base = torch.randn(6, 8)
    anchor, positive, negative = idx([0, 3]), idx([1, 4]), idx([2, 5])
    emb = base.clone().requires_grad_(True)
    loss_fn = build_loss(name, margin=100.0, temperature=1.0, scale=1.0)  # margin 100: every triplet active
    loss = loss_fn(emb, anchor, positive, negative)
    loss.backward()
    stepped = (base - 0.01 * emb.grad).detach()
    pos_before, neg_before = _similarities(name, base, anchor, positive, negative)
    pos_after, neg_after = _similarities(name, stepped, anchor, positive, negative)
    assert (pos_after - neg_after > pos_before - neg_before).all()
    assert loss_fn(stepped, anchor, positive, negative) < loss


@pytest.mark.parametrize("variant", MultiPositiveTripletLoss.VARIANTS)
def test_multi_positive_gradient_step_reduces_loss(variant):
    emb = t(GROUP_EMB)
    loss_fn = MultiPositiveTripletLoss(variant)
    args = (idx([0]), idx([[1, 2]]), idx([[3, 4]]))
    loss = loss_fn(emb, *args)
    loss.backward()
    stepped = (emb - 0.05 * emb.grad).detach()
    if variant != "mpt-tgt":  # the source terms move positives/negatives relative to the query at 0
        assert stepped[2, 0] < 3.0  # the far positive p2 moves towards the query
        assert stepped[3, 0] > 2.0  # the violating negative n1 moves away from it
    else:  # the target terms pull the two positives together
        assert stepped[2, 0] - stepped[1, 0] < 3.0 - 1.0
    assert loss_fn(stepped, *args) < loss


def test_build_loss_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown loss 'foo'"):
        build_loss("foo")
    with pytest.raises(ValueError, match="unknown distance"):
        TripletMarginLoss(distance="manhattan")
