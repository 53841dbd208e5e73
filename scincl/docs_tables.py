"""Tables in the docs that the demo commands produce: cached outputs, pasted copies, regeneration.

A generated table sits between ``<!-- generated: NAME -->`` and ``<!-- /generated -->`` in a
Markdown file; its text is ``docs/generated/NAME.md``, the table as the command wrote it (or as
rendered from its JSON). ``make docs-tables`` (``python -m scincl.docs_tables``) reruns the
demo blocks, refreshes ``docs/generated/`` from their outputs (and from ``demo_output/`` when
``make demo`` ran), and pastes each table into the docs. ``tests/test_docs.py`` checks that every
pasted copy equals its cached file: the numbers depend on the CPU's float kernels and thread
count (reruns on one machine are identical), so the check is against the outputs of the run that
produced the docs, not against a rerun on another machine.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scincl.docs_blocks import doc_files, make_workspace, run_demo_blocks
from scincl.docs_markdown import markdown_table
from scincl.docs_runs import RUN_RECORD, is_run_set, render_record, render_runs

GENERATED_DIR = Path("docs") / "generated"
MARKER = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)

# NAME -> (run, file written by the commands). run "docs": the demo blocks' workspace;
# run "demo": `make demo`'s demo_output/ (python cli_pipeline.py run_specter); run "repo": files
# committed in the repository (docs/results/, copied there by experiments/run.sh collect); run
# "gpu_check": `benchmarks/gpu_check.py --dry_run --output table.md` (make gpu-check's CPU dry run).
SOURCES = {
    "demo_comparison": ("demo", "comparison/comparison.md"),
    "demo_link_prediction": ("docs", "data/biggraph/demo/model/link_prediction.md"),
    "demo_collisions": ("docs", "data/experiments/demo/collisions.json"),
    "results_timings": ("repo", "docs/results"),
    "gpu_check_dry_run": ("gpu_check", "table.md"),
    "hepth_collisions": ("repo", "docs/results/hepth/collisions/results.md"),  # experiments/run.sh hepth_collisions
    # issue 40: experiments/hepth_powered.py's runs (experiments/run.sh collect_runs), tables from its runs.csv
    "hepth_powered": ("repo", "docs/results/hepth/pretrained/powered/runs.csv"),
    # issue 42: the README's real-data runs, each kept by `python -m scincl.docs_runs collect_run` (run.json)
    "hepth_cpu_preset": ("repo", "docs/results/hepth/cpu_preset/run.json"),  # quick start "Your own corpus on a CPU"
    "hepth_layouts": ("repo", "docs/results/hepth/layouts"),  # one run per layout: s2ag/, openalex/
    "citeseer_readme_run": ("repo", "docs/results/citeseer/readme_run/run.json"),
    "demo_stage_times": ("repo", "docs/results/demo/stages.md"),  # make demo's stage times (the table: demo_comparison)
}
# docs/results/ timings file (glob) -> the experiment (bash experiments/run.sh NAME) whose last run wrote it.
TIMINGS = (
    ("hepth/tuning_val/timings.json", "hepth_tuning"),
    ("hepth/sweep_val/timings_k_pos.json", "hepth_k_pos"),
    ("hepth/sweep_val/timings_k_hard.json", "hepth_k_hard"),
    ("hepth/main_test/*/timings.json", "hepth_main"),
    ("citeseer/main_test/*/timings.json", "citeseer_main"),
    ("hepth/losses_val/timings.json", "hepth_losses"),
    ("hepth/collisions/timings.json", "hepth_collisions"),
    ("hepth/graph/timings.json", "hepth_graph"),
    ("hepth/budget_test/*/timings.json", "hepth_budget"),
    # issue 26: the domain encoder pre-trained here (docs/results.md section 8)
    ("hepth/pretrained/tuning_val/timings.json", "hepth_pretrained_val: pooling"),
    ("hepth/pretrained/sweep_val/timings_k_hard.json", "hepth_pretrained_val: k-hard"),
    ("hepth/pretrained/sweep_val/timings_k_pos.json", "hepth_pretrained_val: k+"),
    ("hepth/pretrained/main_test/*/timings.json", "hepth_pretrained: Table 1"),
    ("hepth/pretrained/budget_test/*/timings.json", "hepth_pretrained: budget"),
    # issue 40: the powered comparison (collect_runs copies each part's timings)
    ("hepth/pretrained/powered/timings_t1000.json", "hepth_powered: 1,000 triplets"),
    ("hepth/pretrained/powered/timings_t6840.json", "hepth_powered: 6,840 triplets"),
)
# docs/results/ pages no command here regenerates (copies of an experiment's page, `experiments/run.sh collect`, whose
# runs are not committed) that are known to be out of date -> what is out of date, and how to regenerate them
PAGES_WITHOUT_RUNS = {
    "hepth/tuning_val/results.md": "its budget line predates the pages' check of triplets= rows: it says 1000 "
    "triplets per run (63 steps) while the 'scincl: triplets=2000' row trained 2,000 (125 steps); its runs "
    "(results/hepth/runs/val/) are not committed: rerun `bash experiments/run.sh hepth_tuning`, then `collect`",
}
LONG_STEP_SECONDS = 10.0  # steps shorter than this reused earlier outputs (or, collisions, are one search)


def collisions_table(rows: list[dict]) -> str:
    """``sweep_collision_margins`` rows as the README's collisions-vs-margin table."""
    out = ["| k+ | k-hard | margin | queries | triples | symmetric collisions (pairs) | triples in one "
           "| % of triples |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = 100 * r["symmetric_collision_triples"] / r["triples"]
        out.append(f"| {r['k_positives']} | {r['k_hard_negatives']} | {r['margin']} | {r['queries']:,} | "
                   f"{r['triples']:,} | {r['symmetric_collisions']:,} | {r['symmetric_collision_triples']:,} | "
                   f"{share:.2f} |")
    return "\n".join(out) + "\n"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.1f} s"


def timings_table(results_dir: Path) -> str:
    """The experiments' recorded step times (``timings*.json`` of docs/results/) as one table."""
    out = ["| command | steps | steps ≥ 10 s | seconds per step ≥ 10 s | sum of the step times |",
           "|---|---:|---:|---|---:|"]
    for pattern, command in TIMINGS:
        for path in sorted(Path(results_dir).glob(pattern)):
            steps = json.loads(path.read_text())
            ran = sorted(v for v in steps.values() if v >= LONG_STEP_SECONDS)
            spread = f"{ran[0]:.0f}–{ran[-1]:.0f} s" if len(ran) > 1 else (f"{ran[0]:.0f} s" if ran else "—")
            out.append(f"| `{command}` | {len(steps)} | {len(ran)} | {spread} | {_minutes(sum(steps.values()))} |")
    return "\n".join(out) + "\n"


def budget_mismatches(results_dir: Path) -> list[str]:
    """The pages below ``results_dir`` whose one budget (``Budget: N triplets per run``) a ``triplets=M`` row
    contradicts (M != N), as paths relative to ``results_dir``."""
    found = []
    for page in sorted(Path(results_dir).rglob("results*.md")):
        text = page.read_text(encoding="utf-8")
        budget = re.search(r"^Budget: (\d+) triplets per run", text, re.M)
        if budget and any(m != budget.group(1) for m in re.findall(r"^\|[^|\n]*\btriplets=(\d+)", text, re.M)):
            found.append(page.relative_to(results_dir).as_posix())
    return found


def render(name: str, source: Path) -> str:
    """The table NAME from the file (or, for the timings and a set of runs, the folder) its command wrote."""
    if source.is_dir():  # runs of one command on several inputs (docs_runs), else the experiments' timings
        return render_runs(source) if is_run_set(source) else timings_table(source)
    if source.name == RUN_RECORD:  # one documented real-data run, collected by scincl.docs_runs
        return render_record(source)
    if source.suffix == ".csv":  # a paired experiment's runs.csv: its tables (scincl/eval/paired_runs.py)
        from scincl.eval.paired_runs import docs_text

        return docs_text(source)
    if source.suffix == ".json":
        return collisions_table(json.loads(source.read_text()))
    return markdown_table(source.read_text())


def pasted_tables(path: Path) -> dict[str, str]:
    """``{NAME: pasted text}`` of the generated regions of one Markdown file."""
    return {m.group(1): m.group(2) for m in MARKER.finditer(Path(path).read_text(encoding="utf-8"))}


def stale_tables(repo_root: Path) -> list[str]:
    """``file: NAME`` for every pasted table that differs from ``docs/generated/NAME.md`` (or lacks it)."""
    stale = []
    for path in doc_files(repo_root):
        for name, text in pasted_tables(path).items():
            cached = repo_root / GENERATED_DIR / f"{name}.md"
            if not cached.exists() or cached.read_text() != text:
                stale.append(f"{path.name}: {name}")
    return stale


def paste_tables(repo_root: Path) -> list[str]:
    """Write every cached table into its marked regions; returns the files changed."""
    changed = []
    for path in doc_files(repo_root):
        text = path.read_text(encoding="utf-8")
        new = MARKER.sub(lambda m: f"<!-- generated: {m.group(1)} -->\n"
                         f"{(repo_root / GENERATED_DIR / (m.group(1) + '.md')).read_text()}<!-- /generated -->", text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path.name)
    return changed


def refresh(repo_root: Path, runs: dict[str, Path]) -> list[str]:
    """Render each table whose run is in ``runs`` (``{"docs": dir, "demo": dir}``) into the cache."""
    written = []
    for name, (run, rel) in SOURCES.items():
        if run in runs and (runs[run] / rel).exists():
            target = repo_root / GENERATED_DIR / f"{name}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render(name, runs[run] / rel))
            written.append(name)
    return written


def update_doc_tables(repo_root: str = ".", demo_output: str = "demo_output", rerun_blocks: bool = True) -> None:
    """Regenerate the docs' demo tables: rerun the demo blocks (tiny BERT) and gpu_check's dry run, refresh
    docs/generated/, paste.

    ``demo_output``: the folder of a finished ``make demo`` (skipped when absent);
    ``--norerun_blocks`` only pastes the cached tables.
    """
    root = Path(repo_root).resolve()
    runs = {"repo": root, **({"demo": root / demo_output} if (root / demo_output).is_dir() else {})}
    work = Path(tempfile.mkdtemp(prefix="scincl_docs_"))
    try:
        if rerun_blocks:
            from scincl.model.tiny import build_tiny_bert, toy_vocabulary

            # the tables come from the graph and triplet blocks; a tiny BERT keeps the training
            # and evaluation blocks to seconds, as in tests/test_docs.py
            bert = build_tiny_bert(work / "tiny_bert", toy_vocabulary())
            results = run_demo_blocks(root, make_workspace(work / "run", root), {"BASE_MODEL": str(bert)})
            failed = [r for r in results if r.returncode]
            if failed:
                raise SystemExit(f"{failed[0].block.where} exited {failed[0].returncode}:\n{failed[0].output_tail}")
            runs["docs"] = work / "run"
            subprocess.run([sys.executable, str(root / "benchmarks" / "gpu_check.py"), "--dry_run", "--output",
                            str(work / "gpu_check" / "table.md")], cwd=root, check=True)
            runs["gpu_check"] = work / "gpu_check"
        print("refreshed:", ", ".join(refresh(root, runs)) or "nothing")
        print("pasted into:", ", ".join(paste_tables(root)) or "nothing (already current)")
        for page, why in PAGES_WITHOUT_RUNS.items():
            print(f"not regenerated: docs/results/{page}: {why}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    import fire

    fire.Fire(update_doc_tables)
