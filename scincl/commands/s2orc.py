"""Commands of `cli_s2orc.py`: the corpus and graph stages (:mod:`scincl.corpus.stage`, :mod:`scincl.graph.stage`,
:mod:`scincl.citrec.stage`) under the names and flags of the original SciNCL README, and the demo corpus."""
from __future__ import annotations

from scincl.citrec.stage import get_citation_contexts
from scincl.cli import Command
from scincl.corpus.stage import (get_inbound_citations_count, get_papers, get_pdf_hashes,
                                 get_s2orc_paper_ids_from_mapping, get_s2orc_scidocs_mappings, get_scidocs_id_mapping,
                                 get_scidocs_title_mapping)
from scincl.demo import DemoCorpus, make_demo
from scincl.eval.eval_dir import make_eval_dir
from scincl.graph.stage import get_citations, get_cocitations, get_metadata_id_mapping, get_specter_corpus


def _written(corpus: DemoCorpus) -> str:
    """What ``make_demo`` prints: where the corpus went."""
    layout = f" ({corpus.corpus_format} layout: {corpus.corpus_dir})" if corpus.corpus_format != "s2orc" else ""
    return f"demo corpus written to {corpus.root}{layout}"


COMMANDS = {"make_demo": Command(make_demo, show=_written), **{command.__name__: command for command in (
    get_citations, get_cocitations, get_papers, get_inbound_citations_count, get_metadata_id_mapping,
    get_scidocs_title_mapping, get_scidocs_id_mapping, get_s2orc_scidocs_mappings, get_s2orc_paper_ids_from_mapping,
    get_pdf_hashes, get_specter_corpus, get_citation_contexts, make_eval_dir)}}
