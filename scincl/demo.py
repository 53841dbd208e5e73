"""The bundled demo corpus: deterministic synthetic data in the real S2ORC and SciDocs formats.

``make_demo(DIR, papers=3000, seed=0)`` writes

- ``DIR/s2orc/metadata/metadata_{i}.jsonl.gz``: S2ORC 20200705v1 metadata records (every field of
  the real release: ids, ``has_*`` flags, ``mag_field_of_study``, consistent outbound/inbound
  citations, some papers without abstract, some references to papers outside the corpus);
- ``DIR/s2orc/pdf_parses/pdf_parses_{i}.jsonl.gz``: S2ORC pdf_parses records (``paper_id``,
  ``_pdf_hash``, abstract/body paragraphs) for the papers whose ``has_pdf_parse`` is true;
- ``DIR/s2orc/full_text/full_text_{i}.jsonl.gz`` (with ``full_text=True``): pdf_parses-format full text of every
  paper, with sections, sentences and ``cite_spans`` that follow the citation graph (:mod:`scincl.demo_fulltext`;
  the citation contexts of MP-BERT4CR, :mod:`scincl.citrec`);
- ``DIR/scidocs/``: a SciDocs evaluation directory (formats of ``docs/scidocs_protocol.md``) built from
  held-out papers of the same universe: ``paper_metadata_mag_mesh.json``,
  ``paper_metadata_view_cite_read.json``, ``mag/`` and ``mesh/`` csvs, and ``coview/ coread/ cite/
  cocite/`` qrels with 5 positives + 25 negatives per query;
- ``DIR/scidocs_paper_ids.json``: the held-out SciDocs papers (queries + classification papers),
  i.e. what a user passes as ``--excluded_paper_ids`` to train without leakage;
- ``DIR/topics.json``: ``{paper_id: "topic/subtopic"}`` for every corpus paper (ground truth);
- ``DIR/demo_manifest.json``: the generation settings and counts.

The universe: ``topics`` fields of study (MAG-like, default 10) x ``len(FACETS)`` subtopics each.
A paper's words mix its subtopic's, topic's and facet's vocabularies with a large shared
background vocabulary and noise words; about 10 % of papers are interdisciplinary (a second
subtopic). Papers cite earlier papers, mostly of their own subtopic, then topic, then at random,
plus some ids outside the corpus. So topic structure is learnable from text and from the graph,
but neither is trivially separable. Every random draw comes from ``seed``: the same arguments give
byte-identical files (gzip with mtime 0).
"""
from __future__ import annotations

import hashlib
import logging
import math
import random
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import orjson
from tqdm.auto import tqdm

from scincl.errors import InputError
from scincl.demo_fulltext import full_text_path, full_text_record
from scincl.demo_scidocs import build_scidocs
from scincl.demo_text import FACETS, Paper, TextGenerator, Vocabulary
from scincl.io import PathLike, atomic_open, dumps_json, write_id_list, write_json
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

# MAG top-level fields of study (the real MAG task has 19 classes; docs/scidocs_protocol.md).
FIELDS_OF_STUDY = (
    "Computer Science", "Medicine", "Biology", "Physics", "Chemistry", "Mathematics", "Psychology",
    "Economics", "Engineering", "Materials Science", "Geology", "Sociology", "Political Science",
    "Business", "Geography", "Environmental Science", "Art", "History", "Philosophy",
)
# Citation targets: own subtopic, own topic, same facet elsewhere, anywhere, outside the corpus.
# Issue 18: 70 % inside the subtopic (was 55 %), so that the cite/co-cite relations follow the
# subtopic structure that one epoch of SciNCL fine-tuning learns from the graph neighbours.
CITATION_MIX = {"subtopic": 0.70, "topic": 0.10, "facet": 0.03, "random": 0.09, "outside": 0.08}
INTERDISCIPLINARY_SHARE = 0.10
NO_REFERENCES_SHARE = 0.05
MEAN_REFERENCES = 9
PDF_PARSE_SHARE = 0.6


@dataclass
class DemoCorpus:
    """Paths of a generated demo corpus (see module docstring for what each holds)."""

    root: Path
    s2orc_metadata_dir: Path
    scidocs_dir: Path
    scidocs_paper_ids_path: Path
    topics_path: Path
    s2orc_pdf_parses_dir: Path = field(default=None)  # type: ignore[assignment]
    manifest_path: Path = field(default=None)  # type: ignore[assignment]
    corpus_format: str = "s2orc"
    corpus_dir: Path = field(default=None)  # type: ignore[assignment]  # the corpus in corpus_format
    full_text_dir: Path = field(default=None)  # type: ignore[assignment]  # s2orc/full_text (scincl.demo_fulltext)


def _unique_ids(n: int, rnd: random.Random) -> List[str]:
    """``n`` distinct S2ORC-like numeric paper ids (8-9 digits)."""
    seen: set = set()
    out: List[str] = []
    while len(out) < n:
        pid = str(rnd.randrange(10_000_000, 300_000_000))
        if pid not in seen:
            seen.add(pid)
            out.append(pid)
    return out


def _build_graph(papers: int, topics: int, rnd: random.Random) -> Tuple[List[Paper], List[str]]:
    """Papers in publication order with references that follow the topic structure."""
    facets = len(FACETS)
    n_outside = max(20, papers // 10)
    ids = _unique_ids(papers + n_outside, rnd)
    paper_ids, outside_ids = ids[:papers], ids[papers:]
    by_subtopic: Dict[Tuple[int, int], List[int]] = {}
    by_topic: Dict[int, List[int]] = {}
    by_facet: Dict[int, List[int]] = {}
    result: List[Paper] = []
    kinds = list(CITATION_MIX)
    cum = list(accumulate(CITATION_MIX.values()))
    for i in range(papers):
        topic, sub = rnd.randrange(topics), rnd.randrange(facets)
        second = None
        if rnd.random() < INTERDISCIPLINARY_SHARE:
            second = (rnd.randrange(topics), rnd.randrange(facets))
        year = 1990 + (30 * i) // papers
        refs: List[str] = []
        if i > 0 and rnd.random() >= NO_REFERENCES_SHARE:
            wanted = 1 + _poisson(MEAN_REFERENCES - 1, rnd)
            chosen: set = set()
            for _ in range(wanted * 2):  # bounded retries for small early groups
                if len(refs) >= wanted:
                    break
                kind = kinds[min(bisect_right(cum, rnd.random() * cum[-1]), len(kinds) - 1)]
                if kind == "outside":
                    target = rnd.choice(outside_ids)
                else:
                    t, s = (second if second is not None and rnd.random() < 0.35 else (topic, sub))
                    pool = {"subtopic": by_subtopic.get((t, s)), "topic": by_topic.get(t),
                            "facet": by_facet.get(s), "random": range(i)}[kind]
                    if not pool:
                        continue
                    target = paper_ids[pool[int(len(pool) * rnd.random())]]
                if target not in chosen:
                    chosen.add(target)
                    refs.append(target)
        result.append(Paper(i, paper_ids[i], topic, sub, second, year, refs))
        by_subtopic.setdefault((topic, sub), []).append(i)
        by_topic.setdefault(topic, []).append(i)
        by_facet.setdefault(sub, []).append(i)
    index_of = {p.paper_id: p.index for p in result}
    for p in result:
        for ref in p.references:
            j = index_of.get(ref)
            if j is not None:
                result[j].inbound.append(p.paper_id)
    return result, outside_ids


def _poisson(mean: float, rnd: random.Random) -> int:
    """Knuth's Poisson sampler (small means only)."""
    limit, k, prod = math.exp(-mean), 0, rnd.random()
    while prod > limit:
        k += 1
        prod *= rnd.random()
    return k


def _topic_label(paper: Paper) -> str:
    return f"{FIELDS_OF_STUDY[paper.topic].lower().replace(' ', '_')}/{FACETS[paper.subtopic]}"


def _metadata_record(paper: Paper, text: TextGenerator, rnd: random.Random) -> dict:
    """One S2ORC 20200705v1 metadata record (all fields of the real release)."""
    title, abstract = text.texts(paper)
    fields = [FIELDS_OF_STUDY[paper.topic]]
    if paper.second is not None and paper.second[0] != paper.topic:
        fields.append(FIELDS_OF_STUDY[paper.second[0]])
    has_pdf = rnd.random() < PDF_PARSE_SHARE
    n_authors = rnd.randint(1, 5)
    authors = [{"first": rnd.choice("ABCDEFGHJKLMNPRSTW") + ".", "middle": [],
                "last": f"Author{rnd.randrange(5000)}", "suffix": ""} for _ in range(n_authors)]
    return {
        "paper_id": paper.paper_id,
        "title": title,
        "authors": authors,
        "abstract": abstract,
        "year": paper.year,
        "arxiv_id": None,
        "acl_id": None,
        "pmc_id": None,
        "pubmed_id": str(rnd.randrange(10**7, 4 * 10**7)) if paper.topic in (1, 2) else None,
        "doi": f"10.5555/demo.{paper.paper_id}",
        "venue": "",
        "journal": f"Journal of {FIELDS_OF_STUDY[paper.topic]}",
        "mag_id": str(rnd.randrange(10**9, 3 * 10**9)),
        "mag_field_of_study": fields if rnd.random() > 0.03 else None,
        "outbound_citations": list(paper.references),
        "inbound_citations": list(paper.inbound),
        "has_outbound_citations": bool(paper.references),
        "has_inbound_citations": bool(paper.inbound),
        "has_pdf_parse": has_pdf,
        **({"has_pdf_parsed_abstract": abstract is not None, "has_pdf_parsed_body_text": True,
            "has_pdf_parsed_bib_entries": bool(paper.references), "has_pdf_parsed_ref_entries": False}
           if has_pdf else {}),
        "s2_url": f"https://api.semanticscholar.org/CorpusID:{paper.paper_id}",
    }


def _pdf_parse_record(record: dict) -> dict:
    """A minimal S2ORC pdf_parses record for a metadata record with ``has_pdf_parse``."""
    pid = record["paper_id"]
    para = lambda text, section: {"section": section, "text": text, "cite_spans": [], "ref_spans": []}  # noqa: E731
    return {
        "paper_id": pid,
        "_pdf_hash": hashlib.sha1(f"demo-pdf-{pid}".encode()).hexdigest(),
        "abstract": [para(record["abstract"], "Abstract")] if record["abstract"] else [],
        "body_text": [para(record["title"], "Introduction")],
        "bib_entries": {f"BIBREF{k}": {"title": "", "link": ref} for k, ref in enumerate(record["outbound_citations"])},
        "ref_entries": {},
    }


def _write_jsonl_gz(path: Path, records) -> int:
    """Records as gzip jsonl (atomic, gzip level 6, mtime 0: deterministic bytes); returns the count."""
    n = 0
    with atomic_open(path) as fh:
        for rec in records:
            fh.write(orjson.dumps(rec).decode())
            fh.write("\n")
            n += 1
    return n


def default_shard_count(papers: int) -> int:
    """Shards of the demo corpus: about 1,000 papers each, at least 4, at most 100 (real S2ORC: 100)."""
    return min(100, max(4, math.ceil(papers / 1000)))


@writes("output_dir")
def make_demo(output_dir: PathLike, papers: int = 3000, seed: int = 0, topics: int = 10,
              shards: Optional[int] = None, corpus_format: str = "s2orc", full_text: bool = False) -> DemoCorpus:
    """Write the bundled synthetic demo corpus (S2ORC shards + SciDocs dir) to OUTPUT_DIR; returns its paths.

    Deterministic: the same --papers/--seed/--topics/--shards give byte-identical files.

    Example:
        python cli_s2orc.py make_demo data/demo --papers 3000 --seed 0

    Writes OUTPUT_DIR/s2orc/metadata/ and pdf_parses/ (S2ORC shards), OUTPUT_DIR/scidocs/ (SciDocs format),
    OUTPUT_DIR/scidocs_paper_ids.json (held-out SciDocs papers, pass them as --excluded_paper_ids),
    OUTPUT_DIR/topics.json and OUTPUT_DIR/demo_manifest.json (the module docstring says more).
    With --corpus_format s2ag|openalex|plain also OUTPUT_DIR/<format>/ (the same papers in that layout,
    :mod:`scincl.corpus.layouts`) and OUTPUT_DIR/<format>/id_map.json ({SciDocs/S2ORC paper id: corpus id}).
    With --full_text also OUTPUT_DIR/s2orc/full_text/ (pdf_parses-format full text of every paper with
    cite_spans that follow the citation graph: the input of get_citation_contexts); the other files are
    the same bytes with or without it.

    :param output_dir: directory to write (created)
    :param papers: number of corpus papers (>= 200; 100000 is the benchmark size)
    :param seed: random seed
    :param topics: number of top-level fields of study (2..19), each with 4 subtopics
    :param shards: metadata shards (default: by the number of papers)
    :param corpus_format: also write the corpus as s2ag, openalex or plain (default: s2orc only)
    :param full_text: also write full text with citation markers (s2orc/full_text/; several times slower)
    """
    from scincl.corpus import check_format

    corpus_format = check_format(corpus_format) or "s2orc"
    if papers < 200:
        raise InputError(f"the demo corpus needs at least 200 papers (got {papers})")
    if not 2 <= topics <= len(FIELDS_OF_STUDY):
        raise InputError(f"the demo corpus's topics must be between 2 and {len(FIELDS_OF_STUDY)} (got {topics})")
    shards = shards or default_shard_count(papers)
    root = Path(output_dir)
    corpus = DemoCorpus(root=root, s2orc_metadata_dir=root / "s2orc" / "metadata", scidocs_dir=root / "scidocs",
                        scidocs_paper_ids_path=root / "scidocs_paper_ids.json", topics_path=root / "topics.json",
                        s2orc_pdf_parses_dir=root / "s2orc" / "pdf_parses", manifest_path=root / "demo_manifest.json")
    rnd = random.Random(seed)
    vocab = Vocabulary(topics, random.Random(seed + 7919))
    text = TextGenerator(vocab, seed)
    graph, _ = _build_graph(papers, topics, rnd)

    scidocs = build_scidocs(graph, text, corpus.scidocs_dir, random.Random(seed + 104729))

    # S2ORC shards: papers in a seeded random order, contiguous slices per shard (as in the release).
    order = list(range(papers))
    random.Random(seed + 1).shuffle(order)
    per_shard = math.ceil(papers / shards)
    n_records = n_pdf = 0
    for s in tqdm(range(shards), desc="demo shards", unit="shard", disable=None):
        records = []
        for i in order[s * per_shard:(s + 1) * per_shard]:
            records.append(_metadata_record(graph[i], text, random.Random((seed << 40) + (i << 2) + 3)))
        n_records += _write_jsonl_gz(corpus.s2orc_metadata_dir / f"metadata_{s}.jsonl.gz", records)
        n_pdf += _write_jsonl_gz(corpus.s2orc_pdf_parses_dir / f"pdf_parses_{s}.jsonl.gz",
                                 (_pdf_parse_record(r) for r in records if r["has_pdf_parse"]))
    if full_text:  # issue 43: full text with cite_spans for every paper, in new files (no other file changes)
        corpus.full_text_dir = root / "s2orc" / "full_text"
        by_id = {p.paper_id: p for p in graph}
        for s in tqdm(range(shards), desc="demo full text", unit="shard", disable=None):
            shard = order[s * per_shard:(s + 1) * per_shard]
            _write_jsonl_gz(full_text_path(corpus.full_text_dir, s),
                            (full_text_record(graph[i], by_id, text, seed) for i in shard))

    write_id_list(corpus.scidocs_paper_ids_path, scidocs.held_out_ids)
    with atomic_open(corpus.topics_path) as fh:
        fh.write(dumps_json({p.paper_id: _topic_label(p) for p in graph}).decode() + "\n")
    n_edges = sum(len(p.references) for p in graph)
    manifest = {
        "papers": papers, "seed": seed, "topics": topics, "subtopics_per_topic": len(FACETS), "shards": shards,
        "metadata_records": n_records, "pdf_parse_records": n_pdf, "citation_edges": n_edges,
        "citations_in_corpus": sum(len(p.inbound) for p in graph),
        "topic_labels": dict(sorted(Counter(_topic_label(p) for p in graph).items())),
        "scidocs": scidocs.counts,
    }
    write_json(corpus.manifest_path, manifest)
    logger.info("demo corpus: %d papers in %d shards, %d citation edges, %d held-out SciDocs papers -> %s",
                papers, shards, n_edges, len(scidocs.held_out_ids), root)
    corpus.corpus_format, corpus.corpus_dir = corpus_format, corpus.s2orc_metadata_dir
    if corpus_format != "s2orc":
        from scincl.corpus.layouts import write_layout

        corpus.corpus_dir = root / corpus_format
        write_layout(corpus.s2orc_metadata_dir, corpus.corpus_dir, corpus_format)
        logger.info("demo corpus in the %s layout -> %s", corpus_format, corpus.corpus_dir)
    return corpus
