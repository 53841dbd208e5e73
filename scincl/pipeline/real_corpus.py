"""Real-corpus reproduction (issue 8): the paper's comparisons on hep-th and CiteSeer at CPU scale.

One :class:`Reproduction` per corpus and output dir. Everything the arms share is built once under
``OUTPUT_DIR/shared`` and reused by every later command (citations without the SciDocs query papers,
co-citations, BigGraph embeddings, FAISS indexes, the SciDocs papers of each split, the base
encoder's evaluation, the query sample of each seed); each arm x seed gets its own triplets, model
and evaluation under ``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``. Every step is a
:class:`~scincl.pipeline.runner.Stage` run by :func:`~scincl.pipeline.runner.run_stages`, the runner
of ``run_specter``: the same reuse rule, the same log lines, a ``manifest.json`` in each output
directory, so an interrupted command resumes and a finished one re-prints its tables for free.

The arms (paper Table 1 "w/o leakage" rows, at equal budget: ``base``, the encoder without fine-tuning, and the
trained ones, SPECTER-like citation triplets or SciNCL's kNN triplets on a graph's embeddings), their graphs and
the corpora are data: ``experiments/arms.py``.

Every trained arm of one seed uses the same query papers (a seeded sample of the papers for which
*every* arm can build its triplets), the same number of triplets and the same training recipe.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from scincl.graph import stage as corpus_stage
from scincl.errors import InputError
from scincl.io import PathLike, iter_tsv, read_id_list, read_json, write_id_list, write_json
from scincl.pipeline.layout import (Planner, citation_files, device_type, encoder_path, graph_files,
                                    leakage_inputs, run_files)
from scincl.pipeline.manifest import Manifest
from scincl.pipeline.runner import Stage
from scincl.pipeline.stages import (evaluate_stage, index_stage, queries_stage, score_embeddings, texts_stage,
                                    triples_stage)
from scincl.settings.run import REPO_ROOT
from scincl.settings.schema import SCINCL, scincl_setting, setting
from scincl.triples.queries import is_eligible_query
from scincl.triples.knn_miner import KnnSearch
from scincl.triples.miner import make_config
from scincl.triples.sources import SPECTER_LIKE

logger = logging.getLogger(__name__)

# BigGraph training workers of the real-corpus graphs (PBG's ``workers``; unset = one Hogwild! worker
# per core, whose interleaving differs between runs). One worker makes the graph, and so SciNCL's
# triplets, byte-reproducible from a clean checkout (scincl/graph/pbg_compat.py seeds it); its cost on
# hep-th is in docs/results.md ("Reproducibility").
BIGGRAPH_WORKERS = 1

# The kNN arms' index and search: FAISS Flat (exact) inner product over the L2-normalised graph embeddings (cosine;
# the original README's build_faiss --do_normalize), the paper's k as given.
REAL_CORPUS_SEARCH = KnnSearch(ann_metric="inner_product", ann_normalize_embeddings=True, faiss_string_factory="Flat")


def load_module(path: Path, name: str) -> Any:
    """The Python module at ``path`` (an ``experiments/`` data module), loaded as ``name``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Arm:
    """A trained arm is a setting, not a code path: where its triplets come from (``experiments/arms.py``)."""

    name: str  # directory key (runs/<split>/<recipe>/<name>/seed_<s>)
    label: str  # table row
    triples_source: str  # knn | specter_like (scincl/triples/sources.py TRIPLES_SOURCES)
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


def corpus_spec(name: str, data_dir: PathLike) -> CorpusSpec:
    """A corpus of :data:`CORPORA` (``hepth``, ``citeseer``) below ``data_dir`` (the layout of ``../shared/data``)."""
    if name not in CORPORA:
        raise InputError(f"unknown corpus {name!r}: choose {' or '.join(CORPORA)}")
    spec = CorpusSpec(name=name, root=Path(data_dir) / name, **CORPORA[name])
    spec.check()
    return spec


@dataclass(frozen=True)
class Recipe:
    """The experiment's variables: sampling (k+, k-hard), budget and training of one arm.

    Fields carry the settings' own names (scincl/settings/schema.py: ``easy_positives_k_max`` is k+); the
    names they had before (``k_pos``, ``k_hard``, ``pooling``, ``batch_size``, ``epochs``, ``base_model``:
    :data:`RECIPE_ALIASES`) are accepted as flags and experiment keys and are what a run's ``recipe.json``
    records (:func:`recipe_record`), so runs cached under them keep their folders and records.
    """

    triplets: int = setting(1000, "docs/results.md Setup: 200 hep-th query papers x 5 (CPU budget)",
                            "training triplets per run, 5 per query paper")
    easy_positives_k_max: int = scincl_setting(
        "easy_positives_k_max", 25, source="hep-th val, docs/results.md §1 (k+ in 10, 25, 50)")
    hard_negatives_k_max: int = scincl_setting(
        "hard_negatives_k_max", 500, source="hep-th val, docs/results.md §1 (k-hard in 100, 500, 2000)")
    pooling_strategy: str = scincl_setting(
        "pooling_strategy", "mean", source="hep-th val, docs/results.md §1 (MiniLM was trained with mean pooling)")
    learning_rate: float = scincl_setting(
        "learning_rate", 5e-5, source="the demo's, not swept for lack of CPU time (docs/results.md §1)")
    loss: str = scincl_setting("loss", "triplet", source="docs/results.md Setup: the paper's triplet margin loss")
    max_sequence_length: int = scincl_setting(
        "max_sequence_length", 64, source="docs/results.md Setup: 64 training tokens (CPU budget)")
    per_device_train_batch_size: int = scincl_setting(
        "per_device_train_batch_size", 16, source="docs/results.md Setup: batch 16 (CPU budget)")
    num_train_epochs: int = scincl_setting(
        "num_train_epochs", 1, source="docs/results.md Setup: one epoch (CPU budget)")
    graph_dim: int = setting(64, "docs/results.md Setup: the citation graph's BigGraph embeddings, 64-d",
                             "dimensions of the citation-graph embeddings SciNCL samples from")
    bf16: str = setting("auto", "train's default", "training precision: auto (bf16 where native) | true | false")
    eval_bf16: str = setting("false", "scincl.model.embed.EMBED_BF16", "evaluation embeddings: fp32 unless asked")
    base_model_name_or_path: str = setting(
        "", "the packaged all-MiniLM-L6-v2 (docs/results.md Setup)",
        "the encoder to fine-tune: empty = the packaged MiniLM, else a hub name or a directory")

    def __post_init__(self) -> None:
        from scincl.model.device import parse_bf16_request

        for name in ("bf16", "eval_bf16"):  # fire gives booleans for --bf16 true: keep the words
            object.__setattr__(self, name, parse_bf16_request(getattr(self, name)))

    def training_arguments(self) -> Dict[str, Any]:
        """The Trainer arguments of this recipe (the fixed CPU ones from scincl/settings/run.py)."""
        from scincl.settings.run import CPU_TRAINING

        return {"learning_rate": self.learning_rate, "num_train_epochs": self.num_train_epochs,
                "per_device_train_batch_size": self.per_device_train_batch_size, "bf16": self.bf16, **CPU_TRAINING}

    def encoder_path(self) -> str:
        """What ``train`` and the base evaluation load: ``--base_model``, or the packaged MiniLM."""
        return encoder_path(self.base_model_name_or_path)

    def encoder_label(self) -> str:
        """The encoder as the tables name it."""
        return self.base_model_name_or_path or "all-MiniLM-L6-v2 (packaged)"

    def encoder_key(self) -> str:
        """``""`` for the packaged MiniLM (the runs keep their names), else ``_m<name>-<hash>``: the
        last path component of ``--base_model`` and 8 hex digits of its sha256, so two models with
        the same name in different places never share a run."""
        model = self.base_model_name_or_path
        if not model:
            return ""
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(model.rstrip("/")).name).strip("-") or "model"
        return f"_m{name}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"

    def precision_key(self) -> str:
        """``""`` for fp32 training and embedding, else ``_bf16`` (training) / ``_ebf16`` (embedding).

        The request is resolved on this machine (``auto`` -> what the device runs natively), so a bf16
        run and an fp32 run never share a directory, and fp32 runs keep their pre-bf16 names.
        """
        from scincl.model.device import resolve_bf16

        device = device_type()
        return ("_bf16" if resolve_bf16(self.bf16, device) else "") + (
            "_ebf16" if resolve_bf16(self.eval_bf16, device) else "")

    def loss_key(self) -> str:
        """The loss name, with ``.r<N>`` once its definition was revised (runs of older definitions keep
        their names and are not reused; :func:`scincl.model.losses.loss_revision`)."""
        from scincl.model.losses import loss_revision

        revision = loss_revision(self.loss)
        return self.loss if revision == 1 else f"{self.loss}.r{revision}"

    def key(self) -> str:
        """Directory name of everything that depends on this recipe (precision included)."""
        return (f"t{self.triplets}_kp{self.easy_positives_k_max}_kh{self.hard_negatives_k_max}_{self.pooling_strategy}"
                f"_lr{self.learning_rate:g}_{self.loss_key()}_len{self.max_sequence_length}"
                f"_bs{self.per_device_train_batch_size}_ep{self.num_train_epochs}_g{self.graph_dim}"
                + self.encoder_key() + self.precision_key())


# the recipe fields' names before they took the settings' own (issue 27): accepted as flags, experiment keys and
# --variants, and kept in each run's recipe.json (its provenance record), so cached runs stay as they were
RECIPE_ALIASES: Dict[str, str] = {"k_pos": "easy_positives_k_max", "k_hard": "hard_negatives_k_max",
                                  "pooling": "pooling_strategy", "batch_size": "per_device_train_batch_size",
                                  "epochs": "num_train_epochs", "base_model": "base_model_name_or_path"}


def recipe_field(name: str) -> str:
    """The :class:`Recipe` field a flag or experiment key names (a :data:`RECIPE_ALIASES` name -> its field)."""
    return RECIPE_ALIASES.get(name, name)


def recipe_fields(values: Dict[str, Any]) -> Dict[str, Any]:
    """``values`` with :data:`RECIPE_ALIASES` names replaced by the fields' names (one name given twice with
    different values is an :class:`InputError`)."""
    out: Dict[str, Any] = {}
    for name, value in values.items():
        field_name = recipe_field(name)
        if field_name in out and out[field_name] != value:
            raise InputError(f"--{name} {value!r} and --{field_name} {out[field_name]!r} name one setting; give one")
        out[field_name] = value
    return out


def recipe_record(recipe: Recipe) -> Dict[str, Any]:
    """The recipe as a run's ``recipe.json`` records it: under the names it had when the cached runs were made."""
    names = {field_name: alias for alias, field_name in RECIPE_ALIASES.items()}
    return {names.get(name, name): value for name, value in sorted(dataclasses.asdict(recipe).items(),
                                                                   key=lambda item: names.get(item[0], item[0]))}


class Reproduction(Planner):
    """Shared stage outputs of one corpus plus the per-arm runs (see the module docstring); the steps it shares with
    ``run_specter``'s plan: :class:`~scincl.pipeline.layout.Planner`."""

    def __init__(self, corpus: CorpusSpec, output_dir: PathLike, eval_max_sequence_length: int = 128,
                 workers: Optional[int] = None, cocitation_min_count: int = 2) -> None:
        self.corpus = corpus
        self.out = Path(output_dir)
        self.shared = self.out / "shared"
        # the citation edges the graphs are trained on (w/o the SciDocs query papers) and the held-out ones
        self.citations_train, self.citations_test = citation_files(self.shared)
        self.eval_max_sequence_length = eval_max_sequence_length
        self.workers = workers
        self.cocitation_min_count = cocitation_min_count
        self.shared.mkdir(parents=True, exist_ok=True)
        super().__init__(self.out, self.shared, Manifest(self.out, {
            "corpus": corpus.name, "eval_max_sequence_length": eval_max_sequence_length, "workers": workers,
            "cocitation_min_count": cocitation_min_count}))

    def stage(self, output: Path, run: Callable[[], Any], inputs: Sequence[Path] = (), outputs: Sequence[Path] = (),
              description: str = "", output_dir: Optional[Path] = None,
              reusable: Optional[Callable[[], bool]] = None) -> Path:
        """Run one step through the stage runner (reused when its outputs exist); returns ``output``.

        The stage is named by its output's path below OUTPUT_DIR; ``outputs`` adds further files
        that must exist for a reuse, ``reusable`` a further condition (e.g. the split is scored).
        """
        stage = Stage(self.stage_name(output), [output, *outputs], run, inputs=[p for p in inputs if p is not None],
                      output_dir=output_dir, description=description, reusable=reusable)
        self.run_stage(stage)
        return output

    # ------------------------------------------------------------------ shared inputs
    def citations(self) -> Path:
        """Citation edges without the SciDocs query papers (w/o leakage), 5 % held out for link prediction."""
        self.run_stage(self.citations_step(
            self.stage_name(self.citations_train), self.corpus.metadata_dir, self.corpus.excluded_ids,
            SCINCL.shared_graph_test_ratio, SCINCL.shared_graph_seed, self.workers,
            description="citation edges w/o the SciDocs queries"))
        return self.citations_train

    def cocitations(self) -> Path:
        """Co-citation pairs (both directions, with counts) without the SciDocs query papers."""
        path = self.shared / f"cocitations.min{self.cocitation_min_count}.tsv"
        return self.stage(path, lambda: corpus_stage.get_cocitations(
            str(self.corpus.metadata_dir), str(path), excluded_paper_ids=str(self.corpus.excluded_ids),
            min_count=self.cocitation_min_count, workers=self.workers, override=True),
            inputs=[self.corpus.metadata_dir, self.corpus.excluded_ids], description="co-citation pairs")

    def graph(self, kind: str = "cite", dim: int = 64, comparator: str = "dot") -> Dict[str, Path]:
        """Embeddings of a graph of :data:`GRAPHS` (experiments/arms.py): the citation (``cite``), co-citation
        (``cocite``) or transductive citation graph by BigGraph, or the citation graph by another method; its edges
        are staged first (only the citation graph has held-out edges to score)."""
        directory = self.shared / f"graph_{kind}_{dim}d_{comparator}"
        result = graph_files(directory)
        if kind not in GRAPHS:
            raise InputError(f"unknown graph kind {kind!r}")
        graph = GRAPHS[kind]
        if comparator not in graph.get("comparators", (comparator,)):
            raise InputError(f"the {kind} graph is trained with the {', '.join(graph['comparators'])} comparator only")
        edges = {"citations": self.citations, "cocitations": self.cocitations,
                 "transductive": self.transductive_citations}[graph["edges"]]
        train, test = edges(), self.citations_test if graph["edges"] == "citations" else None
        method = graph["method"]
        embed: Dict[str, Any] = {"method": method, "config": graph["config"].format(comparator=comparator),
                                 "seed": SCINCL.shared_graph_seed}
        if method == "pbg":  # BigGraph's dimension and worker count as overrides of the config
            embed["overrides"] = f"dimension={dim} workers={BIGGRAPH_WORKERS}"
        else:
            embed["dimension"] = dim
        self.run_stage(self.graph_step(self.stage_name(result["embeddings"]), train, test, directory, embed,
                                       description=f"BigGraph {kind} {dim}d {comparator}" if method == "pbg"
                                       else f"{method} {kind} {dim}d"))
        return result

    def transductive_citations(self) -> Path:
        """Every citation edge except those between a SciDocs query and its own candidates.

        The graph-only retriever needs the query papers in the graph: this graph keeps each query's
        other citations (as OpenMSD's held-out-edge protocol does) and hides only the edges the
        cite / co-cite tasks ask about. It is an optimistic, transductive setting, not "w/o leakage".
        """
        path = self.shared / "citations_transductive.tsv"
        everything = self.stage(self.shared / "citations_all.tsv", lambda: corpus_stage.get_citations(
            str(self.corpus.metadata_dir), str(self.shared / "citations_all.tsv"), workers=self.workers,
            override=True), inputs=[self.corpus.metadata_dir], description="every citation edge")
        return self.stage(path, lambda: self._hide_query_candidate_edges(everything, path), inputs=[everything],
                          description="citations minus the SciDocs query-candidate edges")

    def _hide_query_candidate_edges(self, everything: Path, path: Path) -> None:
        from scincl.scidocs_io import read_qrels

        hidden: Set[Tuple[str, str]] = set()
        for qrel in sorted(self.corpus.scidocs_dir.glob("*/*.qrel")):
            for qid, candidates in read_qrels(qrel).items():
                hidden.update(pair for pid in candidates for pair in ((qid, pid), (pid, qid)))
        kept = removed = 0
        with open(path.with_suffix(".tmp"), "w") as fh:
            for _, (citing, cited, *_rest) in iter_tsv(everything):
                if (citing, cited) in hidden:
                    removed += 1
                    continue
                fh.write(f"{citing}\t{cited}\n")
                kept += 1
        path.with_suffix(".tmp").rename(path)
        logger.info("transductive citations: %d edges kept, %d query-candidate edges hidden", kept, removed)

    def ann_index(self, kind: str, dim: int) -> Path:
        """FAISS Flat inner-product index over the normalised graph embeddings (papers with text only)."""
        graph = self.graph(kind, dim)
        path = self.shared / f"graph_{kind}_{dim}d_dot.Flat.faiss"
        corpus = self.graph_papers_with_text(kind, dim)
        self.run_stage(index_stage(self.stage_name(path), graph, path, corpus, search=REAL_CORPUS_SEARCH,
                                   workers=self.workers, inputs=[graph["embeddings"], corpus], keep_result=True,
                                   description=f"FAISS index of the {kind} graph ({dim}d)"))
        return path

    def graph_papers_with_text(self, kind: str, dim: int) -> Path:
        """The graph's papers that have a text: the kNN arms' corpus (index, positives, negatives)."""
        path = self.shared / f"graph_{kind}_{dim}d.papers_with_text.json"
        with_text, graph_ids = self.papers_with_text(), self.graph(kind, dim)["ids"]

        def write() -> None:
            keep = set(read_id_list(with_text))
            write_id_list(path, [pid for pid in read_id_list(graph_ids) if pid in keep])

        return self.stage(path, write, inputs=[with_text, graph_ids], description="graph papers with a text")

    def papers_with_text(self) -> Path:
        """Ids of the corpus papers that have a title or an abstract (the only ones an encoder can use)."""
        path = self.shared / "papers_with_text.json"

        def write() -> None:
            from scincl.corpus.shards import iter_all_papers, list_metadata_shards

            ids = [str(r["paper_id"]) for r in iter_all_papers(list_metadata_shards(self.corpus.metadata_dir))
                   if (r.get("title") or r.get("abstract"))]
            write_id_list(path, sorted(set(ids)))

        return self.stage(path, write, inputs=[self.corpus.metadata_dir], description="papers with a text")

    # ------------------------------------------------------------------ queries
    def eligible_queries(self, graph_dim: int) -> List[str]:
        """Papers every arm can build 5 triplets for (sorted).

        SPECTER-like needs >= 5 cited (CiteSeer: linked) papers and >= 2 citations of citations that
        are not cited; the kNN arms need the paper in the citation and co-citation graphs; the
        encoder needs its text. SciDocs query papers are never eligible (not in the graphs).
        """
        path = self.shared / f"eligible_queries_g{graph_dim}.json"
        inputs = [self.citations(), self.graph("cite", graph_dim)["ids"], self.graph("cocite", graph_dim)["ids"],
                  self.papers_with_text(), self.corpus.excluded_ids]
        self.stage(path, lambda: self._write_eligible_queries(path, *inputs), inputs=inputs,
                   description="queries every arm can build 5 triplets for")
        return read_id_list(path)

    def _write_eligible_queries(self, path: Path, citations: Path, cite_ids: Path, cocite_ids: Path,
                                with_text_ids: Path, excluded_ids: Path) -> None:
        adjacency = _adjacency(iter_tsv(citations), self.corpus.bidirectional)
        in_graphs = set(read_id_list(cite_ids)) & set(read_id_list(cocite_ids))
        with_text = set(read_id_list(with_text_ids))
        excluded = set(read_id_list(excluded_ids))
        eligible = [paper for paper in adjacency if paper in in_graphs and paper in with_text
                    and paper not in excluded and is_eligible_query(paper, adjacency)]
        eligible.sort()
        write_id_list(path, eligible)
        logger.info("%d papers are eligible queries for every arm", len(eligible))

    def queries(self, seed: int, count: int, graph_dim: int) -> Path:
        """``count`` query papers sampled with ``seed`` from the eligible ones (shared by all arms;
        scincl/pipeline/stages.py:queries_stage)."""
        path = self.shared / "queries" / f"seed_{seed}.n{count}.g{graph_dim}.json"
        self.eligible_queries(graph_dim)
        eligible = self.shared / f"eligible_queries_g{graph_dim}.json"
        self.run_stage(queries_stage(self.stage_name(path), path, selection="eligible_for_all_arms",
                                     select={"eligible": eligible, "count": count, "seed": seed,
                                             "where": self.corpus.name},
                                     outputs=[path], inputs=[eligible], description=f"{count} query papers, seed {seed}"))
        return path

    # ------------------------------------------------------------------ arms
    def triples(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Path:
        """The arm's triplets CSV (5 per query: 5 positives, 2 hard + 3 easy negatives)."""
        self.run_stage(self.triples_stage(arm, seed, recipe, run_dir))
        return run_files(run_dir)[0]

    def triples_stage(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Stage:
        """The arm's triplets stage (scincl/pipeline/stages.py:triples_stage); the inputs its source
        reads are staged first. The kNN miner's bands come from the recipe (the other slots keep SciNCL's, each band
        starts at k_max - count: scincl/settings/schema.py:derive_bands) and it searches :data:`REAL_CORPUS_SEARCH`;
        the SPECTER-like sampler writes exactly the recipe's number of triplets."""
        if arm not in ARM_SETTINGS:
            raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
        setting = ARM_SETTINGS[arm]
        path = run_files(run_dir)[0]
        queries = self.queries(seed, -(-recipe.triplets // SCINCL.triples_per_query), recipe.graph_dim)
        if setting.triples_source == SPECTER_LIKE:
            citations = self.citations()
            sampling: Dict[str, Any] = {"citations_input_path": citations, "triples_count": recipe.triplets,
                                        "bidirectional": self.corpus.bidirectional}
            inputs = [citations, queries]
        else:
            graph = self.graph(setting.graph, recipe.graph_dim)
            index = self.ann_index(setting.graph, recipe.graph_dim)
            corpus = self.graph_papers_with_text(setting.graph, recipe.graph_dim)
            config = make_config(easy_positives_k_max=recipe.easy_positives_k_max,
                                 hard_negatives_k_max=recipe.hard_negatives_k_max)  # other slots: SciNCL's
            sampling = {"graph_paper_ids_path": graph["ids"], "graph_embeddings_path": graph["embeddings"],
                        "config": config, "search": REAL_CORPUS_SEARCH, "ann_index_path": index,
                        "include_paper_ids": str(corpus), "workers": self.workers, "show_progress": False}
            inputs = [graph["embeddings"], index, queries]
        return triples_stage(self.stage_name(path), setting.triples_source, path, queries,
                             sampling={**sampling, "seed": seed}, inputs=inputs, description=f"{arm} triplets, seed {seed}")

    def train(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Path:
        """Fine-tune the recipe's encoder on the arm's triplets (reused when ``train_args.json`` exists)."""
        self.run_stage(self.train_stage(arm, seed, recipe, run_dir))
        return run_dir / "model"

    def train_stage(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Stage:
        """The arm's training stage (scincl/pipeline/stages.py:train_stage): its triplets and their texts are
        made only when the model is, so a finished model is reused without them."""
        model = run_dir / "model"
        triples, metadata = run_files(run_dir)

        def triples_and_texts() -> None:
            self.triples(arm, seed, recipe, run_dir)
            self.run_stage(self.texts_stage(run_dir))

        return self.train_step(self.stage_name(model / "train_args.json"), recipe, triples, metadata, model,
                               recipe.encoder_path(),
                               {**recipe.training_arguments(), "seed": seed, "save_strategy": "no"},
                               lambda: self.leakage_inputs(arm, recipe), before=triples_and_texts,
                               outputs=[model / "train_args.json"], inputs=[triples, metadata],
                               description=f"train {arm} seed {seed}")

    def texts_stage(self, run_dir: Path) -> Stage:
        """The texts of the run's triplets' papers (scincl/pipeline/stages.py:texts_stage)."""
        triples, metadata = run_files(run_dir)
        return texts_stage(self.stage_name(metadata), triples, metadata, self.corpus.metadata_dir,
                           workers=self.workers or 1, inputs=[triples], description="texts of the triplets' papers")

    def leakage_inputs(self, arm: str, recipe: Recipe) -> Dict[str, Any]:
        """What the leakage guard of ``train`` checks for an arm (scincl/leakage.py): the SciDocs query
        papers against the arm's graph nodes and the citation edges it came from (w/o leakage: none)."""
        setting = ARM_SETTINGS[arm]
        graph_ids = graph_edges = None
        if setting.triples_source != SPECTER_LIKE:
            graph_ids = self.graph(setting.graph, recipe.graph_dim)["ids"]
            graph_edges = self.cocitations() if GRAPHS[setting.graph]["edges"] == "cocitations" else self.citations_train
        return leakage_inputs(self.corpus.excluded_ids, setting.triples_source, graph_ids, graph_edges,
                              self.citations_train)

    def eval_papers(self, split: str) -> Path:
        """The SciDocs papers one split needs (its qrels' queries and candidates, all classification papers)."""
        path = self.shared / f"scidocs_papers.{split}.json"
        return self.stage(path, lambda: self._write_eval_papers(path, split), inputs=[self.corpus.scidocs_dir],
                          description=f"SciDocs papers of the {split} split")

    def _write_eval_papers(self, path: Path, split: str) -> None:
        from scincl.scidocs_io import read_class_labels, read_qrels, read_scidocs_metadata_dir

        papers: Dict[str, dict] = {}
        for group in read_scidocs_metadata_dir(self.corpus.scidocs_dir).values():
            papers.update(group)
        needed: Set[str] = set()
        for qrel in sorted(self.corpus.scidocs_dir.glob(f"*/{split}.qrel")):
            for qid, candidates in read_qrels(qrel).items():
                needed.add(qid)
                needed.update(candidates)
        for csv_path in sorted(self.corpus.scidocs_dir.glob("*/*.csv")):  # classification: train + eval split
            needed.update(read_class_labels(csv_path))
        write_json(path, {pid: papers[pid] for pid in sorted(needed) if pid in papers}, indent=False)

    def evaluate(self, model: str, run_dir: Path, split: str, pooling: Optional[str] = None,
                 bf16: str = "false") -> Dict[str, Any]:
        """Embed the split's SciDocs papers (``eval_max_sequence_length`` tokens, fp32 unless ``bf16``) and score them
        (scincl/pipeline/stages.py:evaluate_stage); ``results.json`` holds the scores of every split evaluated."""
        results = run_dir / "results.json"
        self.run_stage(evaluate_stage(
            self.stage_name(results), model, self.corpus.scidocs_dir, run_dir, split=split, pooling_strategy=pooling,
            max_sequence_length=self.eval_max_sequence_length, papers=lambda: self.eval_papers(split), bf16=bf16,
            outputs=[results], inputs=[Path(model)], output_dir=run_dir, reusable=lambda: split in _splits_of(results),
            description=f"evaluate {run_dir} ({split})"))
        return read_json(results)

    def score_embeddings(self, embeddings: Path, run_dir: Path, split: str) -> None:
        """SciDocs scores of one embeddings file (also for MAG/MeSH when the corpus has their labels)."""
        score_embeddings(self.corpus.scidocs_dir, run_dir, split, embeddings)

    def run_base(self, split: str, recipe: Recipe) -> Path:
        """The untuned encoder's evaluation (shared by every experiment with the same pooling)."""
        embedding = "_ebf16" if recipe.precision_key().endswith("_ebf16") else ""
        name = f"{recipe.pooling_strategy}_len{self.eval_max_sequence_length}{embedding}{recipe.encoder_key()}"
        run_dir = self.shared / "base" / name / split
        run_dir.mkdir(parents=True, exist_ok=True)
        self.evaluate(recipe.encoder_path(), run_dir, split, pooling=recipe.pooling_strategy, bf16=recipe.eval_bf16)
        return run_dir

    def run_dir(self, arm: str, seed: int, recipe: Recipe, split: str) -> Path:
        """Where one arm x seed x recipe lives (``OUTPUT_DIR/runs/<split>/<recipe>/<arm>/seed_<s>``).

        Every experiment reads its runs from here, so a run shared by two studies (the default
        recipe of a sweep and of the tuning table, say) is trained once.
        """
        return self.out / "runs" / split / recipe.key() / arm / f"seed_{seed}"

    def run_arm(self, arm: str, seed: int, recipe: Recipe, split: str) -> Path:
        """Triplets -> training -> evaluation of one arm and seed; returns the run dir."""
        run_dir = self.run_dir(arm, seed, recipe, split)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_json(run_dir / "recipe.json", {"arm": arm, "seed": seed, "corpus": self.corpus.name,
                                             "eval_max_sequence_length": self.eval_max_sequence_length,
                                             **recipe_record(recipe)})
        model = self.train(arm, seed, recipe, run_dir)
        self.evaluate(str(model), run_dir, split, bf16=recipe.eval_bf16)
        return run_dir


def _adjacency(rows: Iterable[Tuple[int, List[str]]], bidirectional: bool) -> Dict[str, Set[str]]:
    adjacency: Dict[str, Set[str]] = defaultdict(set)
    for _, (citing, cited, *_rest) in rows:
        if citing == cited:
            continue
        adjacency[citing].add(cited)
        if bidirectional:
            adjacency[cited].add(citing)
    return adjacency


def _splits_of(results_path: Path) -> Sequence[str]:
    data = read_json(results_path)
    return list(data.get("scores", {})) if isinstance(data, dict) else []
