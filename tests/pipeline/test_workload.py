"""Issue 42, item 1: the plan before stage 1 (``scincl/workload.py``) and ``run_specter --dry_run``."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from scincl import workload
from scincl.workload import (Workload, count_lines, cpu_warning, encoder_size, estimate_hours, format_workload,
                             transformer_factor)
from tests.conftest import run_front_end


def test_count_lines_reads_gzip_and_extrapolates_beyond_the_limit(tmp_path, monkeypatch):
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl"
    with gzip.open(first, "wt") as fh:
        fh.write("x\n" * 10)
    second.write_text("yy\n" * 7)
    assert count_lines([first, second, tmp_path / "absent"]) == 17
    assert count_lines([]) is None
    monkeypatch.setattr(workload, "COUNT_BYTES_LIMIT", 1)  # beyond it: the first file's lines per byte x all bytes
    total = first.stat().st_size + second.stat().st_size
    assert count_lines([first, second]) == int(10 * total / first.stat().st_size)


def test_transformer_cost_scales_with_layers_width_squared_and_length():
    assert transformer_factor({"layers": 6, "hidden": 384}, 256) == 1.0
    assert transformer_factor({"layers": 12, "hidden": 768}, 512) == 16.0  # BERT-base at 512 tokens


def test_estimates_follow_the_benchmark_rows(tmp_path, monkeypatch):
    rows = [{"stage": "train", "units": 100, "cpu_s": 50.0}, {"stage": "embed", "units": 1000, "cpu_s": 20.0},
            {"stage": "epoch", "edges": 1000, "cpu_s": 1.0}, {"stage": "epoch", "edges": 10, "cpu_s": 9.0}]
    results = tmp_path / "results.json"
    results.write_text(json.dumps(rows))
    monkeypatch.setattr(workload, "SCALE_RESULTS", results)
    work = Workload(papers=10, graph="pbg", queries=10, triplets=3600, steps=1, max_sequence_length=512,
                    batch="b", eval_papers=1800, encoder="e")
    hours = estimate_hours(work, {"layers": 6, "hidden": 384}, edges=2000, dimension=64, epochs=10, cores=2)
    assert hours["train"] == pytest.approx(0.5 * 2 * 3600 / 2 / 3600)  # 0.5 CPU s/triplet x 2 (512 tokens) / 2 cores
    assert hours["eval"] == pytest.approx(0.02 * 2 * 1800 * 2 / 2 / 3600)  # base and tuned encoder
    assert hours["graph"] == pytest.approx(1.0 / (1000 * 128) * 2000 * 64 * 10 / 2 / 3600)  # the largest epoch row
    assert estimate_hours(work, None, None, None, None, cores=2) == {}
    twice = Workload(**{**vars(work), "epochs": 2.0})  # training epochs multiply the training time only
    assert estimate_hours(twice, {"layers": 6, "hidden": 384}, 2000, 64, 10, cores=2) == \
        {**hours, "train": pytest.approx(2 * hours["train"])}


def test_the_warning_names_the_preset_and_not_on_a_gpu():
    work = Workload(papers=1, graph="g", queries=1, triplets=1, steps=1, max_sequence_length=512, batch="b",
                    eval_papers=None, encoder="e", hours={"train": 30.0})
    warning = cpu_warning(work, gpu=False, preset_hint="--preset cpu")
    assert "estimated at about 30.0 h on this machine's CPU (no GPU)" in warning and "--preset cpu" in warning
    assert cpu_warning(work, gpu=True, preset_hint="--preset cpu") is None
    assert cpu_warning(Workload(**{**vars(work), "hours": {"train": 0.5}}), False, "x") is None
    text = format_workload(work, gpu=False)
    assert "estimate on" in text and "train 30.0 h" in text


def test_encoder_size_reads_a_local_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 4, "hidden_size": 64}))
    assert encoder_size(str(tmp_path)) == {"layers": 4, "hidden": 64}
    assert encoder_size("some/hub-name") is None


def _plain_corpus(root: Path, papers: int) -> Path:
    root.mkdir(parents=True)
    (root / "papers.jsonl").write_text("".join(json.dumps({"paper_id": f"p{i}", "title": f"t{i}", "abstract": "a"})
                                               + "\n" for i in range(papers)))
    (root / "citations.tsv").write_text("".join(f"p{i}\tp{(i + 1) % papers}\np{i}\tp{(i + 3) % papers}\n"
                                                for i in range(papers)))
    return root


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path, demo_tiny_bert):
    corpus = _plain_corpus(tmp_path / "corpus", 40)
    out = tmp_path / "out"
    done = run_front_end("cli_pipeline.py", "run_specter", out, "--corpus_dir", corpus, "--dry_run",
                         "--base_model_name_or_path", demo_tiny_bert, "--sample_queries_ratio", "0.5",
                         "--max_sequence_length", "32", "--biggraph_config", "demo.py",
                         "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "1",
                         "--num_train_epochs", "1", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "corpus: 40 papers" in done.stdout
    assert "queries -> triplets -> optimizer steps: 20 -> 100 -> 25 (batch 4 x 1 accumulation, 1 epoch(s), 32 tokens" \
        in done.stdout
    assert "PyTorch-BigGraph, 32 dimensions, 15 epochs, 1 worker(s)" in done.stdout
    assert "estimate on" in done.stdout and "(--dry_run: nothing was run)" in done.stdout
    stages = done.stdout.split("stages:\n")[1].splitlines()  # stage by stage: nothing is made yet
    assert stages[0] == f"  citations: to run (output {out}/citations/citations.train.tsv missing)"
    assert [line.split(":")[0].strip() for line in stages[:-1]] == [
        "citations", "graph", "metadata_ids", "queries", "ann", "triples", "metadata", "train"]
    assert not out.exists()


@pytest.mark.parametrize("layout", ["plain", "s2orc"])
def test_a_graph_that_cannot_fit_the_memory_is_refused_before_stage_1(layout, tmp_path, demo_corpus, demo_tiny_bert,
                                                                      monkeypatch):
    """Issue 45: run_specter checks the graph stage's memory with the corpus's counts before stage 1: a plain corpus
    (one line per citation) with its edges, S2ORC shards (references grouped per paper) before they are counted."""
    from scincl.errors import InputError
    from scincl.graph import memory_plan
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan

    corpus, counts = ((_plain_corpus(tmp_path / "corpus", 40), "40 papers / 80 edges") if layout == "plain"
                      else (demo_corpus.s2orc_metadata_dir, "600 papers / edges not counted yet"))
    settings = settings_from_flags(str(tmp_path / "out"), {
        "corpus_dir": str(corpus), "base_model_name_or_path": str(demo_tiny_bert), "biggraph_config": "demo.py"})
    plan = SciNCLPlan(settings)
    assert "peak memory ~" in workload.run_workload(plan, "bert").graph
    monkeypatch.setattr(memory_plan, "available_memory", lambda: 1 << 20)  # 1 MiB available
    with pytest.raises(InputError, match=rf"^pbg --num_partitions 1 needs ~.* at {counts} / 32-d, more than "
                                         r"the memory available now \(0.0 GiB\); no setting fits"):
        workload.run_workload(plan, "bert")
    assert not (tmp_path / "out").exists()


def test_the_plan_counts_the_evaluation_papers_of_the_split_evaluated(tmp_path, demo_corpus):
    """A val-only run embeds the val split's papers (scincl/scidocs_io.py:split_papers), not the whole folder."""
    import json

    from scincl.pipeline.scincl_plan import settings_from_flags

    from scincl.pipeline.scincl_plan import SciNCLPlan
    from scincl.scidocs_io import split_papers
    from scincl.workload import eval_paper_count

    scidocs = demo_corpus.scidocs_dir
    every = sum(len(json.loads(f.read_text())) for f in scidocs.glob("paper_metadata_*.json"))
    counts = {}
    for split in ("val", "test", "both"):
        settings = settings_from_flags(str(tmp_path / split), {
            "corpus_dir": str(demo_corpus.s2orc_metadata_dir), "scidocs_dir": str(scidocs),
            "val_or_test_or_both": split, "graph_embeddings_path": "e.h5", "graph_paper_ids_path": "ids.json"})
        plan = SciNCLPlan(settings)
        counts[split] = eval_paper_count(plan.scidocs_dir, plan.s.val_or_test_or_both)
    assert counts["both"] == every
    assert counts["val"] == len(split_papers(scidocs, "val")) and counts["test"] == len(split_papers(scidocs, "test"))
    assert counts["val"] < every and counts["test"] < every
