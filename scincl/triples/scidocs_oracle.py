"""Oracle SciDocs triples (paper Table 1, "Oracle SciDocs"): triples from the evaluation gold labels.

SciNCL (``../shared/papers/000_a9b5f58ad3ba2ccb.txt`` Table 1): "*Oracle SciDocs* † is the upper bound
of the performance with triplets from SCIDOCS's data" (§8: "generated with SCIDOCS's test and
validation data"); how the triples are formed is not stated, the rules below are ours.

An upper-bound experiment: training on the very labels SciDocs tests with.

- ranking tasks (``cite``, ``cocite``, ``coview``, ``coread``; ``{task}/{split}.qrel``): per query,
  the i-th relevant candidate is paired with the i-th non-relevant one (file order);
- ``recomm``: per query, clicked papers paired with shown-but-not-clicked ones;
- classification (``mag``, ``mesh``; ``{task}/{split}.csv``): query and positive share the label,
  the negative has another one. All such triples would swamp the ranking tasks, so each
  classification task is under-sampled to ``sample_classification_triples`` triples (default: the
  mean count of the ranking tasks, so the tasks are balanced).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike, read_json, write_json, write_triples_csv
from scincl.provenance import OutputRecord
from scincl.triples.knn_miner import args_path
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

RANKING_TASKS = ("cite", "cocite", "coview", "coread")
CLASSIFICATION_TASKS = ("mag", "mesh")
ALL_TASKS = ("recomm",) + tuple(reversed(RANKING_TASKS)) + CLASSIFICATION_TASKS  # original order
Triple = Tuple[str, str, str]


def qrel_triples(qrels: Dict[str, Dict[str, int]]) -> List[Triple]:
    """i-th relevant with i-th non-relevant candidate of each query (file order)."""
    triples = []
    for qid, candidates in qrels.items():
        pos = [pid for pid, rel in candidates.items() if rel > 0]
        neg = [pid for pid, rel in candidates.items() if rel <= 0]
        triples.extend((qid, p, n) for p, n in zip(pos, neg))
    return triples


def recomm_triples(clicks: Sequence) -> List[Triple]:
    """Clicked vs shown-but-not-clicked papers per query (``RecommClick`` rows of a recomm csv)."""
    by_query: Dict[str, Tuple[List[str], List[str]]] = {}
    for c in clicks:
        clicked, shown = by_query.setdefault(c.query_id, ([], []))
        if c.clicked_id not in clicked:
            clicked.append(c.clicked_id)
        shown.extend(s for s in c.shown_ids if s not in shown)
    triples = []
    for qid, (clicked, shown) in by_query.items():
        not_clicked = [s for s in shown if s not in clicked]
        triples.extend((qid, p, n) for p, n in zip(clicked, not_clicked))
    return triples


def classification_triples(labels: Dict[str, int], count: Optional[int], rng: np.random.Generator) -> List[Triple]:
    """Same-label positive, other-label negative. ``count`` triples drawn uniformly over queries
    (vectorised); ``count=None`` gives every ordered same-label pair once, with a random negative."""
    pids = np.asarray(list(labels), dtype=object)
    y = np.asarray(list(labels.values()), dtype=np.int64)
    order = np.argsort(y, kind="stable")
    sizes = np.bincount(y)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    usable = np.flatnonzero((sizes[y] >= 2) & (sizes[y] < len(y)))
    if usable.size == 0:
        return []
    if count is None:
        q = np.concatenate([np.repeat(order[starts[c]:starts[c] + sizes[c]], sizes[c]) for c in np.unique(y[usable])])
        p = np.concatenate([np.tile(order[starts[c]:starts[c] + sizes[c]], sizes[c]) for c in np.unique(y[usable])])
        keep = q != p
        q, p = q[keep], p[keep]
    else:
        q = usable[rng.integers(0, usable.size, size=count)]
        p = q.copy()
        same = np.ones(count, dtype=bool)
        while same.any():  # redraw positives that hit the query itself
            idx = np.flatnonzero(same)
            p[idx] = order[starts[y[q[idx]]] + rng.integers(0, sizes[y[q[idx]]])]
            same = p == q
    n = q.copy()
    clash = np.ones(len(q), dtype=bool)
    while clash.any():  # negatives: any paper with another label
        idx = np.flatnonzero(clash)
        n[idx] = rng.integers(0, len(y), size=idx.size)
        clash = y[n] == y[q]
    return list(zip(pids[q], pids[p], pids[n]))


@writes("output_path")
def get_scidocs_triples(
    scidocs_dir: PathLike,
    output_path: PathLike,
    val_or_test_or_both: str = "test",
    tasks: Optional[Sequence[str]] = None,
    sample_classification_triples: Optional[int] = None,
    id_mapping_path: Optional[PathLike] = None,
    seed: int = 0,
    override: bool = False,
) -> Dict[str, int]:
    """Oracle SciDocs triples from the gold labels of a SciDocs dir -> triples CSV.

    ``tasks`` defaults to all of recomm, coread, coview, cocite, cite, mesh, mag (absent ones are
    skipped with a log line). ``sample_classification_triples``: triples per classification task
    (default = mean of the ranking tasks' counts; 0 = all same-label pairs). ``id_mapping_path``: a
    JSON ``{scidocs_id: corpus_id}`` (e.g. S2 -> S2ORC ids); triples with an unmapped id are dropped
    and counted. Returns the per-task counts.
    """
    from scincl.scidocs_io import read_class_labels, read_qrels, read_recomm_clicks, scidocs_paths

    out = Path(output_path)
    record = OutputRecord(out, command="get_scidocs_triples", record_file=args_path(out), key="made_by", settings={
        "val_or_test_or_both": val_or_test_or_both, "tasks": tasks,
        "sample_classification_triples": sample_classification_triples, "seed": seed},
        inputs=[scidocs_dir, id_mapping_path])
    if record.reusable(override):
        return {}
    splits = {"val": ["val"], "test": ["test"], "both": ["val", "test"]}.get(val_or_test_or_both)
    if splits is None:
        raise InputError(f"--val_or_test_or_both must be val, test or both, got {val_or_test_or_both!r}")
    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    tasks = list(tasks or ALL_TASKS)
    unknown = [t for t in tasks if t not in ALL_TASKS]
    if unknown:
        raise InputError(f"unknown SciDocs task(s) {', '.join(unknown)}; choose from {', '.join(ALL_TASKS)}")
    root = scidocs_paths(scidocs_dir).root
    rng = np.random.default_rng([seed, 4])
    per_task: Dict[str, List[Triple]] = {}
    pending_classification = []
    for split in splits:
        for task in tasks:
            name = f"{split}_{task}"
            if task in RANKING_TASKS:
                path = root / task / f"{split}.qrel"
                if path.exists():
                    per_task[name] = qrel_triples(read_qrels(path))
            elif task == "recomm":
                path = root / "recomm" / f"{split}.csv"
                if path.exists():
                    per_task[name] = recomm_triples(read_recomm_clicks(path))
            else:
                path = root / task / f"{split}.csv"
                if path.exists():
                    pending_classification.append((name, path))
            if not path.exists():
                logger.info("SciDocs task %s: %s not found; skipped", name, path)
    ranking_counts = [len(t) for t in per_task.values() if t]
    if sample_classification_triples is None:
        sample = int(round(np.mean(ranking_counts))) if ranking_counts else 0
    else:
        sample = int(sample_classification_triples)
    for name, path in pending_classification:
        per_task[name] = classification_triples(read_class_labels(path), sample if sample > 0 else None, rng)
    triples = [t for name in per_task for t in per_task[name]]
    counts = {name: len(t) for name, t in per_task.items()}
    if id_mapping_path is not None:
        mapping = read_json(id_mapping_path)
        if not isinstance(mapping, dict):
            raise InputError("expected a JSON object {scidocs_id: corpus_id}", path=id_mapping_path)
        mapped = [tuple(str(mapping[x]) for x in t) for t in triples if all(x in mapping for x in t)]
        counts["dropped_unmapped"] = len(triples) - len(mapped)
        triples = mapped
    if not triples:
        raise InputError(f"no SciDocs gold labels found for tasks {', '.join(tasks)} in {root}")
    counts["triples"] = write_triples_csv(out, triples)
    for name, c in counts.items():
        logger.info("oracle SciDocs triples: %s => %d", name, c)
    write_json(args_path(out), {"command": "get_scidocs_triples", "scidocs_dir": str(scidocs_dir),
                                "val_or_test_or_both": val_or_test_or_both, "tasks": tasks,
                                "sample_classification_triples": sample, "seed": seed, "counts": counts})
    record.write()  # last: the triplets are complete
    return counts
