"""``SCINCL_KILL_AT`` kill points: SIGKILL exactly at the named point, a no-op everywhere else."""
from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.conftest import run_front_end

SCRIPT = ("from scincl.faults import kill_point\n"
          "for name in ('a:before', 'a:after', 'b:before'):\n"
          "    kill_point(name)\n"
          "    print('passed', name, flush=True)\n")


@pytest.mark.parametrize("kill_at, passed, killed", [
    (None, ["a:before", "a:after", "b:before"], False),
    ("a:after", ["a:before"], True),
    ("x:before, b:before", ["a:before", "a:after"], True),  # a list: the first point reached wins
    ("a", ["a:before", "a:after", "b:before"], False),  # names match exactly, not by prefix
])
def test_kill_point_sigkills_at_the_named_point_only(kill_at, passed, killed):
    done = run_front_end("-c", SCRIPT, kill_at=kill_at, timeout=60)
    assert [line.split(" ", 1)[1] for line in done.stdout.splitlines()] == passed
    assert done.returncode == (-signal.SIGKILL if killed else 0), done.stderr
    assert ("SIGKILL at" in done.stderr) == killed


# --------------------------------------------------------------------------------------------------
# Malformed inputs (issue 16): each row is a command as a user types it, run through the same
# `run_cli` entry point as the `cli_*.py` front ends (in-process: fire + torch imports cost seconds per
# process); the rows marked `subprocess` run the real front end. Each row checks the exit code, the
# one error line (substring), no traceback and that the command left no output behind.
# --------------------------------------------------------------------------------------------------
import contextlib  # noqa: E402 - the kill-point tests above need none of this
import gzip  # noqa: E402
import importlib  # noqa: E402
import io as std_io  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable, Optional, Tuple  # noqa: E402

import numpy as np  # noqa: E402

GRAPH_PAPERS = 300  # graph rows of the fault world (small: every row of the table builds on it)


@dataclass(frozen=True)
class Fault:
    """One malformed input: ``command`` as typed (``{w}``: the shared world, ``{c}``: this case's dir)."""

    name: str
    command: str
    message: str  # substring of the error line (or, for a counted skip, of its log line)
    code: int = 2  # 2: a clean error; 0: a counted skip
    setup: Optional[Callable[[Path], None]] = None  # writes the malformed input into the case dir
    absent: Tuple[str, ...] = ()  # outputs that must not exist afterwards
    subprocess: bool = False  # run the real front end in a new process


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _graph(case: Path, ids, matrix) -> None:
    from scincl.io import write_embeddings_h5, write_id_list

    write_id_list(case / "entity_names_paper_id_0.json", ids)
    write_embeddings_h5(case / "embeddings.h5", np.asarray(matrix, dtype=np.float32))


def _graph_with_nan(case: Path) -> None:
    matrix = np.random.default_rng(1).normal(size=(GRAPH_PAPERS, 8))
    matrix[137, 3] = np.nan
    matrix[200] = np.inf
    _graph(case, [f"p{i}" for i in range(GRAPH_PAPERS)], matrix)


def _graph_with_duplicate_id(case: Path) -> None:
    ids = [f"p{i}" for i in range(GRAPH_PAPERS)]
    ids[42] = "p7"
    _graph(case, ids, np.random.default_rng(1).normal(size=(GRAPH_PAPERS, 8)))


def _graph_with_missing_rows(case: Path) -> None:
    _graph(case, [f"p{i}" for i in range(GRAPH_PAPERS)], np.ones((GRAPH_PAPERS - 1, 8)))
    _write(case / "entity_names_paper_id_0.json", json.dumps([f"p{i}" for i in range(GRAPH_PAPERS)]))


def _emb_lines(case: Path, edit: Callable[[list], list]) -> None:
    lines = (WORLD_FILES["embeddings"]).read_text().splitlines()
    _write(case / "emb.jsonl", "\n".join(edit(lines)) + "\n")


def _dup_embedding(lines):
    return lines + [lines[3]]


def _nan_embedding(lines):
    record = json.loads(lines[5])
    record["embedding"][0] = float("nan")
    return lines[:5] + [json.dumps(record)] + lines[6:]  # json.dumps writes NaN, as Python's json does


def _short_embedding(lines):
    record = json.loads(lines[2])
    record["embedding"] = record["embedding"][:3]
    return lines[:2] + [json.dumps(record)] + lines[3:]


def _scidocs_copy(case: Path, edit: Callable[[Path], None]) -> None:
    shutil.copytree(WORLD_FILES["scidocs"], case / "scidocs")
    edit(case / "scidocs")


def _dup_qrel(scidocs: Path) -> None:
    qrel = scidocs / "cite" / "test.qrel"
    first = qrel.read_text().splitlines()[0].split()
    qrel.write_text(qrel.read_text() + f"{first[0]} 0 {first[2]} {1 - int(first[3])}\n")


def _dup_mag_label(scidocs: Path) -> None:
    labels = scidocs / "mag" / "test.csv"
    lines = labels.read_text().splitlines()
    labels.write_text("\n".join(lines + [lines[1]]) + "\n")


def _bad_qrel_row(scidocs: Path) -> None:
    qrel = scidocs / "cite" / "test.qrel"
    qrel.write_text("q1 0 p1\n" + qrel.read_text())


def _toy_copy(case: Path, triples: Optional[str] = None, metadata_edit: Optional[Callable[[list], list]] = None):
    toy = WORLD_FILES["toy"]
    _write(case / "train.csv", triples if triples is not None else (toy / "train.csv").read_text())
    lines = (toy / "metadata.jsonl").read_text().splitlines()
    _write(case / "metadata.jsonl", "\n".join(metadata_edit(lines) if metadata_edit else lines) + "\n")


def _corpus_ids(n: int) -> str:
    """The first ``n`` paper ids of the world's corpus, comma-separated."""
    shard = sorted((WORLD_FILES["corpus"]).glob("*.jsonl.gz"))[0]
    lines = gzip.open(shard, "rt").read().splitlines()[:n]
    return ",".join(json.loads(line)["paper_id"] for line in lines)


def _shard_with_bad_line(case: Path) -> None:
    shard = sorted((WORLD_FILES["corpus"]).glob("*.jsonl.gz"))[0]
    lines = gzip.open(shard, "rt").read().splitlines()
    (case / "metadata").mkdir(parents=True)
    with gzip.open(case / "metadata" / shard.name, "wt") as fh:
        fh.write("\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n")


TRAIN = "cli_pipeline.py train {w}/toy/train.csv {w}/toy/metadata.jsonl {c}/model --base_model_name_or_path {w}/toy/bert"
CASE_TRAIN = "cli_pipeline.py train {c}/train.csv {c}/metadata.jsonl {c}/model --base_model_name_or_path {w}/toy/bert"
EVALUATE = "cli_pipeline.py evaluate {w}/scidocs {c}/eval --embeddings"
KNN_TRIPLES = ("cli_triples.py get_knn_triples {c}/triples.csv {w}/graph/entity_names_paper_id_0.json "
               "{w}/graph/embeddings.h5 --ann_index_path {c}/index.faiss --easy_positives_k_min 5 "
               "--easy_positives_k_max 10 --hard_negatives_k_min 100 --hard_negatives_k_max 102")
CASE_KNN_TRIPLES = ("cli_triples.py get_knn_triples {c}/triples.csv {c}/entity_names_paper_id_0.json {c}/embeddings.h5 "
                    "--ann_index_path {c}/index.faiss --easy_positives_k_min 5 --easy_positives_k_max 10 "
                    "--hard_negatives_k_min 100 --hard_negatives_k_max 102")
RUN_SPECTER = "cli_pipeline.py run_specter {c}/run"
TRIPLES_HEADER = "query_paper_id,positive_id,negative_id\n"

FAULTS = [
    # --- train: flag values (issue: lr 0 = a silent base-model copy; lr < 0 and batch 0/-4 = tracebacks)
    Fault("train lr 0", TRAIN + " --learning_rate 0", "--learning_rate 0: must be > 0", absent=("model",),
          subprocess=True),
    Fault("train lr negative", TRAIN + " --learning_rate -1e-3", "--learning_rate -0.001: must be > 0", absent=("model",)),
    Fault("train batch 0", TRAIN + " --per_device_train_batch_size 0", "--per_device_train_batch_size 0: must be >= 1",
          absent=("model",)),
    Fault("train batch -4", TRAIN + " --per_device_train_batch_size -4",
          "--per_device_train_batch_size -4: must be >= 1", absent=("model",), subprocess=True),
    Fault("train batch not a number", TRAIN + " --per_device_train_batch_size eight",
          "--per_device_train_batch_size: expected an integer, got 'eight'", absent=("model",)),
    Fault("train 0 epochs", TRAIN + " --num_train_epochs 0", "--num_train_epochs 0: no training step would run",
          absent=("model",)),
    Fault("train grad accumulation 0", TRAIN + " --gradient_accumulation_steps 0",
          "--gradient_accumulation_steps 0: must be >= 1", absent=("model",)),
    Fault("train warmup ratio 2", TRAIN + " --warmup_ratio 2", "--warmup_ratio 2: must be >= 0 and <= 1",
          absent=("model",)),
    Fault("train max length 0", TRAIN + " --max_sequence_length 0", "--max_sequence_length 0: must be >= 1",
          absent=("model",)),
    Fault("train misspelled training flag", TRAIN + " --learning_rat 1e-5", "--learning_rat", absent=("model",)),
    Fault("train unknown loss", TRAIN + " --loss hinge", "unknown --loss 'hinge'", absent=("model",)),
    Fault("train unknown pooling", TRAIN + " --pooling_strategy max", "--pooling_strategy 'max': choose one of cls, mean",
          absent=("model",)),
    Fault("train output under a file", TRAIN.replace("{c}/model", "{w}/toy/train.csv/model"),
          "train.csv is a file, not a directory"),
    # --- train: bad data
    Fault("train triples missing", CASE_TRAIN.replace("{c}/train.csv", "{c}/nope.csv"), "nope.csv: file not found",
          setup=lambda c: _toy_copy(c), absent=("model",)),
    Fault("train triples empty", CASE_TRAIN, "empty triples file", setup=lambda c: _toy_copy(c, triples=""),
          absent=("model",)),
    Fault("train triples wrong header", CASE_TRAIN, "expected header query_paper_id,positive_id,negative_id",
          setup=lambda c: _toy_copy(c, triples="a,b,c\nx,y,z\n"), absent=("model",)),
    Fault("train triples 2 columns", CASE_TRAIN, "train.csv:3: expected 3 columns, got 2",
          setup=lambda c: _toy_copy(c, triples=TRIPLES_HEADER + "a,b,c\nd,e\n"), absent=("model",)),
    Fault("train every paper missing from metadata", CASE_TRAIN,
          "no training rows left: all 2 triplets reference papers missing from the metadata (6 of 6 papers missing",
          setup=lambda c: _toy_copy(c, triples=TRIPLES_HEADER + "x1,x2,x3\nx4,x5,x6\n"), absent=("model",),
          subprocess=True),
    Fault("train some papers missing from metadata (counted skip)", CASE_TRAIN + " --max_steps 1",
          "train: 1 papers missing from the metadata (e.g. ghost); 1 of 73 rows dropped", code=0,
          setup=lambda c: _toy_copy(c, triples=(WORLD_FILES["toy"] / "train.csv").read_text() + "graphs-0,graphs-1,ghost\n")),
    Fault("train metadata duplicate id", CASE_TRAIN, "field 'paper_id': duplicate paper_id",
          setup=lambda c: _toy_copy(c, metadata_edit=lambda lines: lines + [lines[0]]), absent=("model",)),
    Fault("train metadata malformed line", CASE_TRAIN, "metadata.jsonl:2: malformed JSON",
          setup=lambda c: _toy_copy(c, metadata_edit=lambda lines: lines[:1] + ["{oops"] + lines[1:]),
          absent=("model",)),
    Fault("train metadata missing", CASE_TRAIN.replace("{c}/metadata.jsonl", "{c}/none.jsonl"),
          "none.jsonl: file not found", setup=lambda c: _toy_copy(c), absent=("model",)),
    # --- evaluate
    Fault("evaluate embeddings duplicate id", EVALUATE + " {c}/emb.jsonl", "field 'paper_id': duplicate paper_id",
          setup=lambda c: _emb_lines(c, _dup_embedding), absent=("eval/results.json",)),
    Fault("evaluate embeddings NaN", EVALUATE + " {c}/emb.jsonl", "emb.jsonl:6: malformed JSON",
          setup=lambda c: _emb_lines(c, _nan_embedding), absent=("eval/results.json",)),
    Fault("evaluate embeddings wrong dimension", EVALUATE + " {c}/emb.jsonl", "emb.jsonl:3, field 'embedding': "
          "embedding dimension 3 differs", setup=lambda c: _emb_lines(c, _short_embedding),
          absent=("eval/results.json",)),
    Fault("evaluate embeddings missing", EVALUATE + " {c}/none.jsonl", "none.jsonl: file not found",
          absent=("eval/results.json",)),
    Fault("evaluate embeddings empty", EVALUATE + " {c}/emb.jsonl", "no embeddings in file",
          setup=lambda c: _write(c / "emb.jsonl", ""), absent=("eval/results.json",)),
    Fault("evaluate qrel duplicate", "cli_pipeline.py evaluate {c}/scidocs {c}/eval --embeddings {w}/emb.jsonl",
          "duplicate qrel entry", setup=lambda c: _scidocs_copy(c, _dup_qrel), absent=("eval/results.json",)),
    Fault("evaluate qrel 3 fields", "cli_pipeline.py evaluate {c}/scidocs {c}/eval --embeddings {w}/emb.jsonl",
          "test.qrel:1: expected 4 fields", setup=lambda c: _scidocs_copy(c, _bad_qrel_row),
          absent=("eval/results.json",)),
    Fault("evaluate MAG label duplicate", "cli_pipeline.py evaluate {c}/scidocs {c}/eval --embeddings {w}/emb.jsonl",
          "field 'pid': duplicate pid", setup=lambda c: _scidocs_copy(c, _dup_mag_label),
          absent=("eval/results.json",)),
    Fault("evaluate scidocs dir missing", "cli_pipeline.py evaluate {c}/none {c}/eval --embeddings {w}/emb.jsonl",
          "SciDocs directory not found", absent=("eval",)),
    Fault("evaluate batch 0", EVALUATE + " {w}/emb.jsonl --batch_size 0", "--batch_size 0: must be >= 1",
          absent=("eval",)),
    Fault("evaluate misspelled flag", EVALUATE + " {w}/emb.jsonl --val_or_tst val", "did you mean --val_or_test?",
          absent=("eval",)),
    # --- build_faiss / get_knn (issue: --do_normalise built an un-normalised index, then fire exited 2)
    Fault("build_faiss misspelled flag", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss "
          "--do_normalise", "--do_normalise: unknown flag for build_faiss (did you mean --do_normalize?)",
          absent=("index.faiss",), subprocess=True),
    Fault("build_faiss NaN rows", "cli_graph.py build_faiss {c}/embeddings.h5 {c}/index.faiss",
          "embeddings.h5: 2 embedding rows hold NaN or infinite values, the first is row 137",
          setup=_graph_with_nan, absent=("index.faiss",)),
    Fault("build_faiss duplicate id (h5 rows)", "cli_graph.py build_faiss {c}/embeddings.h5 {c}/index.faiss",
          "item 42: duplicate paper id 'p7' (first at item 7)", setup=_graph_with_duplicate_id,
          absent=("index.faiss",)),
    Fault("build_faiss ids vs rows", "cli_graph.py build_faiss {c}/embeddings.h5 {c}/index.faiss",
          f"{GRAPH_PAPERS - 1} embedding rows but {GRAPH_PAPERS} paper ids", setup=_graph_with_missing_rows,
          absent=("index.faiss",)),
    Fault("build_faiss embeddings missing", "cli_graph.py build_faiss {c}/none.h5 {c}/index.faiss "
          "--paper_ids {w}/graph/entity_names_paper_id_0.json", "none.h5", absent=("index.faiss",)),
    Fault("build_faiss not an h5 file", "cli_graph.py build_faiss {c}/embeddings.h5 {c}/index.faiss "
          "--paper_ids {w}/graph/entity_names_paper_id_0.json", "not a readable h5 file",
          setup=lambda c: _write(c / "embeddings.h5", "hello"), absent=("index.faiss",)),
    Fault("build_faiss ids not a list", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss "
          "--paper_ids {c}/ids.json", "expected a JSON list of paper ids, got dict",
          setup=lambda c: _write(c / "ids.json", '{"a": 1}'), absent=("index.faiss",)),
    Fault("build_faiss unknown include ids (counted skip)", "cli_graph.py build_faiss {w}/graph/embeddings.h5 "
          "{c}/index.faiss --include_paper_ids {c}/ids.json --allow_unknown_ids",
          "1 of 3 include_paper_ids have no embedding", code=0,
          setup=lambda c: _write(c / "ids.json", '["p1", "p2", "ghost"]')),
    Fault("build_faiss unknown include ids", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss "
          "--include_paper_ids {c}/ids.json", "pass --allow_unknown_ids to skip them",
          setup=lambda c: _write(c / "ids.json", '["p1", "p2", "ghost"]'), absent=("index.faiss",)),
    Fault("build_faiss duplicate include id", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss "
          "--include_paper_ids {c}/ids.json", "ids.json: item 2: duplicate paper id 'p1' (first at item 0)",
          setup=lambda c: _write(c / "ids.json", '["p1", "p2", "p1"]'), absent=("index.faiss",)),
    Fault("build_faiss batch 0", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss --batch_size 0",
          "--batch_size 0: must be >= 1", absent=("index.faiss",)),
    Fault("build_faiss bad factory", "cli_graph.py build_faiss {w}/graph/embeddings.h5 {c}/index.faiss "
          "--string_factory Flatt", "Flatt", absent=("index.faiss",)),
    Fault("build_faiss output under a file", "cli_graph.py build_faiss {w}/graph/embeddings.h5 "
          "{w}/toy/train.csv/index.faiss", "train.csv is a file, not a directory"),
    Fault("get_knn k 0", "cli_graph.py get_knn {w}/graph/index.faiss {c}/knn --k 0", "--k 0: must be >= 1",
          absent=("knn",)),
    Fault("get_knn k abc", "cli_graph.py get_knn {w}/graph/index.faiss {c}/knn --k abc",
          "--k: expected an integer, got 'abc'", absent=("knn",)),
    Fault("get_knn k beyond index", "cli_graph.py get_knn {w}/graph/index.faiss {c}/knn --k 5000",
          "larger than the index", absent=("knn",), subprocess=True),  # imports faiss: its loader stays quiet
    # --- get_knn_triples (issue: NaN graph rows surfaced as "queries lacked enough candidates")
    Fault("knn triples NaN graph rows", CASE_KNN_TRIPLES, "embeddings.h5: 2 embedding rows hold NaN or infinite "
          "values, the first is row 137", setup=_graph_with_nan, absent=("triples.csv", "index.faiss")),
    Fault("knn triples duplicate graph id", CASE_KNN_TRIPLES, "duplicate paper id 'p7'",
          setup=_graph_with_duplicate_id, absent=("triples.csv", "index.faiss")),
    Fault("knn triples k_max abc", KNN_TRIPLES + " --hard_negatives_k_max abc",
          "--hard_negatives_k_max: expected an integer, got 'abc'", absent=("triples.csv", "index.faiss")),
    Fault("knn triples k_min >= k_max", KNN_TRIPLES.replace("--easy_positives_k_max 10", "--easy_positives_k_max 5"),
          "--easy_positives_k_min 5 / --easy_positives_k_max 5: need k_min < k_max",
          absent=("triples.csv", "index.faiss")),
    Fault("knn triples k_max beyond corpus", KNN_TRIPLES.replace("--hard_negatives_k_max 102",
                                                                 "--hard_negatives_k_max 5000"), "5000",
          absent=("triples.csv",)),
    Fault("knn triples misspelled flag", KNN_TRIPLES + " --hard_negative_count 2",
          "--hard_negative_count: unknown flag for get_knn_triples (did you mean --hard_negatives_count?)",
          absent=("triples.csv", "index.faiss")),
    Fault("knn triples per query 0", KNN_TRIPLES + " --triples_per_query 0", "--triples_per_query 0: must be >= 1",
          absent=("triples.csv", "index.faiss")),
    Fault("knn triples negative count", KNN_TRIPLES + " --easy_negatives_count -1",
          "--easy_negatives_count -1: must be >= 0", absent=("triples.csv", "index.faiss")),
    Fault("knn triples query ids missing", KNN_TRIPLES + " --query_papers {c}/queries.json", "queries.json",
          absent=("triples.csv",)),
    # --- get_metadata / count_collisions
    Fault("get_metadata triples missing", "cli_triples.py get_metadata {c}/none.csv {c}/meta.jsonl "
          "--s2orc_metadata_dir {w}/corpus", "none.csv", absent=("meta.jsonl",)),
    Fault("get_metadata triples 4 columns", "cli_triples.py get_metadata {c}/t.csv {c}/meta.jsonl "
          "--s2orc_metadata_dir {w}/corpus", "t.csv:2: expected 3 columns, got 4",
          setup=lambda c: _write(c / "t.csv", TRIPLES_HEADER + "a,b,c,d\n"), absent=("meta.jsonl",)),
    Fault("get_metadata paper not in corpus (counted skip)", "cli_triples.py get_metadata {c}/t.csv {c}/meta.jsonl "
          "--s2orc_metadata_dir {w}/corpus", "metadata: 1 of 3 papers not found (e.g. ghost)", code=0,
          setup=lambda c: _write(c / "t.csv", TRIPLES_HEADER + _corpus_ids(2) + ",ghost\n")),
    Fault("get_metadata no paper in corpus", "cli_triples.py get_metadata {c}/t.csv {c}/meta.jsonl "
          "--s2orc_metadata_dir {w}/corpus", "none of the 3 papers was found",
          setup=lambda c: _write(c / "t.csv", TRIPLES_HEADER + "g1,g2,g3\n"), absent=("meta.jsonl",)),
    Fault("count_collisions no file", "cli_triples.py count_collisions", "give at least one triples file"),
    # --- cli_s2orc / cli_graph corpus commands (issue: a misspelled flag ran the whole job first)
    Fault("get_citations misspelled flag", "cli_s2orc.py get_citations {w}/corpus {c}/cit --test_ration 0.1",
          "--test_ration: unknown flag for get_citations (did you mean --test_ratio?)", absent=("cit",),
          subprocess=True),
    Fault("get_citations test ratio 1.5", "cli_s2orc.py get_citations {w}/corpus {c}/cit --test_ratio 1.5",
          "--test_ratio 1.5: must be >= 0 and < 1", absent=("cit",)),
    Fault("get_citations workers abc", "cli_s2orc.py get_citations {w}/corpus {c}/cit --workers abc",
          "--workers: expected an integer, got 'abc'", absent=("cit",)),
    Fault("get_citations corpus missing", "cli_s2orc.py get_citations {c}/none {c}/cit", "none", absent=("cit",)),
    Fault("get_citations malformed shard line (counted skip)", "cli_s2orc.py get_citations {c}/metadata {c}/cit",
          "skipped", code=0, setup=_shard_with_bad_line),
    Fault("make_demo papers 0", "cli_s2orc.py make_demo {c}/demo --papers 0", "--papers 0: must be >= 1",
          absent=("demo",)),
    Fault("make_demo papers abc", "cli_s2orc.py make_demo {c}/demo --papers abc",
          "--papers: expected an integer, got 'abc'", absent=("demo",)),
    Fault("train_biggraph misspelled flag", "cli_graph.py train_biggraph demo --train_edge {c}/e.tsv "
          "--output_dir {c}/bg", "--train_edge: unknown flag for train_biggraph (did you mean --train_edges?)",
          absent=("bg",)),
    Fault("train_biggraph edges missing", "cli_graph.py train_biggraph demo --train_edges {c}/none.tsv "
          "--output_dir {c}/bg", "none.tsv", absent=("bg/embeddings.h5",)),
    Fault("train_biggraph edges one column", "cli_graph.py train_biggraph demo --train_edges {c}/e.tsv "
          "--output_dir {c}/bg", "e.tsv:2", setup=lambda c: _write(c / "e.tsv", "a\tb\nc\n"),
          absent=("bg/embeddings.h5",)),
    Fault("make_edges_bidirectional one column", "cli_graph.py make_edges_bidirectional {c}/e.tsv {c}/out.tsv",
          "e.tsv:2", setup=lambda c: _write(c / "e.tsv", "a\tb\nc\n"), absent=("out.tsv",)),
    # --- run_specter: every flag checked before the demo, citations and graph stages run
    Fault("run_specter k_max abc", RUN_SPECTER + " --hard_negatives_k_max abc",
          "--hard_negatives_k_max: expected an integer, got 'abc'", absent=("run",), subprocess=True),
    Fault("run_specter lr 0", RUN_SPECTER + " --learning_rate 0", "--learning_rate 0: must be > 0", absent=("run",)),
    Fault("run_specter batch 0", RUN_SPECTER + " --per_device_train_batch_size 0",
          "--per_device_train_batch_size 0: must be >= 1", absent=("run",)),
    Fault("run_specter k_min >= k_max", RUN_SPECTER + " --hard_negatives_k_min 400 --hard_negatives_k_max 300",
          "--hard_negatives_k_min 400 / --hard_negatives_k_max 300: need", absent=("run",)),
    Fault("run_specter graph_limit", RUN_SPECTER + " --graph_limit everything", "--graph_limit 'everything': choose",
          absent=("run",)),
    Fault("run_specter query ratio 0", RUN_SPECTER + " --sample_queries_ratio 0",
          "--sample_queries_ratio 0: must be > 0 and <= 1", absent=("run",)),
    Fault("run_specter misspelled flag", RUN_SPECTER + " --hard_negative_k_max 300",
          "did you mean --hard_negatives_k_max?", absent=("run",)),
    Fault("run_specter output under a file", "cli_pipeline.py run_specter {w}/toy/train.csv/run",
          "train.csv is a file, not a directory"),
    Fault("run_specter scidocs dir missing", RUN_SPECTER + " --scidocs_dir {c}/none --corpus_dir {w}/corpus",
          "none: --scidocs_dir: no such file or directory", absent=("run",)),
    # --- embed
    Fault("embed batch 0", "cli_pipeline.py embed {w}/toy/bert {w}/toy/metadata.jsonl {c}/e.jsonl --batch_size 0",
          "--batch_size 0: must be >= 1", absent=("e.jsonl",)),
    Fault("embed metadata duplicate id", "cli_pipeline.py embed {w}/toy/bert {c}/metadata.jsonl {c}/e.jsonl",
          "duplicate paper_id", setup=lambda c: _toy_copy(c, metadata_edit=lambda lines: lines + [lines[4]]),
          absent=("e.jsonl",)),
]

WORLD_FILES = {}  # filled by the `fault_world` fixture (the setup functions read from it)


@pytest.fixture(scope="module")
def fault_world(tmp_path_factory, demo_corpus, toy_train_files):
    """Valid inputs every row builds on: toy triplets + tiny BERT, a small graph + its index, SciDocs + embeddings."""
    from scincl.knn.papers import build_faiss
    from scincl.io import write_embeddings_jsonl

    world = tmp_path_factory.mktemp("faults")
    (world / "toy").symlink_to(toy_train_files["root"])
    (world / "scidocs").symlink_to(demo_corpus.scidocs_dir)
    (world / "corpus").symlink_to(demo_corpus.corpus_dir)
    (world / "graph").mkdir()
    _graph(world / "graph", [f"p{i}" for i in range(GRAPH_PAPERS)],
           np.random.default_rng(0).normal(size=(GRAPH_PAPERS, 8)))
    build_faiss(str(world / "graph" / "embeddings.h5"), str(world / "graph" / "index.faiss"))
    ids = sorted({pid for name in ("paper_metadata_mag_mesh.json", "paper_metadata_view_cite_read.json")
                  for pid in json.loads((demo_corpus.scidocs_dir / name).read_text())})
    write_embeddings_jsonl(world / "emb.jsonl", ids, np.random.default_rng(0).normal(size=(len(ids), 8)))
    WORLD_FILES.update(toy=world / "toy", scidocs=world / "scidocs", corpus=world / "corpus",
                       embeddings=world / "emb.jsonl")
    return world


def _argv(fault: Fault, world: Path, case: Path):
    return shlex.split(fault.command.format(w=world, c=case))


def run_fault(fault: Fault, world: Path, case: Path) -> Tuple[int, str]:
    """Run one row as the user would: ``(exit code, stderr)`` (in-process through ``run_cli`` unless ``subprocess``)."""
    case.mkdir(parents=True, exist_ok=True)
    if fault.setup is not None:
        fault.setup(case)
    argv = _argv(fault, world, case)
    if fault.subprocess:
        done = run_front_end(*argv, timeout=300)
        return done.returncode, done.stderr
    from scincl.cli import run_cli

    front_end = importlib.import_module(argv[0][:-len(".py")])
    args = argv[1:]  # run_cli gathers a graph command's -p overrides itself
    stderr, records = std_io.StringIO(), _Records()
    logging.getLogger().addHandler(records)
    old_argv, code = sys.argv, 0
    sys.argv = [argv[0], *args]
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(std_io.StringIO()):
            run_cli(front_end.COMMANDS)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old_argv
        logging.getLogger().removeHandler(records)
    return code, stderr.getvalue() + "".join(records.lines)


class _Records(logging.Handler):
    """Log lines of an in-process run (its counted-skip lines), as the front end would print them."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}\n")


def error_lines(stderr: str):
    return [line for line in stderr.splitlines() if ": error: " in line]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_malformed_input_gives_one_clean_line_and_no_partial_output(fault, fault_world, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    code, stderr = run_fault(fault, fault_world, tmp_path / "case")
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "ModuleNotFoundError" not in stderr  # faiss's loader lines (issue 16) stay silent
    assert code == fault.code, stderr[-3000:]
    if fault.code == 0:
        assert fault.message in stderr, stderr[-3000:]
    else:
        assert len(error_lines(stderr)) == 1, stderr[-3000:]
        assert fault.message in error_lines(stderr)[0], stderr[-3000:]
    for name in fault.absent:
        assert not (tmp_path / "case" / name).exists(), f"{name} left behind"
    leftovers = [p.name for p in (tmp_path / "case").rglob("*.tmp")]
    assert not leftovers, leftovers  # no half-written temp file of an atomic write


FILE_SIZE_LIMIT = 1 << 16  # bytes: the citations TSV of the demo corpus is larger

WRITE_FAILS = f"""
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_SIZE_LIMIT}, {FILE_SIZE_LIMIT}))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_failed_write_names_the_output_and_leaves_no_partial_file(fault_world, tmp_path):
    """Disk full (here: a real write failure from a file-size limit) says which output, not just why."""
    out = tmp_path / "cit"
    done = run_front_end("-c", WRITE_FAILS, "cli_s2orc.py", "get_citations", fault_world / "corpus", out,
                         "--workers", "1", timeout=120)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2
    assert error_lines(done.stderr) == [f"cli_s2orc.py: error: File too large: {out / 'citations.tsv'}"]
    assert sorted(p.name for p in out.iterdir()) == []  # neither the TSV nor its temp file
