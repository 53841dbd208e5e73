"""The real-corpus experiments of ``docs/results.md`` (``cli_pipeline.py reproduce EXPERIMENT ...``).

- ``main``: base vs SPECTER-like vs SciNCL vs continuous co-citation, one row per arm, mean ± std
  over seeds (paper Table 1 layout);
- ``tuning``: recipe variants (pooling, learning rate, budget, ...) of the trained arms on val;
- ``k_pos`` / ``k_hard``: SciNCL's sampling sweeps (paper Figs. 2-3) on val, with plots;
- ``losses``: triplet vs InfoNCE vs CoSENT vs AnglE on SciNCL triplets (val);
- ``collisions``: positive/negative collisions vs the k+ .. k-hard margin (paper Fig. 5);
- ``graph``: link prediction of the graph embeddings (64/128-d, dot vs cos) and the graph
  embeddings alone as a retriever (OpenMSD Table 7 style).

Each writes ``<OUTPUT_DIR>/<experiment>/.../results.md`` (tables) plus PNG plots where they apply,
and ``timings.json`` (wall seconds per step on this machine).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scincl.errors import InputError
from scincl.eval.report import TABLE_COLUMNS, mean_std_cell
from scincl.io import iter_tsv, read_id_list, read_json, write_json
from scincl.pipeline.reproduce import ARM_NAMES, ARMS, Recipe, Reproduction

logger = logging.getLogger(__name__)

EXPERIMENTS = ("main", "tuning", "k_pos", "k_hard", "losses", "collisions", "graph")
LOSSES = ("triplet", "infonce", "cosent", "angle")
RETRIEVAL_METRIC = {"cos": "cosine", "dot": "dot"}  # rank as the BigGraph comparator scores


class Timings:
    """Wall seconds of each step of an experiment, saved as ``timings.json`` next to its tables."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: Dict[str, float] = read_json(path) if path.exists() else {}

    def run(self, name: str, fn, *args, **kwargs):
        """Call ``fn``; record its wall time unless it only reused finished outputs (< 1 s)."""
        start = time.time()
        result = fn(*args, **kwargs)
        seconds = time.time() - start
        if seconds >= 1.0 or name not in self.data:
            self.data[name] = round(seconds, 1)
            write_json(self.path, self.data)
        return result


def _scores(run_dir: Path, split: str) -> Dict[str, Dict[str, float]]:
    return read_json(run_dir / "results.json")["scores"][split]


def _metric_columns(rows: Sequence[Tuple[str, List[Dict[str, Dict[str, float]]]]]) -> List[Tuple[str, str]]:
    """The (task, metric) pairs present in any run: paper Table 1 order first, then any others sorted."""
    present = {(task, metric) for _, runs in rows for scores in runs for task, metrics in scores.items()
               for metric in metrics}
    ordered = [(task, metric) for task, metric, _ in TABLE_COLUMNS if (task, metric) in present]
    return ordered + sorted(present - set(ordered))


def mean_std_table(rows: Sequence[Tuple[str, List[Dict[str, Dict[str, float]]]]], first_column: str = "arm") -> str:
    """Markdown table: one row per group, ``mean ± std`` (sample std, n = seeds) per metric + Avg."""
    import numpy as np

    columns = _metric_columns(rows)
    header = [first_column, "seeds"] + [f"{t} {m}" for t, m in columns] + ["Avg"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, runs in rows:
        cells = [name, str(len(runs))]
        averages = []
        for task, metric in columns:
            values = [r[task][metric] for r in runs if task in r and metric in r[task]]
            cells.append(mean_std_cell(values))
        for r in runs:
            present = [r[t][m] for t, m in columns if t in r and m in r[t]]
            averages.append(float(np.mean(present)) if present else float("nan"))
        cells.append(mean_std_cell(averages))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- experiments
def main_comparison(rep: Reproduction, recipe: Recipe, seeds: Sequence[int], split: str = "test",
                    arms: Sequence[str] = ARMS) -> Path:
    """Base vs the trained arms at equal budget (paper Table 1 rows, "w/o leakage")."""
    exp = rep.out / f"main_{split}" / recipe.key()
    timings = Timings(exp / "timings.json")
    base = timings.run("base", rep.run_base, split, recipe)
    rows = [(ARM_NAMES["base"], [_scores(base, split)])]
    for arm in arms:
        if arm not in ARMS:
            raise InputError(f"unknown arm {arm!r}: choose from {', '.join(ARMS)}")
    for seed in seeds:
        for arm in arms:
            timings.run(f"{arm}/seed_{seed}", rep.run_arm, arm, seed, recipe, split)
    for arm in arms:
        rows.append((ARM_NAMES[arm], [_scores(rep.run_dir(arm, s, recipe, split), split) for s in seeds]))
    relations = triplet_relations(rep, {arm: rep.run_dir(arm, seeds[0], recipe, split) / "train_triples.csv"
                                        for arm in arms})
    return _write_tables(exp, f"Main comparison on {rep.corpus.name} ({split} queries)", recipe, rep,
                         mean_std_table(rows) + "\n" + relations, seeds)


def triplet_relations(rep: Reproduction, triples: Dict[str, Path]) -> str:
    """How each arm's positives and negatives relate to their query in the training citation graph.

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

    def shares(pairs: List[Tuple[str, str]]) -> List[str]:
        n = max(1, len(pairs))
        direct = sum(b in linked[a] for a, b in pairs) / n
        co = sum(b in cocited[a] and b != a for a, b in pairs) / n
        two = sum(b in linked[a] or any(b in linked[x] for x in linked[a]) for a, b in pairs) / n
        return [f"{100 * direct:.1f}", f"{100 * co:.1f}", f"{100 * two:.1f}"]

    lines = ["How the sampled papers relate to their query in the training citation graph (seed "
             "of the first run; % of distinct pairs):", "",
             "| arm | positives: direct citation | co-cited | within 2 hops | negatives: direct citation "
             "| co-cited | within 2 hops |", "|---|---|---|---|---|---|---|"]
    for arm, path in triples.items():
        if not Path(path).exists():
            continue
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))[1:]
        positives = sorted({(q, p) for q, p, _ in rows})
        negatives = sorted({(q, n) for q, _, n in rows})
        lines.append(f"| {ARM_NAMES[arm]} | " + " | ".join(shares(positives) + shares(negatives)) + " |")
    return "\n".join(lines) + "\n"


def tuning(rep: Reproduction, recipe: Recipe, variants: Sequence[str], seeds: Sequence[int],
           arms: Sequence[str] = ("specter_like", "scincl"), split: str = "val") -> Path:
    """Recipe variants (``field=value``, e.g. ``pooling=cls``) of the trained arms, on val."""
    exp = rep.out / f"tuning_{split}"
    timings = Timings(exp / "timings.json")
    rows = [(f"{ARM_NAMES['base']} ({recipe.pooling} pooling)", [_scores(timings.run("base", rep.run_base, split, recipe), split)])]
    for variant in ["default"] + list(variants):
        changed = recipe if variant == "default" else _apply(recipe, variant)
        if changed.pooling != recipe.pooling:
            rows.append((f"{ARM_NAMES['base']} ({changed.pooling} pooling)",
                         [_scores(timings.run(f"base_{changed.pooling}", rep.run_base, split, changed), split)]))
        for arm in arms:
            runs = []
            for seed in seeds:
                run = timings.run(f"{changed.key()}/{arm}/seed_{seed}", rep.run_arm, arm, seed, changed, split)
                runs.append(_scores(run, split))
            rows.append((f"{arm}: {variant}", runs))
    return _write_tables(exp, f"Recipe variants on {rep.corpus.name} ({split} queries)", recipe, rep,
                         mean_std_table(rows, "arm: variant"), seeds)


def sampling_sweep(rep: Reproduction, recipe: Recipe, family: str, values: Sequence[int], seeds: Sequence[int],
                   split: str = "val") -> Path:
    """SciNCL with k+ (``k_pos``) or k-hard (``k_hard``) varied, the rest of the recipe fixed; plots."""
    from scincl.eval.compare import sweep_plots

    if family not in ("k_pos", "k_hard"):
        raise InputError(f"unknown sweep {family!r}: choose k_pos or k_hard")
    exp = rep.out / f"sweep_{split}"
    timings = Timings(exp / f"timings_{family}.json")
    rows = []
    for value in values:
        changed = dataclasses.replace(recipe, **{family: int(value)})
        if changed.k_pos + 5 > changed.k_hard - 2:
            logger.warning("%s=%d: positives overlap the hard negatives (k+ %d, k-hard %d)", family, value,
                           changed.k_pos, changed.k_hard)
        runs = []
        for seed in seeds:
            run = timings.run(f"{family}={value}/seed_{seed}", rep.run_arm, "scincl", seed, changed, split)
            runs.append(_scores(run, split))
        rows.append((f"{family} = {value}", runs))
        # the plot's layout (sweep/<family>/<value>/seed_<s>) links to the shared run dirs
        link = exp / "sweep" / family / str(value)
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(rep.run_dir("scincl", seeds[0], changed, split).parent.resolve(), target_is_directory=True)
    plots = []
    for metric in ("avg", "cite/map", "co-cite/map"):
        try:
            plots += sweep_plots(exp / "sweep", exp, split=split, metric=metric)
        except InputError as exc:
            logger.warning("no plot for %s: %s", metric, exc)
    return _write_tables(exp, f"SciNCL {family} sweep on {rep.corpus.name} ({split} queries)", recipe, rep,
                         mean_std_table(rows, family), seeds, name=f"results_{family}.md",
                         plots=sorted({p.name for p in plots if family in p.name}))


def loss_comparison(rep: Reproduction, recipe: Recipe, losses: Sequence[str], seeds: Sequence[int],
                    split: str = "val") -> Path:
    """The same SciNCL triplets trained with each loss (triplet / InfoNCE / CoSENT / AnglE)."""
    exp = rep.out / f"losses_{split}"
    timings = Timings(exp / "timings.json")
    rows = [(ARM_NAMES["base"], [_scores(timings.run("base", rep.run_base, split, recipe), split)])]
    for loss in losses:
        changed = dataclasses.replace(recipe, loss=loss)
        runs = []
        for seed in seeds:
            # mining is deterministic in (seed, k+, k-hard, queries): every loss sees the same triplets
            run = timings.run(f"{loss}/seed_{seed}", rep.run_arm, "scincl", seed, changed, split)
            runs.append(_scores(run, split))
        rows.append((loss, runs))
    return _write_tables(exp, f"Loss functions on SciNCL triplets, {rep.corpus.name} ({split} queries)", recipe, rep,
                         mean_std_table(rows, "loss"), seeds)


def collisions(rep: Reproduction, recipe: Recipe, k_pos: Sequence[int], k_hard: Sequence[int],
               queries: int = 2000, seed: int = 0) -> Path:
    """Collisions (a positive of one triplet is a negative of another) vs k-hard for each k+ (Fig. 5)."""
    import cli_triples

    exp = rep.out / "collisions"
    graph = rep.graph("cite", recipe.graph_dim)
    queries = min(queries, len(rep.eligible_queries(recipe.graph_dim)))
    query_ids = rep.queries(seed, queries, recipe.graph_dim)
    rows = []
    start = time.time()
    for kp in k_pos:
        out = exp / f"k_pos_{kp}.json"
        if not out.exists():
            cli_triples.sweep_collision_margins(str(graph["ids"]), str(graph["embeddings"]),
                                                str(rep.ann_index("cite", recipe.graph_dim)),
                                                query_papers=str(query_ids), positives_k=[kp],
                                                hard_negatives_k=[k for k in k_hard if k - 2 > kp],
                                                output_path=str(out), ann_normalize_embeddings=True, seed=seed,
                                                include_paper_ids=str(rep.graph_papers_with_text("cite", recipe.graph_dim)),
                                                workers=rep.workers)
        rows.append((kp, read_json(out)))
    table = _collision_table(rows)
    _collision_plot(rows, exp / "collisions_vs_margin.png")
    write_json(exp / "timings.json", {"collisions": round(time.time() - start, 1)})
    return _write_tables(exp, f"Collisions vs margin on {rep.corpus.name} ({queries} queries x 5 triplets)", recipe,
                         rep, table, [seed], plots=["collisions_vs_margin.png"])


def _collision_table(rows: Sequence[Tuple[int, Any]]) -> str:
    lines = ["| k+ | k-hard | margin (k-hard - k+) | triplets | same-query collisions | collisions (either direction) "
             "| collisions % of triplets |", "|---|---|---|---|---|---|---|"]
    for kp, entries in rows:
        for e in entries:
            lines.append(f"| {kp} | {e['k_hard_negatives']} | {e['margin']} | {e['triples']} | {e['collisions']} | "
                         f"{e['symmetric_collisions']} | {100.0 * e['symmetric_collisions'] / max(1, e['triples']):.2f} |")
    return "\n".join(lines) + "\n"


def _collision_plot(rows: Sequence[Tuple[int, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for kp, entries in rows:
        xs = [e["margin"] for e in entries]
        ys = [100.0 * e["symmetric_collisions"] / max(1, e["triples"]) for e in entries]
        ax.plot(xs, ys, marker="o", label=f"k+ = {kp}")
    ax.set(xscale="log", xlabel="margin k-hard - k+", ylabel="collisions (% of triplets)",
           title="Collisions vs margin")
    ax.grid(alpha=0.3)
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def graph_study(rep: Reproduction, recipe: Recipe, dims: Sequence[int] = (64, 128),
                comparators: Sequence[str] = ("dot", "cos"), split: str = "test",
                text_runs: Optional[Dict[str, Path]] = None) -> Path:
    """Link prediction per graph variant, held-out-citation retrieval, graph alone on the SciDocs queries."""
    from scincl.eval.evaluate import run_evaluation
    from scincl.graph.graph_retrieval import evaluate_graph_retrieval
    from scincl.io import read_embeddings_matrix, write_embeddings_jsonl

    exp = rep.out / "graph"
    timings = Timings(exp / "timings.json")
    lp_rows, retrieval_rows = [], []
    for dim in dims:
        for comparator in comparators:
            name = f"{dim}d {comparator}"
            graph = timings.run(f"biggraph {name}", rep.graph, "cite", dim, comparator)
            lp_rows.append((name, read_json(graph["metrics"])))
            out = exp / f"retrieval_{dim}d_{comparator}.json"
            if not out.exists():
                evaluate_graph_retrieval(str(graph["embeddings"]), str(rep.citations_test), output_path=str(out),
                                         paper_ids_path=str(graph["ids"]), metric=RETRIEVAL_METRIC[comparator])
            retrieval_rows.append((name, read_json(out)))
    # graph alone on the SciDocs queries: needs the queries in the graph (transductive graph)
    graph = timings.run("biggraph transductive", rep.graph, "transductive", recipe.graph_dim, "dot")
    scidocs_run = exp / f"scidocs_transductive_{recipe.graph_dim}d" / split
    if not (scidocs_run / "results.json").exists():
        ids = read_id_list(graph["ids"])
        vectors = read_embeddings_matrix(graph["embeddings"])
        wanted = set(read_json(rep.eval_papers(split)))
        keep = [i for i, pid in enumerate(ids) if pid in wanted]
        scidocs_run.mkdir(parents=True, exist_ok=True)
        write_embeddings_jsonl(scidocs_run / "embeddings.jsonl", [ids[i] for i in keep], vectors[keep])
        has_classes = any(rep.corpus.scidocs_dir.glob("*/train.csv"))
        emb = str(scidocs_run / "embeddings.jsonl")
        run_evaluation(rep.corpus.scidocs_dir, scidocs_run, val_or_test=split, embeddings=[emb],
                       cls_embeddings=emb if has_classes else None, override=True)
    rows = [(f"graph embeddings alone ({recipe.graph_dim}d dot, transductive graph)", [_scores(scidocs_run, split)])]
    for name, run_group in (text_runs or {}).items():
        runs = sorted(Path(run_group).glob("seed_*/results.json")) or [Path(run_group) / "results.json"]
        rows.append((name, [read_json(r)["scores"][split] for r in runs if r.exists()]))
    text = ["## Link prediction (held-out 5 % of citation edges, PBG protocol)", "",
            _link_prediction_table(lp_rows), "## Graph embeddings as a retriever of held-out citations "
            "(whole pool, OpenMSD Table 7 protocol)", "", _retrieval_table(retrieval_rows),
            f"## Graph alone vs text encoders on the SciDocs {split} queries", "", mean_std_table(rows, "embeddings")]
    return _write_tables(exp, f"Citation-graph embeddings on {rep.corpus.name}", recipe, rep, "\n".join(text), [0])


def _link_prediction_table(rows: Sequence[Tuple[str, Dict[str, Any]]]) -> str:
    keys = ("mrr", "hits@1", "hits@10", "hits@50", "auc")
    lines = ["| graph | embeddings | MRR | Hits@1 | Hits@10 | Hits@50 | AUC |", "|---|---|---|---|---|---|---|"]
    for name, metrics in rows:
        for which, values in _lp_groups(metrics):
            lines.append(f"| {name} | {which} | " + " | ".join(_num(values.get(k)) for k in keys) + " |")
    return "\n".join(lines) + "\n"


def _lp_groups(metrics: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    metrics = metrics.get("results", metrics)
    groups = []
    for which in ("trained", "random"):
        values = metrics.get(which)
        if isinstance(values, dict):
            groups.append((which, {k.lower().replace("_", "@") if k.lower().startswith("hits") else k.lower(): v
                                   for k, v in values.items()}))
    return groups or [("trained", {k.lower(): v for k, v in metrics.items() if not isinstance(v, dict)})]


def _retrieval_table(rows: Sequence[Tuple[str, Dict[str, Any]]]) -> str:
    lines = ["| graph | queries | MAP | nDCG@10 | Recall@10 | MRR |", "|---|---|---|---|---|---|"]
    for name, data in rows:
        m = data.get("metrics", data)
        queries = data.get("queries", m.get("queries"))
        lines.append(f"| {name} | {int(queries) if isinstance(queries, (int, float)) else 'n/a'} | " + " | ".join(
            _num(_find(m, key), 2) for key in ("map", "ndcg@10", "recall@10", "mrr")) + " |")
    return "\n".join(lines) + "\n"


def _find(metrics: Dict[str, Any], key: str) -> Any:
    for k, v in metrics.items():
        if k.lower().replace("_", "@") == key:
            return v
    return None


def _num(value: Any, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "n/a"


def _apply(recipe: Recipe, variant: str) -> Recipe:
    if "=" not in variant:
        raise InputError(f"--variants: expected field=value (e.g. pooling=cls), got {variant!r}")
    key, value = (x.strip() for x in variant.split("=", 1))
    fields = {f.name: f.type for f in dataclasses.fields(Recipe)}
    if key not in fields:
        raise InputError(f"--variants: unknown recipe field {key!r} (one of {', '.join(fields)})")
    current = getattr(recipe, key)
    return dataclasses.replace(recipe, **{key: type(current)(value)})


def _write_tables(exp: Path, title: str, recipe: Recipe, rep: Reproduction, table: str, seeds: Sequence[int],
                  name: str = "results.md", plots: Sequence[str] = ()) -> Path:
    exp.mkdir(parents=True, exist_ok=True)
    budget = (f"Budget: {recipe.triplets} triplets per run (5 per query), {recipe.epochs} epoch(s), batch "
              f"{recipe.batch_size} ({-(-recipe.triplets // recipe.batch_size) * recipe.epochs} steps), "
              f"{recipe.max_sequence_length} training tokens, {rep.eval_max_sequence_length} evaluation tokens, "
              f"{recipe.pooling} pooling, lr {recipe.learning_rate:g}, {recipe.loss} loss, k+ = {recipe.k_pos} "
              f"(c+ = 5), k-hard = {recipe.k_hard} (c- = 2), graph {recipe.graph_dim}-d; seeds "
              f"{', '.join(map(str, seeds))}. Encoder: all-MiniLM-L6-v2 (packaged).")
    body = [f"# {title}", "", budget, "", table]
    body += [f"![{p}]({p})" for p in plots]
    path = exp / name
    path.write_text("\n".join(body) + "\n")
    print(path.read_text())
    return path
