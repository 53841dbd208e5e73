"""The named values a setting takes (its ``choices``), declared once here, below every package that uses them.

The settings (:class:`scincl.settings.run.RunSpec`) check a value against these tuples before
any work; the packages that act on a value import the tuple from here under the name they always used
(``scincl.corpus.selection.GRAPH_LIMITS``, ``scincl.graph.embed.GRAPH_METHODS``, ...), so choices and code
cannot drift apart and ``scincl.settings`` needs none of those packages.
"""
from __future__ import annotations

from typing import Any, Tuple

from scincl.errors import InputError

# --graph_limit: which papers form the training corpus (scincl/corpus/selection.py)
GRAPH_LIMITS: Tuple[str, ...] = ("specter", "s2orc", "graph", "none")
# --graph_method: pbg, the paper's PyTorch-BigGraph (SciNCL §4.2, the default), then the embedders registered in
# scincl/graph/embedders/__init__.py:EMBEDDERS, in their order (tests/graph/test_graph_embedders.py checks both agree)
GRAPH_METHODS: Tuple[str, ...] = ("pbg", "prone", "fastrp")
# --k_scale: the k flags as given (paper) or sized for the index from the paper's k/N ratios (scincl/triples/k_scale.py)
PAPER_SCALE, CORPUS_SCALE = "paper", "corpus"
K_SCALES: Tuple[str, ...] = (PAPER_SCALE, CORPUS_SCALE)
# --triples_source: SciNCL's kNN sampling (paper §3.2), SPECTER's citations (Cohan et al. 2020; scincl/triples/sources.py)
KNN_SOURCE, SPECTER_LIKE_SOURCE = "knn", "specter_like"
TRIPLES_SOURCES: Tuple[str, ...] = (KNN_SOURCE, SPECTER_LIKE_SOURCE)
# --ann_backend: faiss: any index factory (Flat, IVF, HNSW, PQ); exact: scincl.knn.exact (torch, any k on CPU or GPU)
ANN_BACKENDS: Tuple[str, ...] = ("faiss", "exact")
# --ann_metric: the kNN index's metric (scincl/knn/)
ANN_METRICS: Tuple[str, ...] = ("inner_product", "l2", "cosine")
# --device: the stages' own default (None) is CUDA when available
DEVICES: Tuple[str, ...] = ("cuda", "cpu")
# --<slot>_strategy: how a miner slot is filled (scincl/triples/strategies.py; the original SciNCL code's names)
KNN, RANDOM, RANDOM_WITHOUT_KNN = "knn", "random", "random_without_knn"
RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED, RANGE, KMEANS = ("random_sorted", "random_without_knn_sorted", "range",
                                                           "kmeans")
STRATEGIES: Tuple[str, ...] = (KNN, RANDOM, RANDOM_WITHOUT_KNN, RANDOM_SORTED, RANDOM_WITHOUT_KNN_SORTED, RANGE, KMEANS)
BAND_STRATEGIES: Tuple[str, ...] = (KNN, KMEANS)  # their k_min/k_max select an interval of a sorted list
# --bf16 / --eval_bf16: training and embedding precision; auto = bf16 where the device computes it natively
# (scincl/model/device.py:choose_bf16)
BF16_REQUESTS: Tuple[str, ...] = ("auto", "true", "false")


def parse_bf16_request(value: Any) -> str:
    """``--bf16`` as given (``True``, ``"auto"``, ``"false"``, ...) -> ``auto`` | ``true`` | ``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip().lower()
    aliases = {"1": "true", "yes": "true", "0": "false", "no": "false", "none": "false"}
    text = aliases.get(text, text)
    if text not in BF16_REQUESTS:
        raise InputError(f"--bf16 {value!r}: choose one of {', '.join(BF16_REQUESTS)}")
    return text
