"""The docs' commands, run as written: every ``demo`` shell block of README.md and docs/*.md.

The blocks run in document order (README.md, then docs/*.md by name) in one temporary directory
that mirrors the repository root (``scincl.docs_blocks.make_workspace``), so relative paths such
as ``data/demo`` land there; each block sees the variables the earlier blocks exported.
``BASE_MODEL`` is the session's tiny BERT (the docs default to the packaged MiniLM when it is
unset), which keeps the training and evaluation blocks to seconds. Generated tables
(``<!-- generated: NAME -->``) must equal ``docs/generated/NAME.md``, the outputs of the run that
produced them (``make docs-tables``): their numbers depend on the CPU, so this run's outputs are
checked for the same rows and columns, not the same digits.
"""
from __future__ import annotations

import pytest

from scincl.docs_blocks import LABELS, doc_files, make_workspace, run_demo_blocks, shell_blocks
from scincl.docs_tables import GENERATED_DIR, PAGES_WITHOUT_RUNS, SOURCES, budget_mismatches, collisions_table, \
    markdown_table, pasted_tables, render, stale_tables

# the first test that uses ``docs_run`` runs every demo block (~50 CLI processes) in its setup: about 3 min on the
# idle 2-core machine, over pyproject.toml's 600 s per test on one core of a loaded one (`make test`'s two workers)
pytestmark = pytest.mark.timeout(1500)


def _blocks(repo_root, label=None):
    return [b for f in doc_files(repo_root) for b in shell_blocks(f) if label is None or b.label == label]


def test_every_shell_block_is_labelled(repo_root):
    blocks = _blocks(repo_root)
    assert len(blocks) >= 20
    unlabelled = [f"{b.where}: {b.label or '(none)'}" for b in blocks if b.label not in LABELS]
    assert not unlabelled, f"shell blocks without one of the labels {sorted(LABELS)}: {unlabelled}"
    assert len(_blocks(repo_root, "demo")) >= 8


@pytest.fixture(scope="module")
def docs_run(repo_root, toy_train_files, tmp_path_factory):
    """Every ``demo`` block, run in order (stops at the first failure): the workspace and the runs."""
    work = make_workspace(tmp_path_factory.mktemp("docs_run") / "repo", repo_root)
    return {"work": work, "runs": run_demo_blocks(repo_root, work, {"BASE_MODEL": str(toy_train_files["bert"])})}


def test_demo_blocks_exit_zero(docs_run, repo_root):
    runs = docs_run["runs"]
    timing = ", ".join(f"{r.block.where} {r.seconds:.1f}s" for r in runs)
    failed = [r for r in runs if r.returncode]
    assert not failed, f"{failed[0].block.where} exited {failed[0].returncode}:\n{failed[0].output_tail}\n({timing})"
    assert [r.block.where for r in runs] == [b.where for b in _blocks(repo_root, "demo")]
    print(f"\ndocs blocks: {timing}")


def test_pasted_tables_equal_their_generated_files(repo_root):
    pasted = {name for f in doc_files(repo_root) for name in pasted_tables(f)}
    assert pasted == set(SOURCES), "every generated table is pasted once, every pasted one has a source"
    assert stale_tables(repo_root) == [], "run `make docs-tables` (or paste docs/generated/NAME.md)"


def test_this_runs_outputs_have_the_generated_tables_shape(docs_run, repo_root):
    for name, (run, rel) in SOURCES.items():
        if run != "docs":
            continue
        fresh = render(name, docs_run["work"] / rel).splitlines()
        cached = (repo_root / GENERATED_DIR / f"{name}.md").read_text().splitlines()
        assert fresh[:2] == cached[:2] and len(fresh) == len(cached), name
        # the first column(s) name the rows: same rows in the same order
        assert [row.split("|")[1:3] for row in fresh] == [row.split("|")[1:3] for row in cached], name


def test_table_helpers_read_and_render_real_values():
    assert markdown_table("# t\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter | x\n") == "| a | b |\n|---|---|\n| 1 | 2 |\n"
    with pytest.raises(ValueError, match="no Markdown table"):
        markdown_table("no table here\n")
    row = {"k_positives": 25, "k_hard_negatives": 30, "margin": 5, "queries": 1095, "triples": 5475,
           "symmetric_collisions": 338, "symmetric_collision_triples": 660}
    assert collisions_table([row]).splitlines()[2] == "| 25 | 30 | 5 | 1,095 | 5,475 | 338 | 660 | 12.05 |"


def test_reproduce_automodel_snippet_pools_as_the_model_was_trained(demo_tiny_bert, tmp_path, repo_root):
    """docs/REPRODUCE.md §7's AutoModel snippet, run on a mean-pooled model dir, gives SentenceTransformer's
    vectors at the saved length (the [CLS] vector of such a model is another one)."""
    import re

    import numpy as np
    from sentence_transformers import SentenceTransformer

    from scincl.model.encoder import DocumentEncoder, load_backbone, save_encoder

    backbone, tokenizer = load_backbone(str(demo_tiny_bert))  # saved as train saves: mean pooling, 48 tokens
    model_dir = save_encoder(DocumentEncoder(backbone, "mean"), tokenizer, tmp_path / "model_mean", max_seq_length=48)
    text = (repo_root / "docs" / "REPRODUCE.md").read_text()
    section = text[text.index("## 7. Using a trained model"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    snippet = re.sub(r'^model_dir = .*$', f'model_dir = "{model_dir}"', snippet, count=1, flags=re.M)
    namespace: dict = {}
    exec(compile(snippet, "REPRODUCE.md §7", "exec"), namespace)
    assert namespace["max_length"] == 48  # the length saved with the model (the tiny BERT's own: 64), as
    # SentenceTransformer reads it
    texts = [p["title"] + namespace["tokenizer"].sep_token + p["abstract"] for p in namespace["papers"]]
    expected = SentenceTransformer(str(model_dir), device="cpu").encode(texts)
    np.testing.assert_allclose(namespace["embeddings"].numpy(), expected, rtol=1e-4, atol=1e-5)
    assert not np.allclose(namespace["hidden"][:, 0, :].numpy(), expected, atol=1e-3)  # [CLS] would differ


def test_a_collected_run_renders_its_stage_work_rates_and_table(docs_run, tmp_path):
    """The quick start's demo run (README "Your own corpus on a CPU"), kept as docs/results/ keeps a documented
    real-data run (scincl.docs_runs): the work of each stage counted from its outputs, the load while it ran, the
    table, and a rerun compared; a folder of such runs renders as one table."""
    import json
    from pathlib import Path

    from scincl.docs_runs import collect_run, is_run_set, render_runs, run_paths

    run = docs_run["work"] / "output" / "my_corpus"
    manifest = json.loads((run / "manifest.json").read_text())
    ran = {name for name in manifest["stage_order"] if manifest["stages"][name]["status"] == "ran"}
    end = manifest["stages"]["train"]["updated_at"]
    load_log = tmp_path / "load.log"
    load_log.write_text(f"{end} 3.50 2.00 1.00 3/100 42\n2000-01-01T00:00:00+00:00 9.00 9.00 9.00 1/1 1\n")
    record = collect_run(str(run), str(tmp_path / "runs" / "plain"), "python cli_pipeline.py run_specter ...",
                         load_log=str(load_log), rerun_dir=str(run), wall_seconds=12.5,
                         before={"make_eval_dir": {"seconds": 2.0, "ended_at": end, "work": [[40, "queries"]]}})
    stages = {st["name"]: st for st in record["stages"]}
    assert set(stages) == set(manifest["stage_order"]) | {"make_eval_dir"}
    stats = json.loads((run / "citations" / "citations.stats.json").read_text())
    assert stages["citations"]["work"] == [[stats["edges"], "edges"]]
    triplets = sum(1 for _ in open(run / "train_triples.csv")) - 1
    state = json.loads(next(Path(run_paths(run, manifest)["model"]).rglob("trainer_state.json")).read_text())
    assert stages["train"]["work"] == [[state["global_step"], "steps"], [triplets, "triplets"]]
    assert stages["eval"]["work"][0][0] > 0 and stages["eval"]["work"][0][1] == "papers"
    assert stages["train"]["load"] == [3.5, 3.5, 3.5]  # the sample nearest the stage (the other is decades away)
    assert record["rerun"]["same_table"] is True and record["commit"] == manifest["git"]["commit"]
    assert record["precision"].startswith("training ") and ran <= set(stages)
    stage_rows = (tmp_path / "runs" / "plain" / "stages.md").read_text().splitlines()
    assert [row.split("|")[1].strip() for row in stage_rows[2:2 + len(stages)]] == [st["name"] for st in
                                                                                   record["stages"]]

    (tmp_path / "runs" / "copy").mkdir()
    for name in ("run.json", "comparison.md"):
        (tmp_path / "runs" / "copy" / name).write_text((tmp_path / "runs" / "plain" / name).read_text())
    assert is_run_set(tmp_path / "runs") and not is_run_set(tmp_path)  # tmp_path/runs/ holds no run.json
    text = render("runs", tmp_path / "runs")
    table = text.split("\n\n")[0].splitlines()
    assert [row.split("|")[1].strip() for row in table[2:]] == [table[2].split("|")[1].strip(), "`copy`", "`plain`"]
    assert text.count("| train |") == 2 and ("steps/s" in text or "s per step" in text)
    assert f"at commit {record['commit'][:7]}" in render("one", tmp_path / "runs" / "plain" / "run.json")
    (tmp_path / "runs" / "copy" / "comparison.md").write_text(
        (tmp_path / "runs" / "plain" / "comparison.md").read_text().replace("| base: ", "| base: other ", 1))
    with pytest.raises(ValueError, match="different base-encoder rows"):
        render_runs(tmp_path / "runs")


def test_a_results_page_whose_budget_line_contradicts_a_row_is_listed_as_not_regenerable(repo_root, tmp_path):
    """docs/results/ pages are copies of the experiments' pages: one whose "Budget: N triplets per run" a
    ``triplets=M`` row contradicts is out of date, and its runs are not committed, so docs_tables lists it (and
    `make docs-tables` says so) instead of the page being edited by hand."""
    results = repo_root / "docs" / "results"
    assert set(budget_mismatches(results)) <= set(PAGES_WITHOUT_RUNS)
    assert all((results / page).is_file() for page in PAGES_WITHOUT_RUNS)
    (tmp_path / "a").mkdir()
    row = "| scincl: triplets={} | 1 | 78.57 |\n"
    (tmp_path / "a" / "results.md").write_text("Budget: 1000 triplets per run (5 per query)\n\n" + row.format(2000))
    (tmp_path / "results_ok.md").write_text("Budget: 2000 triplets per run (5 per query)\n\n" + row.format(2000))
    (tmp_path / "results_varies.md").write_text("Budget: the table's triplets per run\n\n" + row.format(2000))
    assert budget_mismatches(tmp_path) == ["a/results.md"]
