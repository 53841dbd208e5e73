"""Texts for the papers of a triples file: S2ORC shards -> ``{paper_id, title, abstract}`` jsonl.

Streaming and parallel: each S2ORC metadata shard is scanned by one worker
(:func:`scincl.s2orc.map_shards`, results in shard order), keeping only the needed papers, so
memory holds the needed records, never a shard. The output order is shard order, then line order
(independent of ``workers``); a paper listed in several shards is taken from the first.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from scincl.errors import InputError
from scincl.io import PathLike, iter_jsonl, iter_triples_csv, read_id_list, write_id_list, write_json, write_jsonl

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


def _shard_metadata(shard: Path, needed: FrozenSet[str]) -> Tuple[List[dict], Dict[str, int]]:
    """Needed records of one shard (module-level so that worker processes can run it)."""
    from scincl.s2orc import ReadStats, iter_papers

    stats = ReadStats()
    found = []
    for record in iter_papers(shard, stats=stats):
        pid = str(record.get("paper_id"))
        if pid in needed:
            found.append({"paper_id": pid, "title": record.get("title"), "abstract": record.get("abstract")})
    return found, {"lines": stats.lines, "skipped": sum(stats.skipped.values())}


def collect_metadata(needed: Set[str], s2orc_metadata_dir: Optional[PathLike] = None, workers: int = 1,
                     jsonl_metadata_path: Optional[PathLike] = None) -> Tuple[List[dict], Dict[str, int]]:
    """Records of the ``needed`` ids, from S2ORC shards or from an existing metadata jsonl."""
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
        from scincl.s2orc import list_metadata_shards, map_shards

        if s2orc_metadata_dir is None:
            raise InputError("give --s2orc_metadata_dir (S2ORC metadata shards) or --jsonl_metadata_path")
        shards = list_metadata_shards(s2orc_metadata_dir)
        fn = functools.partial(_shard_metadata, needed=frozenset(needed))
        for found, shard_stats in map_shards(fn, shards, workers=workers, desc="metadata shards"):
            add(found)
            stats["skipped_lines"] += shard_stats["skipped"]
    stats["found"] = len(records)
    stats["missing"] = len(needed - seen)
    return records, stats


def get_metadata(
    input_path: PathLike,
    output_path: PathLike,
    s2orc_metadata_dir: Optional[PathLike] = None,
    workers: int = 1,
    jsonl_metadata_path: Optional[PathLike] = None,
    override: bool = False,
) -> Dict[str, int]:
    """Write ``{paper_id, title, abstract}`` jsonl(.gz) for every paper of a triples CSV (or JSON id list).

    Papers not found are counted and logged with examples (the trainer reports them too); finding
    none at all is an :class:`InputError`. Returns the counts.
    """
    out = Path(output_path)
    if out.exists() and not override:
        logger.info("%s exists; reusing it (pass --override to rebuild)", out)
        return {}
    needed, _ = ids_in_input(input_path)
    if not needed:
        raise InputError("no paper ids in the input", path=input_path)
    logger.info("metadata needed for %d papers", len(needed))
    records, stats = collect_metadata(needed, s2orc_metadata_dir, workers, jsonl_metadata_path)
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
    return stats


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
