"""bench_scale.py's corpus generator and scale_report.py's fits, extrapolation and plots (tiny inputs)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.bench_scale import S2ORC, generate_corpus
from benchmarks.scale_report import extrapolate, fit, write_report
from scincl.corpus.shards import iter_paper_references, list_metadata_shards


def test_generated_corpus_is_s2orc_shaped_and_cached(tmp_path):
    meta = generate_corpus(2_000, tmp_path / "c", seed=1)
    shards = list_metadata_shards(meta)
    records = [r for s in shards for r in iter_paper_references(s)]
    assert len(records) == 2_000
    refs = [len(r[2]) for r in records]
    assert 9.0 < np.mean(refs) < 10.5  # Poisson(10) minus self-citations
    indegree = np.bincount([int(x) for r in records for x in r[2]])
    top = np.sort(indegree[indegree > 0])[::-1]
    assert top[0] > 10 * np.median(top)  # skewed: the most cited paper far above the median
    manifest = json.loads((tmp_path / "c" / "corpus.json").read_text())
    assert manifest["papers"] == 2_000 and manifest["edges"] == sum(len(set(r[2])) for r in records)
    mtime = shards[0].stat().st_mtime_ns
    assert generate_corpus(2_000, tmp_path / "c", seed=1) == meta and shards[0].stat().st_mtime_ns == mtime


def test_fit_and_extrapolation_recover_a_power_law():
    a, b = fit([1e4, 1e5, 1e6], [2 * x ** 0.8 for x in (1e4, 1e5, 1e6)])
    assert a == pytest.approx(2.0) and b == pytest.approx(0.8)
    assert fit([1e4], [1.0]) is None
    rows = [{"papers": n, "cpu_s": 1e-3 * n, "wall_s": 2e-3 * n, "queries": 100} for n in (1e4, 1e5)]
    ex = extrapolate("mine", rows, S2ORC)  # per query, times S2ORC's query count
    assert ex["b"] == pytest.approx(1.0)
    assert ex["s2orc_cpu_s"] == pytest.approx(1e-5 * S2ORC["index"] * S2ORC["queries"])
    assert ex["linear_cpu_s"] == pytest.approx(ex["s2orc_cpu_s"])


def test_report_writes_table_and_plots(tmp_path):
    records = [{"stage": "extract", "papers": n, "edges": 10 * n, "queries": 10, "wall_s": n / 1e3,
                "cpu_s": n / 2e3, "peak_rss_mib": 100.0} for n in (10_000, 100_000)]
    records.append({"stage": "embed", "papers": None, "units": 1000, "wall_s": 100.0, "cpu_s": 50.0,
                    "peak_rss_mib": 800.0})
    table = write_report(records, tmp_path).read_text().splitlines()
    extract = next(line for line in table if line.startswith("| citation extraction"))
    assert "| 1.00; 1.00 |" in extract and "7.3; 7.3" in extract  # 52.6M papers x 0.5 ms = 7.3 core-hours
    assert any(line.startswith("| embedding") and "50.00 ms per paper" in line for line in table)
    assert (tmp_path / "extract.png").stat().st_size > 5_000


def test_method_ratios_compare_each_embedder_with_20_pbg_epochs_of_the_same_run():
    from benchmarks.scale_report import method_ratios

    records = [{"stage": "epoch", "papers": 1000, "edges": 10_000, "cpu_s": 5.0, "wall_s": 9.0, "peak_rss_mib": 100},
               {"stage": "fastrp", "papers": 1000, "edges": 10_000, "cpu_s": 2.0, "wall_s": 3.0, "peak_rss_mib": 50}]
    table = method_ratios(records, {"papers": 1_000_000, "edges": 10_000_000})
    row = table.splitlines()[2].split(" | ")
    assert row[0] == "| fastrp" and row[5] == "100" and row[6] == "50.0x"  # 20 x 5 s / 2 s
    assert row[7] == "0.56" and row[8] == "27.8"  # 2 s x 1000 / 3600; 100 s x 1000 / 3600
    assert row[9] == "49 GiB |"  # 50 MiB x 1000 / 1024
