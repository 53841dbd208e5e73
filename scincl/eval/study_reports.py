"""The pages of the experiment kinds whose tables are more than one mean ± std row per grid row, from their files.

The sweeps' tables and plots, how each arm's triplets relate to the citation graph, the collision study (paper
Fig. 5), the graph study (link prediction, graph retrieval, the graph alone on the SciDocs queries) and the budget
curve (issue 17). The runs and the studies' steps are planned and run by ``scincl/pipeline`` (``grid.py``,
``experiment_kinds.py``), which hands over their folders and files; the Markdown and plots are ``study_tables.py``'s.
"""
from __future__ import annotations

import csv
import logging
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Mapping, Sequence, Set, Tuple

from scincl.errors import InputError
from scincl.eval.experiment_pages import Page, RowRuns, labelled, mean_std_runs, partial_note, run_scores
from scincl.eval.study_tables import (budget_plot, budget_tables, collision_plot, collision_table, graph_study_text,
                                      triplet_relations_table)
from scincl.io import iter_tsv, read_embeddings_matrix, read_id_list, read_json, write_embeddings_jsonl
from scincl.settings.arms import ARM_NAMES

logger = logging.getLogger(__name__)


def main_page(citations: Path, exp_dir: Path, rows: Sequence[RowRuns], split: str) -> Page:
    """The main comparison: the mean ± std table, then how each trained row's first-seed triplets relate to their query
    in the training citation graph (``citations``: its TSV)."""
    relations = triplet_relations(citations, {r.label: r.runs[0] / "train_triples.csv" for r in rows if r.trained})
    return mean_std_runs(labelled(rows), split, "arm") + "\n" + relations, []


def sweep_report(family: str, values: Sequence[int], exp_dir: Path, rows: Sequence[RowRuns], split: str) -> Page:
    """The sweep's table and its plots (``eval/compare.sweep_plots`` over links to the rows' run folders, one row per
    value of ``values``)."""
    from scincl.eval.compare import sweep_plots

    for value, row in zip(values, rows):
        runs = row.runs  # the plot's layout (sweep/<family>/<value>/seed_<s>)
        link = exp_dir / "sweep" / family / str(value)
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(Path(runs[0]).parent.resolve(), target_is_directory=True)
    plots = []
    for metric in ("avg", "cite/map", "co-cite/map"):
        try:
            plots += sweep_plots(exp_dir / "sweep", exp_dir, split=split, metric=metric)
        except InputError as exc:
            logger.warning("no plot for %s: %s", metric, exc)
    return mean_std_runs(labelled(rows), split, family), sorted({p.name for p in plots if family in p.name})


def triplet_relations(citations: Path, triples: Mapping[str, Path]) -> str:
    """How each row's positives and negatives relate to their query in the training citation graph (``citations``:
    its TSV; ``triples``: a row's label -> its triplets; a missing file leaves its row out).

    Shares of (query, paper) pairs that are a direct citation (either direction), co-cited (cited
    together by some paper) or within two citation hops: what each sampler teaches the encoder.
    """
    linked: Dict[str, Set[str]] = defaultdict(set)
    cited_by: Dict[str, Set[str]] = defaultdict(set)
    for _, (citing, cited, *_rest) in iter_tsv(citations):
        linked[citing].add(cited)
        linked[cited].add(citing)
        cited_by[citing].add(cited)
    cocited: Dict[str, Set[str]] = defaultdict(set)
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
    for label, path in triples.items():
        if not Path(path).exists():
            continue
        with open(path, newline="") as fh:
            triplets = list(csv.reader(fh))[1:]
        positives = sorted({(q, p) for q, p, _ in triplets})
        negatives = sorted({(q, n) for q, _, n in triplets})
        rows.append((label, shares(positives), shares(negatives)))
    return triplet_relations_table(rows)


def collision_report(exp_dir: Path, searches: Sequence[Tuple[int, Path]]) -> Page:
    """Collisions vs k-hard for each k+: ``searches`` are (k+, its ``sweep_collision_margins`` JSON); table + plot."""
    rows = [(kp, read_json(path)) for kp, path in searches]
    table = collision_table(rows)
    collision_plot(rows, exp_dir / "collisions_vs_margin.png")
    return table, ["collisions_vs_margin.png"]


def graph_report(link_prediction: Sequence[Tuple[str, Path]], retrieval: Sequence[Tuple[str, Path]],
                 graph_alone: Tuple[str, Path], text_runs: Mapping[str, Path], split: str) -> Page:
    """The graph study's page: per graph variant its link-prediction metrics and held-out-citation retrieval (name,
    JSON), then the graph alone (label, its run folder) vs the text encoders (name -> a run, or a folder of
    ``seed_*`` runs; those not run left out) on the SciDocs ``split`` queries."""
    label, alone = graph_alone
    rows = [(label, [run_scores(alone, split)])]
    for name, run_group in text_runs.items():
        runs = sorted(Path(run_group).glob("seed_*/results.json")) or [Path(run_group) / "results.json"]
        if any(r.exists() for r in runs):
            rows.append((name, [run_scores(r.parent, split) for r in runs if r.exists()]))
    return graph_study_text([(name, read_json(path)) for name, path in link_prediction],
                            [(name, read_json(path)) for name, path in retrieval], rows, split), []


def score_graph_alone(ids: Path, embeddings: Path, papers: Path, scidocs_dir: Path, run_dir: Path, split: str) -> None:
    """The graph alone as a retriever: its embeddings (``ids``, ``embeddings``) of the SciDocs papers it has among
    ``papers`` (a JSON list), written to ``run_dir/embeddings.jsonl`` and scored on ``split`` into ``run_dir``."""
    from scincl.eval.evaluate import score_embeddings

    graph_ids, wanted, output = read_id_list(ids), set(read_json(papers)), Path(run_dir) / "embeddings.jsonl"
    keep = [i for i, pid in enumerate(graph_ids) if pid in wanted]
    write_embeddings_jsonl(output, [graph_ids[i] for i in keep], read_embeddings_matrix(embeddings)[keep])
    score_embeddings(scidocs_dir, run_dir, split, output)


def budget_report(budgets: Sequence[int], seeds: Sequence[int], arms: Sequence[str], exp_dir: Path,
                  rows: Sequence[RowRuns], split: str) -> Page:
    """The budget curve's tables and plot from the runs finished now (partial cells marked): each (arm, budget)'s
    runs by seed, the base encoder's evaluation."""
    base_run = next((r.runs[0] for r in rows if not r.trained and r.runs), None)
    cells = {(r.arm, r.recipe.triplets): dict(zip(seeds, r.runs)) for r in rows if r.trained}
    base = run_scores(base_run, split, missing_ok=True) if base_run is not None else None
    scores = {cell: {s: found for s, run in runs.items()
                     if (found := run_scores(run, split, missing_ok=True)) is not None} for cell, runs in cells.items()}
    done = sum(len(runs) for runs in scores.values())
    table = budget_tables(scores, base, seeds, budgets, dict(ARM_NAMES), arms)
    plot = budget_plot(scores, base, budgets, dict(ARM_NAMES), exp_dir / "budget_avg.png", arms)
    return partial_note(done, len(budgets) * len(seeds) * len(arms)) + table, [plot.name] if plot else []
