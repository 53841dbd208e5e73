"""k+ and k-hard for the corpus at hand: the paper's k/N ratios mapped to another index size.

SciNCL's k were chosen for its kNN index of 680,967 papers (paper §4.3 / Table 3: positives
``n_{k+-c+ +1} .. n_{k+}`` with k+ = 25, c+ = 5; hard negatives ``n_{k- -c- +1} .. n_{k-}`` with
k-hard = 4000, c- = 2). ``--k_scale corpus`` keeps the *share* of the index these bands sit at,
for an index of N papers:

- k+ = max(round(25 · N / 680,967), 2·c+): the floor keeps ``c+ ≤ k+ − c+``, so the positives are
  never the very nearest papers (the paper's band starts at n_21, not n_1);
- k-hard = max(round(4000 · N / 680,967), 2·k+ + c-): the hard negatives start beyond twice the
  positives' band (never inside or next to it: such overlaps are the collisions of paper Fig. 5);
- both capped at N − 1 (the neighbours a paper has).

``--k_scale paper`` (the default) keeps the k flags as given. For a corpus too small to hold both
bands an :class:`InputError` says so. Use ``cli_triples.py sweep_collision_margins`` to check the
margin on the corpus (it prints the smallest collision-free setting to paste).
"""
from __future__ import annotations

from typing import Dict

from scincl.errors import InputError
from scincl.settings.choices import K_SCALES
from scincl.settings.spec import band_flags
from scincl.triples.config import HARD_NEGATIVES_BAND, HARD_NEGATIVES_K as PAPER_HARD_NEGATIVES_K, POSITIVES_BAND
from scincl.triples.config import POSITIVES_K as PAPER_POSITIVES_K

PAPER_INDEX_SIZE = 680_967  # paper §4.3: papers in the kNN index the k were tuned on


def corpus_k(n_papers: int, positives_count: int = POSITIVES_BAND,
             hard_negatives_count: int = HARD_NEGATIVES_BAND) -> Dict[str, int]:
    """The four band flags for an index of ``n_papers`` (see the module docstring for the rule).

    >>> list(corpus_k(680_967).values())  # k+ 20..25, k-hard 3998..4000
    [20, 25, 3998, 4000]
    >>> list(corpus_k(28_000).values())
    [5, 10, 162, 164]
    """
    ratio = n_papers / PAPER_INDEX_SIZE
    k_pos = max(round(PAPER_POSITIVES_K * ratio), 2 * positives_count)
    k_hard = min(max(round(PAPER_HARD_NEGATIVES_K * ratio), 2 * k_pos + hard_negatives_count), n_papers - 1)
    if k_hard - hard_negatives_count <= k_pos:
        raise InputError(f"--k_scale corpus: an index of {n_papers} papers is too small for {positives_count} "
                         f"positives and {hard_negatives_count} hard negatives beyond them; give the k flags")
    return band_flags(easy_positives=(k_pos - positives_count, k_pos),
                      hard_negatives=(k_hard - hard_negatives_count, k_hard))


def check_k_scale(k_scale: str) -> str:
    """``k_scale`` validated (``paper`` or ``corpus``)."""
    if k_scale not in K_SCALES:
        raise InputError(f"--k_scale {k_scale!r}: choose one of {', '.join(K_SCALES)}")
    return k_scale
