#!/usr/bin/env python
"""`cli_triples.py`: triplet mining (SciNCL kNN, SPECTER-like, co-citation, pairs, oracle SciDocs) + metadata.

Subcommands are the public functions below; `python cli_triples.py SUBCOMMAND --help` shows each
docstring. The logic lives in `scincl/triples/`.
"""
from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from scincl.cli import commands_of, run_cli
from scincl.triples.config import (
    COCITATION_NEGATIVES_COUNT, COCITATION_POSITIVES_COUNT, COCITATION_POWER, DEFAULT_ANN_NORMALIZE_EMBEDDINGS,
)

logger = logging.getLogger("cli_triples")


def get_knn_triples(
    output_path: str,
    graph_paper_ids_path: str,
    graph_embeddings_path: str,
    query_papers: Any = None,
    triples_per_query: int = 5,
    easy_positives_count: int = 5,
    easy_positives_strategy: str = "knn",
    easy_positives_k_min: int = 20,
    easy_positives_k_max: int = 25,
    easy_negatives_count: int = 3,
    easy_negatives_strategy: str = "random_without_knn",
    hard_negatives_count: int = 2,
    hard_negatives_strategy: str = "knn",
    hard_negatives_k_min: int = 3998,
    hard_negatives_k_max: int = 4000,
    ann_metric: str = "inner_product",
    ann_backend: str = "faiss",
    ann_index_path: Optional[str] = None,
    ann_normalize_embeddings: bool = DEFAULT_ANN_NORMALIZE_EMBEDDINGS,
    ann_batch_size: int = 512,
    ann_device: int = -1,
    faiss_string_factory: str = "Flat",
    faiss_nprobe: Optional[int] = None,
    include_paper_ids: Optional[str] = None,
    seed: int = 0,
    workers: Optional[int] = None,
    gzip: bool = False,
    override: bool = False,
    **strategy_options: Any,
) -> None:
    """SciNCL triples: positives and hard negatives from the kNN of each query in the graph embedding.

    One kNN search per query up to the largest k (+1 for the query itself, never a neighbour).
    Defaults = paper's best setting: positives n_21..n_25, 3 easy negatives `random_without_knn`,
    hard negatives n_3999..n_4000, 5 triples per query. Output: CSV `query_paper_id,positive_id,negative_id`
    (+ `.gz` with --gzip) and `<output>.args.json`.

    Inputs: --graph_paper_ids_path entity_names_paper_id_0.json --graph_embeddings_path embeddings.h5
    (or .npy); the faiss index is built at --ann_index_path (default <output>.faiss) or reused.
    Embeddings are L2-normalised for the search by default (the original README's build_faiss --do_normalize,
    shared with run_specter); --noann_normalize_embeddings searches the raw vectors.
    --query_papers: 'all' (default), a count, a ratio in (0, 1], or a JSON list file of paper ids.
    --include_paper_ids IDS.json limits the corpus (index, queries, candidates) to those papers, e.g. the
    ones with texts. An existing output is reused unless --override; an existing index is reused.
    --ann_backend faiss (the index; any factory) or exact (torch matrix products over the index rows'
    vectors, any k, on --ann_device N = a CUDA device or -1 = CPU; ties ranked by ascending row).

    --k_scale corpus sizes k+ and k-hard for this corpus from the paper's k/N ratios (k+ 25 and k-hard
    4000 of a 680,967-paper index; floors c+ <= k+ - c+ and k-hard >= 2 k+ + c-), replacing the four
    k flags; --k_scale paper (default) keeps them.

    Slots: {easy,medium,hard}_{positives,negatives}_{count,strategy,k_min,k_max,range}; strategies:
    knn, random, random_without_knn, random_sorted, random_without_knn_sorted, range, kmeans.
    A knn interval wider than its count samples count of its members. Other options:
    --random_sorted_sample_n 100 --min_range_results_count 10 --range_fallback_to_random --k_means_clusters N.
    Same inputs + --seed give byte-identical output for any --workers (faiss threads).
    """
    from scincl.triples.knn_miner import get_knn_triples as run

    run(output_path, graph_paper_ids_path, graph_embeddings_path, query_papers=query_papers,
        triples_per_query=triples_per_query, easy_positives_count=easy_positives_count,
        easy_positives_strategy=easy_positives_strategy, easy_positives_k_min=easy_positives_k_min,
        easy_positives_k_max=easy_positives_k_max, easy_negatives_count=easy_negatives_count,
        easy_negatives_strategy=easy_negatives_strategy, hard_negatives_count=hard_negatives_count,
        hard_negatives_strategy=hard_negatives_strategy, hard_negatives_k_min=hard_negatives_k_min,
        hard_negatives_k_max=hard_negatives_k_max, ann_metric=ann_metric, ann_backend=ann_backend,
        ann_index_path=ann_index_path, ann_normalize_embeddings=ann_normalize_embeddings,
        ann_batch_size=ann_batch_size, ann_device=ann_device, faiss_string_factory=faiss_string_factory,
        faiss_nprobe=faiss_nprobe, include_paper_ids=include_paper_ids, seed=seed, workers=workers, gzip=gzip,
        override=override, **strategy_options)


def count_collisions(*triples_paths: str, output_path: Optional[str] = None) -> None:
    """Count pairs that are both positive and negative (same query, and symmetric {a,b}) in triples files.

    One file: collisions within it. Several files (e.g. one per strategy): each file, then all together
    (a positive pair of one file that is a negative pair of another counts). Prints a markdown table;
    --output_path writes the report as json.
    """
    from scincl.errors import InputError
    from scincl.io import write_json
    from scincl.triples.collisions import count_collisions_in_files, format_collision_report

    if not triples_paths:
        raise InputError("give at least one triples file")
    report = count_collisions_in_files(triples_paths)
    print(format_collision_report(report))
    if output_path:
        write_json(output_path, report)


def sweep_collision_margins(
    graph_paper_ids_path: str,
    graph_embeddings_path: str,
    ann_index_path: str,
    query_papers: Any = None,
    positives_k: Sequence[int] = (25,),
    hard_negatives_k: Sequence[int] = (30, 50, 100, 250, 500, 1000, 2000, 4000),
    output_path: Optional[str] = None,
    ann_metric: str = "inner_product",
    ann_normalize_embeddings: bool = False,
    seed: int = 0,
    workers: Optional[int] = None,
    include_paper_ids: Optional[str] = None,
    **config_options: Any,
) -> None:
    """Collisions vs the margin between k+ and k-hard (paper Fig. 5): one kNN search, a grid of settings.

    --positives_k [25] --hard_negatives_k [30,50,...,4000]; other slot flags as in get_knn_triples
    (e.g. --easy_negatives_strategy random). Prints a markdown table, then the recommended setting
    (the smallest margin without collisions) as flags to paste into run_specter / get_knn_triples;
    --output_path writes json.
    """
    from scincl.triples.margins import format_sweep, recommend_margin, sweep_collision_margins as run

    rows = run(graph_paper_ids_path, graph_embeddings_path, ann_index_path, query_papers=query_papers,
               positives_k=positives_k, hard_negatives_k=hard_negatives_k, output_path=output_path,
               ann_metric=ann_metric, ann_normalize_embeddings=ann_normalize_embeddings, seed=seed,
               workers=workers, include_paper_ids=include_paper_ids, **config_options)
    print(format_sweep(rows))
    print(recommend_margin(rows, int(config_options.get("easy_positives_count", 5)),
                           int(config_options.get("hard_negatives_count", 2))))


def get_specter_like_triples(
    citations_input_path: str,
    output_path: str,
    query_papers: Any = None,
    triples_count: Optional[int] = None,
    triples_per_query: int = 5,
    easy_positives_count: int = 5,
    easy_negatives_count: int = 3,
    hard_negatives_count: int = 2,
    bidirectional: bool = False,
    seed: int = 0,
    gzip: bool = False,
    override: bool = False,
) -> None:
    """SPECTER-like triples: positives = cited by the query, hard negatives = citations of citations not
    cited, easy negatives = random not cited. --bidirectional also takes papers citing the query as
    positives (paper A.7.10). --query_papers: 'all', a count, a ratio or a JSON id file; queries without
    5 positives / 2 hard negatives are skipped (counted); --triples_count truncates to exactly that many.
    """
    from scincl.triples.specter_like import get_specter_like_triples as run

    run(citations_input_path, output_path, query_papers=query_papers, triples_count=triples_count,
        triples_per_query=triples_per_query, easy_positives_count=easy_positives_count,
        easy_negatives_count=easy_negatives_count, hard_negatives_count=hard_negatives_count,
        bidirectional=bidirectional, seed=seed, gzip=gzip, override=override)


def get_cocitation_triples(
    citations_input_path: str,
    output_path: Optional[str] = None,
    groups_output_path: Optional[str] = None,
    cocitations_input_path: Optional[str] = None,
    query_papers: Any = None,
    positives_count: int = COCITATION_POSITIVES_COUNT,
    negatives_count: int = COCITATION_NEGATIVES_COUNT,
    power: float = COCITATION_POWER,
    min_cocitation_count: int = 1,
    seed: int = 0,
    workers: Optional[int] = None,
    override: bool = False,
) -> None:
    """MP-BERT4CR groups: one per citation edge s -> t of the graph (s = source/query, t = target).

    Positives = [t, up to --positives_count (3) papers co-cited with t, drawn without replacement with
    P ~ cocitation_count(t, c)^power (eq. 1)]; negatives = --negatives_count (4) papers not cited by s,
    P ~ citation_count^power (eq. 2); --power 0.75. Writes groups jsonl
    {"query_paper_id": s, "positives": [t, c1, ...], "negatives": [...]} (--groups_output_path; first positive
    = the target) and/or triples CSV (--output_path; i-th positive with i-th negative, shorter list cycling).
    Co-citation counts from --cocitations_input_path (a<TAB>b<TAB>count) or computed from the citations.
    --query_papers selects source papers ('all', a count, a ratio or a JSON id list). Same --seed =
    byte-identical output for any --workers (default: all CPUs).
    (Continuous co-citation = get_knn_triples on co-citation-graph embeddings.)
    """
    from scincl.triples.cocitation import get_cocitation_triples as run

    run(citations_input_path, output_path=output_path, groups_output_path=groups_output_path,
        cocitations_input_path=cocitations_input_path, query_papers=query_papers,
        positives_count=positives_count, negatives_count=negatives_count, power=power,
        min_cocitation_count=min_cocitation_count, seed=seed, workers=workers, override=override)


def get_pairs(
    citations_input_path: str,
    output_path: str,
    relations: Any = "dc,cc,bc",
    pairs_per_relation: Optional[int] = None,
    min_cocitation_count: int = 1,
    min_coupling_count: int = 1,
    negatives: str = "hard",
    seed: int = 0,
    override: bool = False,
) -> None:
    """Positive pairs of direct citation (dc), co-citation (cc), bibliographic coupling (bc), their unions
    (dc|cc) and intersections (cc&bc); each comma-separated relation down-sampled to the same size (OpenMSD).
    --negatives hard (SPECTER citations of citations) | random -> triples CSV; none -> pairs CSV
    `query_paper_id,positive_id`.
    """
    from scincl.triples.pairs import get_pairs as run

    run(citations_input_path, output_path, relations=relations, pairs_per_relation=pairs_per_relation,
        min_cocitation_count=min_cocitation_count, min_coupling_count=min_coupling_count,
        negatives=negatives, seed=seed, override=override)


def get_scidocs_triples(
    scidocs_dir: str,
    output_path: str,
    val_or_test_or_both: str = "test",
    tasks: Any = None,
    sample_classification_triples: Optional[int] = None,
    id_mapping_path: Optional[str] = None,
    seed: int = 0,
    override: bool = False,
) -> None:
    """Oracle SciDocs triples (paper Table 1) from the gold labels: qrel tasks pair the i-th relevant with the
    i-th non-relevant candidate, recomm clicked vs not clicked, mag/mesh same label vs other label,
    under-sampled to --sample_classification_triples (default: mean of the ranking tasks; 0 = all).
    """
    from scincl.triples.scidocs_oracle import get_scidocs_triples as run

    run(scidocs_dir, output_path, val_or_test_or_both=val_or_test_or_both, tasks=tasks,
        sample_classification_triples=sample_classification_triples, id_mapping_path=id_mapping_path,
        seed=seed, override=override)


def get_metadata(
    input_path: str,
    output_path: str,
    s2orc_metadata_dir: Optional[str] = None,
    workers: int = 1,
    jsonl_metadata_path: Optional[str] = None,
    override: bool = False,
    corpus_format: Optional[str] = None,
) -> None:
    """Write {paper_id,title,abstract} jsonl(.gz) for the papers of a triples CSV (or a JSON id list),
    streaming the corpus files in parallel (--workers), or filtering --jsonl_metadata_path.
    --s2orc_metadata_dir is the corpus folder, in --corpus_format s2orc|s2ag|openalex|plain (default:
    detected). Papers not found are counted and reported.
    """
    from scincl.triples.metadata import get_metadata as run

    run(input_path, output_path, s2orc_metadata_dir=s2orc_metadata_dir, workers=workers,
        jsonl_metadata_path=jsonl_metadata_path, override=override, corpus_format=corpus_format)


def extract_ids_from_triples(
    triples_input_path: str,
    output_dir: str,
    paper_ids_file_name: str = "s2orc_paper_ids.json",
    query_paper_ids_file_name: str = "query_s2orc_paper_ids.json",
) -> None:
    """Write the sorted ids of all papers and of the query papers of a triples file as JSON lists."""
    from scincl.triples.metadata import extract_ids_from_triples as run

    run(triples_input_path, output_dir, paper_ids_file_name=paper_ids_file_name,
        query_paper_ids_file_name=query_paper_ids_file_name)


if __name__ == "__main__":
    run_cli(commands_of(globals()))
