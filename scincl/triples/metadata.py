"""Texts for the papers of a triples file: a corpus (any format) -> ``{paper_id, title, abstract}`` jsonl.

Streaming and parallel: each corpus file (S2ORC metadata shard, S2AG papers/abstracts file,
OpenAlex part, plain papers.jsonl) is scanned by one worker (:func:`scincl.corpus.collect_texts`,
results in file order), keeping only the needed papers, so memory holds the needed records, never
a file. The output order is file order, then line order (independent of ``workers``); a paper
listed in several files is taken from the first.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from scincl.errors import InputError
from scincl.io import PathLike, iter_jsonl, iter_triples_csv, read_id_list, write_id_list, write_json, write_jsonl
from scincl.provenance import OutputRecord
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

METADATA_FIELDS = ("paper_id", "title", "abstract")  # DESIGN.md: train_metadata.jsonl(.gz)


def ids_in_input(input_path: PathLike) -> Tuple[Set[str], Set[str]]:
    """``(all paper ids, query ids)`` of a triples CSV, or of a JSON id list (both the same)."""
    name = str(input_path)
    if name.endswith(".json") or name.endswith(".json.gz"):
        ids = set(read_id_list(input_path))
        return ids, set(ids)
    all_ids: Set[str] = set()
    queries: Set[str] = set()
    for q, p, n in iter_triples_csv(input_path):
        queries.add(q)
        all_ids.update((q, p, n))
    return all_ids, queries


def collect_metadata(needed: Set[str], s2orc_metadata_dir: Optional[PathLike] = None, workers: int = 1,
                     jsonl_metadata_path: Optional[PathLike] = None,
                     corpus_format: Optional[str] = None) -> Tuple[List[dict], Dict[str, int]]:
    """Records of the ``needed`` ids, from a corpus folder (``corpus_format``, detected when None) or a metadata jsonl."""
    records: List[dict] = []
    seen: Set[str] = set()
    stats = {"needed": len(needed), "duplicates": 0, "skipped_lines": 0}

    def add(found: Iterable[dict]) -> None:
        for rec in found:
            if rec["paper_id"] in seen:
                stats["duplicates"] += 1
                continue
            seen.add(rec["paper_id"])
            records.append(rec)

    if jsonl_metadata_path is not None:
        add({"paper_id": str(r.get("paper_id")), "title": r.get("title"), "abstract": r.get("abstract")}
            for _, r in iter_jsonl(jsonl_metadata_path) if str(r.get("paper_id")) in needed)
    else:
        from scincl.corpus import collect_texts, open_corpus

        if s2orc_metadata_dir is None:
            raise InputError("give --s2orc_metadata_dir (the corpus folder) or --jsonl_metadata_path")
        found, read_stats = collect_texts(open_corpus(s2orc_metadata_dir, corpus_format, workers=workers), needed,
                                          workers=workers)
        add(found)
        stats["duplicates"] += read_stats.counted.get("duplicate_paper_id", 0)
        stats["skipped_lines"] += sum(read_stats.skipped.values())
    stats["empty_abstracts"] = sum(1 for r in records if not r["abstract"])
    stats["found"] = len(records)
    stats["missing"] = len(needed - seen)
    return records, stats


@writes("output_path")
def get_metadata(
    input_path: PathLike,
    output_path: PathLike,
    s2orc_metadata_dir: Optional[PathLike] = None,
    workers: int = 1,
    jsonl_metadata_path: Optional[PathLike] = None,
    override: bool = False,
    corpus_format: Optional[str] = None,
) -> Dict[str, int]:
    """Write ``{paper_id, title, abstract}`` jsonl(.gz) for every paper of a triples CSV (or JSON id list).

    Papers not found are counted and logged with examples (the trainer reports them too); finding
    none at all is an :class:`InputError`. Returns the counts.
    """
    out = Path(output_path)
    record = OutputRecord(out, Path(str(out) + ".stats.json"), command="get_metadata",
                          settings={"corpus_format": corpus_format},
                          inputs=[input_path, s2orc_metadata_dir, jsonl_metadata_path])
    if record.reusable(override):
        return {}
    needed, _ = ids_in_input(input_path)
    if not needed:
        raise InputError("no paper ids in the input", path=input_path)
    logger.info("metadata needed for %d papers", len(needed))
    records, stats = collect_metadata(needed, s2orc_metadata_dir, workers, jsonl_metadata_path, corpus_format)
    if not records:
        raise InputError(f"none of the {len(needed)} papers was found in "
                         f"{jsonl_metadata_path or s2orc_metadata_dir}")
    if stats["missing"]:
        found = {r["paper_id"] for r in records}
        examples = sorted(needed - found)[:5]
        logger.warning("metadata: %d of %d papers not found (e.g. %s)", stats["missing"], len(needed),
                       ", ".join(examples))
    write_jsonl(out, records)
    logger.info("wrote metadata of %d papers to %s (%s)", len(records), out, stats)
    write_json(Path(str(out) + ".stats.json"), stats)
    record.write()  # last: the metadata is complete
    return stats


@writes("output_dir")
def extract_ids_from_triples(
    triples_input_path: PathLike,
    output_dir: PathLike,
    paper_ids_file_name: str = "s2orc_paper_ids.json",
    query_paper_ids_file_name: str = "query_s2orc_paper_ids.json",
) -> Dict[str, int]:
    """Write the (sorted) ids of all papers and of the query papers of a triples file as JSON lists."""
    all_ids, queries = ids_in_input(triples_input_path)
    if not all_ids:
        raise InputError("no triples in file", path=triples_input_path)
    write_id_list(Path(output_dir) / paper_ids_file_name, sorted(all_ids))
    write_id_list(Path(output_dir) / query_paper_ids_file_name, sorted(queries))
    logger.info("all ids: %d, query ids: %d -> %s", len(all_ids), len(queries), output_dir)
    return {"paper_ids": len(all_ids), "query_paper_ids": len(queries)}
