"""Citation-graph embedders other than PyTorch-BigGraph, by name (a registry, not an if-chain).

Each entry is an :class:`Embedder`: its settings dataclass (defaults from its paper, range-checked,
:mod:`scincl.graph.embedders.settings`) and ``embed(graph, dimension, settings, seed) -> [n, d]``.
``pbg`` is not here: it trains through :mod:`scincl.graph.biggraph`; :mod:`scincl.graph.embed`
dispatches between the two and writes the same files for both.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Type

from scincl.graph.embedders import fastrp, prone


@dataclass(frozen=True)
class Embedder:
    name: str
    settings: Type[Any]
    embed: Callable[..., Any]
    paper: str


EMBEDDERS: Dict[str, Embedder] = {e.name: e for e in (
    Embedder("prone", prone.ProNESettings, prone.embed, "Zhang et al., IJCAI 2019"),
    Embedder("fastrp", fastrp.FastRPSettings, fastrp.embed, "Chen et al., CIKM 2019"),
)}
