"""Settings of one ``run_specter`` experiment: :class:`RunSpec`, nested by what they set (corpus, graph, queries,
sampler = miner + search, recipe = encoder + loss + training, evaluation, seed, the run's control), SciNCL's sections
of :mod:`scincl.settings.spec` with the run's own fields, each declared once with its default, the source of that
default, help text and range or choices, and checked when built; :class:`RunSettings`, the built spec read by flag
name; the run presets (``experiments/presets/<name>.py``) as data; :func:`resolve`, which computes a run's values
(flags given > preset > defaults) and builds its spec once.
"""
from __future__ import annotations

import copy
import functools
import importlib.util
import os
import typing
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import attrs

from scincl.errors import InputError
from scincl.settings.choices import (ANN_BACKENDS, CORPUS_SCALE, DEVICES, GRAPH_LIMITS, K_SCALES, KNN_SOURCE,
                                     PAPER_SCALE, TRIPLES_SOURCES)
from scincl.settings.rules import FLAG_RULES, check_steps
from scincl.settings.schema import SCINCL, check_settings
from scincl.settings.spec import (BANDS, FlatView, GraphSpec, MinerSpec, RecipeSpec, SamplerSpec, SciNCLSpec,
                                  build_spec, evolve_spec, leaves_of, section, section_leaves, sections_of, spec_field)
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


# ---------------------------------------------------------------------- the run's spec, nested by what it sets
# Each section reuses SciNCL's (scincl/settings/spec.py) where it has one and adds the run's own fields; a field left
# None takes the run preset's value (resolve), a user's value always wins. Built once, by resolve, and so checked.
@section
class CorpusSpec:
    """The papers the run trains on: the corpus, its citations, the ids that map between them, which papers form the
    training corpus (the embedded demo's size without data arguments)."""

    s2orc_metadata_dir: Optional[str] = spec_field(
        None, DATA, "S2ORC metadata shards (citations and titles/abstracts); the old name of --corpus_dir, an alias")
    corpus_dir: Optional[str] = spec_field(
        None, DATA, "the corpus folder, in --corpus_format (README \"Your own corpus\"); ids are the format's own, so "
        "give --s2id_to_s2orc_input_path as {SciDocs id: corpus id} (cli_s2orc.py get_scidocs_id_mapping)")
    corpus_format: Optional[str] = spec_field(None, "detected from the folder (scincl/corpus/)",
                                              "s2orc | s2ag | openalex | plain")
    specter_triples_path: Optional[str] = spec_field(
        None, DATA, "SPECTER training triples (CSV): their papers/queries define the corpus for --graph_limit "
        "specter|s2orc|none")
    s2id_to_s2orc_input_path: Optional[str] = spec_field(
        None, "ids used as they are", "JSON {S2 id: S2ORC id} for the SPECTER and SciDocs ids (comma-separated "
        "files are merged)")
    train_s2orc_paper_ids: Optional[str] = spec_field(
        None, "the run's layout (scincl/pipeline/layout.py)", "corpus id list: an existing file is read, never "
        "rewritten (only the corpus given: queries sampled from it); a path that does not exist yet is written")
    citations_path: Optional[str] = spec_field(None, "extracted from the corpus",
                                               "an existing citations TSV (for --triples_source specter_like)")
    graph_limit: Optional[str] = spec_field(
        None, "original: specter; graph when no --specter_triples_path is given",
        "specter (SPECTER's papers, topped up), s2orc (SPECTER-sized random sample), graph (every graph paper), none "
        "(SPECTER's papers only)", choices=GRAPH_LIMITS)
    graph_leakage: bool = spec_field(False, "paper Table 1: w/o leakage", "keep SciDocs papers in the graph and corpus "
                                     "(the paper's \"w/ leakage\"; the guard then reports them without refusing)")
    corpus_seed: Optional[int] = spec_field(None, "original: --seed", "corpus and query selection seed",
                                            FLAG_RULES["corpus_seed"])
    demo_papers: int = spec_field(1500, "CPU budget: ~1.3k training papers, ~1.4k SciDocs papers",
                                  "embedded demo corpus size", FLAG_RULES["demo_papers"])


@section
class RunGraphSpec(GraphSpec):
    """SciNCL's citation-graph embeddings and the run's: a given BigGraph export, or how the graph stage makes one."""

    graph_paper_ids_path: Optional[str] = spec_field(
        None, DATA, "BigGraph export: entity_names_paper_id_0.json (not given: the graph is built from the citations)")
    graph_embeddings_path: Optional[str] = spec_field(
        None, DATA, "BigGraph export: embeddings h5/npy (not given: the graph is built from the citations)")
    biggraph_config: Optional[str] = spec_field(
        None, "the preset's: paper §4.2 768d dot (biggraph_configs/s2orc_768d_dot.py); the demo: biggraph_configs/demo.py",
        "PBG config of the graph stage (a file name of biggraph_configs/ in a preset)")
    biggraph_overrides: Optional[Any] = spec_field(
        None, "the config as it is", 'PBG key=value overrides, space-separated, e.g. "num_epochs=5 num_partitions=8"')
    graph_method_settings: Optional[Any] = spec_field(
        None, "the method's own (scincl/graph/embedders/)", '"key=value ..." of prone / fastrp (cli_graph.py '
        'embed_graph: same files; dimension = the config\'s unless --biggraph_overrides "dimension=N")')
    graph_test_ratio: Optional[float] = spec_field(
        None, "README: 1 % of the edges held out for link prediction; the demo 5 %",
        "share of the citation edges held out for link prediction", FLAG_RULES["graph_test_ratio"])


@section
class QueriesSpec:
    """The query papers the triplets are sampled for."""

    train_query_s2orc_paper_ids: Optional[str] = spec_field(
        None, "the run's layout (scincl/pipeline/layout.py)", "query id list: an existing file is read, never "
        "rewritten; a path that does not exist yet is written")
    sample_queries_ratio: Optional[float] = spec_field(
        None, "the preset's: paper every query; the demo 10 %",
        "share of the query papers kept (the 1 % / 10 % ablations)", FLAG_RULES["sample_queries_ratio"])


@section
class RunSamplerSpec(SamplerSpec):
    """SciNCL's miner and search, and the run's: the triplets' source, how the bands are sized, the kNN index."""

    miner: Optional[MinerSpec] = attrs.field(factory=MinerSpec)  # None: no kNN triplets (--triples_source)
    # no miner (specter_like): the counts the run samples by, by flag name (triples_per_query, c+, c-easy, c-hard)
    counts: Optional[Dict[str, int]] = attrs.field(default=None)
    triples_source: str = spec_field(KNN_SOURCE, "paper §3.2: SciNCL's kNN sampling",
                                     "knn (SciNCL) or specter_like (citations; same corpus and queries)",
                                     choices=TRIPLES_SOURCES)
    k_scale: str = spec_field(PAPER_SCALE, "paper: the k flags as given", "corpus: k+ and k-hard sized for the index "
                              "from the paper's k/N ratios (scincl/triples/k_scale.py)", choices=K_SCALES)
    ann_backend: str = spec_field("faiss", "README: --ann_backend faiss", "faiss or exact (scincl/knn/exact.py)",
                                  choices=ANN_BACKENDS)
    ann_index_path: Optional[str] = spec_field(
        None, "the run's layout", "kNN index: an existing one is used, never rebuilt (one made for another corpus "
        "or settings is refused)")
    ann_device: int = spec_field(0, "first GPU when faiss has one, else CPU", "faiss device (-1: CPU)")
    miner_options: Dict[str, Any] = spec_field(attrs.Factory(dict), "scincl/settings/spec.py:MinerSpec",
                                               "the miner's other flags")


@section
class RunRecipeSpec(RecipeSpec):
    """SciNCL's encoder, loss and training, and the run's: the encoder fine-tuned, BitFit, the trainer's flags."""

    base_model_name_or_path: Optional[str] = spec_field(
        None, "SciBERT when cached, else the packaged all-MiniLM-L6-v2 (scincl/model/encoder.py); the demo: MiniLM",
        "encoder to fine-tune")
    bitfit: bool = spec_field(False, "paper §4.3: full fine-tuning", "train only the biases (BitFit)")
    training_options: Dict[str, Any] = spec_field(
        attrs.Factory(dict), "scincl/model/train.py (SPECTER's set-up); the demo preset: one short epoch on CPU",
        "the trainer's flags")


@section
class EvaluationSpec:
    """The SciDocs evaluation: its folder, the papers kept out of training, the splits and the base encoder's row."""

    scidocs_dir: Optional[str] = spec_field(
        None, DATA, "SciDocs-format evaluation dir; its papers are kept out of the graph and the corpus")
    scidocs_paper_ids: Optional[str] = spec_field(
        None, "--scidocs_dir's own scidocs_paper_ids.json, else every paper of its paper_metadata_*.json, mapped; "
        "the demo: its held-out papers",
        "JSON list of the graph ids kept out of graph and corpus, with or without --scidocs_dir; the train "
        "stage's leakage guard reports them (MODEL_DIR/leakage_report.json, manifest \"leakage\") and refuses to "
        "train when one is in the graph or the triplets")
    excluded_paper_ids: Optional[str] = spec_field(None, "get_citations' name",
                                                   "the same flag as --scidocs_paper_ids")
    eval_max_sequence_length: Optional[int] = spec_field(
        None, "the evaluator's 512 (full SciDocs inputs); the demo preset's 128, a CPU budget",
        "tokens per SciDocs paper when embedding it", FLAG_RULES["eval_max_sequence_length"])
    val_or_test_or_both: str = spec_field("both", "README: --val_or_test_or_both both", "SciDocs splits to evaluate",
                                          choices=("val", "test", "both"))
    evaluate_base_model: bool = spec_field(True, "paper Table 1: the base encoder's row",
                                           "evaluate the base encoder too (false: no base-encoder row)")


@section
class RunControl:
    """How the run runs: where its files go, on which device and workers, which stages, the preset it starts from."""

    output_dir: Optional[str] = spec_field(None, "positional OUTPUT_DIR; the demo's: demo_output",
                                           "where everything goes")
    device: Optional[str] = spec_field(
        None, "CUDA when available", "where training, the faiss index and embedding run; cuda stops at once when "
        "CUDA is unusable, cpu also sets --use_cpu and --ann_device -1", choices=DEVICES)
    workers: Optional[int] = spec_field(None, "all CPUs", "processes / threads")
    gzip: bool = spec_field(False, "README: --gzip", "triples and metadata as .gz")
    auto_output_dir: bool = spec_field(False, "README: --auto_output_dir", "OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/"
                                       "[queries_<r>/]<sampling>/ as in the original")
    skip: List[str] = spec_field(attrs.Factory(list), "every stage runs", "stages to skip (--skip_<stage>)")
    override: List[str] = spec_field(attrs.Factory(list), "outputs are reused",
                                     "stages to rebuild (--override_<stage>)")
    stages: Optional[List[str]] = spec_field(
        None, "every stage runs", "comma-separated stage names: run only these (one plan split over jobs: e.g. "
        "--stages citations,graph on a large-memory node, then --stages train on a GPU node); the stages before "
        "them must be done")
    demo: bool = spec_field(False, "resolve(): no data argument", "the run builds and uses the bundled demo corpus")
    dry_run: bool = spec_field(False, "the run runs", "print the plan (corpus, graph, queries -> triplets -> steps, "
                               "the estimated time of each heavy stage) and stop before stage 1")
    preset: Optional[str] = spec_field(
        None, "demo without data arguments, else paper (experiments/presets/)",
        "the run preset whose settings fill those not given (experiments/presets/<name>.py: paper, demo, ...)")


@section
class RunSpec(SciNCLSpec):
    """Everything ``run_specter`` needs: SciNCL's spec (sampler, recipe, graph, seed), each section with the run's
    own fields, and the corpus, the queries, the evaluation and the run's control."""

    corpus: CorpusSpec = attrs.field(factory=CorpusSpec)
    graph: RunGraphSpec = attrs.field(factory=RunGraphSpec)
    queries: QueriesSpec = attrs.field(factory=QueriesSpec)
    sampler: RunSamplerSpec = attrs.field(factory=RunSamplerSpec)
    recipe: RunRecipeSpec = attrs.field(factory=RunRecipeSpec)
    evaluation: EvaluationSpec = attrs.field(factory=EvaluationSpec)
    run: RunControl = attrs.field(factory=RunControl)


@section
class ScaledMinerSpec(MinerSpec):
    """A ``--k_scale corpus`` run's miner: the index sizes its bands (scincl/triples/k_scale.py), so a start not given
    stays ``None`` until then; checked as the bands it starts from, and once sized as any miner."""

    def __attrs_post_init__(self) -> None:
        if any(getattr(self, f"{band}_k_min") is None for band in BANDS):
            MinerSpec(**{a.name: getattr(self, a.name) for a in attrs.fields(MinerSpec)})  # checked, starts derived
        else:
            super().__attrs_post_init__()


RUN_LEAVES = leaves_of(RunSpec)
MINER_LEAVES = section_leaves("sampler", "miner")  # the SciNCL slot settings (a kNN run records them)
COUNT_LEAVES = tuple(name for name in MINER_LEAVES if name.endswith("_count") or name == "triples_per_query")
# run_specter's settings, in the spec's order: every leaf but the trainer's (run_specter takes them among the
# trainer's flags, in --training_options) and the real-corpus experiments' shared graph's
FIELDS: Dict[str, "attrs.Attribute"] = {name: attribute for name, (path, attribute) in RUN_LEAVES.items()
                                        if path not in (("recipe", "training"), ("graph", "shared"))}
HINTS = {name: hint for cls in sections_of(RunSpec) for name, hint in typing.get_type_hints(cls).items()}


class RunSettings(FlatView):
    """A run's :class:`RunSpec` (``.spec``) read by flag name (``s.corpus_dir``), not a copy; made by :func:`resolve`.
    A run without a miner (``--triples_source specter_like``) reads its counts from the sampler, no band."""

    __slots__ = ()
    leaves = RUN_LEAVES
    sections = sections_of(RunSpec)  # where its flags are declared (--help lists them)

    def __getattr__(self, name: str) -> Any:
        if name in MINER_LEAVES and self.spec.sampler.miner is None:
            return self.spec.sampler.counts.get(name)
        return super().__getattr__(name)

    @property
    def miner(self) -> Optional[MinerSpec]:
        """The run's kNN miner (slot flags, then ``miner_options``), built with the spec (``None``: no kNN triplets)."""
        return self.spec.sampler.miner

    @property
    def ann_do_normalize(self) -> bool:
        """``ann_normalize_embeddings`` under the name the triples stage records (cached triples keep their identity)."""
        return self.ann_normalize_embeddings

    @property
    def split(self) -> str:
        """The evaluation split shown in the printed table (test, unless only val is evaluated)."""
        return "val" if self.val_or_test_or_both == "val" else "test"

    def evolve(self, **changes: Any) -> "RunSettings":
        """These settings with ``changes`` of settings that no other follows (by flag name: a path, a format): the
        sections that hold them rebuilt, and so checked."""
        return RunSettings(evolve_spec(self.spec, changes, RUN_LEAVES))


def settings_of(values: Mapping[str, Any]) -> RunSettings:
    """The run's spec built from resolved ``values`` by flag name (``miner_options`` and ``training_options`` fill
    the miner's and the trainer's fields), and so checked once; returned read by flag name.

    A kNN run's miner is built with the spec (a band's start not given: derived from its end; with ``--k_scale
    corpus`` it stays unset, the bands are sized with the index). A run of another source takes no kNN slots: no
    miner, its counts kept in the sampler, checked as flags."""
    knn, miner = values["triples_source"] == KNN_SOURCE, {**{name: values[name] for name in MINER_LEAVES},
                                                          **values["miner_options"]}
    if knn and values["k_scale"] == CORPUS_SCALE:
        sections = {"miner": build_spec(ScaledMinerSpec, miner)}
    elif knn:
        sections = {}
    else:
        check_settings(miner)
        sections = {"miner": None, "counts": {name: values[name] for name in COUNT_LEAVES}}
    spec = build_spec(RunSpec, {**values, **miner, **values["training_options"]}, sections)
    trainer = {name: value for name, value in values["training_options"].items()
               if name not in section_leaves("recipe", "training")}  # the trainer's flags that are no SciNCL setting
    check_settings(trainer)
    check_steps(spec.recipe.training.num_train_epochs, trainer.get("max_steps"))
    return RunSettings(spec)


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
    """The run's spec from the ``values`` given by flag name, each converted to its field's type (a flag is a typed
    override), the others from the run's preset (``--preset``, else the demo's without data arguments, else the
    paper's; the preset's ``training_options`` go under the user's), else the spec's defaults; then the rules below
    (aliases, derived values, the demo's), and built once (:func:`settings_of`), which checks every value."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise TypeError(f"resolve(): no run_specter setting {unknown[0]!r}")
    given = {name: check_value(name, value, simple_type(HINTS[name]) or object, check_range=False)
             for name, value in values.items() if value is not None}
    s = {**{name: f.default.factory() if isinstance(f.default, attrs.Factory) else f.default  # a fresh dict, list
            for name, f in FIELDS.items()}, **given}
    stages = s["stages"] if isinstance(s["stages"], (list, tuple)) else str(s["stages"] or "").split(",")  # "a,b"
    s["stages"] = [str(name).strip() for name in stages if str(name).strip()] or None
    s["demo"] = all(s[name] is None for name in DATA_ARGUMENTS)
    for (name, alias), why in ALIASES.items():  # one value under two names
        value, other = s[name], s[alias]
        if value and other and str(value) != str(other):
            raise InputError(f"--{name} {value} and --{alias} {other} differ; give one ({why})")
        s[name] = s[alias] = value or other
    listed = Path(s["scidocs_dir"]) / EXCLUDED_IDS_FILE if s["scidocs_dir"] else None  # the folder's own list
    if not s["scidocs_paper_ids"] and listed is not None and listed.is_file() and not s["s2id_to_s2orc_input_path"]:
        s["scidocs_paper_ids"] = s["excluded_paper_ids"] = str(listed)
    bands = [f"--{band}_k_{end}" for band in BANDS for end in ("min", "max") if f"{band}_k_{end}" in given]
    if s["k_scale"] == CORPUS_SCALE and bands:
        raise InputError(f"--k_scale corpus sizes k+ and k-hard itself; drop {', '.join(bands)} (or use --k_scale paper)")
    s["preset"] = s["preset"] or (DEMO if s["demo"] else PAPER)
    if s["output_dir"] is None:
        if not s["demo"]:
            raise InputError("OUTPUT_DIR is required when data arguments are given")
        s["output_dir"] = DEFAULT_DEMO_OUTPUT_DIR
    for name, value in preset_values(s["preset"]).items():
        if name in ("training_options", "miner_options"):
            s[name] = {**value, **s[name]}
        elif name not in given:
            s[name] = value
    if s["graph_limit"] == "specter" and s["specter_triples_path"] is None and "graph_limit" not in given:
        s["graph_limit"] = "graph"  # nothing to replicate: train on the whole graph
    if s["corpus_seed"] is None:
        s["corpus_seed"] = s["seed"]  # original: the corpus follows --seed unless --corpus_seed is given
    if s["workers"] is None or s["workers"] <= 0:
        s["workers"] = os.cpu_count() or 1
    if s["device"] == "cpu":  # every stage on the CPU on purpose, also where CUDA works
        s["training_options"] = {**s["training_options"], "use_cpu": s["training_options"].get("use_cpu", True)}
        s["ann_device"] = -1
    return settings_of(s)


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
