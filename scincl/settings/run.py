"""Settings of one ``run_specter`` experiment: :class:`RunSettings`, each field declared once with its default, the
source of that default, help text and range or choices; the run presets (``experiments/presets/<name>.py``) as data;
:func:`resolve`, which fills the fields not given from the run's preset, and :func:`check_ranges`.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import importlib.util
import os
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import attrs

from scincl.errors import InputError
from scincl.settings.choices import ANN_BACKENDS, DEVICES, GRAPH_LIMITS, K_SCALES, TRIPLES_SOURCES
from scincl.settings.schema import SCINCL, check_settings, setting, with_leaves
from scincl.settings.spec import BANDS, MinerSpec, section_leaves
from scincl.settings.values import check_value, simple_type

MINER_FLAGS = frozenset(attribute.name for attribute in attrs.fields(MinerSpec))  # every flag of the miner

DEFAULT_DEMO_OUTPUT_DIR = "demo_output"  # the embedded demo's OUTPUT_DIR
REPO_ROOT = Path(__file__).resolve().parents[2]  # the repository: biggraph_configs/, experiments/, its git state
BIGGRAPH_CONFIGS = REPO_ROOT / "biggraph_configs"  # the repository's PBG configs
# the experiments and run presets as data (read when a command asks for one, never at import); another folder of the
# same layout with SCINCL_EXPERIMENTS_DIR
EXPERIMENTS_DIR = Path(os.environ.get("SCINCL_EXPERIMENTS_DIR") or REPO_ROOT / "experiments")


def load_module(path: Path, name: str) -> Any:
    """The Python module at ``path`` (an ``experiments/`` data module), loaded as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Trainer arguments every CPU-budget run shares (the demo, the real-corpus experiments): no gradient
# accumulation, 10 % linear warm-up, a loss line every 10 steps, no external logger.
CPU_TRAINING: Dict[str, Any] = {"gradient_accumulation_steps": 1, "warmup_ratio": 0.1, "logging_steps": 10,
                                "report_to": "none"}
DATA = "none: no data argument at all runs the embedded demo"  # the source of the data arguments' default
# a SciDocs folder's own list of the papers to keep out of training (its queries; make_eval_dir writes it), which
# --scidocs_paper_ids defaults to when the folder has one (resolve)
EXCLUDED_IDS_FILE = "scidocs_paper_ids.json"


# the SciNCL settings a preset may set: unset by the user and the preset, the spec's (the paper's) value; a band's
# start left unset follows its end (derive_bands)
SCHEMA_FALLBACK: Tuple[str, ...] = tuple(f"{band}_k_max" for band in BANDS) + section_leaves("recipe", "encoder")


@dataclass
@with_leaves(after={"biggraph_overrides": ("graph_method",), "graph_test_ratio": section_leaves("sampler", "search"),
                    "triples_source": section_leaves("sampler", "miner"), "k_scale": ("seed",),
                    "bitfit": section_leaves("recipe", "encoder") + ("loss",)},
             unset=SCHEMA_FALLBACK + tuple(f"{band}_k_min" for band in BANDS))
class RunSettings:
    """Everything ``run_specter`` needs (its ``--help`` lists these fields); a field left ``None`` takes the run
    preset's value (:func:`resolve`), a user's value always wins."""

    output_dir: Optional[str] = setting(None, "positional OUTPUT_DIR; the demo's: demo_output", "where everything goes")
    base_model_name_or_path: Optional[str] = setting(
        None, "SciBERT when cached, else the packaged all-MiniLM-L6-v2 (scincl/model/encoder.py); the demo: MiniLM",
        "encoder to fine-tune")
    scidocs_dir: Optional[str] = setting(
        None, DATA, "SciDocs-format evaluation dir; its papers are kept out of the graph and the corpus")
    s2orc_metadata_dir: Optional[str] = setting(
        None, DATA, "S2ORC metadata shards (citations and titles/abstracts); the old name of --corpus_dir, an alias")
    corpus_dir: Optional[str] = setting(
        None, DATA, "the corpus folder, in --corpus_format (README \"Your own corpus\"); ids are the format's own, so "
        "give --s2id_to_s2orc_input_path as {SciDocs id: corpus id} (cli_s2orc.py get_scidocs_id_mapping)")
    corpus_format: Optional[str] = setting(None, "detected from the folder (scincl/corpus/)",
                                           "s2orc | s2ag | openalex | plain")
    specter_triples_path: Optional[str] = setting(
        None, DATA, "SPECTER training triples (CSV): their papers/queries define the corpus for --graph_limit "
        "specter|s2orc|none")
    graph_paper_ids_path: Optional[str] = setting(
        None, DATA, "BigGraph export: entity_names_paper_id_0.json (not given: the graph is built from the citations)")
    graph_embeddings_path: Optional[str] = setting(
        None, DATA, "BigGraph export: embeddings h5/npy (not given: the graph is built from the citations)")
    s2id_to_s2orc_input_path: Optional[str] = setting(
        None, "ids used as they are", "JSON {S2 id: S2ORC id} for the SPECTER and SciDocs ids (comma-separated "
        "files are merged)")
    train_s2orc_paper_ids: Optional[str] = setting(
        None, "the run's layout (scincl/pipeline/layout.py)", "corpus id list: an existing file is read, never "
        "rewritten (only the corpus given: queries sampled from it); a path that does not exist yet is written")
    train_query_s2orc_paper_ids: Optional[str] = setting(
        None, "the run's layout (scincl/pipeline/layout.py)", "query id list: an existing file is read, never "
        "rewritten; a path that does not exist yet is written")
    citations_path: Optional[str] = setting(None, "extracted from the corpus",
                                            "an existing citations TSV (for --triples_source specter_like)")
    scidocs_paper_ids: Optional[str] = setting(
        None, "--scidocs_dir's own scidocs_paper_ids.json, else every paper of its paper_metadata_*.json, mapped; "
        "the demo: its held-out papers",
        "JSON list of the graph ids kept out of graph and corpus, with or without --scidocs_dir; the train "
        "stage's leakage guard reports them (MODEL_DIR/leakage_report.json, manifest \"leakage\") and refuses to "
        "train when one is in the graph or the triplets")
    excluded_paper_ids: Optional[str] = setting(None, "get_citations' name", "the same flag as --scidocs_paper_ids")
    graph_limit: Optional[str] = setting(
        None, "original: specter; graph when no --specter_triples_path is given",
        "specter (SPECTER's papers, topped up), s2orc (SPECTER-sized random sample), graph (every graph paper), none "
        "(SPECTER's papers only)", choices=GRAPH_LIMITS)
    graph_leakage: bool = setting(False, "paper Table 1: w/o leakage", "keep SciDocs papers in the graph and corpus "
                                  "(the paper's \"w/ leakage\"; the guard then reports them without refusing)")
    biggraph_config: Optional[str] = setting(
        None, "the preset's: paper §4.2 768d dot (biggraph_configs/s2orc_768d_dot.py); the demo: biggraph_configs/demo.py",
        "PBG config of the graph stage (a file name of biggraph_configs/ in a preset)")
    biggraph_overrides: Optional[Any] = setting(None, "the config as it is",
                                                'PBG key=value overrides, space-separated, e.g. "num_epochs=5 num_partitions=8"')
    graph_method_settings: Optional[Any] = setting(
        None, "the method's own (scincl/graph/embedders/)", '"key=value ..." of prone / fastrp (cli_graph.py '
        'embed_graph: same files; dimension = the config\'s unless --biggraph_overrides "dimension=N")')
    graph_test_ratio: Optional[float] = setting(
        None, "README: 1 % of the edges held out for link prediction; the demo 5 %",
        "share of the citation edges held out for link prediction")
    ann_backend: str = setting("faiss", "README: --ann_backend faiss", "faiss or exact (scincl/knn/exact.py)",
                               choices=ANN_BACKENDS)
    ann_index_path: Optional[str] = setting(
        None, "the run's layout", "kNN index: an existing one is used, never rebuilt (one made for another corpus "
        "or settings is refused)")
    ann_device: int = setting(0, "first GPU when faiss has one, else CPU", "faiss device (-1: CPU)")
    device: Optional[str] = setting(
        None, "CUDA when available", "where training, the faiss index and embedding run; cuda stops at once when "
        "CUDA is unusable, cpu also sets --use_cpu and --ann_device -1", choices=DEVICES)
    triples_source: str = setting("knn", "paper §3.2: SciNCL's kNN sampling",
                                  "knn (SciNCL) or specter_like (citations; same corpus and queries)",
                                  choices=TRIPLES_SOURCES)
    k_scale: str = setting("paper", "paper: the k flags as given", "corpus: k+ and k-hard sized for the index from "
                           "the paper's k/N ratios (scincl/triples/k_scale.py)", choices=K_SCALES)
    corpus_seed: Optional[int] = setting(None, "original: --seed", "corpus and query selection seed")
    sample_queries_ratio: Optional[float] = setting(
        None, "the preset's: paper every query; the demo 10 %",
        "share of the query papers kept (the 1 % / 10 % ablations)")
    workers: Optional[int] = setting(None, "all CPUs", "processes / threads")
    gzip: bool = setting(False, "README: --gzip", "triples and metadata as .gz")
    auto_output_dir: bool = setting(False, "README: --auto_output_dir", "OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/"
                                    "[queries_<r>/]<sampling>/ as in the original")
    bitfit: bool = setting(False, "paper §4.3: full fine-tuning", "train only the biases (BitFit)")
    eval_max_sequence_length: Optional[int] = setting(
        None, "the evaluator's 512 (full SciDocs inputs); the demo preset's 128, a CPU budget",
        "tokens per SciDocs paper when embedding it")
    val_or_test_or_both: str = setting("both", "README: --val_or_test_or_both both", "SciDocs splits to evaluate",
                                       choices=("val", "test", "both"))
    evaluate_base_model: bool = setting(True, "paper Table 1: the base encoder's row",
                                        "evaluate the base encoder too (false: no base-encoder row)")
    demo_papers: int = setting(1500, "CPU budget: ~1.3k training papers, ~1.4k SciDocs papers",
                               "embedded demo corpus size")
    miner_options: Dict[str, Any] = setting(None, "scincl/settings/spec.py:MinerSpec", "the miner's other flags",
                                            default_factory=dict)
    training_options: Dict[str, Any] = setting(
        None, "scincl/model/train.py (SPECTER's set-up); the demo preset: one short epoch on CPU", "the trainer's flags",
        default_factory=dict)
    skip: List[str] = setting(None, "every stage runs", "stages to skip (--skip_<stage>)", default_factory=list)
    override: List[str] = setting(None, "outputs are reused", "stages to rebuild (--override_<stage>)",
                                  default_factory=list)
    stages: Optional[List[str]] = setting(
        None, "every stage runs", "comma-separated stage names: run only these (one plan split over jobs: e.g. "
        "--stages citations,graph on a large-memory node, then --stages train on a GPU node); the stages before "
        "them must be done")
    demo: bool = setting(False, "resolve(): no data argument", "the run builds and uses the bundled demo corpus")
    dry_run: bool = setting(False, "the run runs", "print the plan (corpus, graph, queries -> triplets -> steps, the "
                            "estimated time of each heavy stage) and stop before stage 1")
    preset: Optional[str] = setting(
        None, "demo without data arguments, else paper (experiments/presets/)",
        "the run preset whose settings fill those not given (experiments/presets/<name>.py: paper, demo, ...)")

    @functools.cached_property
    def miner(self) -> MinerSpec:
        """The kNN miner's settings of this run (its slot flags, then ``miner_options``), built and so checked once."""
        values = {**{name: getattr(self, name) for name in FIELDS if name in MINER_FLAGS}, **self.miner_options}
        return MinerSpec(**{name: value for name, value in values.items() if value is not None})

    @property
    def ann_do_normalize(self) -> bool:
        """``ann_normalize_embeddings`` under the name the triples stage records (cached triples keep their identity)."""
        return self.ann_normalize_embeddings

    @property
    def split(self) -> str:
        """The evaluation split shown in the printed table (test, unless only val is evaluated)."""
        return "val" if self.val_or_test_or_both == "val" else "test"


FIELDS: Dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(RunSettings)}
CHOICES: Dict[str, Tuple[str, ...]] = {name: f.metadata["choices"] for name, f in FIELDS.items() if f.metadata["choices"]}


# ---------------------------------------------------------------------- the run presets, as data
# ``experiments/presets/<name>.py`` returns the settings it sets by flag name (PyTorch-BigGraph's ``-p key=value``
# idea): ``paper`` for a run with data arguments, ``demo`` without; a flag the user gives wins over it.
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
    """The settings preset ``name`` sets (a fresh copy), the spec's value for each of :data:`SCHEMA_FALLBACK` it
    leaves unset; ``biggraph_config`` as a path in ``biggraph_configs/`` when the preset names a file there."""
    values = copy.deepcopy(_preset_module_values(name))
    for field_name in SCHEMA_FALLBACK:
        values.setdefault(field_name, getattr(SCINCL, field_name))
    config = values.get("biggraph_config")
    if config is not None and Path(config).name == config:
        values["biggraph_config"] = str(BIGGRAPH_CONFIGS / config)
    return values


# ---------------------------------------------------------------------- a run's settings from its preset
DATA_ARGUMENTS = ("scidocs_dir", "s2orc_metadata_dir", "corpus_dir", "graph_embeddings_path", "graph_paper_ids_path",
                  "specter_triples_path", "citations_path")  # none given: the embedded demo
ALIASES = {("corpus_dir", "s2orc_metadata_dir"): "--s2orc_metadata_dir is the old name of --corpus_dir",
           ("scidocs_paper_ids", "excluded_paper_ids"): "both name the evaluation papers kept out of graph and triplets"}


def resolve(values: Mapping[str, Any]) -> RunSettings:
    """:class:`RunSettings` of the ``values`` given by field name, each converted to its field's type (a flag is a
    typed override), the others filled from the run's preset (``--preset``, else the demo's without data arguments,
    else the paper's; the preset's ``training_options`` go under the user's), then checked (:func:`check_ranges`)."""
    hints = typing.get_type_hints(RunSettings)
    s = RunSettings(**{name: check_value(name, value, simple_type(hints[name]) or object, check_range=False)
                       for name, value in values.items()})
    given = {name for name, value in values.items() if value is not None}
    stages = s.stages if isinstance(s.stages, (list, tuple)) else str(s.stages or "").split(",")  # "a,b" or a list
    s.stages = [str(name).strip() for name in stages if str(name).strip()] or None
    s.demo = all(getattr(s, name) is None for name in DATA_ARGUMENTS)
    for (name, alias), why in ALIASES.items():  # one value under two names
        value, other = getattr(s, name), getattr(s, alias)
        if value and other and str(value) != str(other):
            raise InputError(f"--{name} {value} and --{alias} {other} differ; give one ({why})")
        setattr(s, name, value or other)
        setattr(s, alias, value or other)
    listed = Path(s.scidocs_dir) / EXCLUDED_IDS_FILE if s.scidocs_dir else None  # the folder's own list (make_eval_dir)
    if not s.scidocs_paper_ids and listed is not None and listed.is_file() and not s.s2id_to_s2orc_input_path:
        s.scidocs_paper_ids = s.excluded_paper_ids = str(listed)
    bands = [f"--{band}_k_{end}" for band in BANDS for end in ("min", "max") if getattr(s, f"{band}_k_{end}") is not None]
    if s.k_scale == "corpus" and bands:
        raise InputError(f"--k_scale corpus sizes k+ and k-hard itself; drop {', '.join(bands)} (or use --k_scale paper)")
    s.preset = s.preset or (DEMO if s.demo else PAPER)
    if s.output_dir is None:
        if not s.demo:
            raise InputError("OUTPUT_DIR is required when data arguments are given")
        s.output_dir = DEFAULT_DEMO_OUTPUT_DIR
    for name, value in preset_values(s.preset).items():
        if name in ("training_options", "miner_options"):
            setattr(s, name, {**value, **getattr(s, name)})
        elif name not in given:
            setattr(s, name, value)
    if s.k_scale != "corpus" and s.triples_source == "knn":  # corpus: the bands are sized for the index later
        for band in BANDS:  # a start not given: the one the miner's spec derives when built (and so checked)
            setattr(s, f"{band}_k_min", s.miner.slot(band).k_min)
    if s.graph_limit == "specter" and s.specter_triples_path is None and "graph_limit" not in given:
        s.graph_limit = "graph"  # nothing to replicate: train on the whole graph
    if s.corpus_seed is None:
        s.corpus_seed = s.seed  # original: the corpus follows --seed unless --corpus_seed is given
    if s.workers is None or s.workers <= 0:
        s.workers = os.cpu_count() or 1
    if s.device == "cpu":  # every stage on the CPU on purpose, also where CUDA works
        s.training_options.setdefault("use_cpu", True)
        s.ann_device = -1
    return check_ranges(s)


SeedsArg = Union[None, int, str, Sequence[int]]


def parse_seeds(seeds: SeedsArg) -> List[int]:
    """``3`` -> [3]; ``"0..9"`` -> 0..9 inclusive; ``"0,2,4"`` or ``(0, 2, 4)`` -> that list."""
    if seeds is None:
        return []
    if isinstance(seeds, (str, bool)):
        try:
            low, dots, high = str(seeds).partition("..")
            values = list(range(int(low), int(high) + 1)) if dots else [int(x) for x in low.split(",") if x.strip()]
        except ValueError:
            raise InputError(f"--seeds: expected seeds like 0..9 or 0,1,2, got {seeds!r}") from None
    else:  # a list, or a float: 1.5 is refused, not truncated (issue 41)
        values = parse_int_list([seeds] if isinstance(seeds, float) else seeds, "seeds")
    if not values or len(set(values)) != len(values):
        raise InputError(f"--seeds: expected distinct seeds, got {seeds!r}")
    if any(not 0 <= v < 2 ** 32 for v in values):  # numpy's and torch's seed range (issue 29: -1 crashed in training)
        raise InputError(f"--seeds {seeds!r}: seeds must be >= 0 and < 2**32")
    return values


def parse_int_list(values: Any, name: str) -> List[int]:
    """``"10,25,100"`` / ``(10, 25)`` / ``25`` -> list of ints (an :class:`InputError` otherwise: ``10.5`` is
    refused, not truncated to 10; issue 41)."""
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    elif isinstance(values, int):
        values = [values]
    try:
        if any(isinstance(v, bool) or (isinstance(v, float) and not v.is_integer()) for v in values):
            raise ValueError
        return [int(v) for v in values]
    except (TypeError, ValueError):
        raise InputError(f"--{name}: expected integers like 10,25,100, got {values!r}") from None


def check_ranges(s: RunSettings) -> RunSettings:
    """Range errors of resolved settings (one :class:`InputError` line): a kNN run's miner flags by building its
    :attr:`RunSettings.miner`, every other value by :func:`scincl.settings.schema.check_settings`."""
    values = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    values.update(s.miner_options)
    if s.triples_source == "knn":
        s.miner  # noqa: B018 - built here, once; its validators raise
        values = {name: value for name, value in values.items() if name not in MINER_FLAGS}
    check_settings({**values, **s.training_options}, fields=FIELDS)
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
