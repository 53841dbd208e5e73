"""The graph stage as library calls: citation graph, co-citations and text positions of any corpus format.

``cli_s2orc.py`` lists these functions as subcommands (same names and flags) and the pipelines
(``scincl/pipeline/``) call them directly. Each reuses existing outputs unless ``override``
when its made-by record says they were made from the same inputs and settings and are unchanged
(:class:`scincl.provenance.OutputRecord`) and writes a ``*.stats.json`` of counts beside its output.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional, Union

from scincl.corpus.outputs import (nothing_read, open_corpus_with_workers, resolved_format, stats_path_of,
                                   worker_count, write_json_any)
from scincl.corpus.s2orc_mappings import metadata_id_mapping
from scincl.corpus.shards import load_id_set
from scincl.corpus.stage import write_specter_corpus_ids
from scincl.errors import InputError
from scincl.graph.citations import citation_output_paths, extract_citations
from scincl.graph.regroup import corpus_cocitations
from scincl.io import write_json
from scincl.provenance import OutputRecord
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


@writes("output_dir")
def get_citations(s2orc_metadata_dir: str, output_dir: str, workers: Optional[int] = None, test_ratio: float = 0.0,
                  sample_n_nodes: int = 0, seed: int = 0, included_paper_ids: Optional[str] = None,
                  excluded_paper_ids: Optional[str] = None, strict: bool = False, override: bool = False,
                  corpus_format: Optional[str] = None):
    """Extract the directed citation graph (an edge p -> q for every q in p's outbound_citations).

    Writes OUTPUT_DIR/citations.tsv (or citations.train.tsv + citations.test.tsv with --test_ratio)
    as `citing<TAB>cited` lines without header (torchbiggraph_import_from_tsv --lhs-col=0 --rhs-col=1),
    plus citations.stats.json (papers read, edges, skipped lines and why). When OUTPUT_DIR ends in
    `.tsv` it is the citations file itself (splits become <name>.train.tsv / <name>.test.tsv).

    Examples:
        python cli_s2orc.py get_citations ${S2ORC_METADATA_DIR} ${DATA_DIR}/biggraph/s2orc_full
        python cli_s2orc.py get_citations ${S2ORC_METADATA_DIR} ${DATA_DIR}/biggraph/s2orc_train_test --test_ratio 0.01
        python cli_s2orc.py get_citations ${S2ORC_METADATA_DIR} ./data/biggraph/s2orc_without_scidocs/ \\
            --excluded_paper_ids data/scidocs_s2orc/s2orc_paper_ids.json
        python cli_s2orc.py get_citations ${S2AG_RELEASE_DIR} ${DATA_DIR}/biggraph/s2ag --corpus_format s2ag

    :param s2orc_metadata_dir: the corpus folder: S2ORC metadata shards (*.jsonl.gz), an S2AG release,
        an OpenAlex snapshot or a plain folder (see --corpus_format)
    :param output_dir: output directory (created), or a `.tsv` output file
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param test_ratio: share of edges written to the test split (seeded)
    :param sample_n_nodes: keep only edges between this many randomly sampled nodes (0 = all)
    :param seed: seed of the split and the node sample
    :param included_paper_ids: JSON list of ids: only these papers' outbound citations are kept
    :param excluded_paper_ids: JSON list of ids removed as citing AND as cited papers (SciDocs leakage)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild existing outputs
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder); ids are
        the format's own (S2ORC paper_id, str(corpusid), W-id, plain paper_id), also in the id lists
    """
    paths = citation_output_paths(output_dir, float(test_ratio))
    record = OutputRecord(*[p for k, p in paths.items() if k != "stats"], paths["stats"],
                          command="get_citations",
                          settings={"command": "get_citations", "test_ratio": float(test_ratio),
                                    "sample_n_nodes": int(sample_n_nodes or 0), "seed": int(seed),
                                    "corpus_format": resolved_format(s2orc_metadata_dir, corpus_format)},
                          inputs=[s2orc_metadata_dir, included_paper_ids, excluded_paper_ids])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(s2orc_metadata_dir, corpus_format, workers, strict)
    included = load_id_set(included_paper_ids, "included paper ids")
    excluded = load_id_set(excluded_paper_ids, "excluded paper ids")
    summary = extract_citations(corpus.reference_files, output_dir, workers=worker_count(workers),
                                test_ratio=float(test_ratio), seed=int(seed), included=included, excluded=excluded,
                                sample_n_nodes=int(sample_n_nodes or 0), strict=strict,
                                read_references=corpus.read_references)
    if not summary["papers_read"]:
        raise nothing_read(corpus, "papers", paths.values())
    if not summary["edges"] and not summary["edges_dropped"]:
        raise nothing_read(corpus, f"citations in {summary['papers_read']} papers", paths.values())
    write_json(paths["stats"], {"corpus_format": corpus.format, **summary})
    record.write()



@writes("output_path")
def get_cocitations(s2orc_metadata_dir: str, output_path: str, workers: Optional[int] = None, min_count: int = 1,
                    included_paper_ids: Optional[str] = None, excluded_paper_ids: Optional[str] = None,
                    strict: bool = False, override: bool = False, corpus_format: Optional[str] = None):
    """Count undirected co-citations (two papers listed together in one reference list).

    Writes `a<TAB>b<TAB>count` lines in both directions, sorted (a BigGraph edge list with
    --lhs-col=0 --rhs-col=1; the count feeds the co-citation samplers), to OUTPUT_PATH (a `.tsv` file,
    or a directory that gets cocitations.tsv) plus a cocitations.stats.json.

    Example:
        python cli_s2orc.py get_cocitations ${S2ORC_METADATA_DIR} ./data/biggraph/s2orc_without_scidocs/ \\
            --excluded_paper_ids data/scidocs_s2orc/s2orc_paper_ids.json --min_count 2

    :param s2orc_metadata_dir: the corpus folder (S2ORC metadata shards, or another --corpus_format)
    :param output_path: output `.tsv` file or directory
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param min_count: keep pairs co-cited by at least this many papers
    :param included_paper_ids: JSON list of ids: only these papers' reference lists are counted
    :param excluded_paper_ids: JSON list of ids removed as citing and as cited papers
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild existing outputs
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder)
    """
    out = Path(output_path)
    tsv = out if out.name.endswith(".tsv") else out / "cocitations.tsv"
    stats_path = stats_path_of(tsv, "cocitations.stats.json")
    record = OutputRecord(tsv, stats_path,
                          command="get_cocitations",
                          settings={"command": "get_cocitations", "min_count": int(min_count),
                                    "corpus_format": resolved_format(s2orc_metadata_dir, corpus_format)},
                          inputs=[s2orc_metadata_dir, included_paper_ids, excluded_paper_ids])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(s2orc_metadata_dir, corpus_format, workers, strict)
    summary = corpus_cocitations(corpus, tsv, workers=worker_count(workers), min_count=int(min_count),
                                 included=load_id_set(included_paper_ids, "included paper ids"),
                                 excluded=load_id_set(excluded_paper_ids, "excluded paper ids"), strict=strict)
    if not summary["papers_read"]:
        raise nothing_read(corpus, "papers", [tsv, stats_path])
    write_json(stats_path, {"corpus_format": corpus.format, **summary})
    record.write()



@writes("output_path")
def get_metadata_id_mapping(s2orc_metadata_dir: str, output_path: str, workers: Optional[int] = None,
                            strict: bool = False, override: bool = False, corpus_format: Optional[str] = None):
    """Save where each paper is: `{shard_file_name: [[paper_id, line_index], ...]}` (0-based lines) as JSON.

    Example:
        python cli_s2orc.py get_metadata_id_mapping ${S2ORC_METADATA_DIR} \\
            ${S2ORC_METADATA_DIR}/s2orc_metadata_id_mapping.json --workers 10

    :param s2orc_metadata_dir: directory of S2ORC metadata shards (*.jsonl.gz)
    :param output_path: output JSON path
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing output
    :param corpus_format: s2orc, s2ag (positions in papers/ files), openalex or plain (default: detected)
    """
    record = OutputRecord(output_path, command="get_metadata_id_mapping",
                          settings={"command": "get_metadata_id_mapping",
                                                 "corpus_format": resolved_format(s2orc_metadata_dir, corpus_format)},
                          inputs=[s2orc_metadata_dir])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(s2orc_metadata_dir, corpus_format, workers, strict)
    mapping, stats = metadata_id_mapping(corpus.text_files, worker_count(workers), strict, read_texts=corpus.read_texts)
    if not stats.papers:
        raise nothing_read(corpus, "papers")
    write_json_any(output_path, mapping)
    record.write()
    logger.info("id mapping of %d papers in %d shards -> %s (%d skipped lines)",
                stats.papers, len(mapping), output_path, stats.to_dict()["skipped_lines"])


@writes("paper_ids_output_dir", "citations_output_dir")
def get_specter_corpus(s2orc_paper_ids: str, s2orc_metadata_dir: str, scidocs_dir: str, specter_triples_path: str,
                       s2id_to_s2orc_input_path: str, sample_n_nodes: Union[int, str], paper_ids_output_dir: str,
                       citations_output_dir: Optional[str] = None, workers: Optional[int] = None,
                       override: bool = False, skip_citations: bool = False, seed: int = 0,
                       corpus_format: Optional[str] = None):
    """Reproduce the SPECTER training corpus on S2ORC: SPECTER papers in, SciDocs papers out.

    Writes to PAPER_IDS_OUTPUT_DIR: query_s2orc_paper_ids.specter.json (SPECTER queries in S2ORC),
    query_s2orc_paper_ids.specter_and_random.json (plus random papers up to the SPECTER query count),
    s2orc_paper_ids.json (training corpus) and excluded_s2orc_paper_ids.json; then (unless
    --skip_citations) runs get_citations into CITATIONS_OUTPUT_DIR excluding the SciDocs papers.

    Example:
        python cli_s2orc.py get_specter_corpus --s2orc_paper_ids ${BASE_DIR}/data/biggraph/s2orc_full/entity_names_paper_id_0.json \\
            --s2orc_metadata_dir ${S2ORC_METADATA_DIR} --scidocs_dir ${SCIDOCS_DIR} \\
            --specter_triples_path ${SPECTER_DIR}/train_triples.csv \\
            --s2id_to_s2orc_input_path ${ID_MAPPINGS} \\
            --citations_output_dir ${BASE_DIR}/data/biggraph/s2orc_with_specter_without_scidocs \\
            --paper_ids_output_dir ${BASE_DIR}/data/sci/s2orc_with_specter_without_scidocs --sample_n_nodes 1000000

    :param s2orc_paper_ids: JSON list of the S2ORC ids in the graph (e.g. PBG entity_names_paper_id_0.json)
    :param s2orc_metadata_dir: directory of S2ORC metadata shards (*.jsonl.gz)
    :param scidocs_dir: SciDocs data directory (paper_metadata_*.json)
    :param specter_triples_path: SPECTER triples CSV (query_paper_id,positive_id,negative_id; S2 ids)
    :param s2id_to_s2orc_input_path: comma-separated JSON mappings {s2_id: s2orc_id}
    :param sample_n_nodes: training corpus size: an int, 'specter' (SPECTER's size) or 0 (all)
    :param paper_ids_output_dir: directory for the id lists (created)
    :param citations_output_dir: directory for citations.tsv (required unless --skip_citations)
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param override: rebuild existing outputs
    :param skip_citations: only write the id lists
    :param seed: seed of the random samples
    :param corpus_format: format of S2ORC_METADATA_DIR for the citations (default: detected)
    """
    if not skip_citations and not citations_output_dir:
        raise InputError("--citations_output_dir is required unless --skip_citations is set")
    excluded = write_specter_corpus_ids(s2orc_paper_ids, scidocs_dir, specter_triples_path, s2id_to_s2orc_input_path,
                                        sample_n_nodes, paper_ids_output_dir, override=override, seed=seed)
    if not skip_citations:
        get_citations(s2orc_metadata_dir, citations_output_dir, workers=workers, excluded_paper_ids=str(excluded),
                      override=override, corpus_format=corpus_format)
