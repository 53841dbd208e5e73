"""SciDocs readers: formats, and malformed inputs that must fail with one clear error."""
from __future__ import annotations

import json

import pytest

from scincl.errors import InputError
from scincl.scidocs_io import (read_class_labels, read_propensity_scores, read_qrels, read_recomm_clicks,
                                    read_scidocs_metadata, read_scidocs_metadata_dir, scidocs_paths)


def test_read_qrels_keeps_order_and_grades(tmp_path):
    path = tmp_path / "test.qrel"
    path.write_text("q1 0 b 1\nq1 0 a 0\n\nq2 0 a 2\n")
    qrels = read_qrels(path)
    assert qrels == {"q1": {"b": 1, "a": 0}, "q2": {"a": 2}}
    assert list(qrels["q1"]) == ["b", "a"]


@pytest.mark.parametrize("content, message", [
    ("q1 0 a 1\nq1 0 b 0\nq1 0 a 0\n", r"test\.qrel:3: duplicate qrel entry for query 'q1' and paper 'a'"),
    ("q1 0 a\n", r"test\.qrel:1: expected 4 fields"),
    ("q1 0 a yes\n", r"test\.qrel:1, field 'rel': relevance 'yes' is not an integer"),
    ("", r"test\.qrel: empty qrel file"),
])
def test_read_qrels_rejects_malformed_files(tmp_path, content, message):
    path = tmp_path / "test.qrel"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_qrels(path)


def test_read_class_labels(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("pid,class_label\np1,0\np2,18\n")
    assert read_class_labels(path) == {"p1": 0, "p2": 18}


@pytest.mark.parametrize("content, message", [
    ("pid,label\np1,0\n", r"train\.csv:1: expected header pid,class_label"),
    ("pid,class_label\np1,Physics\n", r"train\.csv:2, field 'class_label': class label 'Physics' is not an integer"),
    ("pid,class_label\np1,-1\n", r"class label -1 is negative"),
    ("pid,class_label\np1,0\np1,1\n", r"train\.csv:3, field 'pid': duplicate pid 'p1'"),
    ("", r"empty file"),
    ("pid,class_label\n", r"no labelled papers"),
])
def test_read_class_labels_rejects_malformed_files(tmp_path, content, message):
    path = tmp_path / "train.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_class_labels(path)


def test_read_scidocs_metadata(tmp_path):
    path = tmp_path / "paper_metadata_mag_mesh.json"
    path.write_text(json.dumps({"p1": {"paper_id": "p1", "title": "T", "abstract": "A"}, "p2": {"title": "U"}}))
    meta = read_scidocs_metadata(path)
    assert meta["p1"]["title"] == "T" and meta["p2"]["paper_id"] == "p2"
    path.write_text(json.dumps(["p1"]))
    with pytest.raises(InputError, match="expected a JSON object keyed by paper id"):
        read_scidocs_metadata(path)


def test_read_scidocs_metadata_dir_reads_each_file_with_the_file_reader(tmp_path):
    with pytest.raises(InputError, match="SciDocs directory not found"):
        read_scidocs_metadata_dir(tmp_path / "absent")
    with pytest.raises(InputError, match=r"no SciDocs metadata files \(paper_metadata_mag_mesh.json, "):
        read_scidocs_metadata_dir(tmp_path)
    (tmp_path / "paper_metadata_recomm.json").write_text(json.dumps({"r1": {"title": "R"}}))
    (tmp_path / "paper_metadata_mag_mesh.json").write_text(json.dumps({"m1": {"paper_id": "m1", "title": "M"}}))
    meta = read_scidocs_metadata_dir(tmp_path)
    assert list(meta) == ["paper_metadata_mag_mesh.json", "paper_metadata_recomm.json"]
    assert meta["paper_metadata_recomm.json"]["r1"] == {"title": "R", "paper_id": "r1"}


def test_read_recomm_files(tmp_path):
    clicks = tmp_path / "train.csv"
    clicks.write_text('pid,clicked_pid,similar_papers_avail_at_time\nq,b,"a,b,c"\n')
    [row] = read_recomm_clicks(clicks)
    assert (row.query_id, row.clicked_id, row.shown_ids, row.clicked_position) == ("q", "b", ["a", "b", "c"], 2)
    clicks.write_text('pid,clicked_pid,similar_papers_avail_at_time\nq,z,"a,b,c"\n')
    with pytest.raises(InputError, match=r"train\.csv:2.*clicked paper 'z' is not among the shown papers"):
        read_recomm_clicks(clicks)
    scores = tmp_path / "propensity_scores.json"
    scores.write_text('{"scores": [0.5, 0.25]}')
    assert read_propensity_scores(scores) == [0.5, 0.25]
    scores.write_text('{"scores": []}')
    with pytest.raises(InputError, match="propensity_scores.json"):
        read_propensity_scores(scores)


def test_scidocs_paths_layout(tmp_path):
    (tmp_path / "cite").mkdir()
    (tmp_path / "cite" / "test.qrel").write_text("q 0 a 1\n")
    paths = scidocs_paths(tmp_path)
    assert paths.has_qrel_task("cite", "test") and not paths.has_qrel_task("co-view", "test")
    assert paths.qrel("co-cite", "val") == tmp_path / "cocite" / "val.qrel"
    assert not paths.has_classification_task("mag") and not paths.has_recomm()
    with pytest.raises(InputError, match="SciDocs directory not found"):
        scidocs_paths(tmp_path / "nope")


def test_split_papers_and_query_candidate_pairs_of_a_scidocs_folder(tmp_path):
    from scincl.scidocs_io import query_candidate_pairs, split_papers

    (tmp_path / "cite").mkdir()
    (tmp_path / "mag").mkdir()
    (tmp_path / "cite" / "val.qrel").write_text("q1 0 c1 1\nq1 0 c2 0\n")
    (tmp_path / "cite" / "test.qrel").write_text("q2 0 c3 1\n")
    (tmp_path / "mag" / "val.csv").write_text("pid,class_label\nm1,0\n")
    papers = {pid: {"paper_id": pid, "title": pid} for pid in ("q1", "c1", "c2", "q2", "c3", "m1")}
    (tmp_path / "paper_metadata_view_cite_read.json").write_text(json.dumps(papers))
    assert query_candidate_pairs(tmp_path) == {("q1", "c1"), ("c1", "q1"), ("q1", "c2"), ("c2", "q1"),
                                               ("q2", "c3"), ("c3", "q2")}
    assert list(split_papers(tmp_path, "val")) == ["c1", "c2", "m1", "q1"]  # test's q2/c3 not needed
    assert list(split_papers(tmp_path, "test")) == ["c3", "m1", "q2"]
