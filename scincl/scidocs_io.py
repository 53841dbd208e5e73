"""Readers for the official SciDocs directory layout (see docs/scidocs_protocol.md "Inputs").

Every reader validates its file and raises :class:`scincl.errors.InputError` naming the file,
the line and the field, so a malformed SciDocs dir fails with one clear line instead of a wrong
number. Paths of the layout are collected by :func:`scidocs_paths`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Set, Tuple

from scincl.errors import InputError
from scincl.ids import canonical_id
from scincl.io import PathLike, iter_csv_rows, open_text, read_json

#: the four qrel tasks in table order, with their folder names (official scidocs.paths)
QREL_TASKS = {"co-view": "coview", "co-read": "coread", "cite": "cite", "co-cite": "cocite"}
CLASSIFICATION_TASKS = ("mag", "mesh")
SPLITS = ("train", "val", "test")
METADATA_FILES = {
    "mag_mesh": "paper_metadata_mag_mesh.json",
    "view_cite_read": "paper_metadata_view_cite_read.json",
    "recomm": "paper_metadata_recomm.json",
}
RECOMM_HEADER = ("pid", "clicked_pid", "similar_papers_avail_at_time")
CLASS_LABELS_HEADER = ("pid", "class_label")  # mag/ and mesh/ train, val and test csvs


def read_qrels(path: PathLike) -> Dict[str, Dict[str, int]]:
    """Read a trec qrel file (``qid 0 pid rel`` per line) into ``{qid: {pid: rel}}``.

    Query order and candidate order follow the file. A line without four fields, a non-integer
    relevance, a duplicate ``(qid, pid)`` pair (trec_eval's parser fails on those) or an empty
    file raises :class:`InputError` naming the file and line.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    qrels: Dict[str, Dict[str, int]] = {}
    with open_text(p) as fh:
        for line_no, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                raise InputError(f"expected 4 fields 'qid 0 pid rel', got {len(fields)}", path=p, line=line_no)
            qid, _, pid, rel_text = fields
            qid, pid = canonical_id(qid, p, line_no, "qid"), canonical_id(pid, p, line_no, "pid")
            try:
                rel = int(rel_text)
            except ValueError:
                raise InputError(f"relevance {rel_text!r} is not an integer", path=p, line=line_no,
                                 field="rel") from None
            candidates = qrels.setdefault(qid, {})
            if pid in candidates:
                raise InputError(f"duplicate qrel entry for query {qid!r} and paper {pid!r}", path=p, line=line_no)
            candidates[pid] = rel
    if not qrels:
        raise InputError("empty qrel file", path=p)
    return qrels


def read_class_labels(csv_path: PathLike) -> Dict[str, int]:
    """Read a classification split (header ``pid,class_label``) into ``{pid: label}`` in file order.

    Labels must be non-negative integers (MAG has 19 classes, MeSH 11, numbered from 0).
    A wrong header, a bad label, a duplicate pid or an empty file raises :class:`InputError`.
    """
    p = Path(csv_path)
    labels: Dict[str, int] = {}
    for line_no, row in iter_csv_rows(p, CLASS_LABELS_HEADER):
        pid, label_text = canonical_id(row[0], p, line_no, "pid"), row[1].strip()
        try:
            label = int(label_text)
        except ValueError:
            raise InputError(f"class label {label_text!r} is not an integer", path=p, line=line_no,
                             field="class_label") from None
        if label < 0:
            raise InputError(f"class label {label} is negative", path=p, line=line_no, field="class_label")
        if pid in labels:
            raise InputError(f"duplicate pid {pid!r}", path=p, line=line_no, field="pid")
        labels[pid] = label
    if not labels:
        raise InputError("no labelled papers (header only)", path=p)
    return labels


def read_scidocs_metadata(path: PathLike) -> Dict[str, dict]:
    """Read a ``paper_metadata_*.json`` file: ``{paper_id: {"paper_id", "title", "abstract", ...}}``.

    Records without a ``paper_id`` get the key as their id; a non-object record raises.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object keyed by paper id, got {type(data).__name__}", path=path)
    if not data:
        raise InputError("no papers in metadata file", path=path)
    out: Dict[str, dict] = {}
    for pid, rec in data.items():
        if not isinstance(rec, dict):
            raise InputError(f"record of paper {pid!r} is not an object", path=path, field=pid)
        pid = canonical_id(pid, path, field=pid)
        if rec.get("paper_id") is None:
            rec = {**rec, "paper_id": pid}
        else:
            rec = {**rec, "paper_id": canonical_id(rec["paper_id"], path, field=pid)}
        out[pid] = rec
    return out


def read_scidocs_metadata_dir(scidocs_dir: PathLike) -> Dict[str, Dict[str, dict]]:
    """Every ``paper_metadata_*.json`` present in a SciDocs dir, each read by :func:`read_scidocs_metadata`.

    Returns ``{file_name: {paper_id: metadata}}``; raises when the dir or all three files are missing.
    """
    d = Path(scidocs_dir)
    if not d.is_dir():
        raise InputError("SciDocs directory not found", path=d)
    out = {name: read_scidocs_metadata(d / name) for name in METADATA_FILES.values() if (d / name).exists()}
    if not out:
        raise InputError(f"no SciDocs metadata files ({', '.join(METADATA_FILES.values())})", path=d)
    return out


@dataclass(frozen=True)
class RecommClick:
    """One row of ``recomm/{train,val,test}.csv``: a query, the clicked paper, the papers shown."""

    query_id: str
    clicked_id: str
    shown_ids: List[str]

    @property
    def clicked_position(self) -> int:
        """1-based position of the clicked paper among the shown ones."""
        return self.shown_ids.index(self.clicked_id) + 1


def read_recomm_clicks(path: PathLike) -> List[RecommClick]:
    """Read a recommendation click file (header ``pid,clicked_pid,similar_papers_avail_at_time``)."""
    p = Path(path)
    clicks: List[RecommClick] = []
    for line_no, row in iter_csv_rows(p, RECOMM_HEADER):
        shown = [canonical_id(s, p, line_no, "similar_papers_avail_at_time") for s in row[2].split(",") if s.strip()]
        query, clicked = canonical_id(row[0], p, line_no, "pid"), canonical_id(row[1], p, line_no, "clicked_pid")
        if clicked not in shown:
            raise InputError(f"clicked paper {clicked!r} is not among the shown papers", path=p, line=line_no,
                             field="similar_papers_avail_at_time")
        clicks.append(RecommClick(query, clicked, shown))
    if not clicks:
        raise InputError("no clicks (header only)", path=p)
    return clicks


def read_propensity_scores(path: PathLike) -> List[float]:
    """Click propensities by position, ``{"scores": [...]}`` (official ``propensity_scores.json``)."""
    data = read_json(path)
    scores = data.get("scores") if isinstance(data, dict) else None
    if not isinstance(scores, list) or not scores or not all(isinstance(s, (int, float)) and s > 0 for s in scores):
        raise InputError("expected {\"scores\": [positive numbers]}", path=path, field="scores")
    return [float(s) for s in scores]


@dataclass(frozen=True)
class ScidocsPaths:
    """Where each task's files are in an official SciDocs dir (official ``scidocs.paths.DataPaths``)."""

    root: Path

    def qrel(self, task: str, split: str) -> Path:
        """``{coview,coread,cite,cocite}/{val,test}.qrel``."""
        return self.root / QREL_TASKS[task] / f"{split}.qrel"

    def classification(self, task: str, split: str) -> Path:
        """``{mag,mesh}/{train,val,test}.csv``."""
        return self.root / task / f"{split}.csv"

    def recomm(self, name: str) -> Path:
        """``recomm/<name>``: train.csv, val.csv, test.csv, propensity_scores.json."""
        return self.root / "recomm" / name

    def metadata(self, group: str) -> Path:
        """``paper_metadata_{mag_mesh,view_cite_read,recomm}.json``."""
        return self.root / METADATA_FILES[group]

    def has_qrel_task(self, task: str, split: str) -> bool:
        """True when the task's qrel file of that split exists."""
        return self.qrel(task, split).exists()

    def has_classification_task(self, task: str) -> bool:
        """True when train and test (the val split is optional) of the task exist."""
        return self.classification(task, "train").exists() and self.classification(task, "test").exists()

    def has_recomm(self) -> bool:
        """True when the files the recommendation task needs exist."""
        needed = [self.recomm("train.csv"), self.recomm("test.csv"), self.recomm("propensity_scores.json"),
                  self.metadata("recomm")]
        return all(p.exists() for p in needed)


def scidocs_paths(scidocs_dir: PathLike) -> ScidocsPaths:
    """Check that ``scidocs_dir`` is a directory and return its :class:`ScidocsPaths`."""
    root = Path(scidocs_dir)
    if not root.is_dir():
        raise InputError("SciDocs directory not found", path=root)
    return ScidocsPaths(root)



def query_candidate_pairs(scidocs_dir: PathLike) -> Set[Tuple[str, str]]:
    """Every (query, candidate) pair of the SciDocs folder's qrels (``*/*.qrel``, all splits), in both directions:
    the edges a citation graph must not hold for the cite / co-cite tasks to be fair."""
    pairs: Set[Tuple[str, str]] = set()
    for qrel in sorted(Path(scidocs_dir).glob("*/*.qrel")):
        for qid, candidates in read_qrels(qrel).items():
            pairs.update(pair for pid in candidates for pair in ((qid, pid), (pid, qid)))
    return pairs


def split_papers(scidocs_dir: PathLike, split: str) -> Dict[str, dict]:
    """The SciDocs papers one split needs, by id (sorted): its qrels' queries and candidates and every
    classification paper (their CSVs hold the train and the evaluation papers); papers without metadata are left
    out."""
    scidocs_dir = Path(scidocs_dir)
    papers: Dict[str, dict] = {}
    for group in read_scidocs_metadata_dir(scidocs_dir).values():
        papers.update(group)
    needed: Set[str] = set()
    for qrel in sorted(scidocs_dir.glob(f"*/{split}.qrel")):
        for qid, candidates in read_qrels(qrel).items():
            needed.add(qid)
            needed.update(candidates)
    for csv_path in sorted(scidocs_dir.glob("*/*.csv")):
        needed.update(read_class_labels(csv_path))
    return {pid: papers[pid] for pid in sorted(needed) if pid in papers}
