"""``get_citation_contexts``: the citation contexts and sentences of a full-text corpus, as files.

Reads every ``*.jsonl.gz`` shard of a full-text folder (S2ORC ``pdf_parses`` or unarXive; see
:mod:`scincl.citrec.formats`) in ``workers`` processes, one part file per shard, and writes

- ``contexts.jsonl.gz``: one :class:`~scincl.citrec.contexts.CitationContext` per line
  (``context_id``, ``citing_paper_id``, ``paragraph``, ``sentence``, ``sentence_in_paragraph``,
  ``section``, ``cited_ids``, ``markers``, ``sentences``);
- ``sentences.jsonl.gz``: one :class:`~scincl.citrec.contexts.PaperSentences` per paper
  (``paper_id``, ``abstract``, ``body``, ``paragraph``), what dynamic context sampling draws from;
- ``contexts.stats.json``: the counts (papers, paragraphs, sentences, markers, markers in contexts,
  markers skipped by reason, contexts by number of cited ids, lines skipped while reading).

With ``reference_candidates`` every referenced work with an id that is not a paper of the corpus gets a line
in ``sentences.jsonl.gz`` too, after the papers: its reference text as its only abstract sentence and no body
(unarXive's ``bib_entry_raw``, :func:`~scincl.citrec.formats.reference_texts`; the first text met of an id, in
shard and line order), so a corpus whose cited papers are not in it (the unarXive sample) has candidates to
rank; ``reference_candidates`` in the stats counts them.

Shards are read in name order and papers in line order, so the bytes do not depend on ``workers``.
"""
from __future__ import annotations

import logging
import shutil
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import orjson

from scincl.citrec.contexts import CONTEXT_UNITS, DEFAULT_CONTEXT_UNIT, PaperSentences, paper_contexts
from scincl.citrec.formats import FULL_TEXT_FORMATS, get_full_text_format, reference_texts
from scincl.corpus.outputs import worker_count
from scincl.provenance import OutputRecord
from scincl.corpus.shards import ReadStats, iter_papers, list_metadata_shards, map_shards
from scincl.errors import InputError
from scincl.io import concatenate_parts, write_json
from scincl.temporaries import make_temporary_dir
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

CONTEXTS_NAME = "contexts.jsonl.gz"
SENTENCES_NAME = "sentences.jsonl.gz"
STATS_NAME = "contexts.stats.json"
DEFAULT_FULL_TEXT_FORMAT = "s2orc"


def _shard_parts(job: Tuple[int, Path], format_name: str, context_unit: str, parts_dir: Path,
                 strict: bool) -> Tuple[Path, Path, Counter, Counter, ReadStats, Dict[str, str], List[str]]:
    """One shard's contexts and sentences as plain jsonl part files, its counts, its references' texts
    (``{cited id: text}``) and its paper ids."""
    index, shard = job
    fmt = FULL_TEXT_FORMATS[format_name]
    stats = ReadStats()
    counts: Counter = Counter()
    positives: Counter = Counter()
    references: Dict[str, str] = {}
    paper_ids: List[str] = []
    contexts_part, sentences_part = parts_dir / f"{index:06d}.contexts", parts_dir / f"{index:06d}.sentences"
    with open(contexts_part, "wb") as contexts_fh, open(sentences_part, "wb") as sentences_fh:
        for record in iter_papers(shard, strict=strict, stats=stats):
            paper, contexts, paper_counts = paper_contexts(record, fmt, context_unit)
            paper_ids.append(paper.paper_id)
            for cited, text in reference_texts(record.get("bib_entries"), fmt).items():
                references.setdefault(cited, text)
            counts.update(paper_counts)
            counts["papers_with_body"] += bool(paper.body)
            counts["papers_with_contexts"] += bool(contexts)
            sentences_fh.write(orjson.dumps(paper.to_record()) + b"\n")
            for context in contexts:
                contexts_fh.write(orjson.dumps(context.to_record()) + b"\n")
                positives[len(context.cited_ids)] += 1
    return contexts_part, sentences_part, counts, positives, stats, references, paper_ids


def _write_reference_candidates(results: List[tuple], path: Path) -> int:
    """The referenced works that are not papers of the corpus as sentences records (reference text = abstract)."""
    papers = {paper_id for result in results for paper_id in result[6]}
    references: Dict[str, str] = {}
    for result in results:
        for cited, text in result[5].items():
            references.setdefault(cited, text)
    kept = [cited for cited in references if cited not in papers]
    with open(path, "wb") as fh:
        for cited in kept:
            fh.write(orjson.dumps(PaperSentences(cited, abstract=[references[cited]]).to_record()) + b"\n")
    return len(kept)


def _summary(counts: Counter, positives: Counter, stats: ReadStats, format_name: str, context_unit: str
             ) -> Dict[str, Any]:
    skipped = {key[len("markers_skipped_"):]: n for key, n in sorted(counts.items())
               if key.startswith("markers_skipped_") and n}
    return {
        "full_text_format": format_name, "context_unit": context_unit,
        "papers": stats.papers, "papers_with_body": counts["papers_with_body"],
        "papers_with_contexts": counts["papers_with_contexts"], "paragraphs": counts["paragraphs"],
        "sentences_abstract": counts["sentences_abstract"], "sentences_body": counts["sentences_body"],
        "markers": counts["markers"], "markers_in_contexts": counts["markers_in_contexts"],
        "markers_skipped": skipped, "locations_without_id": counts["locations_without_id"],
        "contexts": counts["contexts"],
        "contexts_by_cited_ids": {str(k): positives[k] for k in sorted(positives)},
        "read": stats.to_dict(),
    }


@writes("output_dir")
def get_citation_contexts(full_text_dir: str, output_dir: str, full_text_format: str = DEFAULT_FULL_TEXT_FORMAT,
                          context_unit: str = DEFAULT_CONTEXT_UNIT, reference_candidates: bool = False,
                          workers: Optional[int] = None, strict: bool = False, override: bool = False) -> None:
    """Extract the citation contexts of a full-text corpus (MP-BERT4CR §3, §4.1.1; issue 43).

    Writes OUTPUT_DIR/contexts.jsonl.gz (one citation location per line: citing paper, paragraph and
    sentence position, the sentence with the markers and its neighbours, the cited ids: co-cited
    references of one location are its multiple positives), OUTPUT_DIR/sentences.jsonl.gz (every
    paper's abstract and body sentences) and OUTPUT_DIR/contexts.stats.json (counts; every marker
    is in a context or counted under markers_skipped by reason: no_reference, no_id, bad_span). With
    --reference_candidates, every referenced work with an id outside the corpus is added to the sentences
    file with its reference text as its abstract (the candidates of a corpus whose cited papers it lacks).

    Examples:
        python cli_s2orc.py get_citation_contexts data/demo/s2orc/full_text data/citrec/demo
        python cli_s2orc.py get_citation_contexts ../shared/data/unarxive data/citrec/unarxive \\
            --full_text_format unarxive --reference_candidates

    :param full_text_dir: folder of full-text shards (*.jsonl.gz): S2ORC pdf_parses, or unarXive files
    :param output_dir: output folder (created)
    :param full_text_format: s2orc (cite_spans -> bib_entries[ref_id].link) or unarxive ({{cite:ID}} ->
        bib_entries[ID].ids: the OpenAlex id, else arxiv:/doi:/pubmed:/pmc:)
    :param context_unit: markers (a run of adjacent markers in one sentence is one context) or sentence
        (every marker of a sentence is one context); the paper does not say which
    :param reference_candidates: add the referenced works outside the corpus as candidates, their reference text
        (unarXive: bib_entry_raw; S2ORC: title, venue, year) as their one sentence
    :param workers: processes reading shards in parallel (default: number of CPUs)
    :param strict: a malformed line is an error instead of being counted and skipped
    :param override: rebuild existing outputs
    """
    fmt = get_full_text_format(str(full_text_format)).name
    if context_unit not in CONTEXT_UNITS:
        raise InputError(f"unknown --context_unit {context_unit!r}; one of: {', '.join(CONTEXT_UNITS)}")
    out = Path(output_dir)
    paths = {"contexts": out / CONTEXTS_NAME, "sentences": out / SENTENCES_NAME, "stats": out / STATS_NAME}
    record = OutputRecord(*paths.values(), command="get_citation_contexts",
                          settings={"command": "get_citation_contexts", "full_text_format": fmt,
                                    "context_unit": context_unit, "reference_candidates": bool(reference_candidates)},
                          inputs=[full_text_dir])
    if record.reusable(override):
        return
    shards = list_metadata_shards(full_text_dir)
    out.mkdir(parents=True, exist_ok=True)
    parts_dir = make_temporary_dir(out, "contexts.parts")
    counts: Counter = Counter()
    positives: Counter = Counter()
    stats = ReadStats()
    try:
        work = partial(_shard_parts, format_name=fmt, context_unit=context_unit,
                       parts_dir=parts_dir, strict=strict)
        results = map_shards(work, list(enumerate(shards)), worker_count(workers), desc="citation contexts")
        for _, _, shard_counts, shard_positives, shard_stats, _, _ in results:
            counts.update(shard_counts)
            positives.update(shard_positives)
            stats.merge(shard_stats)
        summary = _summary(counts, positives, stats, fmt, context_unit)
        _check_found(summary, full_text_dir)
        sentences_parts = [r[1] for r in results]
        if reference_candidates:
            sentences_parts.append(parts_dir / "references")
            summary["reference_candidates"] = _write_reference_candidates(results, sentences_parts[-1])
        concatenate_parts([r[0] for r in results], paths["contexts"])
        concatenate_parts(sentences_parts, paths["sentences"])
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    write_json(paths["stats"], summary)
    record.write()
    logger.info("%d contexts (%d of %d markers; skipped: %s) from %d papers -> %s", summary["contexts"],
                summary["markers_in_contexts"], summary["markers"], summary["markers_skipped"] or "none",
                summary["papers"], out)


def _check_found(summary: Dict[str, Any], full_text_dir: str) -> None:
    """One error line for a folder that gave no papers, no markers or no context (a wrong format?)."""
    other = [name for name in FULL_TEXT_FORMATS if name != summary["full_text_format"]]
    hint = f"is it --full_text_format {' or '.join(other)}?"
    if not summary["papers"]:
        raise InputError("read no papers from the full-text shards", path=full_text_dir)
    if not summary["markers"]:
        raise InputError(f"found no citation markers in {summary['papers']} papers as --full_text_format "
                         f"{summary['full_text_format']}; {hint}", path=full_text_dir)
    if not summary["contexts"]:
        raise InputError(f"no citation marker's reference has a paper id ({summary['markers']} markers, skipped: "
                         f"{summary['markers_skipped']}); {hint}", path=full_text_dir)
