"""The real-corpus experiments' arms, graphs and corpora as data (docs/results.md §2): settings of a plan.

An arm is a setting, not a code path (:class:`Arm`: where its triplets come from); a corpus is a folder of
``--data_dir`` in the layout of ``../shared/data`` (:class:`CorpusSpec`). The tables are plain data of this module
(issue 39: they were read from ``experiments/arms.py``, which tied the package to the repository's folder):

- :data:`ARM_SETTINGS`: arm -> its table label, where its triplets come from (``triples_source``: knn | specter_like,
  scincl/triples/sources.py) and, for kNN arms, the graph they are sampled from (a :data:`GRAPHS` kind);
  :data:`DEFAULT_ARMS`: the arms each experiment kind compares unless ``--arms`` says otherwise;
  :data:`DEFAULT_SPLITS`: the SciDocs split each experiment kind scores unless ``--split`` says otherwise;
- :data:`GRAPHS`: graph kind -> its edges (citations | cocitations | transductive), the embedding method
  (``embed_graph --method``; ``pbg``: PyTorch-BigGraph with ``config`` from ``biggraph_configs/``, where
  ``{comparator}`` is the run's);
- :data:`CORPORA`: corpus (a folder of ``--data_dir``) -> whether SPECTER-like positives are the papers a query
  cites (hep-th) or is linked to either way (CiteSeer, whose cite task counts both directions and whose papers
  cite ~1.3 others on average).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Union

from scincl.errors import InputError


@dataclass(frozen=True)
class Arm:
    """A trained arm is a setting, not a code path: where its triplets come from."""

    name: str  # directory key (runs/<split>/<recipe>/<name>/seed_<s>)
    label: str  # table row
    triples_source: str  # knn | specter_like (scincl/settings/choices.py TRIPLES_SOURCES)
    graph: Optional[str] = None  # knn only: the graph embeddings sampled from (a GRAPHS kind)


ARM_SETTINGS: Dict[str, Arm] = {arm.name: arm for arm in (
    Arm("specter_like", "SPECTER-like (citations)", "specter_like"),
    Arm("scincl", "SciNCL (kNN on citation embeddings)", "knn", "cite"),
    Arm("cocite", "continuous co-citation (kNN)", "knn", "cocite"),
    # issue 30: SciNCL's sampling on the citation graph embedded by another method (paper defaults)
    Arm("scincl_fastrp", "SciNCL (kNN on FastRP citation embeddings)", "knn", "cite_fastrp"),
    Arm("scincl_prone", "SciNCL (kNN on ProNE citation embeddings)", "knn", "cite_prone"))}
ARMS = tuple(ARM_SETTINGS)
# main: paper Table 1 "w/o leakage" rows at equal budget (docs/results.md §2); tuning: the tuning table's trained
# arms; budget, paired: the pair of their paired test (issue 17), second minus first (SciNCL minus SPECTER-like)
DEFAULT_ARMS = {"main": ("specter_like", "scincl", "cocite"),
                **dict.fromkeys(("tuning", "budget", "paired"), ("specter_like", "scincl"))}
# the split of each kind without --split: the tables of docs/results.md are on test, the studies choose on val
DEFAULT_SPLITS = {"main": "test", "graph": "test", "budget": "test"}
DEFAULT_SPLIT = "val"  # every other kind
BASE = "base"  # the encoder without fine-tuning: a row of one evaluation, shared by every seed
ARM_NAMES = {BASE: "base encoder (no fine-tuning)", **{arm.name: arm.label for arm in ARM_SETTINGS.values()}}

_CITE = {"edges": "citations", "config": "s2orc_128d_{comparator}"}
GRAPHS: Dict[str, Dict[str, object]] = {
    "cite": {**_CITE, "method": "pbg"},
    "cocite": {"edges": "cocitations", "method": "pbg", "config": "cocitations_768d_dot"},  # dot only
    "transductive": {"edges": "transductive", "method": "pbg", "config": "s2orc_128d_{comparator}"},
    "cite_fastrp": {**_CITE, "method": "fastrp"},
    "cite_prone": {**_CITE, "method": "prone"},
}
CORPORA: Dict[str, Dict[str, bool]] = {"hepth": {"bidirectional": False}, "citeseer": {"bidirectional": True}}


def arm_setting(arm: str) -> Arm:
    """The :class:`Arm` named ``arm`` (an unknown name is one :class:`InputError` line listing the arms)."""
    if arm not in ARM_SETTINGS:
        raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARM_SETTINGS)}")
    return ARM_SETTINGS[arm]


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus in the pipeline's input formats (``../shared/data/<name>``, see its README)."""

    name: str
    root: Path
    bidirectional: bool = False  # SPECTER-like positives: cited papers, or linked either way (CORPORA)

    @property
    def metadata_dir(self) -> Path:
        return self.root / "s2orc" / "metadata"

    @property
    def scidocs_dir(self) -> Path:
        return self.root / "scidocs"

    @property
    def excluded_ids(self) -> Path:
        return self.root / "scidocs_paper_ids.json"

    def check(self) -> None:
        """Fail early (one line) when the corpus folder is not in the expected layout."""
        for path in (self.metadata_dir, self.scidocs_dir, self.excluded_ids):
            if not path.exists():
                raise InputError(f"corpus {self.name}: missing {path.name} (see ../shared/data/README.md)", path=path)


def corpus_spec(name: str, data_dir: Union[str, os.PathLike]) -> CorpusSpec:
    """A corpus of :data:`CORPORA` (``hepth``, ``citeseer``) below ``data_dir`` (the layout of ``../shared/data``)."""
    if name not in CORPORA:
        raise InputError(f"unknown corpus {name!r}: choose {' or '.join(CORPORA)}")
    spec = CorpusSpec(name=name, root=Path(data_dir) / name, **CORPORA[name])
    spec.check()
    return spec
