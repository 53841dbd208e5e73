"""Direct-citation edges from S2ORC metadata: per-shard extraction, TSV output, train/test split.

An edge ``(p, q)`` exists for every ``q`` in paper ``p``'s ``outbound_citations`` (deduplicated per
paper, order kept). ``included`` restricts the *citing* papers; ``excluded`` removes papers both as
citing and as cited (SciDocs leakage control), as in the original SciNCL ``get_citations``.

Edges are written as ``p<TAB>q`` lines without header, the format of
``torchbiggraph_import_from_tsv --lhs-col=0 --rhs-col=1``. Each worker writes the edges of one
shard to its own part file; parts are concatenated in shard order, so the output is the same for
any number of workers and memory does not grow with the corpus.
"""
from __future__ import annotations

import contextlib
import logging
import random
import shutil
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate, chain, compress, count, islice, repeat, starmap
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from scincl.errors import InputError
from scincl.graph.duplicates import DUPLICATE_PAPER_ID, RecordTracker, candidate_copies, later_copies
from scincl.ids import check_id_coverage
from scincl.io import PathLike, atomic_path, iter_tsv
from scincl.corpus.shards import (ReadStats, ReferenceBatch, iter_paper_references, iter_reference_batches, map_shards,
                          normalize_references, unit_name)
from scincl.temporaries import make_temporary_dir

logger = logging.getLogger(__name__)

# ``read_references(path, strict=, stats=)`` -> ``(line, paper_id, outbound ids)`` of one corpus file
ReadReferences = Callable[..., Iterator[Tuple[int, str, Any]]]
# Readers that also come as whole blocks of records (the S2ORC shards); others are batched record by record.
BATCH_READERS = {iter_paper_references: iter_reference_batches}
BATCH_RECORDS = 10_000  # records per batch of a reader without a batch form (about one S2ORC block)


@dataclass
class ShardCitations:
    """What extracting one shard produced: its part file per split and counts."""

    shard: str
    parts: Dict[str, Path]  # split ("all", or "train"/"test") -> part file
    stats: ReadStats
    citing_papers: int = 0
    edges: Counter = field(default_factory=Counter)  # per split
    dropped: Counter = field(default_factory=Counter)  # edges removed by a filter, by reason
    matched: Dict[str, Set[str]] = field(default_factory=lambda: {"included": set(), "excluded": set()})
    tracker: RecordTracker = field(default_factory=RecordTracker)  # citing ids' hashes (duplicate papers)


def outbound_references(record: dict, path: PathLike = "", line: Optional[int] = None,
                        strict: bool = False, stats: Optional[ReadStats] = None) -> Optional[List[str]]:
    """A record's ``outbound_citations`` as distinct string ids (order kept); None when malformed.

    A missing or null field means no references. A value that is not a list of ids is counted as
    ``bad_outbound_citations`` (or raises :class:`InputError` under ``strict``).
    """
    return normalize_references(record.get("outbound_citations"), path, line, strict, stats)


def reference_batches(read_references: ReadReferences, shard_path: PathLike, strict: bool = False,
                      stats: Optional[ReadStats] = None) -> Iterator[ReferenceBatch]:
    """The records of ``read_references(shard_path)`` as :class:`~scincl.corpus.shards.ReferenceBatch` es.

    S2ORC shards are read a block at a time (:data:`BATCH_READERS`); any other reader is grouped
    into batches of :data:`BATCH_RECORDS` records (``typed=False``: normalised record by record).
    """
    if read_references in BATCH_READERS:
        yield from BATCH_READERS[read_references](shard_path, strict=strict, stats=stats)
        return
    records = read_references(shard_path, strict=strict, stats=stats)
    while True:
        chunk = list(islice(records, BATCH_RECORDS))
        if not chunk:
            return
        yield ReferenceBatch.of_records(chunk)


def normalize_batch(batch: ReferenceBatch, path: PathLike = "", strict: bool = False,
                    stats: Optional[ReadStats] = None) -> Tuple[List[str], List[List[str]]]:
    """``(paper_ids, references)`` of a batch, as :func:`normalize_references` gives them per record.

    Records with a malformed ``outbound_citations`` are dropped (and counted, or raise under
    ``strict``). A typed batch is checked with list operations: null becomes ``[]`` and only lists
    with a repeated id are deduplicated (order kept).
    """
    if not batch.typed:
        pids: List[str] = []
        kept: List[List[str]] = []
        for line, pid, raw in zip(batch.lines, batch.paper_ids, batch.references):
            refs = normalize_references(raw, path, line, strict, stats)
            if refs is not None:
                pids.append(pid)
                kept.append(refs)
        return pids, kept
    refs_of = batch.references
    if None in refs_of:
        refs_of = [[] if refs is None else refs for refs in refs_of]
    if list(map(len, refs_of)) != list(map(len, map(set, refs_of))):
        refs_of = [refs if len(set(refs)) == len(refs) else list(dict.fromkeys(refs)) for refs in refs_of]
    return batch.paper_ids, refs_of


def _keep_citing(pids: List[str], refs_of: List[List[str]], keep: List[bool], dropped: Counter,
                 reason: str) -> Tuple[List[str], List[List[str]]]:
    """The records whose ``keep`` is true; the edges of the others are counted as ``dropped[reason]``."""
    if all(keep):
        return pids, refs_of
    dropped[reason] += sum(map(len, compress(refs_of, [not k for k in keep])))
    return list(compress(pids, keep)), list(compress(refs_of, keep))


def iter_citing_batches(shard_path: PathLike, included: Optional[Set[str]] = None,
                        excluded: Optional[Set[str]] = None, strict: bool = False,
                        stats: Optional[ReadStats] = None, dropped: Optional[Counter] = None,
                        read_references: ReadReferences = iter_paper_references,
                        matched: Optional[Dict[str, Set[str]]] = None,
                        tracker: Optional[RecordTracker] = None) -> Iterator[Tuple[List[str], List[List[str]]]]:
    """``(paper_ids, references)`` of the citing papers of one shard, a batch at a time, after the id filters.

    ``included`` keeps only those citing papers; ``excluded`` drops them as citing papers and drops
    references to them. Filtered edges are counted in ``dropped`` by reason. ``read_references``
    reads one file of the corpus (S2ORC shards by default; see :mod:`scincl.corpus` for the others).
    ``matched["included"|"excluded"]`` collects the listed ids the shard holds (as citing or cited paper);
    ``tracker`` hashes every citing record's id and leaves out the later copies of a paper (:mod:`.duplicates`).
    """
    stats = stats if stats is not None else ReadStats()
    dropped = dropped if dropped is not None else Counter()
    matched = matched if matched is not None else {"included": set(), "excluded": set()}
    for batch in reference_batches(read_references, shard_path, strict, stats):
        pids, refs_of = normalize_batch(batch, shard_path, strict, stats)
        if tracker is not None:
            pids, refs_of = tracker.apply(pids, refs_of)
        if excluded is not None:
            matched["excluded"].update(excluded.intersection(pids))
        if included is not None:
            matched["included"].update(included.intersection(pids))
            pids, refs_of = _keep_citing(pids, refs_of, list(map(included.__contains__, pids)), dropped,
                                         "citing_not_included")
        if excluded is not None:
            pids, refs_of = _keep_citing(pids, refs_of, [p not in excluded for p in pids], dropped, "citing_excluded")
            if not all(map(excluded.isdisjoint, refs_of)):
                kept = [refs if excluded.isdisjoint(refs) else [r for r in refs if r not in excluded]
                        for refs in refs_of]
                dropped["cited_excluded"] += sum(map(len, refs_of)) - sum(map(len, kept))
                matched["excluded"].update(excluded.intersection(chain.from_iterable(refs_of)))
                refs_of = kept
        yield pids, refs_of


def iter_citing_papers(shard_path: PathLike, included: Optional[Set[str]] = None,
                       excluded: Optional[Set[str]] = None, strict: bool = False,
                       stats: Optional[ReadStats] = None, dropped: Optional[Counter] = None,
                       read_references: ReadReferences = iter_paper_references) -> Iterator[Tuple[str, List[str]]]:
    """``(paper_id, references)`` of the citing papers of one shard: :func:`iter_citing_batches`, record by record."""
    for pids, refs_of in iter_citing_batches(shard_path, included, excluded, strict, stats, dropped, read_references):
        yield from zip(pids, refs_of)


def edge_lines(pids: Sequence[str], refs_of: Sequence[Sequence[str]]) -> str:
    """``pid<TAB>ref`` lines of every record with references, in order (C-level maps, no Python step per record)."""
    heads = list(map(str.__add__, compress(pids, refs_of), repeat("\t")))  # "pid\t"
    if not heads:
        return ""
    bodies = map(str.join, map("\n".__add__, heads), compress(refs_of, refs_of))  # "ref1\npid\tref2..."
    return "\n".join(map(str.__add__, heads, bodies)) + "\n"


def split_batch(pids: List[str], refs_of: List[List[str]], draw: Callable[[], float], test_ratio: float
                ) -> Tuple[List[List[str]], List[str], List[List[str]]]:
    """Split a batch's edges: each edge, in order, goes to test when ``draw() < test_ratio``.

    Returns the train references per record (same order as ``pids``) and the ``(paper_ids,
    references)`` of the records with test edges. One draw per edge, as :func:`train_test_assigner`.
    """
    lens = list(map(len, refs_of))
    is_test = list(map(float(test_ratio).__gt__, starmap(draw, repeat((), sum(lens)))))
    if True not in is_test:
        return refs_of, [], []
    train = list(refs_of)
    test_pids: List[str] = []
    test_refs: List[List[str]] = []
    ends = list(accumulate(lens))
    previous = -1
    for edge in compress(count(), is_test):  # positions of the test edges
        i = bisect_right(ends, edge)
        if i == previous:
            continue
        previous = i
        flags = is_test[ends[i] - lens[i]:ends[i]]
        train[i] = [r for r, t in zip(refs_of[i], flags) if not t]
        test_pids.append(pids[i])
        test_refs.append([r for r, t in zip(refs_of[i], flags) if t])
    return train, test_pids, test_refs


def extract_shard_citations(shard_path: Path, parts_dir: Path, included: Optional[Set[str]] = None,
                            excluded: Optional[Set[str]] = None, strict: bool = False,
                            test_ratio: float = 0.0, seed: int = 0,
                            read_references: ReadReferences = iter_paper_references,
                            tracker: Optional[RecordTracker] = None) -> ShardCitations:
    """Write one shard's edges to part files in ``parts_dir`` (worker function of get_citations).

    With ``test_ratio`` each edge goes to the ``train`` or ``test`` part by a seeded draw whose
    stream is named after the shard, so the split does not depend on the number of workers.
    """
    shard_path = Path(shard_path)
    name = unit_name(shard_path)
    splits = ("train", "test") if test_ratio > 0 else ("all",)
    result = ShardCitations(shard=str(shard_path), stats=ReadStats(),
                            parts={s: Path(parts_dir) / f"{name.replace('/', '.')}.{s}.part" for s in splits},
                            tracker=tracker if tracker is not None else RecordTracker())
    draw = split_stream(test_ratio, seed, stream=name).random if test_ratio > 0 else None
    with contextlib.ExitStack() as stack:
        out = {s: stack.enter_context(open(p, "w", encoding="utf-8", newline="")) for s, p in result.parts.items()}
        for pids, refs_of in iter_citing_batches(shard_path, included, excluded, strict, result.stats, result.dropped,
                                                 read_references, result.matched,
                                                 result.tracker if read_references in BATCH_READERS else None):
            result.citing_papers += len(pids)
            if draw is None:
                out["all"].write(edge_lines(pids, refs_of))
                result.edges["all"] += sum(map(len, refs_of))
                continue
            train, test_pids, test_refs = split_batch(pids, refs_of, draw, test_ratio)
            for split, (split_pids, split_refs) in (("train", (pids, train)), ("test", (test_pids, test_refs))):
                out[split].write(edge_lines(split_pids, split_refs))
                result.edges[split] += sum(map(len, split_refs))
    return result


def split_stream(test_ratio: float, seed: int = 0, stream: str = "") -> random.Random:
    """The seeded random stream of :func:`train_test_assigner` (``test_ratio`` is validated here)."""
    if not 0.0 <= test_ratio < 1.0:
        raise InputError(f"test_ratio must be in [0, 1), got {test_ratio}")
    return random.Random(f"{seed}/{stream}" if stream else seed)


def train_test_assigner(test_ratio: float, seed: int = 0, stream: str = "") -> Callable[[], bool]:
    """A seeded stream of decisions "this edge goes to the test split" with probability ``test_ratio``.

    ``stream`` names an independent stream (get_citations uses the shard name); applied to edges
    in file order it gives the same split for the same input and seed.
    """
    draw = split_stream(test_ratio, seed, stream).random
    return lambda: draw() < test_ratio


def split_train_test(edges: Iterable[Tuple[str, str]], test_ratio: float,
                     seed: int = 0) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    """Split edges into (train, test) lists exactly as ``get_citations --test_ratio`` splits its file."""
    is_test = train_test_assigner(test_ratio, seed)
    train: List[Tuple[str, str]] = []
    test: List[Tuple[str, str]] = []
    for edge in edges:
        (test if is_test() else train).append(edge)
    return train, test


def read_citations_tsv(path: PathLike) -> Iterator[Tuple[str, str]]:
    """Yield ``(citing, cited)`` from a citations TSV (gzip-aware; ``#`` comment lines skipped).

    A line with fewer than two tab-separated columns is an :class:`InputError` naming file and line.
    """
    for line_no, cols in iter_tsv(path, min_columns=1):
        if len(cols) < 2 or not cols[0] or not cols[1]:
            raise InputError("expected two tab-separated paper ids", path=path, line=line_no)
        yield cols[0], cols[1]


def citation_output_paths(output: PathLike, test_ratio: float = 0.0) -> Dict[str, Path]:
    """Output files of get_citations: ``citations.tsv`` (or train/test) and ``citations.stats.json``.

    ``output`` is a directory, or, when it ends in ``.tsv``, the citations file itself (as in the
    original README's ``.../s2orc_without_scidocs_citations.tsv``); a split then writes
    ``<stem>.train.tsv`` and ``<stem>.test.tsv`` next to it.
    """
    out = Path(output)
    if out.name.endswith(".tsv"):
        base, stem = out.parent, out.name[: -len(".tsv")]
    else:
        base, stem = out, "citations"
    paths = {"stats": base / f"{stem}.stats.json"}
    if test_ratio > 0:
        paths["train"] = base / f"{stem}.train.tsv"
        paths["test"] = base / f"{stem}.test.tsv"
    else:
        paths["all"] = base / f"{stem}.tsv"
    return paths


def _sample_nodes(part_paths: Sequence[Path], n_nodes: int, seed: int) -> Set[str]:
    """``n_nodes`` nodes drawn (seeded) from the sorted set of edge endpoints."""
    nodes: Set[str] = set()
    for part in part_paths:
        with open(part, encoding="utf-8") as fh:
            for line in fh:
                a, b = line.rstrip("\n").split("\t")
                nodes.add(a)
                nodes.add(b)
    ordered = sorted(nodes)
    if n_nodes >= len(ordered):
        logger.warning("sample_n_nodes=%d >= %d nodes in the graph: keeping all", n_nodes, len(ordered))
        return nodes
    return set(random.Random(seed).sample(ordered, n_nodes))


def _concatenate(parts: Sequence[Path], out: IO[bytes]) -> None:
    for part in parts:
        with open(part, "rb") as fh:
            shutil.copyfileobj(fh, out, 1 << 20)


def _write_node_sample(parts: Sequence[Path], handles: Dict[str, IO[bytes]], keep: Set[str],
                       test_ratio: float, seed: int, counts: Counter) -> None:
    """Edges between sampled nodes only, split (when asked) by one seeded stream in file order."""
    is_test = train_test_assigner(test_ratio, seed, stream="node_sample") if test_ratio > 0 else None
    for part in parts:
        with open(part, "rb") as fh:
            for line in fh:
                a, b = line.rstrip(b"\n").split(b"\t")
                if a.decode() not in keep or b.decode() not in keep:
                    counts["not_in_node_sample"] += 1
                    continue
                split = "all" if is_test is None else ("test" if is_test() else "train")
                handles[split].write(line)
                counts[split] += 1


def _rerun_shard(job: Tuple[Path, RecordTracker], worker: Callable[..., ShardCitations]) -> ShardCitations:
    return worker(job[0], tracker=job[1])


def without_later_copies(results: List[ShardCitations], worker: Callable[..., ShardCitations],
                         shards: Sequence[Path], workers: int) -> List[ShardCitations]:
    """The shards' results with every citing paper's later copies left out (:mod:`scincl.graph.duplicates`), counted
    as ``duplicate_paper_id`` (S2ORC shards, one record per paper; formats with one record per citation, S2AG and
    plain, legitimately name a citing paper again in a later run of lines): the shards holding a repeated id hash are read again to compare the ids, then those
    with a later copy are extracted again without it."""
    candidates = candidate_copies([r.tracker.all_hashes() for r in results])
    if not candidates:
        return results
    rerun = partial(_rerun_shard, worker=worker)
    order = sorted(candidates)
    probed = map_shards(rerun, [(shards[i], RecordTracker(probe=candidates[i])) for i in order], workers,
                        desc="duplicate ids")
    drops = later_copies({i: r.tracker.probed for i, r in zip(order, probed)})
    results = list(results)
    for i, redone in zip(sorted(drops), map_shards(rerun, [(shards[i], RecordTracker(drop=drops[i]))
                                                            for i in sorted(drops)], workers, desc="duplicate ids")):
        redone.stats.counted[DUPLICATE_PAPER_ID] += len(drops[i])
        results[i] = redone
    if drops:
        logger.warning("citations: %d records repeat a citing paper found earlier (another shard or line); their "
                       "edges are left out (counted as %s)", sum(map(len, drops.values())), DUPLICATE_PAPER_ID)
    return results


def id_list_coverage(included: Optional[Set[str]], excluded: Optional[Set[str]], results: Sequence[ShardCitations],
                     corpus: PathLike) -> Dict[str, Dict]:
    """How many of the included / excluded ids the corpus holds (:func:`scincl.ids.check_id_coverage`: none is an
    error before any output is written, few a warning), for the stats' ``id_lists``."""
    out = {}
    for name, ids in (("included", included), ("excluded", excluded)):
        if ids:
            found = set().union(*(r.matched[name] for r in results))
            out[f"{name}_paper_ids"] = check_id_coverage(f"{name} paper ids", len(ids), len(found), str(corpus))
    return out


def extract_citations(shards: Sequence[Path], output: PathLike, workers: int = 1, test_ratio: float = 0.0,
                      seed: int = 0, included: Optional[Set[str]] = None, excluded: Optional[Set[str]] = None,
                      sample_n_nodes: int = 0, strict: bool = False,
                      read_references: ReadReferences = iter_paper_references) -> Dict:
    """Extract citation edges of ``shards`` into the TSV file(s) of :func:`citation_output_paths`.

    Workers write per-shard part files; they are concatenated in shard order (the same bytes for
    any number of workers). Returns the stats dict (the caller writes it as the stats json).
    ``shards`` and ``read_references`` come from :func:`scincl.corpus.open_corpus` for other formats.
    """
    paths = citation_output_paths(output, test_ratio)
    train_test_assigner(test_ratio, seed)  # validates test_ratio before any work
    splits = [k for k in ("all", "train", "test") if k in paths]
    base = paths["stats"].parent
    created = not base.exists()
    base.mkdir(parents=True, exist_ok=True)
    parts_dir = make_temporary_dir(base, "citations.parts")
    try:
        worker = partial(extract_shard_citations, parts_dir=parts_dir, included=included, excluded=excluded,
                         strict=strict, test_ratio=0.0 if sample_n_nodes else test_ratio, seed=seed,
                         read_references=read_references)
        results: List[ShardCitations] = map_shards(worker, shards, workers, desc="citations")
        results = without_later_copies(results, worker, shards, workers)
        stats = ReadStats()
        dropped: Counter = Counter()
        counts: Counter = Counter()
        for r in results:
            stats.merge(r.stats)
            dropped.update(r.dropped)
        coverage = id_list_coverage(included, excluded, results, Path(shards[0]).parent if shards else base)
        with contextlib.ExitStack() as stack:  # exits in reverse: files closed, then renamed into place
            tmp = {s: stack.enter_context(atomic_path(paths[s])) for s in splits}
            handles = {s: stack.enter_context(open(tmp[s], "wb")) for s in splits}
            if sample_n_nodes:
                parts = [r.parts["all"] for r in results]
                keep = _sample_nodes(parts, sample_n_nodes, seed)
                _write_node_sample(parts, handles, keep, test_ratio, seed, counts)
                dropped["not_in_node_sample"] = counts.pop("not_in_node_sample", 0)
            else:
                for split in splits:
                    _concatenate([r.parts[split] for r in results], handles[split])
                    counts[split] = sum(r.edges[split] for r in results)
    except InputError:
        shutil.rmtree(parts_dir, ignore_errors=True)
        if created and base.is_dir() and not any(base.iterdir()):
            base.rmdir()  # a refusal (bad input) leaves no empty output folder behind
        raise
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    edges = sum(counts[s] for s in splits)
    summary = {
        **stats.to_dict(),
        "citing_papers": sum(r.citing_papers for r in results),
        "edges": edges,
        "edges_by_split": {s: counts[s] for s in splits},
        "edges_dropped": dict(sorted(dropped.items())),
        "id_lists": coverage,
        "outputs": {k: str(v) for k, v in paths.items()},
        "settings": {"workers": workers, "test_ratio": test_ratio, "seed": seed, "sample_n_nodes": sample_n_nodes,
                     "included_paper_ids": None if included is None else len(included),
                     "excluded_paper_ids": None if excluded is None else len(excluded), "strict": strict},
    }
    logger.info("citations: %d papers read, %d citing papers, %d edges %s, %d skipped lines",
                summary["papers_read"], summary["citing_papers"], edges, summary["edges_by_split"],
                summary["skipped_lines"])
    return summary
