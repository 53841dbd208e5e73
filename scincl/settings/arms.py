"""The real-corpus experiments' arms, graphs and corpora: settings of a plan, read from ``experiments/arms.py``.

An arm is a setting, not a code path (:class:`Arm`: where its triplets come from); a corpus is a folder of
``--data_dir`` in the layout of ``../shared/data`` (:class:`CorpusSpec`). The tables below are loaded once from
the data module, which is where their values and the sources of those values are written.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Union

from scincl.errors import InputError
from scincl.settings.run import REPO_ROOT


def load_module(path: Path, name: str) -> Any:
    """The Python module at ``path`` (an ``experiments/`` data module), loaded as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Arm:
    """A trained arm is a setting, not a code path: where its triplets come from (``experiments/arms.py``)."""

    name: str  # directory key (runs/<split>/<recipe>/<name>/seed_<s>)
    label: str  # table row
    triples_source: str  # knn | specter_like (scincl/settings/choices.py TRIPLES_SOURCES)
    graph: Optional[str] = None  # knn only: the graph embeddings sampled from (a GRAPHS kind)


_ARMS_DATA = load_module(REPO_ROOT / "experiments" / "arms.py", "scincl_experiments_arms")
ARM_SETTINGS = {name: Arm(name, **fields) for name, fields in _ARMS_DATA.get_arms().items()}
ARMS = tuple(ARM_SETTINGS)
DEFAULT_ARMS = tuple(_ARMS_DATA.DEFAULT_ARMS)  # the main comparison (docs/results.md §2)
TUNING_ARMS = tuple(_ARMS_DATA.TUNING_ARMS)  # the trained arms of the tuning table
BUDGET_ARMS = tuple(_ARMS_DATA.BUDGET_ARMS)  # the budget curve's pair (second minus first)
DEFAULT_SPLITS: Dict[str, str] = _ARMS_DATA.DEFAULT_SPLITS  # experiment kind -> its split without --split
DEFAULT_SPLIT: str = _ARMS_DATA.DEFAULT_SPLIT  # the split of every other kind
GRAPHS: Dict[str, Dict[str, Any]] = _ARMS_DATA.get_graphs()  # graph kind -> edges, embed_graph method, config
CORPORA: Dict[str, Dict[str, Any]] = _ARMS_DATA.get_corpora()  # corpus -> CorpusSpec fields
ARM_NAMES = {"base": "base encoder (no fine-tuning)", **{a.name: a.label for a in ARM_SETTINGS.values()}}


def arm_setting(arm: str) -> Arm:
    """The :class:`Arm` named ``arm`` (an unknown name is one :class:`InputError` line listing the arms)."""
    if arm not in ARM_SETTINGS:
        raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
    return ARM_SETTINGS[arm]


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus in the pipeline's input formats (``../shared/data/<name>``, see its README)."""

    name: str
    root: Path
    bidirectional: bool = False  # SPECTER-like positives: cited papers, or linked either way (experiments/arms.py)

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
