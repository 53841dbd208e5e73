"""Every loss against values computed by hand on small tensors, and the direction of its gradient."""
from __future__ import annotations

import math

import pytest
import torch

from scincl.model.losses import (
    LOSS_NAMES, LOSSES, AnglELoss, AnglETermLoss, CoSENTLoss, GraphDistillationLoss, InfoNCELoss,
    SourceMultiPositiveLoss, SourceTargetMultiPositiveLoss, TargetMultiPositiveLoss, TripletMarginLoss,
    angle_similarity, build_loss, loss_revision, loss_settings,
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


def test_infonce_in_batch_negatives_hand_values():
    emb = t(TWO_TRIPLETS)
    loss = InfoNCELoss(temperature=1.0, negatives="in-batch")(emb, idx([0, 3]), idx([1, 4]), idx([2, 5]))
    e = math.e
    # candidates p_a, n_a, p_b, n_b; q_a scores 1, 0, 0, -1; q_b scores 0, 1, 1, 0
    expected = (-math.log(e / (e + 1 + 1 + 1 / e)) - math.log(e / (1 + e + e + 1))) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-5)


def test_infonce_explicit_negatives_are_the_query_own_only():
    # default (thesis): q_a sees p_a (cos 1) and n_a (cos 0) only; q_b sees p_b (1) and n_b (0)
    emb = t(TWO_TRIPLETS)
    loss = InfoNCELoss(temperature=0.5)(emb, idx([0, 3]), idx([1, 4]), idx([2, 5]))
    assert loss.item() == pytest.approx(-math.log(math.exp(2) / (math.exp(2) + 1)), abs=1e-5)
    # two triplets of one query: each triplet sees both of the query's negatives, not the other positive
    emb = t([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [-1.0, 0.0]])
    loss = InfoNCELoss(temperature=1.0)(emb, idx([0, 0]), idx([1, 2]), idx([3, 4]))
    e = math.e
    expected = (-math.log(e / (e + 1 + 1 / e)) - math.log(e**0.6 / (e**0.6 + 1 + 1 / e))) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-5)


def test_infonce_dot_product_similarity_hand_values():
    # OpenMSD scores with the dot product: unnormalised lengths matter
    emb = t([[2.0, 0.0], [1.0, 1.0], [0.0, 3.0]])
    loss = InfoNCELoss(temperature=1.0, similarity="dot")(emb, idx([0]), idx([1]), idx([2]))
    assert loss.item() == pytest.approx(-math.log(math.exp(2) / (math.exp(2) + math.exp(0))), abs=1e-5)
    cos = InfoNCELoss(temperature=1.0, similarity="cos")(emb, idx([0]), idx([1]), idx([2]))
    c = 1 / math.sqrt(2)
    assert cos.item() == pytest.approx(-math.log(math.exp(c) / (math.exp(c) + 1)), abs=1e-5)


def test_infonce_masks_other_positives_of_the_same_query_in_batch():
    # one query (row 0), two triplets; p2 must not be a negative of the (q, p1) triplet and vice versa
    emb = t([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [-1.0, 0.0]])
    loss = InfoNCELoss(temperature=1.0, negatives="in-batch")(emb, idx([0, 0]), idx([1, 2]), idx([3, 4]))
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


def test_angle_term_is_cosent_over_angle_scores():
    emb = t([[1.0, 2.0, 3.0, 4.0], [2.0, 0.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.0]])
    loss = AnglETermLoss(scale=1.0)(emb, idx([0]), idx([1]), idx([2]))
    s_pos = angle_similarity(emb[[0]], emb[[1]]).item()
    s_neg = angle_similarity(emb[[0]], emb[[2]]).item()
    assert loss.item() == pytest.approx(math.log(1 + math.exp(s_neg - s_pos)), abs=1e-6)


def _angle_score(x, y):
    """AnglE's angle score by hand: |Re + Im| of z·conj(w)/(|z||w|) on (re | im) halves."""
    half = len(x) // 2
    z = [complex(x[k], x[half + k]) for k in range(half)]
    w = [complex(y[k], y[half + k]) for k in range(half)]
    norm = math.sqrt(sum(abs(v) ** 2 for v in z)) * math.sqrt(sum(abs(v) ** 2 for v in w))
    q = sum(zk * wk.conjugate() for zk, wk in zip(z, w)) / norm
    return abs(q.real + q.imag)


def test_angle_is_the_weighted_sum_of_the_three_published_terms():
    rows = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [-1.0, 0.5]]
    anchors, positives, negatives = [0, 3], [1, 4], [2, 5]
    e = math.e
    cos_neg_b = 0.5 / math.sqrt(1.25)  # cos((0, 1), (-1, 0.5))
    # cosine (CoSENT) term, scale 1: positive pairs score 1, 1; negative pairs 0 and cos_neg_b
    l_cos = math.log(1 + 2 * math.exp(0 - 1) + 2 * math.exp(cos_neg_b - 1))
    # in-batch term, scale 1: candidates p_a, n_a, p_b, n_b
    cos_a = [1, 0, 0, -1 / math.sqrt(1.25)]
    cos_b = [0, 1, 1, cos_neg_b]
    l_ibn = (-math.log(e / sum(math.exp(c) for c in cos_a)) - math.log(e / sum(math.exp(c) for c in cos_b))) / 2
    # angle term, scale 1: the same ranking over angle scores
    s_pos = [_angle_score(rows[a], rows[p]) for a, p in zip(anchors, positives)]
    s_neg = [_angle_score(rows[a], rows[n]) for a, n in zip(anchors, negatives)]
    l_angle = math.log(1 + sum(math.exp(sn - sp) for sp in s_pos for sn in s_neg))
    # the same in-batch term without the explicit negatives: candidates p_a, p_b only
    l_ibn_positives = (-math.log(e / (e + 1)) - math.log(e / (1 + e))) / 2
    by_mode = {"with-negatives": l_ibn, "without-negatives": l_ibn_positives,
               "average": (l_ibn + l_ibn_positives) / 2}  # angle-emb AngleLoss: (ibn_w·A + cln_w·B) / 2
    for mode, in_batch in by_mode.items():
        loss = AnglELoss(cosine_weight=0.5, ibn_weight=2.0, angle_weight=3.0, scale=1.0, in_batch=mode)(
            t(rows), idx(anchors), idx(positives), idx(negatives))
        assert loss.item() == pytest.approx(0.5 * l_cos + 2.0 * in_batch + 3.0 * l_angle, abs=1e-5), mode
    default = build_loss("angle")  # angle-emb defaults
    assert (default.cosine_weight, default.ibn_weight, default.angle_weight, default.scale) == (0.0, 1.0, 0.02, 20.0)
    assert default.in_batch == "average"
    assert build_loss("angle", angle_in_batch="with-negatives").in_batch == "with-negatives"
    with pytest.raises(ValueError, match="unknown AnglE in-batch term 'all'; choose one of average, with-negatives"):
        build_loss("angle", angle_in_batch="all")


def test_infonce_in_batch_positives_leaves_out_the_explicit_negatives():
    emb = t(TWO_TRIPLETS)
    loss = InfoNCELoss(temperature=1.0, negatives="in-batch-positives")(emb, idx([0, 3]), idx([1, 4]), idx([2, 5]))
    e = math.e
    # candidates p_a, p_b; q_a scores 1, 0; q_b scores 0, 1
    assert loss.item() == pytest.approx(-math.log(e / (e + 1)), abs=1e-5)


# MP-BERT4CR eqs. 4-6 (../shared/papers/001_3753c6be31fc929c.txt §4.1.5) written out term by term as
# printed, with Python loops over i (co-cited papers) and j (negatives); padding (-1) is skipped.
def _mpt_by_hand(name, emb, sources, positives, negatives):
    """Mean over groups of eq. 4 (``mpt-tgt``), 5 (``mpt-src``) or 6 (``mpt-src-tgt``), exact norms."""
    def d(a, b):
        return torch.linalg.vector_norm(emb[a] - emb[b])

    values = []
    for s, (t, *cocited), negs in zip(sources, positives, negatives):
        cs, ns = [c for c in cocited if c >= 0], [n for n in negs if n >= 0]
        total = torch.zeros((), dtype=emb.dtype)
        if name == "mpt-tgt":  # (4): Σ_i Σ_j [exp(|s-t| - |s-n_j|) + exp(|c_i-t| - |c_i-n_j|)]
            for i in cs:
                for j in ns:
                    total = total + torch.exp(d(s, t) - d(s, j)) + torch.exp(d(i, t) - d(i, j))
            if not cs:  # n = 0: the documented fallback (the printed sum is empty)
                for j in ns:
                    total = total + torch.exp(d(s, t) - d(s, j))
        else:  # (5) and (6): Σ_j exp(|s-t| - |s-n_j|) + Σ_j Σ_i exp(|s-c_i| - |s-n_j|) [+ Σ_j Σ_i exp(|t-c_i| - |t-n_j|)]
            for j in ns:
                total = total + torch.exp(d(s, t) - d(s, j))
            for j in ns:
                for i in cs:
                    total = total + torch.exp(d(s, i) - d(s, j))
                    if name == "mpt-src-tgt":
                        total = total + torch.exp(d(t, i) - d(t, j))
        values.append(torch.log(1 + total))
    return torch.stack(values).mean()


MPT_NAMES = ["mpt-tgt", "mpt-src", "mpt-src-tgt"]
# issue 25's example: float64, 10 x 4 torch.randn embeddings (seed 0), two groups with padding, n = 2 and 1
MPT_SOURCES, MPT_POSITIVES, MPT_NEGATIVES = [0, 5], [[1, 2, 3], [6, 7, -1]], [[4, 8, -1], [8, 9, 4]]
MPT_ISSUE_VALUES = {"mpt-tgt": 1.6841347, "mpt-src": 1.7870961, "mpt-src-tgt": 2.5137613}  # the equations' values


def _issue_embeddings():
    torch.manual_seed(0)
    return torch.randn(10, 4, dtype=torch.float64)


def _groups(sources, positives, negatives):
    return idx(sources), idx(positives), idx(negatives)


@pytest.mark.parametrize("name", MPT_NAMES)
def test_mp_bert4cr_equals_the_printed_equation_on_the_issue_example(name):
    emb = _issue_embeddings()
    hand = _mpt_by_hand(name, emb, MPT_SOURCES, MPT_POSITIVES, MPT_NEGATIVES).item()
    code = build_loss(name)(emb, *_groups(MPT_SOURCES, MPT_POSITIVES, MPT_NEGATIVES)).item()
    print(f"{name}: hand {hand:.7f} code {code:.7f}")
    assert hand == pytest.approx(MPT_ISSUE_VALUES[name], abs=1e-7)
    # l2_distance is torch.pairwise_distance: ||x - y + 1e-6||, which moves the value by ~1e-6
    assert code == pytest.approx(hand, abs=2e-6)


# Points on a line (1-d embeddings, distances |x - y|), values by hand from the equations:
# group 1: s=0 at 0, t=1 at 1, co-cited 2 at 2 and 3 at -1.5, negatives 4 at 3 and 5 at -2;
# group 2: s=6 at 10, t=7 at 11, no co-cited paper, one negative 8 at 8; row 9 is in no group.
MPT_EMB = [[0.0], [1.0], [2.0], [-1.5], [3.0], [-2.0], [10.0], [11.0], [8.0], [100.0]]
MPT_GROUPS = (idx([0, 6]), idx([[1, 2, 3], [7, -1, -1]]), idx([[4, 5], [8, -1]]))
E = math.exp
ST = E(1 - 3) + E(1 - 2)  # Σ_j exp(|s-t| - |s-n_j|)
CT = E(1 - 1) + E(1 - 4) + E(2.5 - 4.5) + E(2.5 - 0.5)  # Σ_i Σ_j exp(|c_i-t| - |c_i-n_j|)
SC = E(2 - 3) + E(2 - 2) + E(1.5 - 3) + E(1.5 - 2)  # Σ_j Σ_i exp(|s-c_i| - |s-n_j|)
TC = E(1 - 2) + E(1 - 3) + E(2.5 - 2) + E(2.5 - 3)  # Σ_j Σ_i exp(|t-c_i| - |t-n_j|)
GROUP_2 = math.log(1 + E(1 - 2))  # n = 0: log(1 + exp(|s-t| - |s-n_1|)) (eq. 5/6 as printed, eq. 4's fallback)
MPT_HAND_VALUES = {
    "mpt-tgt": (math.log(1 + 2 * ST + CT) + GROUP_2) / 2,  # eq. 4: the source-target term once per c_i (n = 2)
    "mpt-src": (math.log(1 + ST + SC) + GROUP_2) / 2,  # eq. 5
    "mpt-src-tgt": (math.log(1 + ST + SC + TC) + GROUP_2) / 2,  # eq. 6
}


@pytest.mark.parametrize("name", MPT_NAMES)
def test_mp_bert4cr_hand_values_on_padded_groups(name):
    loss = build_loss(name)(t(MPT_EMB), *MPT_GROUPS)
    assert loss.item() == pytest.approx(MPT_HAND_VALUES[name], abs=1e-5)
    by_hand = _mpt_by_hand(name, torch.tensor(MPT_EMB, dtype=torch.float64), [0, 6], [[1, 2, 3], [7, -1, -1]],
                           [[4, 5], [8, -1]])
    assert by_hand.item() == pytest.approx(MPT_HAND_VALUES[name], abs=1e-12)


def test_mp_bert4cr_classes_and_group_values():
    assert type(build_loss("mpt-tgt")) is TargetMultiPositiveLoss
    assert type(build_loss("mpt-src")) is SourceMultiPositiveLoss
    assert type(build_loss("mpt-src-tgt")) is SourceTargetMultiPositiveLoss
    per_group = TargetMultiPositiveLoss().group_losses(t(MPT_EMB), *MPT_GROUPS)
    assert per_group.tolist() == pytest.approx([math.log(1 + 2 * ST + CT), GROUP_2], abs=1e-5)
    # a group whose negatives are all padding contributes log(1) = 0
    for name in MPT_NAMES:
        empty = build_loss(name).group_losses(t(MPT_EMB), idx([0]), idx([[1, 2]]), idx([[-1, -1]]))
        assert empty.tolist() == [0.0]


@pytest.mark.parametrize("name", MPT_NAMES)
def test_mp_bert4cr_gradients_equal_the_equations_gradients(name):
    emb = _issue_embeddings().requires_grad_(True)
    build_loss(name)(emb, *_groups(MPT_SOURCES, MPT_POSITIVES, MPT_NEGATIVES)).backward()
    hand = _issue_embeddings().requires_grad_(True)
    _mpt_by_hand(name, hand, MPT_SOURCES, MPT_POSITIVES, MPT_NEGATIVES).backward()
    assert torch.allclose(emb.grad, hand.grad, atol=1e-6)


@pytest.mark.parametrize("name", MPT_NAMES)
def test_mp_bert4cr_gradients_reach_exactly_the_rows_of_the_equation(name):
    # one group: s=0, t=1, co-cited 2 (and padding), negative 3 (and padding); row 4 is in no group,
    # padding must not reach row 0 (where -1 is clamped to) beyond what s itself gets
    emb = t([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [5.0, 5.0]])
    build_loss(name)(emb, idx([0]), idx([[1, 2, -1]]), idx([[3, -1]])).backward()
    touched = {row for row in range(5) if emb.grad[row].abs().sum() > 0}
    assert touched == {0, 1, 2, 3}
    # which distances move the co-cited paper c = row 2 (its gradient is a sum of unit vectors):
    s, tg, c, n = (emb[k].detach() for k in range(4))
    unit = lambda a, b: (a - b) / torch.linalg.vector_norm(a - b)  # noqa: E731 (d|a-b|/da)
    grad_c = emb.grad[2]
    if name == "mpt-src":  # eq. 5: only |s - c| involves c
        assert abs(float(unit(c, s) @ torch.tensor([-grad_c[1], grad_c[0]]))) < 1e-6  # parallel to c - s
    elif name == "mpt-tgt":  # eq. 4: c is the anchor of |c - t| - |c - n|
        w = torch.exp(torch.linalg.vector_norm(c - tg) - torch.linalg.vector_norm(c - n))
        total = 1 + w + torch.exp(torch.linalg.vector_norm(s - tg) - torch.linalg.vector_norm(s - n))
        assert torch.allclose(grad_c, w / total * (unit(c, tg) - unit(c, n)), atol=1e-6)
    else:  # eq. 6: |s - c| and |t - c| involve c, the negatives' distances do not
        w_s = torch.exp(torch.linalg.vector_norm(s - c) - torch.linalg.vector_norm(s - n))
        w_t = torch.exp(torch.linalg.vector_norm(tg - c) - torch.linalg.vector_norm(tg - n))
        total = 1 + w_s + w_t + torch.exp(torch.linalg.vector_norm(s - tg) - torch.linalg.vector_norm(s - n))
        assert torch.allclose(grad_c, (w_s * unit(c, s) + w_t * unit(c, tg)) / total, atol=1e-6)


def test_graph_distillation_hand_values_and_mask():
    text = t([[1.0, 0.0], [0.0, 1.0]])
    graph = torch.tensor([[1.0, 0.0], [2.0, 0.0]])
    loss = GraphDistillationLoss()(text, graph)
    assert loss.item() == pytest.approx(0.5)  # student [[1,0],[0,1]] vs teacher all ones
    loss.backward()
    assert torch.isfinite(text.grad).all()
    assert GraphDistillationLoss()(text, graph, torch.tensor([True, False])).item() == 0.0


def _similarities(name, emb, anchor, positive, negative):
    if name == "angle-term":
        return angle_similarity(emb[anchor], emb[positive]), angle_similarity(emb[anchor], emb[negative])
    cos = torch.nn.functional.cosine_similarity
    if name in ("infonce", "cosent", "angle"):
        return cos(emb[anchor], emb[positive]), cos(emb[anchor], emb[negative])
    l2 = torch.linalg.norm
    return -l2(emb[anchor] - emb[positive], dim=-1), -l2(emb[anchor] - emb[negative], dim=-1)


@pytest.mark.parametrize("name", ["triplet", "infonce", "cosent", "angle-term", "angle"])
def test_gradient_step_pulls_positives_and_pushes_negatives(name):
    torch.manual_seed(0)
    base = torch.randn(6, 8)
    anchor, positive, negative = idx([0, 3]), idx([1, 4]), idx([2, 5])
    emb = base.clone().requires_grad_(True)
    # margin 100: every triplet active
    loss_fn = build_loss(name, triplet_margin=100.0, temperature=1.0, ranking_scale=1.0)
    loss = loss_fn(emb, anchor, positive, negative)
    loss.backward()
    stepped = (base - 0.01 * emb.grad).detach()
    pos_before, neg_before = _similarities(name, base, anchor, positive, negative)
    pos_after, neg_after = _similarities(name, stepped, anchor, positive, negative)
    assert (pos_after - neg_after > pos_before - neg_before).all()
    assert loss_fn(stepped, anchor, positive, negative) < loss


@pytest.mark.parametrize("name", ["mpt-tgt", "mpt-src", "mpt-src-tgt"])
def test_multi_positive_gradient_step_reduces_loss(name):
    emb = t(MPT_EMB)
    loss_fn = build_loss(name)
    loss = loss_fn(emb, *MPT_GROUPS)
    loss.backward()
    stepped = (emb - 0.05 * emb.grad).detach()
    assert loss_fn(stepped, *MPT_GROUPS) < loss



def test_registry_maps_every_name_to_its_class_and_flags():
    assert LOSS_NAMES == ("triplet", "infonce", "cosent", "angle-term", "angle", "mpt-tgt", "mpt-src", "mpt-src-tgt")
    assert {name: cls.__name__ for name, cls in LOSSES.items()}["angle-term"] == "AnglETermLoss"
    assert all(type(build_loss(name)) is LOSSES[name] for name in LOSS_NAMES)
    # flags the loss reads are applied, others ignored, None keeps the loss's default
    infonce = build_loss("infonce", temperature=None, infonce_negatives="in-batch", similarity="dot", triplet_margin=3)
    assert loss_settings(infonce) == {"temperature": 0.1, "infonce_negatives": "in-batch", "similarity": "dot",
                                      "revision": 2}
    assert loss_settings(build_loss("triplet", triplet_margin=0.5)) == {"triplet_margin": 0.5, "distance": "l2"}
    # eqs. 4-6: no margin; revision 2 = as printed (issue 25), so runs of the older forms are not reused
    assert loss_settings(build_loss("mpt-tgt", triplet_margin=0.5)) == {"distance": "l2", "revision": 2}
    assert loss_revision("mpt-src-tgt") == loss_revision("infonce") == 2 and loss_revision("angle") == 3
    assert loss_revision("triplet") == loss_revision("cosent") == 1
    assert loss_settings(build_loss("angle"))["angle_in_batch"] == "average"


def test_build_loss_rejects_unknown_names_and_values():
    with pytest.raises(ValueError, match="unknown loss 'foo'; choose one of triplet, infonce"):
        build_loss("foo")
    with pytest.raises(ValueError, match="unknown distance"):
        TripletMarginLoss(distance="manhattan")
    with pytest.raises(ValueError, match="unknown InfoNCE negatives 'all'; choose one of explicit, in-batch, in-batch-positives"):
        build_loss("infonce", infonce_negatives="all")
    with pytest.raises(ValueError, match="unknown similarity 'l1'"):
        build_loss("infonce", similarity="l1")


def test_the_losses_declare_their_options_and_train_takes_them_from_there(tmp_path):
    """issue 39: train() restated ten loss flags; each loss declares its options (flag -> constructor argument) and
    the constructor's type and default are the option's. train routes them to the loss (a bad value of one is the
    loss's own error), run_specter to training, --help lists them."""
    from scincl.errors import InputError
    from scincl.model.losses import loss_options
    from scincl.model.losses.triplet import TripletMarginLoss
    from scincl.model.train import train
    from scincl.pipeline.scincl_plan import run_specter_flag_groups, settings_from_flags
    import inspect

    options = loss_options()
    assert options["triplet_margin"].defaults == {"triplet": inspect.signature(TripletMarginLoss).parameters[
        "margin"].default}
    assert options["distance"].losses == ("triplet", "mpt-tgt", "mpt-src", "mpt-src-tgt")
    assert options["ranking_scale"].type is float and set(options["ranking_scale"].losses) == {"cosent", "angle-term",
                                                                                               "angle"}
    assert not set(options) & set(inspect.signature(train).parameters)  # no longer restated by train
    with pytest.raises(InputError, match="--loss infonce: .*all"):
        train(str(tmp_path / "t.csv"), str(tmp_path / "m.jsonl"), str(tmp_path / "out"), loss="infonce",
              infonce_negatives="all")
    assert settings_from_flags(None, {"triplet_margin": 0.5}).training_options["triplet_margin"] == 0.5
    assert {"triplet_margin", "angle_in_batch"} <= set(run_specter_flag_groups())


def test_an_unknown_loss_name_is_one_line_naming_its_flag_wherever_it_is_given():
    """train, run_specter and the experiments refuse an unknown loss with one line, from one check (they said it
    three ways: "unknown --loss ...; choose one of", "unknown loss ...: choose from")."""
    from scincl.errors import InputError
    from scincl.model.losses import LOSS_NAMES, check_loss_name
    from scincl.pipeline.experiment_kinds import load_experiments

    assert check_loss_name("infonce") == "infonce"
    with pytest.raises(InputError, match=rf"^unknown --loss 'hinge'; choose one of {', '.join(LOSS_NAMES)}$"):
        check_loss_name("hinge")
    with pytest.raises(InputError, match=r"^unknown --losses 'hinge'; choose one of triplet"):
        load_experiments([{"kind": "losses", "losses": "triplet,hinge"}], {}, "reproduce")
    with pytest.raises(InputError, match=r"^unknown --loss 'hinge'; choose one of triplet"):
        load_experiments([{"kind": "main"}], {"loss": "hinge"}, "reproduce")


@pytest.mark.parametrize("name, options, message", [
    ("triplet", {"triplet_margin": -1}, "--triplet_margin -1: must be >= 0"),
    ("infonce", {"temperature": 0}, "--temperature 0: must be > 0"),
    ("infonce", {"temperature": True}, "--temperature: expected a number, got True"),
    ("cosent", {"ranking_scale": 0}, "--ranking_scale 0: must be > 0"),
])
def test_a_loss_built_in_python_checks_its_options_as_the_command_line_does(name, options, message):
    """build_loss checks each option it passes by the flag's rule: a negative margin built a loss before."""
    from scincl.errors import InputError
    from scincl.model.losses import build_loss

    with pytest.raises(InputError) as err:
        build_loss(name, **options)
    assert message in str(err.value)
    assert build_loss("triplet", triplet_margin=0.5).margin == 0.5
