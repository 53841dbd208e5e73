"""The reports of the experiment kinds whose tables are more than one mean ± std row per grid row.

A :data:`~scincl.pipeline.grid.Report` each (bound to its kind's parameters by ``experiment_kinds``): the sweeps'
plots, how the main comparison's triplets relate to the citation graph, the collision study (paper Fig. 5: a margin
search per k+, no training) and the graph study (link prediction, graph retrieval, the graph alone on the SciDocs
queries). Their steps run through the stage runner (:meth:`~scincl.pipeline.real_corpus.CorpusPlan.stage`); the
Markdown is rendered by ``scincl/eval/study_tables.py``.
"""
from __future__ import annotations

import functools
import logging
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.study_tables import collision_plot, collision_table, graph_study_text, triplet_relations_table
from scincl.io import iter_tsv, read_id_list, read_json, write_json
from scincl.pipeline.experiment_tables import Timings, run_scores
from scincl.pipeline.grid import RowRuns, mean_std_report
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.settings.arms import ARM_NAMES
from scincl.settings.recipe import Recipe
from scincl.triples.config import HARD_NEGATIVES_BAND

logger = logging.getLogger(__name__)

RETRIEVAL_METRIC = {"cos": "cosine", "dot": "dot"}  # rank as the BigGraph comparator scores


def sweep_report(family: str, values: Sequence[int], exp_dir: Path, rep: CorpusPlan, results: List[RowRuns],
                 split: str) -> Tuple[str, Sequence[str]]:
    """The sweep's table and its plots (``eval/compare.sweep_plots`` over links to the shared run dirs)."""
    from scincl.eval.compare import sweep_plots

    for value, result in zip(values, results):  # the plot's layout (sweep/<family>/<value>/seed_<s>)
        link = exp_dir / "sweep" / family / str(value)
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(result.runs[0].parent.resolve(), target_is_directory=True)
    plots = []
    for metric in ("avg", "cite/map", "co-cite/map"):
        try:
            plots += sweep_plots(exp_dir / "sweep", exp_dir, split=split, metric=metric)
        except InputError as exc:
            logger.warning("no plot for %s: %s", metric, exc)
    table, _ = mean_std_report(family)(exp_dir, rep, results, split)
    return table, sorted({p.name for p in plots if family in p.name})


def triplet_relations(rep: CorpusPlan, triples: Dict[str, Path]) -> str:
    """How each arm's positives and negatives relate to their query in the training citation graph (``triples``: arm,
    or a table row's label, -> its triplets).

    Shares of (query, paper) pairs that are a direct citation (either direction), co-cited (cited
    together by some paper) or within two citation hops: what each sampler teaches the encoder.
    """
    import csv
    from collections import defaultdict

    linked: Dict[str, set] = defaultdict(set)
    cited_by: Dict[str, set] = defaultdict(set)
    for _, (citing, cited, *_rest) in iter_tsv(rep.citations_train):
        linked[citing].add(cited)
        linked[cited].add(citing)
        cited_by[citing].add(cited)
    cocited: Dict[str, set] = defaultdict(set)
    for references in cited_by.values():
        for paper in references:
            cocited[paper] |= references

    def shares(pairs: List[Tuple[str, str]]) -> Tuple[float, float, float]:
        n = max(1, len(pairs))
        direct = sum(b in linked[a] for a, b in pairs) / n
        co = sum(b in cocited[a] and b != a for a, b in pairs) / n
        two = sum(b in linked[a] or any(b in linked[x] for x in linked[a]) for a, b in pairs) / n
        return direct, co, two

    rows = []
    for arm, path in triples.items():
        if not Path(path).exists():
            continue
        with open(path, newline="") as fh:
            triplets = list(csv.reader(fh))[1:]
        positives = sorted({(q, p) for q, p, _ in triplets})
        negatives = sorted({(q, n) for q, _, n in triplets})
        rows.append((ARM_NAMES.get(arm, arm), shares(positives), shares(negatives)))  # an arm, or a row's label
    return triplet_relations_table(rows)


def collision_report(k_pos: Sequence[int], k_hard: Sequence[int], queries: int, recipe: Recipe, exp_dir: Path,
                     rep: CorpusPlan, results: List[RowRuns], split: str, seed: int = 0) -> Tuple[str, Sequence[str]]:
    """Collisions (a positive of one triplet is a negative of another) vs k-hard for each k+; table + plot."""
    from scincl.triples.margins import sweep_collision_margins

    graph = rep.graph("cite", recipe.graph_dim)
    query_ids = rep.queries(seed, queries, recipe.graph_dim)
    rows = []
    start = time.time()
    index = rep.ann_index("cite", recipe.graph_dim)
    corpus = rep.graph_papers_with_text("cite", recipe.graph_dim)
    for kp in k_pos:
        out = exp_dir / f"k_pos_{kp}.json"
        rep.built(rep.stage(out, functools.partial(
            sweep_collision_margins, str(graph["ids"]), str(graph["embeddings"]), str(index),
            query_papers=str(query_ids), positives_k=[kp],
            hard_negatives_k=[k for k in k_hard if k - HARD_NEGATIVES_BAND > kp], output_path=str(out),
            ann_normalize_embeddings=True, seed=seed, include_paper_ids=str(corpus), workers=rep.workers),
            inputs=[index, query_ids], description=f"collisions vs margin, k+ = {kp}"))
        rows.append((kp, read_json(out)))
    table = collision_table(rows)
    collision_plot(rows, exp_dir / "collisions_vs_margin.png")
    write_json(exp_dir / "timings.json", {"collisions": round(time.time() - start, 1)})
    return table, ["collisions_vs_margin.png"]


def graph_report(dims: Sequence[int], comparators: Sequence[str], recipe: Recipe, text_runs: Dict[str, Path],
                 exp_dir: Path, rep: CorpusPlan, results: List[RowRuns], split: str) -> Tuple[str, Sequence[str]]:
    """Link prediction and held-out-citation retrieval per graph variant; the graph alone vs the text encoders."""
    from scincl.eval.graph_retrieval import evaluate_graph_retrieval
    from scincl.io import read_embeddings_matrix, write_embeddings_jsonl

    timings = Timings(exp_dir / "timings.json")
    lp_rows, retrieval_rows = [], []
    for dim in dims:
        for comparator in comparators:
            name = f"{dim}d {comparator}"
            graph = timings.run(f"biggraph {name}", lambda: rep.built(rep.graph("cite", dim, comparator)))
            lp_rows.append((name, read_json(graph["metrics"])))
            out = exp_dir / f"retrieval_{dim}d_{comparator}.json"
            rep.built(rep.stage(out, functools.partial(
                evaluate_graph_retrieval, str(graph["embeddings"]), str(rep.citations_test), output_path=str(out),
                paper_ids_path=str(graph["ids"]), metric=RETRIEVAL_METRIC[comparator]),
                inputs=[graph["embeddings"], rep.citations_test], description=f"graph retrieval {name}"))
            retrieval_rows.append((name, read_json(out)))
    # graph alone on the SciDocs queries: needs the queries in the graph (transductive graph)
    graph = timings.run("biggraph transductive", lambda: rep.built(rep.graph("transductive", recipe.graph_dim, "dot")))
    papers = rep.eval_papers(split)
    scidocs_run = exp_dir / f"scidocs_transductive_{recipe.graph_dim}d" / split

    def graph_alone() -> None:
        ids = read_id_list(graph["ids"])
        vectors = read_embeddings_matrix(graph["embeddings"])
        wanted = set(read_json(papers))
        keep = [i for i, pid in enumerate(ids) if pid in wanted]
        scidocs_run.mkdir(parents=True, exist_ok=True)
        write_embeddings_jsonl(scidocs_run / "embeddings.jsonl", [ids[i] for i in keep], vectors[keep])
        rep.score_embeddings(scidocs_run / "embeddings.jsonl", scidocs_run, split)

    rep.built(rep.stage(scidocs_run / "results.json", graph_alone, inputs=[graph["embeddings"]],
                        output_dir=scidocs_run, description=f"graph embeddings alone on the SciDocs {split} queries"))
    rows = [(f"graph embeddings alone ({recipe.graph_dim}d dot, transductive graph)", [run_scores(scidocs_run, split)])]
    for name, run_group in text_runs.items():
        runs = sorted(Path(run_group).glob("seed_*/results.json")) or [Path(run_group) / "results.json"]
        rows.append((name, [run_scores(r.parent, split) for r in runs if r.exists()]))
    return graph_study_text(lp_rows, retrieval_rows, rows, split), []
