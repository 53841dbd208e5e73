"""SciDocs ids -> corpus ids: the mapping the pipeline uses for leakage exclusion and evaluation.

SciDocs names papers by their Semantic Scholar paper id (a 40-hex sha; the hep-th SciDocs dir under
../shared/data by arXiv number). A corpus in another format names them by its own ids, so
``run_specter --s2id_to_s2orc_input_path`` takes ``{SciDocs id: corpus id}``, built here either

- from a JSON file ``{SciDocs id: corpus id}`` (optionally one named sub-object of it, e.g. the
  ``corpusid`` / ``openalex`` maps of ``hepth/id_maps.json``), values normalised to corpus ids
  (``str(corpusid)``, W-ids without the ``https://openalex.org/`` prefix); or
- from the corpus's own external ids (:func:`external_id_mapping`): every key a paper carries
  (S2AG: the S2 sha at the end of ``url`` and the ``externalids`` values; OpenAlex: the ``ids``
  values and arXiv landing pages; S2ORC: ``arxiv_id``, ``doi``, …) that equals a SciDocs id maps
  that id to the paper; keys carried by several papers are ambiguous and left out.
"""
from __future__ import annotations

from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from scincl.corpus.base import Corpus
from scincl.ids import canonical_id, canonical_pair
from scincl.errors import InputError
from scincl.io import PathLike, read_json
from scincl.corpus.shards import ReadStats, map_shards


def normalize_corpus_id(value, path: Optional[PathLike] = None, field: Optional[str] = None) -> str:
    """A corpus id as the adapters write it (:func:`scincl.ids.canonical_id`: a string, OpenAlex W-ids without
    their URL prefix); a value that cannot be an id is an InputError naming ``path`` and ``field``."""
    return canonical_id(value, path=path, field=field)


def mapping_from_file(path: PathLike, key: Optional[str] = None) -> Dict[str, str]:
    """``{SciDocs id: corpus id}`` from a JSON object (or its sub-object ``key``), values normalised."""
    data = read_json(path)
    if key is not None:
        if not isinstance(data, dict) or key not in data:
            keys = ", ".join(sorted(data)) if isinstance(data, dict) else "none"
            raise InputError(f"no mapping named {key!r} (keys: {keys})", path=path)
        data = data[key]
    if not isinstance(data, dict):
        raise InputError("expected a JSON object {SciDocs id: corpus id}", path=path)
    out: Dict[str, str] = {}
    for k, v in data.items():
        if v is None:
            continue
        scidocs_id, corpus_id = canonical_pair(k, v, path, key)
        out[scidocs_id] = corpus_id
    return out


def check_one_to_one(mapping: Dict[str, str], source: str) -> None:
    """Two SciDocs ids mapped to one corpus paper is an error naming both (one paper cannot be two
    SciDocs papers: their leakage exclusion and their scores would silently merge)."""
    first: Dict[str, str] = {}
    for scidocs_id, corpus_id in sorted(mapping.items()):
        if corpus_id in first:
            raise InputError(f"SciDocs ids {first[corpus_id]!r} and {scidocs_id!r} both map to the corpus paper "
                             f"{corpus_id!r} ({source})")
        first[corpus_id] = scidocs_id


def _file_keys(path: Path, read_external_ids, wanted: frozenset, strict: bool) -> Tuple[List[Tuple[str, str]], ReadStats]:
    stats = ReadStats()
    found = [(key, pid) for _, pid, keys in read_external_ids(path, strict=strict, stats=stats)
             for key in set(keys) if key in wanted]
    return found, stats


def external_id_mapping(corpus: Corpus, scidocs_ids: Iterable[str], workers: int = 1,
                        strict: bool = False) -> Tuple[Dict[str, str], Dict[str, List[str]], ReadStats]:
    """``(mapping, ambiguous, stats)``: SciDocs ids found among the corpus papers' external ids."""
    if corpus.read_external_ids is None:
        raise InputError(f"the {corpus.format} format carries no external ids; give a JSON mapping "
                         "{SciDocs id: corpus id} with --mapping_path")
    wanted = frozenset(str(i) for i in scidocs_ids)
    results = map_shards(partial(_file_keys, read_external_ids=corpus.read_external_ids, wanted=wanted,
                                 strict=strict), corpus.text_files, workers, desc="external ids")
    candidates: Dict[str, Set[str]] = defaultdict(set)
    stats = ReadStats()
    for found, file_stats in results:
        stats.merge(file_stats)
        for key, pid in found:
            candidates[key].add(pid)
    mapping = {k: next(iter(v)) for k, v in sorted(candidates.items()) if len(v) == 1}
    ambiguous = {k: sorted(v) for k, v in sorted(candidates.items()) if len(v) > 1}
    return mapping, ambiguous, stats


def scidocs_id_mapping(scidocs_dir: PathLike, corpus_dir: Optional[PathLike] = None,
                       corpus_format: Optional[str] = None, mapping_path: Optional[PathLike] = None,
                       mapping_key: Optional[str] = None, workers: int = 1, strict: bool = False,
                       paper_ids: Optional[PathLike] = None) -> Tuple[Dict[str, str], Dict]:
    """``({SciDocs id: corpus id}, counts)`` for the papers of ``scidocs_dir``, from a file or the corpus.

    With ``mapping_path`` the file's mapping is kept for the SciDocs ids; otherwise the corpus at
    ``corpus_dir`` is read for external ids (:func:`external_id_mapping`). ``paper_ids`` (a JSON
    list) maps only those SciDocs papers, e.g. the query papers to exclude from training.
    """
    from scincl.corpus.detect import open_corpus
    from scincl.io import read_id_list
    from scincl.scidocs_io import read_scidocs_metadata_dir

    if paper_ids is not None:
        scidocs_ids = sorted(set(read_id_list(paper_ids)))
    else:
        scidocs_ids = sorted({pid for meta in read_scidocs_metadata_dir(scidocs_dir).values() for pid in meta})
    counts: Dict = {"scidocs_papers": len(scidocs_ids)}
    if mapping_path is not None:
        full = mapping_from_file(mapping_path, mapping_key)
        mapping = {i: full[i] for i in scidocs_ids if i in full}
        check_one_to_one(mapping, f"{mapping_path}" + (f" [{mapping_key}]" if mapping_key else ""))
        counts["source"] = f"{mapping_path}" + (f" [{mapping_key}]" if mapping_key else "")
    else:
        if corpus_dir is None:
            raise InputError("give the corpus folder (--corpus_dir) or a JSON mapping (--mapping_path)")
        corpus = open_corpus(corpus_dir, corpus_format, workers=workers, strict=strict)
        mapping, ambiguous, stats = external_id_mapping(corpus, scidocs_ids, workers, strict)
        counts.update({"source": f"external ids of the {corpus.format} corpus {corpus_dir}",
                       "ambiguous": len(ambiguous), "ambiguous_examples": dict(list(ambiguous.items())[:5]),
                       "papers_read": stats.papers})
    counts["mapped"] = len(mapping)
    counts["unmapped"] = len(scidocs_ids) - len(mapping)
    return mapping, counts
