"""Commands of `cli_s2orc.py`: the corpus and graph stages (:mod:`scincl.corpus.stage`, :mod:`scincl.graph.stage`,
:mod:`scincl.citrec.stage`) under the names and flags of the original SciNCL README, and the demo corpus."""
from __future__ import annotations

from scincl.citrec.stage import get_citation_contexts
from scincl.cli import Command
from scincl.corpus.stage import (get_inbound_citations_count, get_papers, get_pdf_hashes,
                                 get_s2orc_paper_ids_from_mapping, get_s2orc_scidocs_mappings, get_scidocs_id_mapping,
                                 get_scidocs_title_mapping)
from scincl.demo import make_demo
from scincl.eval.eval_dir import make_eval_dir
from scincl.graph.stage import get_citations, get_cocitations, get_metadata_id_mapping, get_specter_corpus

COMMANDS = {
    "make_demo": Command(make_demo, show=lambda corpus: f"demo corpus written to {corpus.root}" + (  # where it went
        f" ({corpus.corpus_format} layout: {corpus.corpus_dir})" if corpus.corpus_format != "s2orc" else "")),
    **{command.__name__: command for command in (
        get_citations, get_cocitations, get_papers, get_inbound_citations_count, get_metadata_id_mapping,
        get_scidocs_title_mapping, get_scidocs_id_mapping, get_s2orc_scidocs_mappings, get_s2orc_paper_ids_from_mapping,
        get_pdf_hashes, get_specter_corpus, get_citation_contexts, make_eval_dir)}}
