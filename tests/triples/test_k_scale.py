"""k sizing for the corpus at hand (--k_scale corpus) and the collision-sweep recommendation (paper Fig. 5)."""
from __future__ import annotations

import pytest

from scincl.errors import InputError
from scincl.triples.k_scale import check_k_scale, corpus_k
from scincl.triples.margins import recommend_margin, recommended_rows


def test_corpus_k_maps_the_paper_ratios_with_floors():
    assert corpus_k(680_967) == {"easy_positives_k_min": 20, "easy_positives_k_max": 25,
                                 "hard_negatives_k_min": 3998, "hard_negatives_k_max": 4000}
    assert corpus_k(6_809_670) == {"easy_positives_k_min": 245, "easy_positives_k_max": 250,
                                   "hard_negatives_k_min": 39998, "hard_negatives_k_max": 40000}
    # hep-th size: k+ floored at 2 c+ = 10, k-hard = 4000 * 28000 / 680967 = 164
    assert corpus_k(28_000) == {"easy_positives_k_min": 5, "easy_positives_k_max": 10,
                                "hard_negatives_k_min": 162, "hard_negatives_k_max": 164}
    # demo size: k-hard floored at 2 k+ + c- = 22 (ratio alone would give 8)
    assert corpus_k(1_300) == {"easy_positives_k_min": 5, "easy_positives_k_max": 10,
                               "hard_negatives_k_min": 20, "hard_negatives_k_max": 22}
    # capped at N - 1 neighbours
    assert corpus_k(16) == {"easy_positives_k_min": 5, "easy_positives_k_max": 10,
                            "hard_negatives_k_min": 13, "hard_negatives_k_max": 15}
    assert corpus_k(28_000, positives_count=3, hard_negatives_count=4)["hard_negatives_k_min"] == 160


def test_corpus_k_errors():
    with pytest.raises(InputError, match="an index of 12 papers is too small for 5 positives and 2 hard negatives"):
        corpus_k(12)
    with pytest.raises(InputError, match=r"--k_scale 'tiny': choose one of paper, corpus"):
        check_k_scale("tiny")


def _row(kp, kn, collisions, symmetric=0):
    return {"k_positives": kp, "k_hard_negatives": kn, "margin": kn - kp, "collisions": collisions,
            "symmetric_collisions": symmetric}


def test_recommend_margin_picks_the_smallest_collision_free_margin():
    rows = [_row(25, 30, 40), _row(25, 50, 3), _row(25, 100, 0), _row(25, 250, 0),
            _row(10, 30, 5), _row(10, 50, 2)]
    assert recommend_margin(rows).splitlines() == [
        "No margin in the sweep is collision-free for k+ = 10; fewest collisions (2 same-query + 0 symmetric "
        "collisions) at margin 40: "
        "--easy_positives_k_min 5 --easy_positives_k_max 10 --hard_negatives_k_min 48 --hard_negatives_k_max 50 "
        "(try larger --hard_negatives_k)",
        "Recommended (smallest margin without collisions, k+ = 25: margin 75, 0 same-query + 0 symmetric "
        "collisions): --easy_positives_k_min 20 "
        "--easy_positives_k_max 25 --hard_negatives_k_min 98 --hard_negatives_k_max 100"]
    assert recommend_margin([_row(25, 100, 0)], positives_count=3, hard_negatives_count=4).endswith(
        "--easy_positives_k_min 22 --easy_positives_k_max 25 --hard_negatives_k_min 96 --hard_negatives_k_max 100")


def test_recommend_margin_counts_symmetric_collisions():
    """random_without_knn makes same-query collisions 0 at every margin: the symmetric ones decide."""
    rows = [_row(25, 30, 0, 351), _row(25, 50, 0, 20), _row(25, 100, 0, 0)]
    assert recommended_rows(rows)[25]["k_hard_negatives"] == 100
    assert "margin 75, 0 same-query + 0 symmetric collisions" in recommend_margin(rows)
    assert "fewest collisions (0 same-query + 20 symmetric collisions) at margin 25" in recommend_margin(rows[:2])


def test_band_counts_are_the_given_ones_else_the_miners_defaults():
    """The sweep and its printed recommendation read c+ / c- from one place: the flags given, else MinerSpec's."""
    from scincl.settings.spec import MinerSpec
    from scincl.triples.margins import band_counts

    spec = MinerSpec()
    defaults = (spec.slot("easy_positives").count, spec.slot("hard_negatives").count)
    assert band_counts({}) == band_counts({"easy_positives_count": None, "hard_negatives_count": None}) == defaults
    assert band_counts({"easy_positives_count": "3", "hard_negatives_count": 4, "seed": 1}) == (3, 4)
    assert recommend_margin([_row(25, 100, 0)]) == recommend_margin([_row(25, 100, 0)], *defaults)
