"""The corpus stage as library calls: paper texts, inbound citation counts, id mappings, the SPECTER corpus ids.

``cli_s2orc.py`` lists these functions as subcommands (same names and flags; the citation graph's are
in :mod:`scincl.graph.stage`). Every command that reads a corpus takes ``corpus_format``
s2orc|s2ag|openalex|plain (default: detected from the folder; see :mod:`scincl.corpus`), streams its
files in ``workers`` processes, logs counts, writes its outputs atomically, reuses existing outputs
unless ``override`` (only when its made-by record ``<output>.made_by.json`` says they were made from
the same corpus and flags and are unchanged: :class:`scincl.provenance.OutputRecord`), and turns
bad input into one error line (malformed lines are counted and skipped unless ``strict``).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional, Union

from scincl.corpus.id_mapping import scidocs_id_mapping
from scincl.corpus.outputs import (nothing_read, open_corpus_with_workers, paths_of, resolved_format, worker_count,
                                   write_json_any)
from scincl.corpus.papers import write_papers
from scincl.corpus.s2orc_mappings import (
    inbound_citation_counts,
    merge_s2id_mappings,
    paper_ids_from_mapping,
    pdf_hashes,
    read_mapping,
    scidocs_title_mapping,
)
from scincl.corpus.selection import select_specter_corpus
from scincl.corpus.shards import list_metadata_shards
from scincl.io import read_id_list, write_id_list, write_json
from scincl.provenance import OutputRecord
from scincl.scidocs_io import read_scidocs_metadata_dir
from scincl.output_lock import writes

logger = logging.getLogger(__name__)


@writes("output_path")
def get_papers(corpus_dir: str, output_path: str, corpus_format: Optional[str] = None, workers: Optional[int] = None,
               strict: bool = False, override: bool = False):
    """Write every paper's text as the metadata jsonl the training stage reads: {"paper_id","title","abstract"}.

    OUTPUT_PATH is a .jsonl or .jsonl.gz file; OUTPUT_PATH.stats.json beside it counts papers, skipped
    lines and each format's expected gaps (S2AG papers without an abstracts record, OpenAlex works
    with a null abstract_inverted_index: both get an empty abstract). Pass it to the training stage
    as --jsonl_metadata_path / --train_metadata_path.

    Examples:
        python cli_s2orc.py get_papers ${S2AG_RELEASE_DIR} ${DATA_DIR}/s2ag_papers.jsonl.gz --corpus_format s2ag
        python cli_s2orc.py get_papers ${OPENALEX_SNAPSHOT} ${DATA_DIR}/openalex_papers.jsonl.gz

    :param corpus_dir: the corpus folder (S2ORC shards, S2AG release, OpenAlex snapshot or plain folder)
    :param output_path: output .jsonl(.gz) file
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder)
    :param workers: processes reading files in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing output
    """
    stats_path = Path(str(output_path) + ".stats.json")
    record = OutputRecord(output_path, stats_path,
                          command="get_papers", settings={"command": "get_papers",
                                    "corpus_format": resolved_format(corpus_dir, corpus_format)},
                          inputs=[corpus_dir])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(corpus_dir, corpus_format, workers, strict)
    summary = write_papers(corpus, output_path, workers=worker_count(workers), strict=strict)
    if not summary["papers"]:
        raise nothing_read(corpus, "papers", [output_path])
    write_json(stats_path, summary)
    record.write()


@writes("output_path")
def get_inbound_citations_count(s2orc_metadata_dir: str, output_path: str, workers: Optional[int] = None,
                                strict: bool = False, override: bool = False, corpus_format: Optional[str] = None):
    """Save `{paper_id: number of inbound citations}` (papers with at least one) as JSON (.json or .json.gz).

    Example:
        python cli_s2orc.py get_inbound_citations_count ${S2ORC_METADATA_DIR} \\
            ${SPECTER_DIR}/s2orc_inbound_citations.json.gz --workers ${WORKERS}

    :param s2orc_metadata_dir: directory of S2ORC metadata shards (*.jsonl.gz)
    :param output_path: output JSON path
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing output
    :param corpus_format: s2orc (counts its inbound_citations fields), or s2ag, openalex, plain (counts the
        corpus's references); default: detected from the folder
    """
    record = OutputRecord(output_path, command="get_inbound_citations_count",
                          settings={"command": "get_inbound_citations_count",
                                                  "corpus_format": resolved_format(s2orc_metadata_dir, corpus_format)},
                          inputs=[s2orc_metadata_dir])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(s2orc_metadata_dir, corpus_format, workers, strict)
    counts, stats = inbound_citation_counts(corpus.reference_files, worker_count(workers), strict,
                                            read_references=None if corpus.format == "s2orc" else corpus.read_references)
    write_json_any(output_path, counts)
    record.write()
    logger.info("inbound citation counts of %d papers -> %s (%s)", len(counts), output_path, stats.to_dict())


@writes("output_fp")
def get_scidocs_title_mapping(scidocs_dir: str, s2orc_metadata_dir: str, output_fp: str,
                              workers: Optional[int] = None, strict: bool = False, override: bool = False,
                              corpus_format: Optional[str] = None):
    """Map SciDocs paper ids to S2ORC paper ids by exact title match (ambiguous titles are left out).

    Writes `{scidocs_id: s2orc_paper_id}` as JSON.

    Example:
        python cli_s2orc.py get_scidocs_title_mapping ${SCIDOCS_DIR} ${S2ORC_METADATA_DIR} \\
            ${DATA_DIR}/scidocs_s2id_to_s2orc_paper_id.json

    :param scidocs_dir: SciDocs data directory (paper_metadata_*.json)
    :param s2orc_metadata_dir: directory of S2ORC metadata shards (*.jsonl.gz)
    :param output_fp: output JSON path
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing output
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder)
    """
    record = OutputRecord(output_fp, command="get_scidocs_title_mapping",
                          settings={"command": "get_scidocs_title_mapping",
                                                "corpus_format": resolved_format(s2orc_metadata_dir, corpus_format)},
                          inputs=[scidocs_dir, s2orc_metadata_dir])
    if record.reusable(override):
        return
    corpus = open_corpus_with_workers(s2orc_metadata_dir, corpus_format, workers, strict)
    mapping, ambiguous, stats = scidocs_title_mapping(scidocs_dir, corpus.text_files, worker_count(workers), strict,
                                                      read_texts=corpus.read_texts)
    write_json_any(output_fp, mapping)
    record.write()
    logger.info("title mapping for %d SciDocs ids (%d ambiguous titles left out) -> %s",
                len(mapping), len(ambiguous), output_fp)


@writes("output_path")
def get_scidocs_id_mapping(scidocs_dir: str, output_path: str, corpus_dir: Optional[str] = None,
                           mapping_path: Optional[str] = None, mapping_key: Optional[str] = None,
                           corpus_format: Optional[str] = None, paper_ids: Optional[str] = None,
                           workers: Optional[int] = None, strict: bool = False, override: bool = False):
    """Map SciDocs paper ids to corpus ids ({SciDocs id: corpus id} JSON) for any corpus format.

    run_specter takes the output as --s2id_to_s2orc_input_path (SciDocs papers are then excluded
    from graph and corpus in the corpus's id space). Either from --mapping_path, a JSON
    {SciDocs id: corpus id} (--mapping_key picks one sub-object, e.g. `corpusid` or `openalex` of
    hepth/id_maps.json; OpenAlex URL prefixes are stripped), or from the external ids the corpus
    carries (S2AG: the S2 sha at the end of `url`, `externalids`; OpenAlex: `ids`, arXiv landing
    pages; S2ORC: arxiv_id/doi/...; an id carried by several papers is left out). Counts go to
    OUTPUT_PATH.stats.json.

    Examples:
        python cli_s2orc.py get_scidocs_id_mapping ${SCIDOCS_DIR} ${DATA_DIR}/scidocs_to_s2ag.json \\
            --corpus_dir ${S2AG_RELEASE_DIR} --corpus_format s2ag
        python cli_s2orc.py get_scidocs_id_mapping ../shared/data/hepth/scidocs hepth_openalex_ids.json \\
            --mapping_path ../shared/data/hepth/id_maps.json --mapping_key openalex

    :param scidocs_dir: SciDocs data directory (paper_metadata_*.json): the ids to map
    :param output_path: output JSON {SciDocs id: corpus id}
    :param corpus_dir: the corpus folder (to map through its external ids)
    :param mapping_path: a JSON mapping {SciDocs id: corpus id} to use instead
    :param mapping_key: the sub-object of MAPPING_PATH to use
    :param corpus_format: s2orc, s2ag, openalex or plain (default: detected from the folder)
    :param paper_ids: JSON list of SciDocs ids to map instead of every SciDocs paper (e.g. the query
        papers: run_specter then excludes only those from graph and corpus)
    :param workers: processes reading files in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild an existing output
    """
    record = OutputRecord(output_path, Path(str(output_path) + ".stats.json"),
                          command="get_scidocs_id_mapping",
                          settings={"command": "get_scidocs_id_mapping", "mapping_key": mapping_key,
                                    "corpus_format": resolved_format(corpus_dir, corpus_format)},
                          inputs=[scidocs_dir, corpus_dir, mapping_path, paper_ids])
    if record.reusable(override):
        return
    mapping, counts = scidocs_id_mapping(scidocs_dir, corpus_dir, corpus_format, mapping_path, mapping_key,
                                         worker_count(workers), strict, paper_ids)
    write_json_any(output_path, mapping)
    write_json(Path(str(output_path) + ".stats.json"), counts)
    record.write()
    logger.info("SciDocs id mapping: %d of %d SciDocs papers mapped -> %s", counts["mapped"],
                counts["scidocs_papers"], output_path)


@writes("output_path")
def get_s2orc_scidocs_mappings(s2id_to_paper_input_paths: Union[str, list],
                               s2id_to_s2orc_paper_id_input_paths: Union[str, list, None],
                               output_path: str, override: bool = False):
    """Merge S2 id -> S2ORC id mappings: S2 API responses (`corpusId`) first, then given mappings.

    Example:
        python cli_s2orc.py get_s2orc_scidocs_mappings \\
            ${SPECTER_DIR}/id2paper.json,${SCIDOCS_DIR}/scidocs_s2orc/id2paper.json \\
            ${DATA_DIR}/scidocs_s2id_to_s2orc_paper_id.json \\
            ${SPECTER_DIR}/s2id_to_s2orc_paper_id.json

    :param s2id_to_paper_input_paths: comma-separated JSON files {s2_id: {"corpusId": ..., ...}}
    :param s2id_to_s2orc_paper_id_input_paths: comma-separated JSON files {s2_id: s2orc_id}, used for
        ids the API responses do not map (e.g. title mappings)
    :param output_path: output JSON {s2_id: s2orc_id}
    :param override: rebuild an existing output
    """
    record = OutputRecord(output_path, command="get_s2orc_scidocs_mappings",
                          settings={"command": "get_s2orc_scidocs_mappings"},
                          inputs=[*paths_of(s2id_to_paper_input_paths), None,
                                  *paths_of(s2id_to_s2orc_paper_id_input_paths)])
    if record.reusable(override):
        return
    merged = merge_s2id_mappings(s2id_to_paper_input_paths, s2id_to_s2orc_paper_id_input_paths)
    write_json_any(output_path, merged)
    record.write()
    logger.info("mappings for %d S2 ids -> %s", len(merged), output_path)


@writes("output_path")
def get_s2orc_paper_ids_from_mapping(mapping_path: str, output_path: str, override: bool = False):
    """Save the distinct S2ORC ids (the values) of a `{s2_id: s2orc_id}` mapping as a JSON list.

    Example:
        python cli_s2orc.py get_s2orc_paper_ids_from_mapping \\
            --mapping_path ${SPECTER_DIR}/s2id_to_s2orc_paper_id.latest.json \\
            --output_path ${SPECTER_DIR}/train_s2orc_paper_ids.json

    :param mapping_path: JSON mapping {s2_id: s2orc_id}
    :param output_path: output JSON list of S2ORC ids
    :param override: rebuild an existing output
    """
    record = OutputRecord(output_path, command="get_s2orc_paper_ids_from_mapping",
                          settings={"command": "get_s2orc_paper_ids_from_mapping"}, inputs=[mapping_path])
    if record.reusable(override):
        return
    ids = paper_ids_from_mapping(read_mapping(mapping_path))
    write_id_list(output_path, ids)
    record.write()
    logger.info("%d S2ORC paper ids -> %s", len(ids), output_path)


@writes("paper_ids_output_path", "pdf_hashes_output_path")
def get_pdf_hashes(s2orc_pdf_parses_dir: str, paper_ids_output_path: str, pdf_hashes_output_path: str,
                   workers: Optional[int] = None, strict: bool = False, override: bool = False):
    """Extract S2ORC paper_id <-> _pdf_hash mappings from pdf_parses shards (hashes = S2 API ids).

    Example:
        python cli_s2orc.py get_pdf_hashes ${S2ORC_PDF_PARSES_DIR} \\
            ${DATASETS_DIR}/s2orc/20200705v1/full/paper_id_to_pdf_hash.json ${S2ORC_PDF_HASH_TO_ID}

    :param s2orc_pdf_parses_dir: directory of S2ORC pdf_parses shards (*.jsonl.gz)
    :param paper_ids_output_path: output JSON {paper_id: pdf_hash}
    :param pdf_hashes_output_path: output JSON {pdf_hash: paper_id}
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param strict: a malformed line or a record without _pdf_hash is an error
    :param override: rebuild existing outputs
    """
    record = OutputRecord(paper_ids_output_path, pdf_hashes_output_path, command="get_pdf_hashes",
                          settings={"command": "get_pdf_hashes"},
                          inputs=[s2orc_pdf_parses_dir])
    if record.reusable(override):
        return
    to_hash, to_paper, stats = pdf_hashes(list_metadata_shards(s2orc_pdf_parses_dir), worker_count(workers), strict)
    write_json_any(paper_ids_output_path, to_hash)
    write_json_any(pdf_hashes_output_path, to_paper)
    record.write()
    logger.info("pdf hashes of %d papers -> %s, %s (%s)", len(to_hash), paper_ids_output_path,
                pdf_hashes_output_path, stats.to_dict())


def write_specter_corpus_ids(s2orc_paper_ids: str, scidocs_dir: str, specter_triples_path: str,
                             s2id_to_s2orc_input_path: str, sample_n_nodes: Union[int, str], paper_ids_output_dir: str,
                             override: bool = False, seed: int = 0) -> Path:
    """The id lists of :func:`scincl.graph.stage.get_specter_corpus` (its flags of the same names); returns
    the path of ``excluded_s2orc_paper_ids.json``.

    Writes to PAPER_IDS_OUTPUT_DIR query_s2orc_paper_ids.specter.json, query_s2orc_paper_ids.specter_and_random.json,
    s2orc_paper_ids.json, excluded_s2orc_paper_ids.json and specter_corpus.stats.json
    (:func:`scincl.corpus.selection.select_specter_corpus`), reused as its made-by record allows.
    """
    out = Path(paper_ids_output_dir)
    files = {name: out / f"{name}.json" for name in ("query_s2orc_paper_ids.specter",
                                                    "query_s2orc_paper_ids.specter_and_random",
                                                    "s2orc_paper_ids", "excluded_s2orc_paper_ids")}
    record = OutputRecord(*files.values(),
                          command="get_specter_corpus",
                          settings={"command": "get_specter_corpus", "sample_n_nodes": str(sample_n_nodes),
                                    "seed": int(seed)},
                          inputs=[s2orc_paper_ids, scidocs_dir, specter_triples_path,
                                  *paths_of(s2id_to_s2orc_input_path)])
    if not record.reusable(override):
        scidocs_ids = {pid for meta in read_scidocs_metadata_dir(scidocs_dir).values() for pid in meta}
        if isinstance(sample_n_nodes, str) and sample_n_nodes.isdigit():
            sample_n_nodes = int(sample_n_nodes)
        selection = select_specter_corpus(read_id_list(s2orc_paper_ids), scidocs_ids, specter_triples_path,
                                          read_mapping(s2id_to_s2orc_input_path), sample_n_nodes, int(seed))
        write_id_list(files["query_s2orc_paper_ids.specter"], selection["specter_queries"])
        write_id_list(files["query_s2orc_paper_ids.specter_and_random"], selection["specter_and_random_queries"])
        write_id_list(files["s2orc_paper_ids"], selection["train_paper_ids"])
        write_id_list(files["excluded_s2orc_paper_ids"], selection["excluded_paper_ids"])
        write_json(out / "specter_corpus.stats.json", selection["counts"])
        record.write()
    return files["excluded_s2orc_paper_ids"]
