#!/usr/bin/env python
"""How each stage grows with the corpus: wall time, CPU time and peak RSS per size, fitted exponents,
and the extrapolation to S2ORC (docs/SCALE.md).

Synthetic corpora in the S2ORC 20200705v1 layout (``metadata_{i}.jsonl.gz`` shards of 10k papers)
at 10k, 100k and 1M papers: 10 references per paper on average (Poisson; S2ORC has 463M train edges
over 52.6M papers = 8.8), cited papers drawn with P(rank < x) = sqrt(x / N) over a random
popularity order, so the in-degree has a power-law tail with exponent 3 (as real citation graphs,
Redner 1998), abstract-length texts (150-250 words of a Zipf vocabulary). Generated once and
cached in ``$SCINCL_BENCH_CACHE/scale_{N}`` (default ``~/.cache/scincl/bench``; outside the repo).

Every stage runs as its CLI in a subprocess; wall time, CPU time (user + system of the process and
its reaped workers, ``os.wait4``) and peak RSS (the process and its children, sampled every 50 ms)
are recorded:

  extract    cli_s2orc.py get_citations (1 % test split, --workers 2)
  import     cli_graph.py import_edges s2orc_128d_dot (the fast importer) ...
  import_pbg ... and --importer pbg, PBG's own importer (same files, same run: the import ratio)
  epoch      cli_graph.py train_biggraph s2orc_128d_dot -p num_epochs=1 (one 128-d epoch, 2 workers,
             + link-prediction eval of the test split + export)
  prone      cli_graph.py embed_graph --method prone --dimension 128 (ProNE, paper defaults; the whole
             embedding, no epochs: compare with 20 x epoch, PBG's paper setting, measured in the same run)
  fastrp     cli_graph.py embed_graph --method fastrp --dimension 128 (FastRP, paper defaults)
  export     cli_graph.py export_embeddings (checkpoint -> embeddings.h5)
  faiss      cli_graph.py build_faiss (Flat, inner product)
  mine       cli_triples.py get_knn_triples, 10k queries, k = 4000 (--ann_backend exact; bench_triples.py
             compares it with faiss)
  metadata   cli_triples.py get_metadata (title + abstract of the 10k query papers, streaming all shards)
  tokenize   tokenizer of the packaged encoder over 2,000 papers (title [SEP] abstract, 256 tokens)
  embed      cli_pipeline.py embed, 1,000 papers, packaged MiniLM-L6 encoder, 256 tokens
  train      cli_pipeline.py train, 12 steps of batch 8 triples, same encoder

tokenize / embed / train do not depend on the corpus size; they run once and are reported per paper
(per triple). Results accumulate in ``RESULTS`` (json, one record per stage and size; rerunning a
size replaces its records), so sizes can be run separately; ``--report`` writes the table, fits and
plots from it.

    .venv/bin/python benchmarks/bench_scale.py --sizes 10000,100000 [--stages ...] [--results docs/scale/results.json]
    .venv/bin/python benchmarks/bench_scale.py --sizes 1000000 --stages extract,import,faiss,mine,metadata \\
        --random_embeddings --queries 2000
    .venv/bin/python benchmarks/bench_scale.py --report
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

SHARD_PAPERS = 10_000
MEAN_REFERENCES = 10
QUERIES = 10_000
K_HARD = 4000
ALL_STAGES = ("extract", "import", "import_pbg", "epoch", "prone", "fastrp", "export", "faiss", "mine", "metadata")
EMBEDDER_STAGES = ("prone", "fastrp")  # cli_graph.py embed_graph --method <stage> (issue 30)
ONCE_STAGES = ("tokenize", "embed", "train")
DEFAULT_RESULTS = REPO_ROOT / "docs" / "scale" / "results.json"
# S2ORC at the paper's scale (SciNCL §4.1 / Table 5): papers, train edges, index rows, queries.
S2ORC = {"papers": 52_600_000, "edges": 463_000_000, "index": 680_967, "queries": 680_967, "triples": 684_100}


# ------------------------------------------------------------------------------------ corpus

def generate_corpus(papers: int, root: Path, seed: int = 0) -> Path:
    """Write (once) the synthetic S2ORC metadata shards of ``papers`` papers; returns the shard dir."""
    import orjson
    from isal import igzip

    meta = root / "metadata"
    done = root / "corpus.json"
    if done.exists():
        return meta
    shutil.rmtree(root, ignore_errors=True)
    meta.mkdir(parents=True)
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    ids = np.char.mod("%d", 100_000_000 + 37 * np.arange(papers)).astype(object)
    popularity = rng.permutation(papers)
    n_refs = rng.poisson(MEAN_REFERENCES, papers)
    vocab = np.array([f"w{i}" for i in range(20_000)], dtype=object)
    edges = 0
    for shard, start in enumerate(range(0, papers, SHARD_PAPERS)):
        stop = min(start + SHARD_PAPERS, papers)
        counts = n_refs[start:stop]
        cited = popularity[(papers * rng.random(int(counts.sum())) ** 2).astype(np.int64)]
        offsets = np.concatenate([[0], np.cumsum(counts)])
        words = vocab[np.minimum(rng.zipf(1.3, (stop - start) * 260), len(vocab)) - 1]
        lengths = rng.integers(150, 251, stop - start)
        lines = []
        for j, i in enumerate(range(start, stop)):
            refs = cited[offsets[j]:offsets[j + 1]]
            refs = ids[refs[refs != i]].tolist()
            edges += len(set(refs))
            w = words[j * 260: j * 260 + 10 + lengths[j]]
            lines.append(orjson.dumps({
                "paper_id": ids[i], "title": " ".join(w[:10]), "abstract": " ".join(w[10:]),
                "year": 1990 + 30 * i // papers, "mag_field_of_study": ["Computer Science"],
                "outbound_citations": refs, "inbound_citations": [], "has_outbound_citations": bool(refs)}))
        with igzip.open(meta / f"metadata_{shard}.jsonl.gz", "wb", compresslevel=1) as fh:
            fh.write(b"\n".join(lines) + b"\n")
    done.write_text(json.dumps({"papers": papers, "edges": edges, "seed": seed,
                                "seconds": round(time.perf_counter() - started, 1)}))
    return meta


# ------------------------------------------------------------------------------------ stages

def run(cmd: List[str], log: Path, env: Optional[dict] = None) -> Dict[str, float]:
    """Run ``cmd`` (cwd = repo root): wall s, CPU s (process + reaped workers), peak RSS MiB of its tree.

    RSS is sampled every 50 ms over the process and its children (``ru_maxrss`` would include the
    memory of this process at fork time).
    """
    from benchmarks.proc_stats import run_sampled

    done = run_sampled(cmd, log, env)
    return {"wall_s": round(done["wall_s"], 3), "cpu_s": round(done["cpu_s"], 3),
            "peak_rss_mib": round(done["peak_rss"] / 2 ** 20, 1)}


def stage_commands(n: int, meta: Path, work: Path, queries_count: int = QUERIES) -> Dict[str, List[str]]:
    """The CLI command of every corpus-size stage for a corpus of ``n`` papers."""
    py = sys.executable
    cit, bg, export = work / "citations", work / "biggraph", work / "export"
    train, test = cit / "citations.train.tsv", cit / "citations.test.tsv"
    queries = work / "query_ids.json"
    return {
        "extract": [py, "cli_s2orc.py", "get_citations", str(meta), str(cit), "--test_ratio", "0.01", "--seed", "0",
                    "--workers", "2", "--override"],
        "import": [py, "cli_graph.py", "import_edges", "s2orc_128d_dot", str(train), str(test), "--output_dir", str(bg),
                   "--override"],
        "import_pbg": [py, "cli_graph.py", "import_edges", "s2orc_128d_dot", str(train), str(test), "--output_dir",
                       str(work / "biggraph_pbg"), "--importer", "pbg", "--override"],
        "epoch": [py, "cli_graph.py", "train_biggraph", "s2orc_128d_dot", "--output_dir", str(bg), "--override",
                  "--random_baseline", "False", "-p", "num_epochs=1", "workers=2"],
        **{method: [py, "cli_graph.py", "embed_graph", str(train), str(work / f"embed_{method}"), "--method", method,
                    "--config", "s2orc_128d_dot", "--dimension", "128", "--override"] for method in EMBEDDER_STAGES},
        "export": [py, "cli_graph.py", "export_embeddings", str(bg / "checkpoints"), str(export)],
        "faiss": [py, "cli_graph.py", "build_faiss", str(export / "embeddings.h5"), str(work / "index.faiss"),
                  "--string_factory", "Flat", "--override"],
        "mine": [py, "cli_triples.py", "get_knn_triples", str(work / "triples.csv"),
                 "--graph_paper_ids_path", str(export / "entity_names_paper_id_0.json"),
                 "--graph_embeddings_path", str(export / "embeddings.h5"), "--ann_index_path", str(work / "index.faiss"),
                 "--query_papers", str(min(queries_count, n)), "--hard_negatives_k_min", str(K_HARD - 2),
                 "--hard_negatives_k_max", str(K_HARD), "--ann_backend", "exact", "--override"],
        # the papers of the mined triples (as the pipeline does), else the query ids
        "metadata": [py, "cli_triples.py", "get_metadata",
                     str(work / "triples.csv") if (work / "triples.csv").exists() else str(queries),
                     str(work / "metadata.jsonl"),
                     "--s2orc_metadata_dir", str(meta), "--workers", "2", "--override"],
    }


def write_random_export(work: Path, dim: int = 128, seed: int = 0) -> None:
    """Random ``embeddings.h5`` + ``entity_names_paper_id_0.json`` for the imported entities.

    For sizes where the BigGraph epoch is not run (``--random_embeddings``): the export, index
    build and mining times do not depend on the embedding values, only on their shape.
    """
    from scincl.io import read_id_list, write_embeddings_h5, write_id_list

    graph = work / "biggraph" / "graph"
    names = [n for p in sorted(graph.glob("entity_names_paper_id_*.json"), key=lambda f: int(f.stem.rsplit("_", 1)[1]))
             for n in read_id_list(p)]
    export = work / "export"
    export.mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    write_embeddings_h5(export / "embeddings.h5", rng.standard_normal((len(names), dim), dtype=np.float32))
    write_id_list(export / "entity_names_paper_id_0.json", names)


def write_query_ids(meta: Path, work: Path, n: int) -> None:
    """The ids of the metadata stage: every (n / QUERIES)-th paper, QUERIES of them."""
    step = max(1, n // QUERIES)
    ids = [str(100_000_000 + 37 * i) for i in range(0, n, step)][:QUERIES]
    (work / "query_ids.json").write_text(json.dumps(ids))


def once_commands(meta_jsonl: Path, triples: Path, work: Path) -> Dict[str, List[str]]:
    """Size-independent stages: tokenisation (library call), embedding and training (CLIs)."""
    from scincl.model.encoder import packaged_minilm_path

    py, model = sys.executable, packaged_minilm_path()
    sample = work / "sample_metadata.jsonl"
    lines = meta_jsonl.read_text().splitlines()
    sample.write_text("\n".join(lines[:2000]) + "\n")
    tokenize = ("import json, sys\n"
                "from transformers import AutoTokenizer\n"
                f"tok = AutoTokenizer.from_pretrained({model!r})\n"
                f"papers = [json.loads(l) for l in open({str(sample)!r})]\n"
                "texts = [p['title'] + tok.sep_token + p['abstract'] for p in papers]\n"
                "import time\n"
                "w, c = time.perf_counter(), time.process_time()\n"
                "for i in range(0, len(texts), 256):\n"
                "    tok(texts[i:i + 256], truncation=True, max_length=256)\n"
                f"open({str(work / 'tokenize_inner.json')!r}, 'w').write(json.dumps("
                "{'wall_s': time.perf_counter() - w, 'cpu_s': time.process_time() - c}))\n")
    small = work / "sample_1000.jsonl"
    small.write_text("\n".join(lines[:1000]) + "\n")
    return {
        "tokenize": [py, "-c", tokenize],
        "embed": [py, "cli_pipeline.py", "embed", model, str(small), str(work / "emb.jsonl"),
                  "--max_sequence_length", "256", "--batch_size", "32", "--device", "cpu", "--override"],
        "train": [py, "cli_pipeline.py", "train", str(triples), str(meta_jsonl), str(work / "model"),
                  "--base_model_name_or_path", model, "--max_sequence_length", "256",
                  "--max_steps", str(TRAIN_STEPS), "--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "1",
                  "--save_strategy", "no", "--override", "--report_to", "none"],
    }


TRAIN_STEPS = 12  # x batch 8 triples (3 texts each, forward + backward): ~100 CPU-s with MiniLM-L6 at 256 tokens
ONCE_UNITS = {"tokenize": 2000, "embed": 1000, "train": TRAIN_STEPS * 8}  # papers, papers, triples


# ------------------------------------------------------------------------------------ report

def load(path: Path) -> List[dict]:
    return json.loads(path.read_text()) if path.exists() else []


def save(path: Path, records: List[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--stages", default=",".join(ALL_STAGES + ONCE_STAGES))
    parser.add_argument("--results", default=str(DEFAULT_RESULTS))
    parser.add_argument("--queries", type=int, default=QUERIES, help="query papers of the mining stage")
    parser.add_argument("--random_embeddings", action="store_true",
                        help="no epoch/export: random embeddings of the imported entities for faiss and mining")
    parser.add_argument("--cache", default=os.environ.get("SCINCL_BENCH_CACHE",
                                                           str(Path.home() / ".cache" / "scincl" / "bench")))
    parser.add_argument("--report", action="store_true", help="only write the table and plots from --results")
    args = parser.parse_args()
    results_path = Path(args.results)
    if args.report:
        from benchmarks.scale_report import write_report

        write_report(load(results_path), results_path.parent)
        return
    stages = [s for s in args.stages.split(",") if s]
    for n in [int(s) for s in args.sizes.split(",") if s]:
        root = Path(args.cache) / f"scale_{n}"
        meta = generate_corpus(n, root)
        corpus = json.loads((root / "corpus.json").read_text())
        work = root / "work"
        work.mkdir(exist_ok=True)
        write_query_ids(meta, work, n)
        edges = None
        for stage in [s for s in ALL_STAGES if s in stages]:
            if stage == "faiss" and args.random_embeddings:
                write_random_export(work)
            measured = run(stage_commands(n, meta, work, args.queries)[stage], work / "log.txt")
            stats_path = work / "citations" / "citations.stats.json"
            if edges is None and stats_path.exists():
                edges = json.loads(stats_path.read_text())["edges_by_split"].get("train")
            record = {"stage": stage, "papers": n, "edges": edges or corpus["edges"],
                      "queries": min(args.queries, n), "load_avg_1min": round(os.getloadavg()[0], 1), **measured}
            if stage in ("import", "import_pbg"):  # the import itself, without the CLI's start-up
                manifest = work / ("biggraph" if stage == "import" else "biggraph_pbg") / "graph" / "import_manifest.json"
                record["inner_s"] = json.loads(manifest.read_text())["seconds"]
            if stage in EMBEDDER_STAGES:  # the embedding itself, without the CLI's start-up and file writing
                run_record = json.loads((work / f"embed_{stage}" / "embed_graph_run.json").read_text())
                record.update(inner_s=run_record["embed_seconds"], inner_cpu_s=run_record["embed_cpu_seconds"])
            print(json.dumps(record), flush=True)
            records = [r for r in load(results_path) if not (r["stage"] == stage and r["papers"] == n)]
            save(results_path, records + [record])
        once = [s for s in ONCE_STAGES if s in stages]
        if once and (work / "metadata.jsonl").exists() and (work / "triples.csv").exists():
            for stage, cmd in once_commands(work / "metadata.jsonl", work / "triples.csv", work).items():
                if stage not in once:
                    continue
                measured = run(cmd, work / "log.txt")
                if stage == "tokenize":  # the tokenizer calls only, without importing transformers
                    inner = json.loads((work / "tokenize_inner.json").read_text())
                    measured.update(startup_wall_s=measured["wall_s"] - inner["wall_s"],
                                    startup_cpu_s=measured["cpu_s"] - inner["cpu_s"],
                                    wall_s=round(inner["wall_s"], 3), cpu_s=round(inner["cpu_s"], 3))
                record = {"stage": stage, "papers": None, "units": ONCE_UNITS[stage],
                          "load_avg_1min": round(os.getloadavg()[0], 1), **measured}
                print(json.dumps(record), flush=True)
                records = [r for r in load(results_path) if r["stage"] != stage]
                save(results_path, records + [record])
            once = []


if __name__ == "__main__":
    main()
