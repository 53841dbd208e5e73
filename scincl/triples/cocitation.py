"""MP-BERT4CR groups: discrete co-citation noise-distribution sampling over citation edges.

MP-BERT4CR (Zhang & Ma 2021, ``../shared/papers/001_3753c6be31fc929c.txt`` §4.1.3–4.1.4) samples,
for a citation context with target ``t``, co-cited positives by eq. 1 and negatives by eq. 2::

    p(H_ti ∈ H_p) = frequency(H_ts, H_ti)^(3/4) / Σ_{H_tj ∈ H_d} frequency(H_ts, H_tj)^(3/4)   (1)
    p(H_i ∈ H)    = count(H_i)^(3/4) / Σ_{H_i ∈ H} count(H_i)^(3/4)                          (2)

("frequency denotes the count of the two input papers being appeared as co-citations"; ``H`` = "all
the papers in the dataset except the positive citations", ``count`` = "the number of occurrences as
citations"). We build one training group per citation edge ``s → t`` of the training graph (the
paper's unit is a citation *context* in the citing manuscript; without contexts, the citing paper
stands for it):

- **source** ``s``: the citing paper (the group's query);
- **target** ``t``: a paper ``s`` cites (the group's first positive);
- **co-cited positives** ``c¹ … cⁿ``: up to ``n`` distinct papers co-cited with ``t`` (some paper
  cites both), drawn without replacement with probability ∝ ``cocitation_count(t, c) ** ¾``
  (eq. 1, Efraimidis-Spirakis); ``s`` and ``t`` themselves are never among them; a target
  co-cited with nothing keeps an empty list (the losses then fall back to the target terms);
- **negatives** ``n¹ … nᵐ``: ``m`` distinct papers not cited by ``s`` (and neither ``s`` nor one of
  the group's positives), drawn ∝ ``citation_count ** ¾`` (eq. 2, word2vec's unigram^¾ noise
  distribution; papers never cited have weight 0 and are never drawn).

Defaults ``n = 3``, ``m = 4`` (paper §5.2: at most 3 co-cited positives, 4 negatives), exponent ¾
(:mod:`scincl.triples.config`).
Output: groups jsonl ``{"query_paper_id": s, "positives": [t, c¹, …], "negatives": […]}``
(:mod:`scincl.triples.groups`) and/or a triples CSV (i-th positive with i-th negative, the shorter
list cycling). Edges are processed in fixed blocks, each with its own random stream
``numpy.random.default_rng([seed, 3, block])``, so the output is byte-identical for any ``--workers``.
The *continuous* co-citation variant is :func:`scincl.triples.knn_miner.get_knn_triples` run on
co-citation-graph embeddings (``biggraph_configs/cocitations_768d_dot.py``).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
from tqdm.auto import tqdm

from scincl.corpus.shards import process_pool
from scincl.errors import InputError
from scincl.io import PathLike, write_json, write_jsonl, write_triples_csv
from scincl.triples.citation_graph import CitationGraph, Csr, build_citation_graph, padded, sample_segments
from scincl.triples.config import COCITATION_NEGATIVES_COUNT, COCITATION_POSITIVES_COUNT, COCITATION_POWER
from scincl.triples.groups import group_record, group_triplets
from scincl.provenance import OutputRecord, split_path_values
from scincl.triples.knn_miner import args_path
from scincl.triples.queries import QueryPapers
from scincl.triples.specter_like import candidate_query_codes
from scincl.triples.strategies import NotEnoughCandidates, random_rows
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

EDGES_PER_BLOCK = 4096  # fixed block size: the random streams (and so the output) never depend on --workers


def cocitation_csr(graph: CitationGraph, pairs: Iterable[Tuple[str, str, int]], min_count: int = 1) -> Csr:
    """Symmetric co-citation CSR over the graph's vocabulary with counts in ``data``."""
    a_ids, b_ids, counts = [], [], []
    for a, b, c in pairs:
        if c >= min_count and a != b:
            a_ids.append(a)
            b_ids.append(b)
            counts.append(c)
    if not a_ids:
        raise InputError(f"no co-citation pairs with count >= {min_count}")
    a = graph.codes(a_ids, "co-cited papers")
    b = graph.codes(b_ids, "co-cited papers")
    n = graph.size
    src, dst = np.concatenate([a, b]), np.concatenate([b, a])
    data = np.concatenate([counts, counts]).astype(np.float64)
    keys, first = np.unique(src * n + dst, return_index=True)  # the TSV lists both directions already
    return Csr.from_edges(keys // n, keys % n, n, data=data[first])


def cocitation_pairs_from_graph(graph: CitationGraph) -> Iterable[Tuple[str, str, int]]:
    """Co-citation counts computed from the graph's reference lists (scincl.graph.cocitations)."""
    from scincl.graph.cocitations import count_cocitations

    ids = graph.ids
    _, refs = graph.outbound.gather(np.arange(graph.size))
    bounds = np.concatenate(([0], np.cumsum(graph.outbound.degree())))
    lists = (ids[refs[bounds[i]:bounds[i + 1]]].tolist() for i in range(graph.size) if bounds[i + 1] - bounds[i] > 1)
    return ((a, b, c) for (a, b), c in count_cocitations(lists).items())


@dataclass
class GroupSampler:
    """Everything a block of edges needs: the graph's CSRs and the noise distributions (plain arrays)."""

    outbound: Csr
    cocitations: Csr
    negative_weights: np.ndarray  # [papers] citation_count ** power
    cocited_count: int
    negatives_count: int
    power: float

    def sample(self, sources: np.ndarray, targets: np.ndarray, rng: np.random.Generator
               ) -> Tuple[np.ndarray, np.ndarray]:
        """Co-cited positives ``[E, n]`` and negatives ``[E, m]`` (padded with ``-1``) for edges ``s → t``."""
        n_edges = len(sources)
        seg, pos = self.cocitations.positions(targets)
        candidates = self.cocitations.indices[pos]
        weights = self.cocitations.data[pos] ** self.power
        weights = np.where(candidates == sources[seg], 0.0, weights)  # the source is never its own positive
        cocited = sample_segments(seg, candidates, n_edges, self.cocited_count, rng, weights=weights, up_to=True)
        ref_seg, refs = self.outbound.gather(sources)  # every paper s cites, the target included
        excluded = np.concatenate([padded(ref_seg, refs, n_edges), cocited], axis=1)
        negatives = random_rows(sources, len(self.negative_weights), self.negatives_count, rng,
                                exclude=excluded, weights=self.negative_weights)
        return cocited, negatives


_WORKER_STATE: Dict[str, Any] = {}


def _init_worker(sampler: GroupSampler, sources: np.ndarray, targets: np.ndarray, seed: int) -> None:
    _WORKER_STATE.update(sampler=sampler, sources=sources, targets=targets, seed=seed)


def _sample_block(block: int) -> Tuple[np.ndarray, np.ndarray]:
    state = _WORKER_STATE
    start, stop = block * EDGES_PER_BLOCK, (block + 1) * EDGES_PER_BLOCK
    return state["sampler"].sample(state["sources"][start:stop], state["targets"][start:stop],
                                   np.random.default_rng([state["seed"], 3, block]))


def sample_groups(sampler: GroupSampler, sources: np.ndarray, targets: np.ndarray, seed: int,
                  workers: int = 1) -> Tuple[np.ndarray, np.ndarray]:
    """Groups of all edges ``sources[i] → targets[i]``: ``(cocited [E, n], negatives [E, m])``.

    Blocks of :data:`EDGES_PER_BLOCK` edges, block ``b`` drawn from ``default_rng([seed, 3, b])``;
    ``workers`` processes share the blocks, results come back in block order (same output for any
    ``workers``).
    """
    blocks = range(-(-len(sources) // EDGES_PER_BLOCK))
    workers = max(1, min(int(workers), len(blocks)))
    bar = dict(desc="co-citation groups", unit="block", total=len(blocks), disable=len(blocks) <= 1)
    try:
        if workers == 1:
            _init_worker(sampler, sources, targets, seed)
            results = [_sample_block(b) for b in tqdm(blocks, **bar)]
        else:
            with process_pool(workers, _init_worker, (sampler, sources, targets, seed)) as pool:
                results = list(tqdm(pool.imap(_sample_block, blocks), **bar))
    except NotEnoughCandidates as exc:
        raise InputError(f"negatives: {exc}") from None
    finally:
        _WORKER_STATE.clear()
    width = lambda i, count: np.concatenate([r[i] for r in results]) if results else np.zeros((0, count), np.int64)  # noqa: E731
    return width(0, sampler.cocited_count), width(1, sampler.negatives_count)


def source_edges(graph: CitationGraph, query_papers: QueryPapers, seed: int) -> Tuple[np.ndarray, np.ndarray, int]:
    """``(sources, targets, papers without citations)``: the edges of the selected citing papers.

    ``--query_papers`` selects source papers (``all``, a count, a ratio or a JSON id list); a count
    or ratio counts papers that cite something. Edges are in source order, targets sorted.
    """
    candidates, wanted = candidate_query_codes(graph, query_papers, seed)
    cites = graph.outbound.degree(candidates) > 0
    without = int((~cites).sum()) if wanted is None else 0
    sources = candidates[cites]
    if wanted is not None:
        sources = sources[:wanted]
    seg, targets = graph.outbound.gather(sources)
    return sources[seg], targets, without


def _records(ids: np.ndarray, sources: np.ndarray, targets: np.ndarray, cocited: np.ndarray,
             negatives: np.ndarray) -> Iterator[Tuple[str, List[str], List[str]]]:
    for s, t, cc, nn in zip(sources, targets, cocited, negatives):
        yield ids[s], [ids[t], *ids[cc[cc >= 0]]], ids[nn].tolist()


@writes("output_path", "groups_output_path")
def get_cocitation_triples(
    citations_input_path: PathLike,
    output_path: Optional[PathLike] = None,
    groups_output_path: Optional[PathLike] = None,
    cocitations_input_path: Optional[PathLike] = None,
    query_papers: QueryPapers = None,
    positives_count: int = COCITATION_POSITIVES_COUNT,
    negatives_count: int = COCITATION_NEGATIVES_COUNT,
    power: float = COCITATION_POWER,
    min_cocitation_count: int = 1,
    seed: int = 0,
    workers: Optional[int] = None,
    override: bool = False,
) -> Dict[str, int]:
    """MP-BERT4CR groups (one per citation edge) -> groups jsonl and/or triples CSV; returns the counts.

    ``positives_count`` = ``n``, the most co-cited positives per group besides the target (3);
    ``negatives_count`` = ``m`` (4); ``power`` = the exponent of both noise distributions (¾).
    Citation counts (negative weights) come from ``citations.tsv``; co-citation counts from
    ``cocitations_input_path`` (``a<TAB>b<TAB>count``, cli_s2orc get_cocitations) or, when absent,
    from the citations. ``workers`` processes (default: all CPUs) never change the output.
    """
    from scincl.graph.citations import read_citations_tsv
    from scincl.graph.cocitations import read_cocitations_tsv

    if output_path is None and groups_output_path is None:
        raise InputError("give --output_path (triples CSV) and/or --groups_output_path (jsonl groups)")
    if positives_count < 0 or negatives_count < 1 or power < 0:
        raise InputError("--positives_count must be >= 0, --negatives_count >= 1 and --power >= 0")
    outputs = [Path(p) for p in (output_path, groups_output_path) if p is not None]
    id_settings, id_inputs = split_path_values(query_papers=query_papers)
    record = OutputRecord(*outputs, command="get_cocitation_triples", record_file=args_path(outputs[0]),
                          key="made_by", settings={
                              "positives_count": positives_count, "negatives_count": negatives_count, "power": power,
                              "min_cocitation_count": min_cocitation_count, "seed": seed,
                              "outputs": [p.name for p in outputs], **id_settings},
                          inputs=[citations_input_path, cocitations_input_path, *id_inputs])
    if record.reusable(override):
        return {}
    graph = build_citation_graph(read_citations_tsv(citations_input_path))
    pairs = (read_cocitations_tsv(cocitations_input_path) if cocitations_input_path
             else cocitation_pairs_from_graph(graph))
    sampler = GroupSampler(
        outbound=graph.outbound, cocitations=cocitation_csr(graph, pairs, min_count=min_cocitation_count),
        negative_weights=graph.inbound.degree().astype(np.float64) ** power,
        cocited_count=int(positives_count), negatives_count=int(negatives_count), power=float(power))
    sources, targets, without_citations = source_edges(graph, query_papers, seed)
    if len(sources) == 0:
        raise InputError("none of the query papers cites a paper of the graph: no groups")
    cocited, negatives = sample_groups(sampler, sources, targets, seed, workers=workers or os.cpu_count() or 1)
    cocited_per_group = (cocited >= 0).sum(axis=1)
    stats = {"sources": int(len(np.unique(sources))), "groups": int(len(sources)),
             "sources_without_citations": without_citations,
             "targets_without_cocitations": int((cocited_per_group == 0).sum()),
             "groups_with_fewer_cocited": int((cocited_per_group < positives_count).sum()),
             "cocited_positives": int(cocited_per_group.sum())}
    ids = graph.ids.astype(object)
    if groups_output_path is not None:
        write_jsonl(groups_output_path, (group_record(*r) for r in _records(ids, sources, targets, cocited, negatives)))
    if output_path is not None:
        stats["triples"] = write_triples_csv(output_path, (
            row for r in _records(ids, sources, targets, cocited, negatives) for row in group_triplets(*r)))
    logger.info("co-citation groups: %s", stats)
    settings = {"command": "get_cocitation_triples", "citations_input_path": str(citations_input_path),
                "cocitations_input_path": None if cocitations_input_path is None else str(cocitations_input_path),
                "positives_count": positives_count, "negatives_count": negatives_count, "power": power,
                "min_cocitation_count": min_cocitation_count, "seed": seed, "stats": stats}
    write_json(args_path(outputs[0]), settings)
    record.write()  # last: the groups and triplets are complete
    return stats
