"""`cli_s2orc.py make_eval_dir` (scincl/eval/eval_dir.py): cite / co-cite tasks from a corpus in every layout.

The relevance of every candidate is checked against the demo corpus' own S2ORC citations (mapped to the
layout's ids), independently of the code under test; the folder is read by the SciDocs readers, scored by
`evaluate`, and its query papers are excluded from run_specter's citation graph.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from scincl.corpus.layouts import write_layout
from scincl.corpus.shards import list_metadata_shards
from scincl.eval.eval_dir import build_eval_dir, split_sizes
from scincl.errors import InputError
from scincl.io import iter_jsonl, read_id_list, read_json
from scincl.scidocs_io import METADATA_FILES, read_qrels, read_scidocs_metadata
from tests.conftest import run_front_end

FORMATS = ("s2orc", "s2ag", "openalex", "plain")
QUERIES = 12


@pytest.fixture(scope="module")
def layouts(demo_corpus, tmp_path_factory):
    """The 600-paper demo corpus in every layout: {format: (corpus folder, {S2ORC id: corpus id})}."""
    out = tmp_path_factory.mktemp("eval_dir_layouts")
    found = {"s2orc": (demo_corpus.s2orc_metadata_dir, None)}
    for fmt in FORMATS[1:]:
        found[fmt] = (out / fmt, write_layout(demo_corpus.s2orc_metadata_dir, out / fmt, fmt))
    return found


@pytest.fixture(scope="module")
def demo_graph(demo_corpus):
    """The demo's S2ORC citations {citing: {cited}} and texts {id: text}, read straight from its shards."""
    cites, texts = defaultdict(set), {}
    for shard in list_metadata_shards(demo_corpus.s2orc_metadata_dir):
        for _, record in iter_jsonl(shard):
            cites[record["paper_id"]].update(record.get("outbound_citations") or [])
            texts[record["paper_id"]] = f"{record.get('title') or ''}{record.get('abstract') or ''}"
    return cites, texts


@pytest.fixture(scope="module")
def eval_dirs(layouts, tmp_path_factory):
    """make_eval_dir on each layout (library call, 2 workers): {format: (folder, stats)}."""
    from scincl.corpus import open_corpus

    out = tmp_path_factory.mktemp("eval_dirs")
    return {fmt: (out / fmt, build_eval_dir(open_corpus(root, fmt), out / fmt, queries=QUERIES, seed=0, workers=2))
            for fmt, (root, _) in layouts.items()}


def _cocitation_counts(cites):
    counts = Counter()
    for refs in cites.values():
        counts.update(combinations(sorted(refs), 2))
    return counts


@pytest.mark.parametrize("fmt", FORMATS)
def test_eval_dir_follows_the_rules_in_every_layout(fmt, layouts, eval_dirs, demo_graph):
    folder, stats = eval_dirs[fmt]
    id_map = layouts[fmt][1]
    to_s2orc = {v: k for k, v in id_map.items()} if id_map else None
    s2orc = (lambda pid: to_s2orc[pid]) if to_s2orc else (lambda pid: pid)
    cites, texts = demo_graph
    cocited = _cocitation_counts(cites)
    metadata = read_scidocs_metadata(folder / METADATA_FILES["view_cite_read"])
    queries = {}
    for task in ("cite", "cocite"):
        val, test = (read_qrels(folder / task / f"{split}.qrel") for split in ("val", "test"))
        assert (len(val), len(test)) == split_sizes(QUERIES) == (3, 9)
        assert not set(val) & set(test)
        queries[task] = set(val) | set(test)
        for query, candidates in {**val, **test}.items():
            assert len(candidates) == 30 and sorted(Counter(candidates.values()).items()) == [(0, 25), (1, 5)]
            assert query not in candidates
            q = s2orc(query)
            for pid, rel in candidates.items():
                p = s2orc(pid)
                relevant = p in cites[q] if task == "cite" else cocited[tuple(sorted((p, q)))] >= 2
                assert relevant == bool(rel), (task, query, pid)
                assert texts[p] and pid in metadata
            assert query in metadata
    assert not queries["cite"] & queries["cocite"]
    assert read_id_list(folder / "scidocs_paper_ids.json") == sorted(queries["cite"] | queries["cocite"])
    paper_ids = {pid for task in ("cite", "cocite") for split in ("val", "test")
                 for q, cands in read_qrels(folder / task / f"{split}.qrel").items() for pid in (q, *cands)}
    assert set(metadata) == paper_ids and stats["metadata_papers"] == len(paper_ids)
    assert all(m["paper_id"] == pid and (m["title"] or m["abstract"]) for pid, m in metadata.items())
    # the eligible queries are the same papers in every layout (the counts do not depend on the ids)
    assert stats["tasks"] == eval_dirs["s2orc"][1]["tasks"]
    assert stats["tasks"]["cite"]["eligible_queries"] == sum(
        1 for q, refs in cites.items() if texts.get(q) and len({r for r in refs if texts.get(r)} - {q}) >= 5)


def test_cli_is_deterministic_reuses_and_a_seed_changes_the_draw(layouts, eval_dirs, tmp_path):
    root = layouts["plain"][0]
    argv = ("cli_s2orc.py", "make_eval_dir", root, tmp_path / "a", "--queries", QUERIES, "--seed", 0, "--workers", 1)
    proc = run_front_end(*argv, check=True)
    assert proc.stdout.strip().endswith(
        "(cite 3 val + 9 test queries, cocite 3 val + 9 test queries, "
        f"{eval_dirs['plain'][1]['metadata_papers']} papers); pass it as --scidocs_dir")
    for name in ("cite/val.qrel", "cocite/test.qrel", "paper_metadata_view_cite_read.json", "scidocs_paper_ids.json"):
        assert (tmp_path / "a" / name).read_bytes() == (eval_dirs["plain"][0] / name).read_bytes()  # 1 vs 2 workers
    again = run_front_end(*argv, check=True)
    assert "reusing it" in again.stderr
    changed = run_front_end(*argv[:-4], "--seed", 1, check=False)
    assert changed.returncode == 2 and "made differently" in changed.stderr and "--override" in changed.stderr
    run_front_end(*argv[:3], tmp_path / "b", "--queries", QUERIES, "--seed", 1, check=True)
    assert read_id_list(tmp_path / "b" / "scidocs_paper_ids.json") != read_id_list(tmp_path / "a" / "scidocs_paper_ids.json")


def test_too_few_queries_or_papers_is_one_line(layouts, tmp_path):
    proc = run_front_end("cli_s2orc.py", "make_eval_dir", layouts["plain"][0], tmp_path / "x", "--queries", 1)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].endswith(
        "--queries 1: give at least 2 queries per task (one val, one test)")
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    (tiny / "papers.jsonl").write_text("".join(json.dumps({"paper_id": str(i), "title": f"t{i}"}) + "\n"
                                               for i in range(8)))
    (tiny / "citations.tsv").write_text("0\t1\n0\t2\n1\t2\n")
    from scincl.corpus import open_corpus

    with pytest.raises(InputError, match="no query to draw"):
        build_eval_dir(open_corpus(tiny, "plain"), tmp_path / "y", queries=4)


def test_evaluate_scores_a_model_on_the_folder(eval_dirs, demo_tiny_bert, tmp_path):
    folder = eval_dirs["plain"][0]
    proc = run_front_end("cli_pipeline.py", "evaluate", folder, tmp_path / "ev", "--model_dirs", demo_tiny_bert,
                         "--val_or_test", "both", "--max_sequence_length", 32, check=True)
    results = read_json(tmp_path / "ev" / "results.json")
    assert proc.stdout.strip() == (tmp_path / "ev" / "results.md").read_text().strip()  # the CLI prints the table
    for split, queries in (("val", 3), ("test", 9)):
        assert set(results["scores"][split]) == {"cite", "co-cite"}
        for task in ("cite", "co-cite"):
            assert results["details"][split][task]["queries"] == queries
            assert 0 < results["scores"][split][task]["map"] <= 100
    assert proc.returncode == 0
    # val only: only the val qrels' papers are embedded (issue 42), and they score exactly as before
    from scincl.eval.evaluate import run_evaluation

    val = run_evaluation(folder, tmp_path / "val", val_or_test="val", model_dirs=[str(demo_tiny_bert)],
                         max_sequence_length=32)
    val_papers = {pid for task in ("cite", "cocite") for q, cands in read_qrels(folder / task / "val.qrel").items()
                  for pid in (q, *cands)}
    embedded = tmp_path / "val" / "embeddings" / demo_tiny_bert.name / "view_cite_read.val.jsonl"
    assert {row["paper_id"] for _, row in iter_jsonl(embedded)} == val_papers
    assert len(val_papers) < len(read_scidocs_metadata(folder / METADATA_FILES["view_cite_read"]))
    assert val["scores"]["val"] == results["scores"]["val"]


def test_run_specter_keeps_the_query_papers_out_of_the_training_graph(layouts, eval_dirs, demo_corpus, tmp_path):
    """--scidocs_dir FOLDER alone: the folder's scidocs_paper_ids.json (its queries) names the papers left out of the
    citations the graph is trained on and checked by the leakage guard; the candidates stay in the corpus."""
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan

    folder = eval_dirs["plain"][0]
    queries = set(read_id_list(folder / "scidocs_paper_ids.json"))
    plan = SciNCLPlan(settings_from_flags(str(tmp_path / "run"), {"corpus_dir": str(layouts["plain"][0]),
                                                                 "scidocs_dir": str(folder), "workers": 1}))
    stages = {stage.name: stage for stage in plan.stages()}
    assert "scidocs_ids" not in stages and plan.p.scidocs_ids == folder / "scidocs_paper_ids.json"
    stages["citations"].run()
    graph_papers = {pid for path in (plan.p.citations_train, plan.p.citations_test)
                    for line in path.read_text().splitlines() for pid in line.split("\t")}
    assert not graph_papers & queries
    candidates = set(read_scidocs_metadata(folder / METADATA_FILES["view_cite_read"])) - queries
    assert len(graph_papers & candidates) > 0.9 * len(candidates)
    assert plan.leakage["excluded_paper_ids"] == str(folder / "scidocs_paper_ids.json")
    # a folder without its own list (the demo's SciDocs folder) still has every one of its papers excluded
    demo = SciNCLPlan(settings_from_flags(str(tmp_path / "demo"), {"corpus_dir": str(layouts["plain"][0]),
                                                                  "scidocs_dir": str(demo_corpus.scidocs_dir)}))
    assert "scidocs_ids" in {stage.name for stage in demo.stages()}
