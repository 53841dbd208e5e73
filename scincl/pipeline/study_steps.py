"""The steps the collision and graph studies run through the stage runner before their pages are drawn.

A :data:`~scincl.eval.experiment_pages.Report` each (bound to the corpus plan and its kind's parameters by
``experiment_kinds``): the collision study (paper Fig. 5: a margin search per k+, no training) and the graph study
(link prediction, graph retrieval, the graph alone on the SciDocs queries). Their steps run through the stage runner
(:meth:`~scincl.pipeline.real_corpus.CorpusPlan.stage`); the pages are ``scincl/eval/study_reports.py``'s, from the
files the steps wrote.
"""
from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Dict, Sequence

from scincl.eval.experiment_pages import Page, RowRuns
from scincl.eval.study_reports import collision_report, graph_report
from scincl.io import read_id_list, read_json, write_json
from scincl.pipeline.real_corpus import CorpusPlan
from scincl.pipeline.timings import Timings
from scincl.settings.recipe import Recipe
from scincl.triples.config import HARD_NEGATIVES_BAND

RETRIEVAL_METRIC = {"cos": "cosine", "dot": "dot"}  # rank as the BigGraph comparator scores


def collision_steps(rep: CorpusPlan, k_pos: Sequence[int], k_hard: Sequence[int], queries: int, recipe: Recipe,
                    exp_dir: Path, rows: Sequence[RowRuns], split: str, seed: int = 0) -> Page:
    """Collisions (a positive of one triplet is a negative of another) vs k-hard for each k+: one margin search per
    k+ on ``queries`` query papers, then its table + plot."""
    from scincl.triples.margins import sweep_collision_margins

    graph = rep.graph("cite", recipe.graph_dim)
    query_ids = rep.queries(seed, queries, recipe.graph_dim)
    searches = []
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
        searches.append((kp, out))
    page = collision_report(exp_dir, searches)
    write_json(exp_dir / "timings.json", {"collisions": round(time.time() - start, 1)})
    return page


def graph_steps(rep: CorpusPlan, dims: Sequence[int], comparators: Sequence[str], recipe: Recipe,
                text_runs: Dict[str, Path], exp_dir: Path, rows: Sequence[RowRuns], split: str) -> Page:
    """Link prediction and held-out-citation retrieval per graph variant; the graph alone vs the text encoders."""
    from scincl.eval.graph_retrieval import evaluate_graph_retrieval
    from scincl.io import read_embeddings_matrix, write_embeddings_jsonl

    timings = Timings(exp_dir / "timings.json")
    link_prediction, retrieval = [], []
    for dim in dims:
        for comparator in comparators:
            name = f"{dim}d {comparator}"
            graph = timings.run(f"biggraph {name}", lambda: rep.built(rep.graph("cite", dim, comparator)))
            link_prediction.append((name, graph["metrics"]))
            out = exp_dir / f"retrieval_{dim}d_{comparator}.json"
            rep.built(rep.stage(out, functools.partial(
                evaluate_graph_retrieval, str(graph["embeddings"]), str(rep.citations_test), output_path=str(out),
                paper_ids_path=str(graph["ids"]), metric=RETRIEVAL_METRIC[comparator]),
                inputs=[graph["embeddings"], rep.citations_test], description=f"graph retrieval {name}"))
            retrieval.append((name, out))
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
    return graph_report(link_prediction, retrieval,
                        (f"graph embeddings alone ({recipe.graph_dim}d dot, transductive graph)", scidocs_run),
                        text_runs, split)
