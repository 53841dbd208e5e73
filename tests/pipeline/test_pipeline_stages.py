"""Stage orchestration: order, reuse, skip, override, interrupted directories, manifests."""
from __future__ import annotations

import hashlib
import logging
import sys
from pathlib import Path

import pytest

from scincl.errors import InputError
from scincl.io import atomic_open, read_json, write_json
from scincl.pipeline.runner import Manifest, Stage, run_stages


def _build(tmp_path: Path, calls: list, fail_in: str | None = None):
    """Three real stages: numbers -> squares (file) -> report dir (directory output)."""
    source = tmp_path / "source.txt"
    if not source.exists():
        source.write_text("1\n2\n3\n")
    numbers = tmp_path / "numbers.txt"
    squares = tmp_path / "squares" / "squares.txt"
    report_dir = tmp_path / "report"

    def make_numbers():
        calls.append("numbers")
        with atomic_open(numbers) as fh:
            fh.write(source.read_text())

    def make_squares():
        calls.append("squares")
        values = [int(x) for x in numbers.read_text().split()]
        with atomic_open(squares) as fh:
            for i, v in enumerate(values):
                if fail_in == "squares" and i == 1:
                    raise RuntimeError("boom")
                fh.write(f"{v * v}\n")
        return len(values)

    def make_report():
        calls.append("report")
        report_dir.mkdir(exist_ok=True)
        (report_dir / "part1.txt").write_text("first\n")
        if fail_in == "report":
            raise RuntimeError("killed half way")
        (report_dir / "sum.txt").write_text(f"{sum(int(x) for x in squares.read_text().split())}\n")

    return [
        Stage("numbers", [numbers], make_numbers, inputs=[source]),
        Stage("squares", [squares], make_squares, inputs=[numbers], description="square every number"),
        Stage("report", [report_dir], make_report, inputs=[squares]),
    ]


def _run(tmp_path, calls, skip=(), override=(), fail_in=None):
    manifest = Manifest(tmp_path, {"seed": 0, "path": tmp_path / "x"})
    return run_stages(_build(tmp_path, calls, fail_in), manifest, skip=skip, override=override), manifest


def test_runs_in_order_and_writes_manifest(tmp_path):
    calls: list = []
    results, _ = _run(tmp_path, calls)
    assert calls == ["numbers", "squares", "report"]
    assert results["squares"].status == "ran" and results["squares"].result == 3
    assert (tmp_path / "report" / "sum.txt").read_text() == "14\n"

    data = read_json(tmp_path / "manifest.json")
    assert data["command"] == sys.argv
    assert data["arguments"] == {"seed": 0, "path": str(tmp_path / "x")}
    assert set(data["stages"]) == {"numbers", "squares", "report"}
    assert all(s["status"] == "ran" and s["completed"] for s in data["stages"].values())
    assert all(s["seconds"] >= 0 for s in data["stages"].values())
    assert "result" not in data["stages"]["numbers"]  # returned None
    source_fp = data["stages"]["numbers"]["inputs"][0]
    assert source_fp["size"] == 6
    assert source_fp["sha256"] == hashlib.sha256(b"1\n2\n3\n").hexdigest()
    assert {"torch", "numpy", "transformers"} <= set(data["environment"]["packages"])
    assert "commit" in data["git"] and "dirty" in data["git"]
    report_fp = data["stages"]["report"]["outputs"][0]  # what the completion marker records, with the path
    assert [c["path"] for c in report_fp["files"]] == ["part1.txt", "sum.txt"]
    marker = read_json(tmp_path / "report" / "stage_report.done.json")
    assert report_fp == {"path": str(tmp_path / "report"), **marker["outputs"][0]}

    # each stage directory other than the run dir gets its own manifest with only its stages
    sub = read_json(tmp_path / "squares" / "manifest.json")
    assert list(sub["stages"]) == ["squares"] and sub["run_dir"] == str(tmp_path)
    assert list(read_json(tmp_path / "report" / "manifest.json")["stages"]) == ["report"]


def test_rerun_reuses_outputs_and_logs_it(tmp_path, caplog):
    calls: list = []
    _run(tmp_path, calls)
    calls.clear()
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        results, _ = _run(tmp_path, calls)
    assert calls == []
    assert {r.status for r in results.values()} == {"reused"}
    assert "numbers: output exists, reused" in caplog.text and "--override_numbers" in caplog.text
    data = read_json(tmp_path / "manifest.json")
    assert data["stages"]["squares"]["status"] == "reused"
    # the reused stage keeps the fingerprints of the run that built it
    assert data["stages"]["squares"]["outputs"][0]["sha256"] == hashlib.sha256(b"1\n4\n9\n").hexdigest()


def test_override_rebuilds_and_skip_skips(tmp_path):
    calls: list = []
    _run(tmp_path, calls)
    (tmp_path / "source.txt").write_text("5\n")
    calls.clear()
    results, _ = _run(tmp_path, calls, override=["numbers", "squares"], skip=["report"])
    assert calls == ["numbers", "squares"]
    assert (tmp_path / "squares" / "squares.txt").read_text() == "25\n"
    assert results["report"].status == "skipped"
    assert (tmp_path / "report" / "sum.txt").read_text() == "14\n"  # skipped: untouched


def test_unknown_stage_name_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"--skip_tripels: unknown stage \(stages: numbers, squares, report\)"):
        _run(tmp_path, [], skip=["tripels"])


def test_a_known_stage_this_plan_does_not_run_is_a_note_and_only_runs_the_selection(tmp_path, caplog):
    """``only`` (``--stages``) runs the selected stages once those before them are done; a name of another plan
    (``known``) in any of the three selections is a note, not an error."""
    calls: list = []
    _run(tmp_path, calls)
    calls.clear()
    stages = _build(tmp_path, calls)
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        results = run_stages(stages, Manifest(tmp_path, {}), skip=["graph"], override=["squares"],
                             only=["squares", "train"], known=["graph", "train"])
    assert calls == ["squares"] and results["report"].status == "skipped" and results["numbers"].status == "skipped"
    assert "--skip_graph: stage graph does not run in this configuration" in caplog.text
    assert "--stages train: stage train does not run in this configuration" in caplog.text
    with pytest.raises(InputError, match=r"^--stages trian: unknown stage \(stages: numbers, squares, report\)$"):
        run_stages(stages, Manifest(tmp_path, {}), only=["trian"], known=["train"])


def test_failed_stage_leaves_no_partial_file_and_is_recorded(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        _run(tmp_path, [], fail_in="squares")
    assert not (tmp_path / "squares" / "squares.txt").exists()
    assert list((tmp_path / "squares").iterdir()) == []  # the temp file was removed too
    data = read_json(tmp_path / "manifest.json")
    assert data["stages"]["numbers"]["status"] == "ran"
    assert data["stages"]["squares"]["status"] == "failed" and not data["stages"]["squares"].get("completed")
    calls: list = []
    _run(tmp_path, calls)
    assert calls == ["squares", "report"]  # numbers reused, the failed stage runs again


def test_half_written_directory_is_rebuilt(tmp_path):
    with pytest.raises(RuntimeError, match="killed half way"):
        _run(tmp_path, [], fail_in="report")
    assert (tmp_path / "report" / "part1.txt").exists() and not (tmp_path / "report" / "sum.txt").exists()
    calls: list = []
    _run(tmp_path, calls)
    assert calls == ["report"]
    assert (tmp_path / "report" / "sum.txt").read_text() == "14\n"


def test_directory_output_of_an_unrecorded_run_is_not_trusted(tmp_path):
    _run(tmp_path, [])
    manifest = read_json(tmp_path / "manifest.json")
    del manifest["stages"]["report"]  # as if the process died before recording the stage...
    write_json(tmp_path / "manifest.json", manifest)
    (tmp_path / "report" / "stage_report.done.json").unlink()  # ...and before its completion marker
    calls: list = []
    _run(tmp_path, calls)
    assert calls == ["report"]


def test_file_outputs_without_completion_marker_are_rebuilt(tmp_path, caplog):
    """A kill after a stage wrote its outputs but before its marker: the rerun runs the stage again."""
    _run(tmp_path, [])
    marker = tmp_path / "squares" / "stage_squares.done.json"
    record = read_json(marker)
    assert record["stage"] == "squares" and record["settings"] == {}
    assert record["inputs"] == [{"name": "numbers.txt", "size": 6,
                                 "sha256": hashlib.sha256(b"1\n2\n3\n").hexdigest()}]
    marker.unlink()
    manifest = read_json(tmp_path / "manifest.json")
    manifest["stages"]["squares"]["completed"] = False  # the manifest is written after the marker
    write_json(tmp_path / "manifest.json", manifest)
    calls: list = []
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        _run(tmp_path, calls)
    assert calls == ["squares"]  # report's input is byte-identical again: reused
    assert "squares: rebuilding: no completion marker stage_squares.done.json" in caplog.text
    assert marker.exists()


def test_only_the_completion_marker_vouches_for_a_stage_not_the_manifest(tmp_path, caplog):
    """A manifest that says completed is a record, not a reuse decision: without its marker (outputs made before
    markers existed, commit b4fcbf1) the stage runs again, and says why."""
    _run(tmp_path, [])
    marker = tmp_path / "squares" / "stage_squares.done.json"
    marker.unlink()
    assert read_json(tmp_path / "manifest.json")["stages"]["squares"]["completed"] is True
    calls: list = []
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        _run(tmp_path, calls)
    assert calls == ["squares"] and marker.exists()
    assert "squares: rebuilding: no completion marker stage_squares.done.json" in caplog.text


def test_changed_input_rebuilds_the_stage_and_names_the_input(tmp_path, caplog):
    _run(tmp_path, [])
    (tmp_path / "source.txt").write_text("4\n")
    calls: list = []
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        _run(tmp_path, calls)
    assert calls == ["numbers", "squares", "report"]
    assert "numbers: rebuilding: input source.txt differs from the one it was made from" in caplog.text
    assert (tmp_path / "report" / "sum.txt").read_text() == "16\n"


def test_changed_setting_rebuilds_the_stage_and_names_the_setting(tmp_path, caplog):
    _run(tmp_path, [])
    stages = _build(tmp_path, calls := [])
    stages[1].settings = {"power": 2}
    with caplog.at_level(logging.INFO, logger="scincl.pipeline.runner"):
        run_stages(stages, Manifest(tmp_path, {}))
    assert calls == ["squares"]
    assert "squares: rebuilding: setting power differs (made with \"<unset>\", now 2)" in caplog.text
    calls.clear()
    run_stages(_build(tmp_path, calls), Manifest(tmp_path, {}))
    assert calls == ["squares"]  # and back: the record says power=2 now


def test_stage_without_outputs_is_rejected():
    with pytest.raises(ValueError, match="declares no outputs"):
        Stage("x", [], lambda: None)


def test_the_runner_is_the_one_reuse_decision_of_a_stages_commands(tmp_path):
    """A command called by a stage keeps no record of its own (issue 39: one reuse layer): its output, made differently
    before, is refused when the command is called alone and rebuilt when the runner runs the stage, which drops the
    command's old record; the stage's marker is then the one record, so a standalone call refuses the output as the
    stage's (one line) and replaces it only with ``override``, keeping its own record again."""
    from scincl.provenance import OutputRecord, record_path

    out = tmp_path / "edges" / "edges.tsv"
    made = []

    def command(text: str, override: bool = False) -> None:
        record = OutputRecord(out, command="write_edges", settings={"text": text})
        if record.reusable(override):
            return
        made.append(text)
        with atomic_open(out) as fh:
            fh.write(text)
        record.write()

    command("a")
    with pytest.raises(InputError, match="made differently"):
        command("b")
    assert record_path(out).is_file()
    stage = Stage("edges", [out], lambda: command("b"), settings={"text": "b"})
    run_stages([stage], Manifest(tmp_path, {}))
    assert out.read_text() == "b" and made == ["a", "b"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["edges.tsv", "manifest.json", "stage_edges.done.json"]
    with pytest.raises(InputError) as refused:
        command("b")
    assert str(refused.value) == (f"{out}: exists and was made by the pipeline's edges stage, not write_edges; "
                                  "pass --override to replace it (or write elsewhere)")
    command("b", override=True)
    assert made == ["a", "b", "b"] and read_json(record_path(out))["command"] == "write_edges"
    command("b")  # reused: its own record vouches for it again
    assert made == ["a", "b", "b"]
    # outside the running stage's outputs and folder the command's own record still decides
    outside = Stage("other", [tmp_path / "other" / "other.tsv"], lambda: command("c"))
    with pytest.raises(InputError, match="made differently"):
        run_stages([outside], Manifest(tmp_path, {}))


def test_the_runner_decides_only_for_a_stages_own_files_not_its_whole_folder(tmp_path):
    """While a stage runs, a command's output is built on the runner's decision only when it is one of the stage's
    outputs, a file named after one beside it (its counts) or something the stage declares it writes; another
    command's output in the same folder (the run directory) keeps its own record's protection."""
    from scincl.provenance import OutputRecord

    def command(out, text: str) -> None:
        record = OutputRecord(out, out.with_name(out.name.split(".")[0] + ".stats.json"), command=f"write_{out.name}",
                              settings={"text": text})
        if record.reusable(False):
            return
        with atomic_open(out) as fh:
            fh.write(text)
        write_json(out.with_name(out.name.split(".")[0] + ".stats.json"), {"text": text})
        record.write()

    own, neighbour, declared = tmp_path / "own.tsv", tmp_path / "neighbour.tsv", tmp_path / "embeddings.jsonl"
    for out in (own, neighbour, declared):
        command(out, "a")
    stage = Stage("own", [own], lambda: command(own, "b"), settings={"text": "b"})
    run_stages([stage], Manifest(tmp_path, {}))  # its stats file, named after it, is the runner's decision too
    assert own.read_text() == "b" and read_json(tmp_path / "own.stats.json") == {"text": "b"}
    greedy = Stage("greedy", [own], lambda: command(neighbour, "b"), settings={"text": "c"})
    with pytest.raises(InputError, match="made differently"):
        run_stages([greedy], Manifest(tmp_path, {}))
    assert neighbour.read_text() == "a"
    writer = Stage("writer", [own], lambda: command(declared, "b"), settings={"text": "d"}, writes=[declared])
    run_stages([writer], Manifest(tmp_path, {}))
    assert declared.read_text() == "b"


def _file_states(root: Path) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


# The completion marker af520b1's runner wrote for the stage of the test below (its content is the contract: cached runs
# made by earlier code are reused)
MARKER_OF_AF520B1 = {
    "inputs": [{"name": "source.txt", "sha256": "14c5e74c4b96ccef41cd94db73a9ec3348038ac094feca4fd897cecffa07cdae",
                "size": 6}],
    "outputs": [{"name": "squares.txt", "sha256": "0b43c77967f32e969096a3fbbc4676be206bcc1d6591c0bd1f7f0b63dfd76ce4",
                 "size": 6}],
    "settings": {"columns": ["n", "n2"], "power": 2},
    "stage": "squares",
}


def test_a_marker_written_by_earlier_code_is_reused_untouched_and_rewritten_the_same(tmp_path):
    source, out = tmp_path / "source.txt", tmp_path / "squares" / "squares.txt"
    calls = []

    def square() -> None:
        calls.append("squares")
        out.write_text("".join(f"{int(n) ** 2}\n" for n in source.read_text().split()))

    def stage(power: int = 2) -> Stage:
        return Stage("squares", [out], square, inputs=[source], settings={"power": power, "columns": ["n", "n2"]})

    source.write_text("1\n2\n3\n")
    out.parent.mkdir()
    out.write_text("1\n4\n9\n")
    write_json(out.parent / "stage_squares.done.json", MARKER_OF_AF520B1)
    before = _file_states(tmp_path)
    assert run_stages([stage()], Manifest(tmp_path, {}))["squares"].status == "reused" and calls == []
    after = _file_states(tmp_path)
    assert {p: after[p] for p in before if p.name != "manifest.json"} == {
        p: state for p, state in before.items() if p.name != "manifest.json"}
    # the manifest records the marker's fingerprints; a rebuild writes a marker of the same content
    stage_entry = read_json(tmp_path / "manifest.json")["stages"]["squares"]
    assert stage_entry["inputs"] == [{"path": str(source), **MARKER_OF_AF520B1["inputs"][0]}]
    assert stage_entry["outputs"] == [{"path": str(out), **MARKER_OF_AF520B1["outputs"][0]}]
    run_stages([stage(3)], Manifest(tmp_path, {}))
    run_stages([stage(2)], Manifest(tmp_path, {}))
    assert calls == ["squares", "squares"]
    assert read_json(out.parent / "stage_squares.done.json") == MARKER_OF_AF520B1


def test_a_dry_run_over_markers_from_before_issue_29_writes_nothing(tmp_path):
    """Deciding what would run (``--dry_run``, ``--stages``) reads markers; a marker without ``outputs`` is upgraded
    only when the runner reuses its stage."""
    from scincl.pipeline.runner import reuse_decision, waiting_stages

    _run(tmp_path, [])
    for marker in tmp_path.rglob("stage_*.done.json"):
        write_json(marker, {k: v for k, v in read_json(marker).items() if k != "outputs"})
    before = _file_states(tmp_path)
    stages = _build(tmp_path, [])
    assert waiting_stages(stages) == [] and [reuse_decision(stage) for stage in stages] == [None] * 3
    assert _file_states(tmp_path) == before
    results, _ = _run(tmp_path, [])
    assert {r.status for r in results.values()} == {"reused"}
    assert all("outputs" in read_json(marker) for marker in tmp_path.rglob("stage_*.done.json"))


@pytest.mark.slow  # two run_specter processes: ~15 s
def test_run_specter_dry_run_over_a_cached_run_writes_nothing(tmp_path):
    """``run_specter --dry_run`` over a run whose completed stage has a marker from before issue 29 (no ``outputs``):
    every file keeps its bytes and mtime, and none is added."""
    from tests.conftest import run_front_end
    from tests.pipeline.test_workload import _plain_corpus

    out = tmp_path / "out"
    flags = [out, "--corpus_dir", _plain_corpus(tmp_path / "corpus", 40), "--biggraph_config", "demo.py"]
    run_front_end("cli_pipeline.py", "run_specter", *flags, "--stages", "citations", timeout=300, check=True)
    marker = out / "citations" / "stage_citations.done.json"
    write_json(marker, {k: v for k, v in read_json(marker).items() if k != "outputs"})
    before = _file_states(tmp_path)
    done = run_front_end("cli_pipeline.py", "run_specter", *flags, "--dry_run", timeout=300, check=True)
    assert "  citations: done" in done.stdout and "  graph: to run (output" in done.stdout
    assert _file_states(tmp_path) == before


def test_a_run_made_by_main_with_its_commands_own_records_is_reused_untouched(tmp_path):
    """A stage made by 2dcbe2c's code has its marker and, beside its output, the record its command kept then (the
    sampler's ``made_by`` key): the runner reuses it without rebuilding or rewriting anything, and that old record
    still lets the command alone reuse its output."""
    from scincl.provenance import outputs_record
    from scincl.triples.specter_like import get_specter_like_triples

    citations, out = tmp_path / "citations.tsv", tmp_path / "triples.csv"
    citations.write_text("".join(f"p{i}\tp{j}\n" for i in range(8) for j in range(8) if i != j and (i + j) % 3))
    counts = {"triples_per_query": 2, "easy_positives_count": 2, "easy_negatives_count": 1, "hard_negatives_count": 1}
    calls = []

    def sample() -> None:
        calls.append("triples")
        get_specter_like_triples(citations, out, seed=0, **counts)

    stage = Stage("triples", [out], sample, inputs=[citations], settings={"seed": 0, **counts})
    sample()  # what main's code left: the command's own record in <triplets>.args.json, then the stage's marker
    write_json(stage.marker, {**stage.made_by(), "outputs": outputs_record([out])})
    before = _file_states(tmp_path)
    assert run_stages([stage], Manifest(tmp_path, {}))["triples"].status == "reused" and calls == ["triples"]
    assert {p: s for p, s in _file_states(tmp_path).items() if p.name != "manifest.json"} == before
    get_specter_like_triples(citations, out, seed=0, **counts)  # reused by the old record: nothing rewritten
    assert {p: s for p, s in _file_states(tmp_path).items() if p.name != "manifest.json"} == before


def test_a_stage_named_by_a_path_keeps_its_nested_marker_out_of_the_folders_identity(tmp_path):
    """A real-corpus stage is named by its output's path, so its marker is nested in its folder
    (``model/stage_runs/.../train_args.json.done.json``). It is no part of the folder's content: an evaluation of
    that folder does not depend on which stage made it, and an evaluation marker that recorded the nested marker
    among its input's files (written before it was recognised) is still reused."""
    from scincl.provenance import fingerprint, is_marker

    model, results = tmp_path / "runs" / "a" / "model", tmp_path / "runs" / "a" / "results.json"

    def train() -> None:
        model.mkdir(parents=True, exist_ok=True)
        (model / "train_args.json").write_text("{}")

    calls = []
    evaluate = Stage("runs/a/results.json", [results], lambda: calls.append(results.write_text("1")), inputs=[model])
    run_stages([Stage("runs/a/model/train_args.json", [model / "train_args.json"], train, output_dir=model),
                evaluate], Manifest(tmp_path, {}))
    nested = model / "stage_runs" / "a" / "model" / "train_args.json.done.json"
    assert nested.is_file() and is_marker(nested) and not is_marker(model / "train_args.json")
    assert [f["path"] for f in fingerprint(model)["files"]] == ["train_args.json"]
    recorded = read_json(evaluate.marker)
    files = recorded["inputs"][0]["files"]
    assert [f["path"] for f in files] == ["train_args.json"]
    files.insert(0, {"path": str(nested.relative_to(model)), "size": nested.stat().st_size,
                     "sha256": hashlib.sha256(nested.read_bytes()).hexdigest()})  # as the marker was recorded before
    write_json(evaluate.marker, recorded)
    assert run_stages([evaluate], Manifest(tmp_path, {}))["runs/a/results.json"].status == "reused" and len(calls) == 1
