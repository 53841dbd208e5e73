"""Run presets as data: ``experiments/presets/<name>.py`` returns the ``run_specter`` settings it sets, by flag name.

A preset is a set of typed overrides of :class:`~scincl.settings.run.RunSettings`' defaults (PyTorch-BigGraph's
``-p key=value`` idea, with our flag names): ``paper`` (the published run, what a run with data arguments takes)
and ``demo`` (the embedded demo, what a run without data arguments takes); ``run_specter --preset NAME`` picks
another. A flag the user gives overrides the preset; a SciNCL setting neither sets takes the schema's (the
paper's) value. Preset modules are read when a run asks for one (never when this package is imported).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from scincl.errors import InputError
from scincl.settings.run import (BIGGRAPH_CONFIGS, DEFAULT_DEMO_OUTPUT_DIR, EXCLUDED_IDS_FILE, EXPERIMENTS_DIR, FIELDS,
                                 SCHEMA_FALLBACK, RunSettings, load_module)
from scincl.settings.schema import SCINCL, derive_bands

PRESETS_DIR = EXPERIMENTS_DIR / "presets"
PAPER, DEMO = "paper", "demo"  # the presets a run takes without --preset: with data arguments, without


def preset_names() -> List[str]:
    """The presets of ``experiments/presets/`` (their module names): the paper's, the demo's, then the others sorted."""
    names = sorted(path.stem for path in PRESETS_DIR.glob("*.py") if not path.stem.startswith("_"))
    return [name for name in (PAPER, DEMO) if name in names] + [name for name in names if name not in (PAPER, DEMO)]


@functools.lru_cache(maxsize=None)
def _preset_module_values(name: str) -> Dict[str, Any]:
    path = PRESETS_DIR / f"{name}.py"
    if not path.is_file():
        raise InputError(f"--preset {name!r}: unknown preset (experiments/presets/: {', '.join(preset_names())})")
    values = load_module(path, f"scincl_preset_{name}").get_preset()
    if not isinstance(values, dict):
        raise InputError(f"get_preset() must return a dict of run_specter settings, got {type(values).__name__}",
                         path=path)
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise InputError(f"--{unknown[0]}: not a run_specter setting (preset {name})", path=path)
    return values


def preset_values(name: str) -> Dict[str, Any]:
    """The settings preset ``name`` sets (a fresh copy), with the schema's value for each SciNCL setting it leaves
    unset (:data:`~scincl.settings.run.SCHEMA_FALLBACK`); ``biggraph_config`` as a path in ``biggraph_configs/``
    when the preset names a file there."""
    values = copy.deepcopy(_preset_module_values(name))
    for field_name in SCHEMA_FALLBACK:
        values.setdefault(field_name, getattr(SCINCL, field_name))
    config = values.get("biggraph_config")
    if config is not None and Path(config).name == config:
        values["biggraph_config"] = str(BIGGRAPH_CONFIGS / config)
    return values


def preset_defaults_text(name: str) -> str:
    """``paper 4000 / demo 200``: the value each preset gives setting ``name`` (``--help``'s default column); empty
    when no preset sets it."""
    shown = []
    for preset in preset_names():
        values = preset_values(preset)
        sized_for_the_corpus = values.get("k_scale") == "corpus" and name.endswith(("_k_min", "_k_max"))
        if name in values and not sized_for_the_corpus:  # --k_scale corpus: the k come from the corpus size
            shown.append(f"{preset} {values[name]!r}")
    return " / ".join(shown)


def preset_fields() -> List[str]:
    """The settings some preset sets (``--help`` shows their values per preset)."""
    names = {name for preset in preset_names() for name in preset_values(preset)}
    return [f.name for f in dataclasses.fields(RunSettings) if f.name in names]


# ---------------------------------------------------------------------- a run's settings from its preset
def _field_default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # type: ignore[misc]


def is_embedded_demo(settings: RunSettings) -> bool:
    """No data argument at all: the run builds and uses the bundled demo corpus."""
    data_args = (settings.scidocs_dir, settings.s2orc_metadata_dir, settings.corpus_dir, settings.graph_embeddings_path,
                 settings.graph_paper_ids_path, settings.specter_triples_path, settings.citations_path)
    return all(a is None for a in data_args)


def _resolve_corpus_dir(s: RunSettings) -> None:
    """``--corpus_dir`` and its alias ``--s2orc_metadata_dir`` name one folder; both set afterwards (likewise
    ``--scidocs_paper_ids`` and ``--excluded_paper_ids``, which default to the SciDocs folder's own list,
    :func:`_folder_ids`); ``--corpus_format`` is checked, against the corpus
    package's formats, by :func:`scincl.pipeline.run_command.check_run`."""
    if s.corpus_dir and s.s2orc_metadata_dir and str(s.corpus_dir) != str(s.s2orc_metadata_dir):
        raise InputError(f"--corpus_dir {s.corpus_dir} and --s2orc_metadata_dir {s.s2orc_metadata_dir} differ; "
                         "give one (--s2orc_metadata_dir is the old name of --corpus_dir)")
    s.corpus_dir = s.s2orc_metadata_dir = s.corpus_dir or s.s2orc_metadata_dir
    if s.scidocs_paper_ids and s.excluded_paper_ids and str(s.scidocs_paper_ids) != str(s.excluded_paper_ids):
        raise InputError(f"--scidocs_paper_ids {s.scidocs_paper_ids} and --excluded_paper_ids {s.excluded_paper_ids} "
                         "differ; give one (both name the evaluation papers kept out of graph and triplets)")
    s.scidocs_paper_ids = s.excluded_paper_ids = s.scidocs_paper_ids or s.excluded_paper_ids or _folder_ids(s)
    _check_k_scale(s)


def _folder_ids(s: RunSettings) -> Optional[str]:
    """A SciDocs folder that lists its own papers to exclude (``scidocs_paper_ids.json``, as ``make_eval_dir``
    writes: its query papers, in the corpus's ids) names them when no id list or id mapping is given; a folder
    without one has all its papers excluded (the scidocs_ids stage of scincl/pipeline/scincl_plan.py)."""
    listed = Path(s.scidocs_dir) / EXCLUDED_IDS_FILE if s.scidocs_dir else None
    return str(listed) if listed is not None and listed.is_file() and not s.s2id_to_s2orc_input_path else None


def _check_k_scale(s: RunSettings) -> None:
    """``--k_scale corpus`` sizes the four k flags itself: giving them too is ambiguous (the value's choices:
    :func:`check_ranges`)."""
    given = [f"--{band}_k_{end}" for band in ("easy_positives", "hard_negatives") for end in ("min", "max")
             if getattr(s, f"{band}_k_{end}") is not None]
    if s.k_scale == "corpus" and given:
        raise InputError(f"--k_scale corpus sizes k+ and k-hard itself; drop {', '.join(given)} (or use --k_scale paper)")


def resolve(settings: RunSettings, given: Optional[Iterable[str]] = None) -> RunSettings:
    """Fill the settings not given from the run's preset (``--preset``; without it the demo's when no data argument
    is given, else the paper's: :mod:`scincl.settings.presets`): a flag the user gave wins over the preset, which
    wins over the field's default. ``given``: the names the user set (default: those differing from their field's
    default); the preset's ``training_options`` are merged under the user's."""
    s = dataclasses.replace(settings, miner_options=dict(settings.miner_options),
                            training_options=dict(settings.training_options))
    if given is None:
        given = {f.name for f in dataclasses.fields(s) if getattr(s, f.name) != _field_default(f)}
    given = set(given)
    s.demo = is_embedded_demo(s)
    _resolve_corpus_dir(s)
    s.preset = s.preset or (DEMO if s.demo else PAPER)
    defaults = preset_values(s.preset)
    if s.output_dir is None:
        if not s.demo:
            raise InputError("OUTPUT_DIR is required when data arguments are given")
        s.output_dir = DEFAULT_DEMO_OUTPUT_DIR
    for name, value in defaults.items():
        if name in ("training_options", "miner_options"):
            setattr(s, name, {**value, **getattr(s, name)})
        elif name not in given:
            setattr(s, name, value)
    if s.k_scale != "corpus":  # --k_scale corpus sizes the bands for the index (scincl/triples/k_scale.py)
        for name, value in derive_bands(vars(s)).items():
            setattr(s, name, value)
    if s.graph_limit == "specter" and s.specter_triples_path is None and "graph_limit" not in given:
        s.graph_limit = "graph"  # nothing to replicate: train on the whole graph
    if s.corpus_seed is None:
        s.corpus_seed = s.seed  # original: the corpus follows --seed unless --corpus_seed is given
    if s.workers is None or s.workers <= 0:
        s.workers = os.cpu_count() or 1
    if s.device == "cpu":  # every stage on the CPU on purpose, also where CUDA works
        s.training_options.setdefault("use_cpu", True)
        s.ann_device = -1
    return s
