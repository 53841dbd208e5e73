"""Settings of one ``run_specter`` experiment, with the paper's defaults and the demo's budgets.

Fields default to ``None`` where the full-scale run and the embedded demo differ; :func:`resolve`
fills them from :data:`PAPER_DEFAULTS` or :data:`DEMO_DEFAULTS`, :func:`check_types` and :func:`check_ranges`
check them (the flags are routed to these fields by :mod:`scincl.pipeline.seeds_and_sweeps`). A user's explicit value always
wins. Run directories follow the original code's layout (``--auto_output_dir``:
``OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/[queries_<r>/]<miner settings>/``).
"""
from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from scincl.errors import InputError
from scincl.graph.embed import GRAPH_METHODS
from scincl.graph.embedders import EMBEDDERS
from scincl.graph.embedders.settings import parse_settings
from scincl.corpus.selection import GRAPH_LIMITS
from scincl.settings.schema import FIELDS as SCHEMA_FIELDS, SCINCL, check_settings, derive_bands
from scincl.triples.sources import TRIPLES_SOURCES
from scincl.triples.config import DEFAULT_ANN_NORMALIZE_EMBEDDINGS

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DEMO_OUTPUT_DIR = "demo_output"
DEMO_HARD_NEGATIVES_K = 200  # demo budget: beyond the ~130-paper topic of the 1.5k-paper demo corpus

# Full-scale defaults (paper §4 and the original README command); the SciNCL settings' values and
# sources are in scincl/settings/schema.py. A band's start (*_k_min) is derived from its end and count there
# (k_max - count: 20-25 and 3998-4000 here, 198-200 for the demo) unless given.
PAPER_DEFAULTS: Dict[str, Any] = {
    "graph_limit": "specter",  # original default; "graph" when no SPECTER triples are given
    "biggraph_config": str(REPO_ROOT / "biggraph_configs" / "s2orc_768d_dot.py"),  # paper §4.2: 768d dot
    "graph_test_ratio": 0.01,  # README: 1% of the edges held out for link prediction
    "hard_negatives_k_max": SCINCL.hard_negatives_k_max,
    "easy_positives_k_max": SCINCL.easy_positives_k_max,
    "sample_queries_ratio": 1.0,
    "max_sequence_length": SCINCL.max_sequence_length,
    "pooling_strategy": SCINCL.pooling_strategy,
    "training": {},  # the train stage's own defaults (SPECTER: lr 2e-5, batch 8 x 4, 2 epochs)
}

# Trainer arguments every CPU-budget run shares (the demo, the real-corpus experiments): no gradient
# accumulation, 10 % linear warm-up, a loss line every 10 steps, no external logger.
CPU_TRAINING: Dict[str, Any] = {"gradient_accumulation_steps": 1, "warmup_ratio": 0.1, "logging_steps": 10,
                                "report_to": "none"}

# The embedded demo: every stage on CPU in a few minutes (MiniLM, 1.5k papers, one short epoch).
DEMO_DEFAULTS: Dict[str, Any] = {
    "graph_limit": "graph",
    "biggraph_config": str(REPO_ROOT / "biggraph_configs" / "demo.py"),
    "graph_test_ratio": 0.05,
    # the demo corpus has ~1.3k training papers in 10 topics of ~130 (4 sub-topics each): positives
    # from the same sub-topic neighbourhood, hard negatives beyond the topic (paper: k- = 4000 of 52M)
    "easy_positives_k_max": SCINCL.easy_positives_k_max,
    "hard_negatives_k_max": DEMO_HARD_NEGATIVES_K,
    "sample_queries_ratio": 0.1,
    "max_sequence_length": 64,  # title + the start of the abstract: CPU budget
    "eval_max_sequence_length": 128,
    "pooling_strategy": "mean",  # MiniLM was trained with mean pooling; keeps base vs tuned comparable
    "training": {"num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 5e-5, **CPU_TRAINING,
                 "save_steps": 50, "save_total_limit": 1},
}


@dataclass
class RunSettings:
    """Everything ``run_specter`` needs (see ``cli_pipeline.py run_specter --help``)."""

    output_dir: Optional[str] = None
    base_model_name_or_path: Optional[str] = None
    scidocs_dir: Optional[str] = None
    s2orc_metadata_dir: Optional[str] = None  # alias of corpus_dir (the original README's name)
    corpus_dir: Optional[str] = None  # the corpus folder, in corpus_format (scincl/corpus/)
    corpus_format: Optional[str] = None  # s2orc | s2ag | openalex | plain; None: detected from the folder
    specter_triples_path: Optional[str] = None
    graph_paper_ids_path: Optional[str] = None
    graph_embeddings_path: Optional[str] = None
    s2id_to_s2orc_input_path: Optional[str] = None
    train_s2orc_paper_ids: Optional[str] = None
    train_query_s2orc_paper_ids: Optional[str] = None
    citations_path: Optional[str] = None
    scidocs_paper_ids: Optional[str] = None  # the evaluation papers (graph ids), kept out of graph and triplets
    excluded_paper_ids: Optional[str] = None  # get_citations' name of scidocs_paper_ids (an alias)
    graph_limit: Optional[str] = None
    graph_leakage: bool = False
    biggraph_config: Optional[str] = None
    biggraph_overrides: Optional[Any] = None  # PBG "key=value" overrides, e.g. "num_epochs=5 dimension=64"
    graph_method: str = SCINCL.graph_method  # prone | fastrp (scincl/graph/embed.py); scincl/settings/schema.py
    graph_method_settings: Optional[Any] = None  # "key=value ..." of prone/fastrp (scincl/graph/embedders/)
    graph_test_ratio: Optional[float] = None
    ann_metric: str = "inner_product"
    ann_backend: str = "faiss"
    ann_index_path: Optional[str] = None
    # README build_faiss --do_normalize (triples/config.py); get_knn_triples' flag of the same name
    ann_normalize_embeddings: bool = DEFAULT_ANN_NORMALIZE_EMBEDDINGS
    faiss_string_factory: str = "Flat"
    ann_device: int = 0  # first GPU when faiss has one, else CPU
    device: Optional[str] = None  # cuda | cpu for training, the faiss index and embedding; None: CUDA when available
    triples_source: str = "knn"
    triples_per_query: int = SCINCL.triples_per_query  # scincl/settings/schema.py (paper §3.2)
    easy_positives_count: int = SCINCL.easy_positives_count
    easy_positives_strategy: str = "knn"
    easy_positives_k_min: Optional[int] = None  # None: easy_positives_k_max - easy_positives_count, see resolve()
    easy_positives_k_max: Optional[int] = None
    easy_negatives_count: int = SCINCL.easy_negatives_count
    easy_negatives_strategy: str = SCINCL.easy_negatives_strategy
    hard_negatives_count: int = SCINCL.hard_negatives_count
    hard_negatives_strategy: str = "knn"
    hard_negatives_k_min: Optional[int] = None  # None: hard_negatives_k_max - hard_negatives_count
    hard_negatives_k_max: Optional[int] = None
    k_scale: str = "paper"  # paper: the k flags as given; corpus: sized for the index (scincl/triples/k_scale.py)
    seed: int = SCINCL.seed
    corpus_seed: Optional[int] = None
    sample_queries_ratio: Optional[float] = None
    workers: Optional[int] = None
    gzip: bool = False
    auto_output_dir: bool = False
    bitfit: bool = False
    pooling_strategy: Optional[str] = None
    loss: str = SCINCL.loss
    max_sequence_length: Optional[int] = None
    eval_max_sequence_length: Optional[int] = None  # None: the evaluator's default (full SciDocs inputs)
    val_or_test_or_both: str = "both"
    evaluate_base_model: bool = True
    demo_papers: int = 1500  # embedded demo corpus size (CPU budget: ~1.3k training papers, ~1.4k SciDocs papers)
    miner_options: Dict[str, Any] = field(default_factory=dict)
    training_options: Dict[str, Any] = field(default_factory=dict)
    skip: List[str] = field(default_factory=list)
    override: List[str] = field(default_factory=list)
    demo: bool = False

    @property
    def ann_do_normalize(self) -> bool:
        """``ann_normalize_embeddings`` under the name the planner records the triples stage's settings with
        (``scincl/pipeline/scincl_plan.py``: ``triples_settings``), so cached triples keep their fingerprints."""
        return self.ann_normalize_embeddings

    @property
    def split(self) -> str:
        """The evaluation split shown in the printed table (test, unless only val is evaluated)."""
        return "val" if self.val_or_test_or_both == "val" else "test"


def is_embedded_demo(settings: RunSettings) -> bool:
    """No data argument at all: the run builds and uses the bundled demo corpus."""
    data_args = (settings.scidocs_dir, settings.s2orc_metadata_dir, settings.corpus_dir, settings.graph_embeddings_path,
                 settings.graph_paper_ids_path, settings.specter_triples_path, settings.citations_path)
    return all(a is None for a in data_args)


def _resolve_corpus_dir(s: RunSettings) -> None:
    """``--corpus_dir`` and its alias ``--s2orc_metadata_dir`` name one folder; both set afterwards."""
    from scincl.corpus import check_format
    from scincl.errors import InputError

    if s.corpus_dir and s.s2orc_metadata_dir and str(s.corpus_dir) != str(s.s2orc_metadata_dir):
        raise InputError(f"--corpus_dir {s.corpus_dir} and --s2orc_metadata_dir {s.s2orc_metadata_dir} differ; "
                         "give one (--s2orc_metadata_dir is the old name of --corpus_dir)")
    s.corpus_dir = s.s2orc_metadata_dir = s.corpus_dir or s.s2orc_metadata_dir
    if s.scidocs_paper_ids and s.excluded_paper_ids and str(s.scidocs_paper_ids) != str(s.excluded_paper_ids):
        raise InputError(f"--scidocs_paper_ids {s.scidocs_paper_ids} and --excluded_paper_ids {s.excluded_paper_ids} "
                         "differ; give one (both name the evaluation papers kept out of graph and triplets)")
    s.scidocs_paper_ids = s.excluded_paper_ids = s.scidocs_paper_ids or s.excluded_paper_ids
    s.corpus_format = check_format(s.corpus_format)
    _check_k_scale(s)


def _check_k_scale(s: RunSettings) -> None:
    """``--k_scale corpus`` sizes the four k flags itself: giving them too is ambiguous."""
    from scincl.errors import InputError
    from scincl.triples.k_scale import check_k_scale

    check_k_scale(s.k_scale)
    given = [f"--{band}_k_{end}" for band in ("easy_positives", "hard_negatives") for end in ("min", "max")
             if getattr(s, f"{band}_k_{end}") is not None]
    if s.k_scale == "corpus" and given:
        raise InputError(f"--k_scale corpus sizes k+ and k-hard itself; drop {', '.join(given)} (or use --k_scale paper)")


def resolve(settings: RunSettings) -> RunSettings:
    """Fill ``None`` fields from the paper's or the demo's defaults (explicit values win)."""
    s = dataclasses.replace(settings, miner_options=dict(settings.miner_options),
                            training_options=dict(settings.training_options))
    s.demo = is_embedded_demo(s)
    _resolve_corpus_dir(s)
    defaults = DEMO_DEFAULTS if s.demo else PAPER_DEFAULTS
    if s.output_dir is None:
        if not s.demo:
            raise InputError("OUTPUT_DIR is required when data arguments are given")
        s.output_dir = DEFAULT_DEMO_OUTPUT_DIR
    for name, value in defaults.items():
        if name == "training":
            s.training_options = {**value, **s.training_options}
        elif getattr(s, name) is None:
            setattr(s, name, value)
    if s.k_scale != "corpus":  # --k_scale corpus sizes the bands for the index (scincl/triples/k_scale.py)
        for name, value in derive_bands(vars(s)).items():
            setattr(s, name, value)
    if s.graph_limit == "specter" and s.specter_triples_path is None and "graph_limit" not in _explicit(settings):
        s.graph_limit = "graph"  # nothing to replicate: train on the whole graph
    if s.corpus_seed is None:
        s.corpus_seed = s.seed  # original: the corpus follows --seed unless --corpus_seed is given
    if s.workers is None or s.workers <= 0:
        s.workers = os.cpu_count() or 1
    if s.device == "cpu":  # every stage on the CPU on purpose, also where CUDA works
        s.training_options.setdefault("use_cpu", True)
        s.ann_device = -1
    return s


def _explicit(settings: RunSettings) -> Dict[str, Any]:
    """Fields the caller set (not None)."""
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)
            if getattr(settings, f.name) is not None}


def miner_signature(s: RunSettings) -> str:
    """Short name of the sampling settings, e.g. ``knn_5_pos_knn_20_25__neg_random_without_knn_3__hard_knn_3998_4000_2``."""
    if s.triples_source != "knn":
        return f"{s.triples_source}_{s.triples_per_query}"
    parts = [f"pos_{s.easy_positives_strategy}_{s.easy_positives_k_min}_{s.easy_positives_k_max}_{s.easy_positives_count}",
             f"easyneg_{s.easy_negatives_strategy}_{s.easy_negatives_count}",
             f"hardneg_{s.hard_negatives_strategy}_{s.hard_negatives_k_min}_{s.hard_negatives_k_max}_"
             f"{s.hard_negatives_count}"]
    parts += [f"{k}_{v}" for k, v in sorted(s.miner_options.items())]
    return "__".join(parts)


def experiment_dir(s: RunSettings) -> Path:
    """Where this experiment's outputs go (``--auto_output_dir`` adds the original sub-directories)."""
    base = Path(s.output_dir)
    if not s.auto_output_dir:
        return base
    out = base / str(s.graph_limit) / f"corpus_seed_{s.corpus_seed}"
    if s.sample_queries_ratio is not None and s.sample_queries_ratio < 1:
        out = out / f"queries_{s.sample_queries_ratio}"
    return out / miner_signature(s)


def base_model_short_name(name_or_path: str) -> str:
    """``allenai/scibert_scivocab_uncased`` -> ``scibert_scivocab_uncased``; ``.../pkg/model`` -> ``pkg``."""
    parts = [p for p in str(name_or_path).rstrip("/").split("/") if p]
    if len(parts) > 1 and parts[-1] in ("model", "models", "checkpoint"):
        return parts[-2]
    return parts[-1] if parts else "base"


def model_dir_name(s: RunSettings, base_model: Optional[str] = None) -> str:
    """``model_<base name>[_<pooling>][_bitfit][_<loss>]...`` as in the original code."""
    name = f"model_{base_model_short_name(base_model or s.base_model_name_or_path or 'base')}"
    if s.pooling_strategy != "cls":
        name += f"_{s.pooling_strategy}"
    if s.bitfit:
        name += "_bitfit"
    if s.loss != "triplet":
        name += f"_{s.loss}"
    for key in ("num_train_epochs", "learning_rate"):
        if key in s.training_options and not s.demo:
            name += f"_{key.split('_')[-1]}_{s.training_options[key]}"
    return name


SeedsArg = Union[None, int, str, Sequence[int]]


def parse_seeds(seeds: SeedsArg) -> List[int]:
    """``3`` -> [3]; ``"0..9"`` -> 0..9 inclusive; ``"0,2,4"`` or ``(0, 2, 4)`` -> that list."""
    if seeds is None:
        return []
    if isinstance(seeds, bool):
        raise InputError(f"--seeds: expected seeds like 0..9 or 0,1,2, got {seeds!r}")
    if isinstance(seeds, int):
        values = [seeds]
    elif isinstance(seeds, str):
        text = seeds.strip()
        try:
            if ".." in text:
                low, high = (int(x) for x in text.split(".."))
                values = list(range(low, high + 1))
            else:
                values = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise InputError(f"--seeds: expected seeds like 0..9 or 0,1,2, got {seeds!r}") from None
    else:
        values = [int(x) for x in seeds]
    if not values or len(set(values)) != len(values):
        raise InputError(f"--seeds: expected distinct seeds, got {seeds!r}")
    if any(not 0 <= v < 2 ** 32 for v in values):  # numpy's and torch's seed range (issue 29: -1 crashed in training)
        raise InputError(f"--seeds {seeds!r}: seeds must be >= 0 and < 2**32")
    return values


def parse_int_list(values: Any, name: str) -> List[int]:
    """``"10,25,100"`` / ``(10, 25)`` / ``25`` -> list of ints (an :class:`InputError` otherwise)."""
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    elif isinstance(values, int):
        values = [values]
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        raise InputError(f"--{name}: expected integers like 10,25,100, got {values!r}") from None


def check_types(flags: Dict[str, Any]) -> Dict[str, Any]:
    """Flags named like :class:`RunSettings` fields converted to the field types by the CLI's converter
    (:func:`scincl.cli.flags.check_value`: ``--output_dir 2024`` a string, ``true``/``false`` booleans,
    a wrong type one line); ranges are :func:`check_ranges`'. ``None`` keeps a field's default."""
    from scincl.cli.flags import _simple_type, check_value

    hints = typing.get_type_hints(RunSettings)
    return {name: check_value(name, value, _simple_type(hints[name]) or object, check_range=False)
            for name, value in flags.items()}


DEVICES = ("cuda", "cpu")  # --device: the stages' own default (None) is CUDA when available
CHOICES = {  # the values a field takes (validated before any stage runs)
    "triples_source": TRIPLES_SOURCES,  # scincl/triples/sources.py
    "graph_limit": GRAPH_LIMITS,
    "val_or_test_or_both": ("val", "test", "both"),
    "ann_metric": ("inner_product", "l2", "cosine"),
    "pooling_strategy": SCHEMA_FIELDS["pooling_strategy"].metadata["choices"],
    "graph_method": GRAPH_METHODS,  # scincl/graph/embed.py
}


def check_ranges(s: RunSettings) -> RunSettings:
    """Range errors of resolved settings, before any stage runs (one-line :class:`InputError`): every
    field and miner/training option checked once by :func:`scincl.settings.schema.check_settings` (the rule
    of its flag, a SciNCL setting's choices, the bands), the same line as the CLI's check; then the choices
    of the other fields, the graph method's settings and the device."""
    values = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    check_settings({**values, **s.miner_options, **s.training_options})
    for name, choices in CHOICES.items():
        if getattr(s, name) not in choices:
            raise InputError(f"--{name} {getattr(s, name)!r}: choose one of {', '.join(choices)}")
    if s.graph_method != "pbg":  # the method's own range checks (scincl/graph/embedders/settings.py)
        parse_settings(EMBEDDERS[s.graph_method].settings, s.graph_method_settings)
    elif s.graph_method_settings:
        raise InputError("--graph_method_settings is for prone/fastrp; PBG takes --biggraph_overrides")
    if s.device is not None and s.device not in DEVICES:
        raise InputError(f"--device {s.device!r}: choose one of {', '.join(DEVICES)}")
    if s.device == "cuda":  # asked for a GPU: one line now, not a CPU run or a failure hours later
        from scincl.model.device import check_gpu_usable

        check_gpu_usable(s.device)
    return s


# settings naming files or folders the run reads (train_*_paper_ids are read or written: not here)
INPUT_PATHS = ("scidocs_dir", "corpus_dir", "specter_triples_path", "graph_paper_ids_path", "graph_embeddings_path",
               "s2id_to_s2orc_input_path", "citations_path", "scidocs_paper_ids")


def check_input_paths(s: RunSettings) -> RunSettings:
    """Every input path given exists (comma-separated lists: each file); run before the first stage."""
    for name in INPUT_PATHS:
        value = getattr(s, name)
        for path in ([] if value is None else str(value).split(",")):
            if path.strip() and not Path(path.strip()).exists():
                raise InputError(f"--{name}: no such file or directory", path=path.strip())
    return s
