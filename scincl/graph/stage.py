"""The corpus stage as library calls: citation graph, co-citations and text positions of any corpus format.

``cli_s2orc.py`` exposes these functions as subcommands (same names and flags) and the pipelines
(``scincl/pipeline/``) call them directly. Each reuses existing outputs unless ``override``
when its made-by record says they were made from the same inputs and settings and are unchanged
(:class:`OutputRecord`) and writes a ``*.stats.json`` of counts beside its output.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from scincl.corpus import Corpus, open_corpus
from scincl.corpus.base import files_seen
from scincl.corpus.regroup import corpus_cocitations
from scincl.graph.citations import citation_output_paths, extract_citations
from scincl.errors import InputError
from scincl.io import atomic_open, dumps_json, write_json
from scincl.provenance import (difference, made_by, outputs_changed, outputs_record, read_record, record_path,
                               write_record)
from scincl.s2orc import load_id_set
from scincl.corpus.s2orc_mappings import metadata_id_mapping

logger = logging.getLogger(__name__)


def worker_count(workers: Optional[int]) -> int:
    """``--workers``, or every CPU when not given."""
    return int(workers) if workers else (os.cpu_count() or 1)


def open_corpus_with_workers(corpus_dir: str, corpus_format: Optional[str], workers: Optional[int],
                             strict: bool = False) -> Corpus:
    """:func:`scincl.corpus.open_corpus` with ``--workers`` resolved."""
    return open_corpus(corpus_dir, corpus_format, workers=worker_count(workers), strict=strict)


def resolved_format(corpus_dir: Optional[Union[str, Path]], corpus_format: Optional[str]) -> Optional[str]:
    """The format a corpus is read as (``--corpus_format``, else detected): what a made-by record keeps,
    so ``--corpus_format s2orc`` and its detection on an S2ORC folder make the same record."""
    from scincl.corpus import check_format, detect_format

    try:
        return check_format(corpus_format) or (detect_format(corpus_dir) if corpus_dir else None)
    except InputError:
        return corpus_format  # opening the corpus reports it


def _outputs_of_our_commands(inputs: Sequence[Union[str, Path]]) -> list:
    """Files inside input folders that a command of ours wrote there (each has a ``.made_by.json``
    record beside it, e.g. ``get_metadata_id_mapping`` into the S2ORC folder): not part of the corpus."""
    found = []
    for folder in (Path(p) for p in inputs):
        if folder.is_dir():
            for record in folder.rglob("*.made_by.json"):
                found += [record, record.with_name(record.name[:-len(".made_by.json")])]
    return found


class OutputRecord:
    """The made-by record of a standalone command's outputs (``<first output>.made_by.json``, issue 29).

    ``settings``: every flag that changes the outputs' bytes; ``inputs``: the files and folders read
    (fingerprinted now, once, before the command runs; outputs written inside an input folder are
    left out of its fingerprint). :meth:`reusable` is the reuse rule, :meth:`write` is called after
    every output exists.
    """

    def __init__(self, *outputs: Union[str, Path], settings: Mapping[str, Any],
                 inputs: Sequence[Optional[Union[str, Path]]] = ()) -> None:
        self.outputs = [Path(p) for p in outputs]
        inputs = [p for p in inputs if p]
        self.wanted = made_by(settings, inputs, exclude=self.outputs + [record_path(p) for p in self.outputs]
                              + _outputs_of_our_commands(inputs))

    @property
    def path(self) -> Path:
        return record_path(self.outputs[0])

    def reusable(self, override: bool) -> bool:
        """True (logged) when every output exists, was made from the same inputs and settings and is
        unchanged since; False when something is missing or ``override``; otherwise an InputError
        naming the difference (an output made from another corpus or with other flags is never reused)."""
        if not all(p.exists() for p in self.outputs):
            return False
        stored = read_record(self.path)
        why = difference(stored, self.wanted)
        if why is None and stored is not None:
            why = outputs_changed(stored.get("outputs") or [], self.outputs) if "outputs" in stored else \
                "no record of its outputs"
        if override:
            logger.info("%s: --override given, rebuilding", self.outputs[0])
            return False
        if why is not None:
            raise InputError(f"exists but was made differently: {why}; pass --override to rebuild it",
                             path=self.outputs[0])
        logger.info("output exists and was made from the same inputs and settings, reusing it (use --override to "
                    "rebuild): %s", ", ".join(map(str, self.outputs)))
        return True

    def write(self) -> None:
        """Record the outputs (written last: every output exists)."""
        write_record(self.path, {**self.wanted, "outputs": outputs_record(self.outputs)})


def nothing_read(corpus: Corpus, what: str, outputs: Sequence[Union[str, Path]] = ()) -> InputError:
    """The error for a corpus folder that gave no ``what`` in its format (issue 29: it was an empty
    output and rc 0); the outputs already written are removed, so a rerun is not refused."""
    for output in outputs:
        if Path(output).is_file():
            Path(output).unlink()
    for parent in {Path(output).parent for output in outputs}:
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()  # the output folder this command created, left empty
    return InputError(f"read no {what} as --corpus_format {corpus.format} from {len(corpus.reference_files)} "
                      f"file(s) (files seen: {files_seen(corpus.root)}); is that the corpus's format?",
                      path=corpus.root)


def outputs_exist(*paths: Path, override: bool) -> bool:
    """True (and a log line) when every output exists and --override is not set.

    Without a record of what made them: prefer :class:`OutputRecord`, which checks that.
    """
    if not override and paths and all(Path(p).exists() for p in paths):
        logger.info("output exists, reusing it (use --override to rebuild): %s", ", ".join(map(str, paths)))
        return True
    return False


def write_json_any(path: Union[str, Path], obj: Any) -> None:
    """JSON output, gzip-compressed when the name ends in .gz (deterministic bytes)."""
    with atomic_open(path) as fh:
        fh.write(dumps_json(obj).decode() + "\n")


def stats_path_of(output: Union[str, Path], default_name: str) -> Path:
    """Where the counts of ``output`` go: ``<name>.stats.json`` beside a file, ``default_name`` in a directory."""
    out = Path(output)
    if out.suffix in (".tsv", ".json", ".gz"):
        name = out.name.split(".")[0]
        return out.parent / f"{name}.stats.json"
    return out / default_name


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
    record = OutputRecord(output_path, settings={"command": "get_metadata_id_mapping",
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
