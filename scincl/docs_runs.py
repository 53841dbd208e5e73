"""Documented real-data runs: one ``run_specter`` run kept as a result file, and the docs' text made from it.

A table the docs quote from a real-corpus run (README's CiteSeer and hep-th layout runs, the ``--preset cpu`` quick
start on hep-th) is generated (``scincl.docs_tables``, source kind ``repo``) from a record committed under
``docs/results/``: ``collect_run`` reads the run's folder (``manifest.json``, the stage outputs, the comparison
table) and writes ``run.json``, which holds

- the command as documented, the commit it ran at and whether the tree was clean;
- the precision: training under bf16 autocast or in fp32 (``--bf16 auto`` resolves to bf16 on CPUs with native
  bf16), embedding in fp32;
- every stage's wall time, the work it did (edges, edge-epochs, triplets, optimizer steps, papers embedded) and
  so its per-unit rate, with the machine's 1-minute load average while it ran (the machine is shared);
- the comparison table (×100, two decimals, as ``compare`` wrote it) and, when a rerun of the same command was
  collected too, whether it printed the same table.

``run_text`` renders the record as the text between the docs' ``<!-- generated: NAME -->`` markers (``stages.md``,
written beside it, is its stage table alone, for docs that show the comparison table elsewhere).
"""
from __future__ import annotations

import csv
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from scincl.docs_markdown import markdown_table, without_empty_columns

RUN_RECORD = "run.json"
STAGES_TABLE = "stages.md"


def _lines(path: Path) -> Optional[int]:
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def _json_len(path: Path) -> Optional[int]:
    return len(json.loads(path.read_text())) if path.is_file() else None


def _triplets(path: Path) -> Optional[int]:
    if not path.is_file() or path.suffix == ".gz":
        return None
    with open(path, newline="") as f:
        rows = sum(1 for _ in csv.reader(f))
    return rows - 1  # the header


def _embedded_papers(folder: Path) -> Optional[int]:
    """Papers embedded by one evaluation: the lines of the ``*.jsonl`` files in its ``embeddings/`` folder (one
    file per group of tasks, each paper once per file)."""
    files = sorted((folder / "embeddings").rglob("*.jsonl")) if (folder / "embeddings").is_dir() else []
    return sum(_lines(f) or 0 for f in files) or None


def _graph_epochs(graph_dir: Path) -> int:
    """Epochs the graph was trained for (BigGraph's recorded config; 1 for one-pass methods)."""
    for path, key in ((graph_dir / "biggraph_run.json", "config"), (graph_dir / "checkpoints" / "config.json", None)):
        if path.is_file():
            config = json.loads(path.read_text())
            return int((config.get(key) if key else config).get("num_epochs", 1))
    return 1


def _metadata_papers(path: Path) -> Optional[int]:
    """Papers in the ``{metadata file: [[paper id, line], ...]}`` map of the ``metadata_ids`` stage."""
    return sum(len(rows) for rows in json.loads(path.read_text()).values()) if path.is_file() else None


def _optimizer_steps(model_dir: Path) -> Optional[int]:
    args = model_dir / "train_args.json"
    if args.is_file():
        return (json.loads(args.read_text()).get("metrics") or {}).get("global_step")
    return None


def stage_work(paths: Dict[str, str], stats: Dict[str, Any]) -> Dict[str, List[Tuple[int, str]]]:
    """``{stage: [(count, unit), ...]}``: the work each stage of a run did, counted from its outputs."""
    p = {k: Path(v) for k, v in paths.items()}
    train_edges = (stats.get("edges_by_split") or {}).get("train")
    triplets = _triplets(p["triples"])
    work: Dict[str, List[Tuple[int, str]]] = {
        "citations": [(stats.get("edges"), "edges")],
        "graph": [(train_edges * _graph_epochs(p["graph_dir"]) if train_edges else None, "edge-epochs")],
        "metadata_ids": [(_metadata_papers(p["metadata_ids"]), "papers")],
        "queries": [(_json_len(p["query_ids"]), "queries")],
        "ann": [(_json_len(p["graph_ids"]), "vectors")],
        "triples": [(triplets, "triplets")],
        "metadata": [(_lines(p["metadata"]), "papers")],
        "train": [(_optimizer_steps(p["model"]), "steps"), (triplets, "triplets")],
        "eval_base": [(_embedded_papers(p["base_eval"]), "papers")],
        "eval": [(_embedded_papers(p["eval"]), "papers")],
    }
    return {stage: [(n, unit) for n, unit in units if n] for stage, units in work.items()}


def read_load(load_log: Optional[Path]) -> List[Tuple[datetime, float]]:
    """``(time, 1-minute load average)`` samples of a log of lines ``ISO-TIME <contents of /proc/loadavg>``."""
    if load_log is None or not Path(load_log).is_file():
        return []
    samples = []
    for line in Path(load_log).read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            samples.append((datetime.fromisoformat(parts[0].replace("Z", "+00:00")), float(parts[1])))
    return samples


def load_during(samples: List[Tuple[datetime, float]], end: datetime, seconds: float) -> Optional[List[float]]:
    """``[min, median, max]`` of the load samples taken while a stage ran (for a stage shorter than the sampling
    interval, the sample nearest its end, when within a minute); None without samples of that time."""
    start = end - timedelta(seconds=seconds)
    inside = [v for t, v in samples if start <= t <= end]
    if not inside:
        near = [(abs((t - end).total_seconds()), v) for t, v in samples]
        inside = [min(near)[1]] if near and min(near)[0] <= 60 else []
    return [min(inside), round(statistics.median(inside), 2), max(inside)] if inside else None


def _link_prediction(graph_dir: Path) -> Optional[Dict[str, Any]]:
    """The graph's link-prediction MRR on its held-out edges (trained and random embeddings), when evaluated."""
    path = graph_dir / "link_prediction.json"
    if not path.is_file():
        return None
    results = json.loads(path.read_text()).get("results", {})
    trained, random = results.get("trained", {}), results.get("random", {})
    return {"mrr": trained.get("mrr"), "random_mrr": random.get("mrr"), "test_edges": trained.get("count")}


def _precision(run_dir: Path, paths: Dict[str, str]) -> str:
    args = Path(paths["model"]) / "train_args.json"
    training = json.loads(args.read_text()).get("training_arguments", {}) if args.is_file() else {}
    bf16 = training.get("bf16")
    trained = "bf16 autocast" if str(bf16).lower() == "true" else "fp32" if bf16 is not None else "unrecorded"
    return f"training {trained}, embedding fp32; scores ×100, two decimals"


def run_paths(run_dir: Path, manifest: Dict[str, Any]) -> Dict[str, str]:
    """The run's recorded paths, absolute: a relative one is relative to where the command ran, found as the
    folder that holds ``run_dir`` the way the recorded ``run`` path says (``output/x`` in ``WORK/output/x``)."""
    recorded = Path(manifest["paths"]["run"])
    base = Path(run_dir).resolve()
    if not recorded.is_absolute():
        base = base.parents[len(recorded.parts) - 1]
    return {k: str(Path(v) if Path(v).is_absolute() else base / v) for k, v in manifest["paths"].items()}


def collect_run(run_dir: str, out_dir: str, command: str, load_log: Optional[str] = None,
                rerun_dir: Optional[str] = None, wall_seconds: Optional[float] = None,
                before: Optional[Dict[str, Dict[str, Any]]] = None, note: Optional[str] = None) -> Dict[str, Any]:
    """Keep one finished ``run_specter`` run as ``OUT_DIR/run.json`` + ``OUT_DIR/comparison.md`` (docs/results/).

    ``command``: the command(s) as the docs give them; ``load_log``: lines ``ISO-TIME <contents of
    /proc/loadavg>`` sampled while the run ran (the stage table shows the load beside each time); ``rerun_dir``:
    a second run of the same command, whose comparison table is compared with this one's; ``wall_seconds``: the
    ``run_specter`` command's wall time (its start-up, plan and checks included); ``before``: commands the docs run
    first, ``{name: {"seconds": s, "ended_at": ISO time, "work": [[count, unit], ...]}}`` (e.g. make_eval_dir);
    ``note``: what else was measured about the run (shown after the line on how it was made).
    """
    run, out = Path(run_dir), Path(out_dir)
    manifest = json.loads((run / "manifest.json").read_text())
    paths = run_paths(run, manifest)
    stats_file = Path(paths["citations_dir"]) / "citations.stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.is_file() else {}
    work, samples = stage_work(paths, stats), read_load(Path(load_log) if load_log else None)
    stages = [{"name": name, "status": "ran", "seconds": step["seconds"], "work": step.get("work", []),
               "load": load_during(samples, datetime.fromisoformat(step["ended_at"].replace("Z", "+00:00")),
                                   step["seconds"]), "before_run": True}
              for name, step in (before or {}).items()]
    for name in manifest["stage_order"]:
        stage = manifest["stages"][name]
        end = datetime.fromisoformat(stage["updated_at"])
        stages.append({"name": name, "status": stage["status"], "seconds": stage["seconds"],
                       "work": [[n, unit] for n, unit in work.get(name, [])],
                       "load": load_during(samples, end, stage["seconds"]) if stage["status"] == "ran" else None})
    comparison = (Path(paths["comparison"]) / "comparison.md").read_text()
    record = {"command": command, "commit": manifest["git"]["commit"], "dirty": manifest["git"]["dirty"],
              "started_at": manifest["started_at"], "precision": _precision(run, paths),
              "machine": {k: manifest["environment"].get(k) for k in ("cpu_count", "cuda_available")},
              "torch": manifest["environment"]["packages"].get("torch"), "stages": stages,
              "run_specter_wall_seconds": wall_seconds, "note": note,
              "leakage": manifest.get("leakage"), "link_prediction": _link_prediction(Path(paths["graph_dir"]))}
    if rerun_dir is not None:
        rerun = json.loads((Path(rerun_dir) / "manifest.json").read_text())
        again = (Path(run_paths(Path(rerun_dir), rerun)["comparison"]) / "comparison.md").read_text()
        record["rerun"] = {"commit": rerun["git"]["commit"], "started_at": rerun["started_at"],
                           "same_table": again == comparison}
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.md").write_text(comparison)
    (out / RUN_RECORD).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    (out / STAGES_TABLE).write_text(stage_table(record))  # for docs that quote the stage times alone
    return record


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _rate(count: int, unit: str, seconds: float) -> str:
    per_second = count / seconds if seconds > 0 else float("inf")
    if per_second >= 1:
        return f"{per_second:,.0f} {unit}/s" if per_second >= 100 else f"{per_second:.1f} {unit}/s"
    return f"{seconds / count:.1f} s per {unit.rstrip('s')}"


def stage_table(record: Dict[str, Any]) -> str:
    """The record's stages: wall time, the work done, its rate and the 1-minute load average while it ran."""
    out = ["| stage | wall time | work | rate | load (1-min avg: min / median / max) |", "|---|---:|---|---|---|"]
    for st in record["stages"]:
        if st["status"] != "ran":
            out.append(f"| {st['name']} | {st['status']} | | | |")
            continue
        work = ", ".join(f"{n:,} {unit}" for n, unit in st["work"])
        rate = ", ".join(_rate(n, unit, st["seconds"]) for n, unit in st["work"]) if st["seconds"] >= 1 else "—"
        load = " / ".join(f"{v:.1f}" for v in st["load"]) if st["load"] else "not recorded"
        out.append(f"| {st['name']} | {_duration(st['seconds'])} | {work} | {rate} | {load} |")
    total = sum(st["seconds"] for st in record["stages"] if st["status"] == "ran")
    out.append(f"| sum of the stages | {_duration(total)} | | | |")
    if record.get("run_specter_wall_seconds"):
        out.append(f"| the commands' wall time (with start-up, plan and checks) | "
                   f"{_duration(record['run_specter_wall_seconds'])} | | | |")
    return "\n".join(out) + "\n"


def run_text(record: Dict[str, Any], comparison: str, stages: bool = True, table: bool = True,
             name: Optional[str] = None) -> str:
    """The generated docs text of a collected run: how it was made (``name``: the run's name in a set of runs), its
    table (``table``) and its stage times with rates (``stages``), as paragraphs."""
    commit = record["commit"][:7] + (" (uncommitted changes)" if record["dirty"] else "")
    made = (f"The `{name}` run was made" if name else "Made") + (
        f" by the command above at commit {commit} on {record['started_at'][:10]} "
        f"({record['machine']['cpu_count']} CPU cores, no GPU, torch {record['torch']}; {record['precision']}).")
    leakage = record.get("leakage")
    if leakage and leakage.get("checked"):
        made += (f" Leakage guard: {leakage['evaluation_papers']:,} evaluation papers kept out "
                 f"({leakage['edges_removed']:,} edges removed), {leakage['in_graph']} in the graph, "
                 f"{leakage['in_triplets']} in the triplets.")
    graph = record.get("link_prediction")
    if graph and graph.get("mrr") is not None:
        made += (f" Graph link-prediction MRR {graph['mrr']:.3f} on {graph['test_edges']:,} held-out edges "
                 f"(random embeddings {graph['random_mrr']:.3f}).")
    rerun = record.get("rerun")
    if rerun:
        made += (f" A rerun of the same command at commit {rerun['commit'][:7]} printed "
                 + ("the same table, digit for digit." if rerun["same_table"] else "a different table."))
    if record.get("note"):
        made += " " + record["note"]
    parts = ([made + "\n"] + ([without_empty_columns(markdown_table(comparison))] if table else [])
             + ([stage_table(record)] if stages else []))
    return "\n".join(parts)


def render_record(path: Path) -> str:
    """``docs_tables.render``'s entry for a ``run.json``: the run's text from it and its ``comparison.md``."""
    record = json.loads(Path(path).read_text())
    return run_text(record, (Path(path).parent / "comparison.md").read_text())


def collected_runs(folder: Path) -> List[Path]:
    """The runs collected into the subfolders of ``folder`` (``NAME/run.json``), in name order."""
    return sorted(Path(folder).glob(f"*/{RUN_RECORD}"))


def is_run_set(folder: Path) -> bool:
    """Whether ``folder`` is a set of collected runs: every subfolder holds a ``run.json`` (at least one)."""
    subfolders = [d for d in Path(folder).iterdir() if d.is_dir()]
    return bool(subfolders) and len(collected_runs(folder)) == len(subfolders)


def render_runs(folder: Path) -> str:
    """One table for runs of one command on several inputs (``folder/NAME/run.json``, e.g. a corpus's layouts):
    the base encoder's row once (it must be the same in every run), then each run's tuned row named NAME, then
    each run's line on how it was made and its stage table."""
    records = collected_runs(folder)
    tables = [without_empty_columns(markdown_table((r.parent / "comparison.md").read_text())).splitlines()
              for r in records]
    bases = {t[2] for t in tables}
    if len(bases) != 1:
        raise ValueError(f"the runs in {folder} have different base-encoder rows: {sorted(bases)}")
    rows = tables[0][:3] + [f"| `{r.parent.name}` |" + t[3].split("|", 2)[2] for r, t in zip(records, tables)]
    text = "\n".join(rows) + "\n"
    for r in records:
        record = json.loads(r.read_text())
        text += "\n" + run_text(record, "", table=False, name=r.parent.name)
    return text


if __name__ == "__main__":
    import fire

    fire.Fire({"collect_run": collect_run})
