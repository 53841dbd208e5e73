"""The real-corpus experiments' arms, graphs and corpora: settings of a plan, read from ``experiments/arms.py``.

An arm is a setting, not a code path (:class:`Arm`: where its triplets come from); a corpus is a folder of
``--data_dir`` in the layout of ``../shared/data`` (:class:`CorpusSpec`). The tables (:data:`TABLES`) are read from
the data module, which is where their values and the sources of those values are written, the first time one of
them is used (importing this module reads no file).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Union

from scincl.errors import InputError
from scincl.settings.run import EXPERIMENTS_DIR, load_module


@dataclass(frozen=True)
class Arm:
    """A trained arm is a setting, not a code path: where its triplets come from (``experiments/arms.py``)."""

    name: str  # directory key (runs/<split>/<recipe>/<name>/seed_<s>)
    label: str  # table row
    triples_source: str  # knn | specter_like (scincl/settings/choices.py TRIPLES_SOURCES)
    graph: Optional[str] = None  # knn only: the graph embeddings sampled from (a GRAPHS kind)


# the tables read from experiments/arms.py, each loaded on first use (module __getattr__, PEP 562)
TABLES = ("ARM_SETTINGS", "ARMS", "DEFAULT_ARMS", "TUNING_ARMS", "BUDGET_ARMS", "DEFAULT_SPLITS", "DEFAULT_SPLIT",
          "GRAPHS", "CORPORA", "ARM_NAMES")


@functools.lru_cache(maxsize=None)
def _tables() -> Dict[str, Any]:
    data = load_module(EXPERIMENTS_DIR / "arms.py", "scincl_experiments_arms")
    arm_settings = {name: Arm(name, **fields) for name, fields in data.get_arms().items()}
    return {
        "ARM_SETTINGS": arm_settings,
        "ARMS": tuple(arm_settings),
        "DEFAULT_ARMS": tuple(data.DEFAULT_ARMS),  # the main comparison (docs/results.md §2)
        "TUNING_ARMS": tuple(data.TUNING_ARMS),  # the trained arms of the tuning table
        "BUDGET_ARMS": tuple(data.BUDGET_ARMS),  # the budget curve's pair (second minus first)
        "DEFAULT_SPLITS": data.DEFAULT_SPLITS,  # experiment kind -> its split without --split
        "DEFAULT_SPLIT": data.DEFAULT_SPLIT,  # the split of every other kind
        "GRAPHS": data.get_graphs(),  # graph kind -> edges, embed_graph method, config
        "CORPORA": data.get_corpora(),  # corpus -> CorpusSpec fields
        "ARM_NAMES": {"base": "base encoder (no fine-tuning)", **{a.name: a.label for a in arm_settings.values()}},
    }


def __getattr__(name: str) -> Any:
    """The tables of :data:`TABLES`, read from ``experiments/arms.py`` when first asked for."""
    if name in TABLES:
        return _tables()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def arm_setting(arm: str) -> Arm:
    """The :class:`Arm` named ``arm`` (an unknown name is one :class:`InputError` line listing the arms)."""
    arms = _tables()["ARM_SETTINGS"]
    if arm not in arms:
        raise InputError(f"unknown arm {arm!r}: choose from {', '.join(arms)}")
    return arms[arm]


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
    corpora = _tables()["CORPORA"]
    if name not in corpora:
        raise InputError(f"unknown corpus {name!r}: choose {' or '.join(corpora)}")
    spec = CorpusSpec(name=name, root=Path(data_dir) / name, **corpora[name])
    spec.check()
    return spec
