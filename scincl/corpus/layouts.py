"""Write an S2ORC-layout corpus in the other layouts (S2AG release, OpenAlex snapshot, plain files).

Used by ``make_demo --corpus_format F`` (the demo corpus in each layout, for the README's worked
commands and the tests) and by the per-format benchmark. Ids are derived from the S2ORC ``paper_id``
by a fixed hash (no state, the same for every run): S2AG ``corpusid`` integers and OpenAlex W-ids,
returned as ``{paper_id: corpus id}`` (the SciDocs-id mapping of the demo).

The S2AG release gets one papers/abstracts/citations file per shard, gzip without an extension;
papers without an abstract get no abstracts record, and a reference to a paper outside the corpus
gets ``citedcorpusid: null`` (as in the hep-th release under ../shared/data). The OpenAlex snapshot spreads the shards over
``updated_date=`` partitions, with the abstract as an inverted index (words split on whitespace).
"""
from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set

import orjson

from scincl.corpus.records import OPENALEX_ID_PREFIX
from scincl.io import PathLike, write_json
from scincl.corpus.shards import iter_papers, list_metadata_shards

LAYOUTS = ("s2ag", "openalex", "plain")
OPENALEX_PARTITIONS = ("updated_date=2026-01-01", "updated_date=2026-01-02", "updated_date=2026-01-03")


def _digest(paper_id: str) -> int:
    return int(hashlib.sha1(paper_id.encode()).hexdigest()[:12], 16)


def corpusid_of(paper_id: str) -> int:
    """The demo S2AG ``corpusid`` of an S2ORC paper id (a stable hash)."""
    return _digest(paper_id) % 10 ** 12


def work_id_of(paper_id: str) -> str:
    """The demo OpenAlex W-id of an S2ORC paper id (a stable hash)."""
    return f"W{_digest(paper_id) % 10 ** 10 + 10 ** 10}"


def inverted_index(abstract: Optional[str]) -> Optional[Dict[str, List[int]]]:
    """OpenAlex's ``abstract_inverted_index`` of a text (words split on whitespace); None stays None."""
    if abstract is None:
        return None
    index: Dict[str, List[int]] = {}
    for pos, word in enumerate(abstract.split()):
        index.setdefault(word, []).append(pos)
    return index


def _write_gz(path: Path, rows: Iterable[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        for row in rows:
            fh.write(orjson.dumps(row) + b"\n")


def _refs(record: dict) -> List[str]:
    return list(dict.fromkeys(record.get("outbound_citations") or []))


def _s2ag_shard(records: List[dict], out: Path, index: int, corpus_ids: Set[str]) -> None:
    name = f"20260101_000000_{index:05d}_demo"
    _write_gz(out / "papers" / f"{name}_papers", (
        {"corpusid": corpusid_of(r["paper_id"]), "externalids": {"CorpusId": str(corpusid_of(r["paper_id"])),
                                                                 "S2ORC": r["paper_id"]},
         "url": f"https://www.semanticscholar.org/paper/{hashlib.sha1(r['paper_id'].encode()).hexdigest()}",
         "title": r.get("title"), "year": r.get("year")} for r in records))
    _write_gz(out / "abstracts" / f"{name}_abstracts", (
        {"corpusid": corpusid_of(r["paper_id"]), "abstract": r["abstract"]} for r in records if r.get("abstract")))
    _write_gz(out / "citations" / f"{name}_citations", (
        {"citingcorpusid": corpusid_of(r["paper_id"]), "citedcorpusid": corpusid_of(ref) if ref in corpus_ids else None}
        for r in records for ref in _refs(r)))


def _openalex_shard(records: List[dict], out: Path, index: int, n_shards: int) -> None:
    partition = OPENALEX_PARTITIONS[index * len(OPENALEX_PARTITIONS) // max(n_shards, 1)]
    _write_gz(out / "data" / "works" / partition / f"part_{index:03d}.gz", (
        {"id": OPENALEX_ID_PREFIX + work_id_of(r["paper_id"]), "title": r.get("title"),
         "display_name": r.get("title"), "publication_year": r.get("year"),
         "ids": {"openalex": OPENALEX_ID_PREFIX + work_id_of(r["paper_id"])},
         "referenced_works": [OPENALEX_ID_PREFIX + work_id_of(ref) for ref in _refs(r)],
         "abstract_inverted_index": inverted_index(r.get("abstract")),
         "updated_date": partition.split("=", 1)[1] + "T00:00:00.000000"} for r in records))


def write_layout(s2orc_metadata_dir: PathLike, output_dir: PathLike, corpus_format: str) -> Dict[str, str]:
    """Write the S2ORC shards of ``s2orc_metadata_dir`` as a ``corpus_format`` corpus in ``output_dir``.

    Returns (and writes as ``output_dir/id_map.json``) ``{S2ORC paper_id: corpus id}``.
    """
    if corpus_format not in LAYOUTS:
        raise ValueError(f"corpus_format must be one of {', '.join(LAYOUTS)} (got {corpus_format!r})")
    out = Path(output_dir)
    shards = list_metadata_shards(s2orc_metadata_dir)
    corpus_ids = {r["paper_id"] for shard in shards for r in iter_papers(shard)}
    id_map: Dict[str, str] = {}
    plain_papers: List[dict] = []
    plain_edges: List[str] = []
    for i, shard in enumerate(shards):
        records = list(iter_papers(shard))
        for r in records:
            pid = r["paper_id"]
            id_map[pid] = {"s2ag": str(corpusid_of(pid)), "openalex": work_id_of(pid), "plain": pid}[corpus_format]
        if corpus_format == "s2ag":
            _s2ag_shard(records, out, i, corpus_ids)
        elif corpus_format == "openalex":
            _openalex_shard(records, out, i, len(shards))
        else:
            plain_papers.extend({"paper_id": r["paper_id"], "title": r.get("title"), "abstract": r.get("abstract")}
                                for r in records)
            plain_edges.extend(f"{r['paper_id']}\t{ref}\n" for r in records for ref in _refs(r))
    if corpus_format == "plain":
        _write_gz(out / "papers.jsonl.gz", plain_papers)
        (out / "citations.tsv").write_text("".join(plain_edges), encoding="utf-8")
    write_json(out / "id_map.json", id_map)
    return id_map
