"""Commands of `cli_s2orc.py`: the corpus and graph stages (:mod:`scincl.corpus.stage`, :mod:`scincl.graph.stage`,
:mod:`scincl.citrec.stage`) under the names and flags of the original SciNCL README, and the demo corpus."""
from __future__ import annotations

from scincl.citrec.stage import get_citation_contexts
from scincl.corpus import check_format
from scincl.corpus.stage import (get_inbound_citations_count, get_papers, get_pdf_hashes,
                                 get_s2orc_paper_ids_from_mapping, get_s2orc_scidocs_mappings, get_scidocs_id_mapping,
                                 get_scidocs_title_mapping)
from scincl.demo import make_demo as _make_demo
from scincl.errors import InputError
from scincl.eval.eval_dir import make_eval_dir
from scincl.graph.stage import get_citations, get_cocitations, get_metadata_id_mapping, get_specter_corpus
from scincl.output_lock import writes


@writes("output_dir")
def make_demo(output_dir: str, papers: int = 3000, seed: int = 0, topics: int = 10, corpus_format: str = "s2orc",
              full_text: bool = False):
    """Write the bundled synthetic demo corpus (S2ORC shards + SciDocs dir) to OUTPUT_DIR.

    Deterministic: the same --papers/--seed/--topics give byte-identical files.

    Example:
        python cli_s2orc.py make_demo data/demo --papers 3000 --seed 0

    Writes OUTPUT_DIR/s2orc/metadata/metadata_{i}.jsonl.gz, OUTPUT_DIR/s2orc/pdf_parses/,
    OUTPUT_DIR/scidocs/ (SciDocs format), OUTPUT_DIR/scidocs_paper_ids.json (held-out SciDocs papers,
    pass them as --excluded_paper_ids), OUTPUT_DIR/topics.json and OUTPUT_DIR/demo_manifest.json.
    With --corpus_format s2ag|openalex|plain also OUTPUT_DIR/<format>/ (the same papers in that
    layout) and OUTPUT_DIR/<format>/id_map.json ({SciDocs/S2ORC paper id: corpus id}).
    With --full_text also OUTPUT_DIR/s2orc/full_text/ (pdf_parses-format full text of every paper with
    cite_spans that follow the citation graph: the input of get_citation_contexts); the other files are
    the same bytes with or without it.

    :param output_dir: directory to write (created)
    :param papers: number of corpus papers (>= 200; 100000 is the benchmark size)
    :param seed: random seed
    :param topics: number of top-level fields of study (2..19), each with 4 subtopics
    :param corpus_format: also write the corpus as s2ag, openalex or plain (default: s2orc only)
    :param full_text: also write full text with citation markers (s2orc/full_text/; several times slower)
    """
    try:
        corpus = _make_demo(output_dir, papers=int(papers), seed=int(seed), topics=int(topics),
                            corpus_format=check_format(corpus_format) or "s2orc", full_text=bool(full_text))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    print(f"demo corpus written to {corpus.root}" + (f" ({corpus.corpus_format} layout: {corpus.corpus_dir})"
                                                     if corpus.corpus_format != "s2orc" else ""))


COMMANDS = {command.__name__: command for command in (
    make_demo, get_citations, get_cocitations, get_papers, get_inbound_citations_count, get_metadata_id_mapping,
    get_scidocs_title_mapping, get_scidocs_id_mapping, get_s2orc_scidocs_mappings, get_s2orc_paper_ids_from_mapping,
    get_pdf_hashes, get_specter_corpus, get_citation_contexts, make_eval_dir)}
