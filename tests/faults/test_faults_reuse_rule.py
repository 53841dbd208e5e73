"""Issue 41, class 2: one reuse rule for every command (``scincl.provenance.OutputRecord``).

An output is reused only when its made-by record says the same command made it from the same input
contents and settings; an output another command made, or one no record vouches for, is never reused
and never overwritten without ``--override``; an output that is also an input is refused.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scincl.corpus.stage import get_papers
from scincl.errors import InputError
from scincl.graph.stage import get_citations
from scincl.io import write_json
from scincl.provenance import OutputRecord, read_record, record_path
from scincl.triples.metadata import get_metadata
from scincl.triples.specter_like import get_specter_like_triples
from tests.conftest import run_front_end


def _plain_corpus(root: Path, edges) -> Path:
    root.mkdir(parents=True)
    papers = sorted({p for edge in edges for p in edge})
    (root / "papers.jsonl").write_text("".join(json.dumps({"paper_id": p, "title": f"title {p}", "abstract": "x"})
                                               + "\n" for p in papers))
    (root / "citations.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    return root


EDGES = [(f"p{i}", f"p{j}") for i in range(12) for j in range(12) if i != j and (i * 7 + j) % 3 == 0]


@pytest.fixture()
def corpus(tmp_path) -> Path:
    return _plain_corpus(tmp_path / "corpus", EDGES)


def test_a_command_refuses_an_output_another_command_made(corpus, tmp_path):
    out = tmp_path / "out"
    get_citations(str(corpus), str(out), workers=1, corpus_format="plain")
    made = (out / "citations.tsv").read_bytes()
    with pytest.raises(InputError, match=r"citations.tsv: exists and was made by get_citations, not get_papers; "
                                         r"pass --override to replace it"):
        get_papers(str(corpus), str(out / "citations.tsv"), corpus_format="plain")
    assert (out / "citations.tsv").read_bytes() == made
    assert not (out / "citations.tsv.stats.json").exists()  # nothing of get_papers was written
    get_citations(str(corpus), str(out), workers=1, corpus_format="plain")  # get_citations' record still holds
    get_papers(str(corpus), str(out / "citations.tsv"), corpus_format="plain", override=True)
    assert json.loads((out / "citations.tsv").read_text().splitlines()[0])["paper_id"] == "p0"
    assert read_record(record_path(out / "citations.tsv"))["command"] == "get_papers"


def test_a_second_split_into_the_same_folder_is_refused_not_mixed(corpus, tmp_path):
    out = tmp_path / "out"
    get_citations(str(corpus), str(out), workers=1, corpus_format="plain")
    stats = (out / "citations.stats.json").read_bytes()
    with pytest.raises(InputError, match=r"citations.stats.json: exists and was made by get_citations with other "
                                         r"outputs \(its record: citations.tsv.made_by.json\)"):
        get_citations(str(corpus), str(out), workers=1, corpus_format="plain", test_ratio=0.25)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "citations.stats.json", "citations.tsv", "citations.tsv.made_by.json"]
    assert (out / "citations.stats.json").read_bytes() == stats
    get_citations(str(corpus), str(out), workers=1, corpus_format="plain")  # the first output is still reusable


def test_an_output_that_is_an_input_is_refused(corpus, tmp_path):
    triples = tmp_path / "triples.csv"
    triples.write_text("query_paper_id,positive_id,negative_id\np0,p1,p2\n")
    before = triples.read_bytes()
    with pytest.raises(InputError, match=r"get_metadata: the output is also one of its inputs; write it elsewhere"):
        get_metadata(str(triples), str(triples), jsonl_metadata_path=str(corpus / "papers.jsonl"), override=True)
    assert triples.read_bytes() == before


def test_the_cli_says_it_in_one_line(corpus, tmp_path):
    out = tmp_path / "out"
    get_citations(str(corpus), str(out), workers=1, corpus_format="plain")
    done = run_front_end("cli_s2orc.py", "get_papers", corpus, out / "citations.tsv", "--corpus_format", "plain")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert errors == [f"cli_s2orc.py: error: {out / 'citations.tsv'}: exists and was made by get_citations, not "
                      "get_papers; pass --override to replace it (or write elsewhere)"]


SMALL = {"triples_per_query": 2, "easy_positives_count": 2, "easy_negatives_count": 1, "hard_negatives_count": 1}


def test_a_sampler_output_is_reused_only_with_the_same_settings(corpus, tmp_path):
    """Before: any existing triplets file was reused, whatever seed, counts or citations made it."""
    out = tmp_path / "triples.csv"
    citations = corpus / "citations.tsv"
    get_specter_like_triples(citations, out, seed=0, **SMALL)
    made = out.read_bytes()
    get_specter_like_triples(citations, out, seed=0, **SMALL)  # reused
    assert out.read_bytes() == made
    with pytest.raises(InputError, match=r"made differently: setting seed differs \(made with 0, now 1\)"):
        get_specter_like_triples(citations, out, seed=1, **SMALL)
    other = tmp_path / "other.tsv"
    other.write_text("p0\tp1\np1\tp2\n")
    with pytest.raises(InputError, match=r"made differently: input other.tsv differs"):
        get_specter_like_triples(other, out, seed=0, **SMALL)
    assert out.read_bytes() == made
    get_specter_like_triples(citations, out, seed=1, **SMALL, override=True)
    assert json.loads(Path(str(out) + ".args.json").read_text())["made_by"]["settings"]["seed"] == 1


def test_a_file_no_record_vouches_for_is_never_reused(corpus, tmp_path):
    out = tmp_path / "triples.csv"
    out.write_text("query_paper_id,positive_id,negative_id\nx,y,z\n")
    with pytest.raises(InputError, match=r"triples.csv: exists and has no made-by record \(not made by "
                                         r"get_specter_like_triples\)"):
        get_specter_like_triples(corpus / "citations.tsv", out, **SMALL)
    assert out.read_text().endswith("x,y,z\n")


def test_an_interrupted_command_is_rebuilt_by_its_rerun_and_refused_by_others(tmp_path):
    """The pending record (``"complete": false``) is kept on disk with the first output, so a run killed between
    two outputs is recognised: the same command rebuilds, another command is refused."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    record = OutputRecord(first, second, command="make_two", settings={"n": 1})
    assert record.reusable(override=False) is False
    write_json(first, [1])  # ... and the run is killed here, before b.json and the record's completion
    assert read_record(record_path(first)) == {**record.wanted, "complete": False}
    again = OutputRecord(first, second, command="make_two", settings={"n": 2})
    assert again.reusable(override=False) is False  # its own interrupted output, whatever it was asked then
    other = OutputRecord(first, command="another", settings={})
    with pytest.raises(InputError, match=r"a.json: exists and was made by make_two, not another"):
        other.reusable(override=False)
    write_json(second, [2])
    again.write()
    assert OutputRecord(first, second, command="make_two", settings={"n": 2}).reusable(override=False) is True


def test_a_command_that_fails_before_writing_leaves_no_record(tmp_path):
    out = tmp_path / "x.json"
    assert OutputRecord(out, command="fails", settings={}).reusable(override=False) is False
    write_json(tmp_path / "unrelated.json", {})  # another file written meanwhile is no output of it
    assert not record_path(out).exists()


def test_a_sampler_run_by_a_stage_keeps_its_report_and_no_record_of_its_own(corpus, tmp_path):
    """Issue 39's one reuse layer: under the stage runner the sampler's ``.args.json`` keeps its settings and counts
    (the model card reads them) but no ``made_by`` record; the stage's marker is the one record, so a standalone
    call refuses the triplets as the stage's and replaces them only with ``override``."""
    from scincl.io import read_json
    from scincl.pipeline.runner import Manifest, Stage, run_stages

    out, citations = tmp_path / "triples.csv", corpus / "citations.tsv"
    args = Path(str(out) + ".args.json")
    get_specter_like_triples(citations, out, seed=0, **SMALL)  # as main's code kept it, under a stage too
    assert read_json(args)["made_by"]["settings"]["seed"] == 0
    stage = Stage("triples", [out], lambda: get_specter_like_triples(citations, out, seed=1, **SMALL),
                  inputs=[citations], settings={"seed": 1})
    run_stages([stage], Manifest(tmp_path, {}))
    report = read_json(args)
    assert "made_by" not in report and report["command"] == "get_specter_like_triples" and report["seed"] == 1
    made = out.read_bytes()
    with pytest.raises(InputError, match=r"triples.csv: exists and was made by the pipeline's triples stage, not "
                                         r"get_specter_like_triples; pass --override to replace it"):
        get_specter_like_triples(citations, out, seed=1, **SMALL)
    assert out.read_bytes() == made and read_json(args) == report
    get_specter_like_triples(citations, out, seed=1, **SMALL, override=True)
    assert out.read_bytes() == made and read_json(args)["made_by"]["command"] == "get_specter_like_triples"
