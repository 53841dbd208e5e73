"""Training data for the encoder: triples/groups + metadata -> tokenised, cached ``datasets`` tables.

* Training rows come from a triples CSV (``query_paper_id,positive_id,negative_id``, DESIGN.md)
  or a groups jsonl (``{"query_paper_id": id, "positives": [target, ...], "negatives": [...]}``,
  :mod:`scincl.triples.groups`; the older key ``"query"`` is read too). Triplet losses see
  triplets, group losses see groups; each form is converted to the other when needed
  (:func:`groups_to_triplets`, :func:`triplets_to_groups`). A group's first positive is its target.
* Papers are read from metadata jsonl(.gz) ``{"paper_id","title","abstract"}`` or a SciDocs
  ``paper_metadata_*.json`` dict, restricted to the papers the rows need, turned into
  ``title + sep_token + abstract`` (always, a missing part empty) and tokenised once with ``datasets`` (``Dataset.from_generator``
  then ``map``): the arrow cache under ``cache_dir`` is reused by later runs with the same file,
  tokenizer and ``max_sequence_length``.
* Papers missing from the metadata are counted and reported; rows that need them are dropped.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.io import is_gzip_path, iter_jsonl, iter_triples_csv, read_json
from scincl.ids import canonical_id
from scincl.triples.groups import group_members, group_triplets

logger = logging.getLogger(__name__)

TRIPLETS = "triplets"
GROUPS = "groups"


# ------------------------------------------------------------------------------------- texts

def paper_text(title: Optional[str], abstract: Optional[str], sep_token: str) -> str:
    """``title + sep_token + abstract``, always: a missing part is empty, the separator stays.

    The encoder input of the original SciNCL README (and SPECTER): a paper without abstract is
    ``"Title[SEP]"``, one without title ``"[SEP]Abstract"``.
    """
    return (title or "") + sep_token + (abstract or "")


def is_scidocs_metadata_file(path: Path) -> bool:
    """SciDocs metadata is one JSON dict (``paper_metadata_*.json``), not jsonl."""
    name = path.name[:-3] if is_gzip_path(path) else path.name
    return name.endswith(".json")


def iter_metadata(path: Path) -> Iterator[Tuple[str, Optional[str], Optional[str]]]:
    """Yield ``(paper_id, title, abstract)`` from metadata jsonl(.gz) or a SciDocs metadata json.

    A record without ``paper_id`` (jsonl), a paper id on a second line (jsonl) or a non-dict value
    (SciDocs json) is an InputError naming the file, line and field; ``title``/``abstract`` may be
    missing or null.
    """
    path = Path(path)
    if is_scidocs_metadata_file(path):
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected a SciDocs metadata dict {paper_id: {title, abstract}}", path=path)
        for key, record in data.items():
            if record is None:
                record = {}
            if not isinstance(record, dict):
                raise InputError(f"metadata of paper {key!r} is not an object", path=path, field=str(key))
            yield canonical_id(record.get("paper_id") or key, path, field=str(key)), record.get("title"), \
                record.get("abstract")
        return
    first_line: Dict[str, int] = {}
    for line_no, record in iter_jsonl(path):
        if not isinstance(record, dict) or record.get("paper_id") in (None, ""):
            raise InputError("record without 'paper_id'", path=path, line=line_no, field="paper_id")
        title, abstract = record.get("title"), record.get("abstract")
        for name, value in (("title", title), ("abstract", abstract)):
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name} is not a string", path=path, line=line_no, field=name)
        paper_id = canonical_id(record["paper_id"], path, line_no, "paper_id")
        if first_line.setdefault(paper_id, line_no) != line_no:
            raise InputError(f"duplicate paper_id {paper_id!r} (first on line {first_line[paper_id]}): which text "
                             "is meant?", path=path, line=line_no, field="paper_id")
        yield paper_id, title, abstract


# --------------------------------------------------------------------------------- train rows

@dataclass
class TrainingRows:
    """Training rows by paper id: each row is ``(query, [positives], [negatives])``."""

    kind: str  # TRIPLETS (one positive and one negative per row) or GROUPS
    rows: List[Tuple[str, List[str], List[str]]]
    source: str = ""

    def paper_ids(self) -> List[str]:
        """Distinct paper ids in first-appearance order."""
        seen: Dict[str, None] = {}
        for query, positives, negatives in self.rows:
            seen.setdefault(query)
            for pid in positives:
                seen.setdefault(pid)
            for pid in negatives:
                seen.setdefault(pid)
        return list(seen)


def _is_groups_path(path: Path) -> bool:
    name = path.name[:-3] if is_gzip_path(path) else path.name
    if name.endswith(".jsonl"):
        return True
    if name.endswith(".csv"):
        return False
    raise InputError("training rows must be a triples .csv(.gz) or a groups .jsonl(.gz) file", path=path)


def read_training_rows(path: Path) -> TrainingRows:
    """Read a triples CSV or a groups jsonl (chosen by file name) into :class:`TrainingRows`."""
    path = Path(path)
    if not _is_groups_path(path):
        rows = [(q, [p], [n]) for q, p, n in iter_triples_csv(path)]
        if not rows:
            raise InputError("no triples in file", path=path)
        return TrainingRows(TRIPLETS, rows, str(path))
    rows = []
    for line_no, record in iter_jsonl(path):
        rows.append(group_members(record, path, line_no))
    if not rows:
        raise InputError("no groups in file", path=path)
    return TrainingRows(GROUPS, rows, str(path))


def groups_to_triplets(rows: TrainingRows) -> TrainingRows:
    """Groups -> triplets: positive ``i`` pairs with negative ``i`` (the shorter list cycles).

    A query with 5 positives and 5 negatives gives 5 triplets, as the SciNCL miner writes them.
    """
    if rows.kind == TRIPLETS:
        return rows
    out = [(q, [p], [n]) for query, positives, negatives in rows.rows
           for q, p, n in group_triplets(query, positives, negatives)]
    return TrainingRows(TRIPLETS, out, rows.source)


def triplets_to_groups(rows: TrainingRows) -> TrainingRows:
    """Triplets -> groups: all triplets of a query become one group (distinct ids, first-seen order).

    The first positive seen becomes the group's target (``positive_index[:, 0]`` of the mpt losses).
    """
    if rows.kind == GROUPS:
        return rows
    grouped: Dict[str, Tuple[Dict[str, None], Dict[str, None]]] = {}
    for query, positives, negatives in rows.rows:
        pos, neg = grouped.setdefault(query, ({}, {}))
        for pid in positives:
            pos.setdefault(pid)
        for pid in negatives:
            neg.setdefault(pid)
    out = [(query, list(pos), list(neg)) for query, (pos, neg) in grouped.items()]
    return TrainingRows(GROUPS, out, rows.source)


def as_kind(rows: TrainingRows, kind: str) -> TrainingRows:
    """Convert rows to the input kind a loss needs."""
    return groups_to_triplets(rows) if kind == TRIPLETS else triplets_to_groups(rows)


# ------------------------------------------------------------------------------ paper tokens

def _generate_papers(metadata_path: str, file_signature: Tuple[int, int], paper_ids: Optional[List[str]]):
    """``datasets`` generator: needed papers of a metadata file (an id on two jsonl lines is an error).

    ``file_signature`` (size, mtime) is unused here but part of the cache key, so an edited file
    is read again.
    """
    wanted = set(paper_ids) if paper_ids is not None else None
    seen = set()
    for paper_id, title, abstract in iter_metadata(Path(metadata_path)):
        if paper_id in seen or (wanted is not None and paper_id not in wanted):
            continue
        seen.add(paper_id)
        yield {"paper_id": paper_id, "title": title or "", "abstract": abstract or ""}


def _tokenize_batch(batch: Dict[str, List[str]], tokenizer: Any, max_length: int) -> Dict[str, Any]:
    texts = [paper_text(t, a, tokenizer.sep_token) for t, a in zip(batch["title"], batch["abstract"])]
    encoded = tokenizer(texts, truncation=True, max_length=max_length)
    out = dict(encoded)
    out["length"] = [len(ids) for ids in encoded["input_ids"]]
    out["is_empty"] = [not t and not a for t, a in zip(batch["title"], batch["abstract"])]
    return out


@dataclass
class TokenizedPapers:
    """Tokenised papers (an arrow-backed ``datasets.Dataset``) and the paper id -> row map."""

    dataset: Any
    row_of: Dict[str, int]
    empty_papers: int = 0
    missing: List[str] = field(default_factory=list)


def load_tokenized_papers(metadata_path: Path, tokenizer: Any, max_sequence_length: int,
                          paper_ids: Optional[Sequence[str]] = None,
                          cache_dir: Optional[str] = None) -> TokenizedPapers:
    """Read + tokenise the papers of ``metadata_path`` that are in ``paper_ids`` (all when None).

    The result is cached by ``datasets`` under ``cache_dir`` (default: the ``datasets`` cache,
    ``HF_DATASETS_CACHE``) keyed by file, size/mtime, id list, tokenizer and max length.
    """
    import datasets

    path = Path(metadata_path)
    if not path.exists():
        raise InputError("file not found", path=path)
    stat = path.stat()
    ids = sorted(set(paper_ids)) if paper_ids is not None else None
    features = datasets.Features({name: datasets.Value("string") for name in ("paper_id", "title", "abstract")})
    try:
        raw = datasets.Dataset.from_generator(
            _generate_papers, features=features, cache_dir=cache_dir,
            gen_kwargs={"metadata_path": str(path.resolve()), "file_signature": (stat.st_size, stat.st_mtime_ns),
                        "paper_ids": ids})
    except datasets.exceptions.DatasetGenerationError as exc:
        cause = exc.__cause__
        if isinstance(cause, InputError):
            raise cause from None
        raise
    except ValueError as exc:  # datasets: 'Instruction "train" corresponds to no data!' when nothing was yielded
        if "corresponds to no data" not in str(exc):
            raise
        raw = None
    if raw is None or len(raw) == 0:
        if not ids:
            raise InputError("no usable papers in metadata", path=path)
        logger.warning("none of the %d papers of the training rows is in %s", len(ids), path)
        empty_dataset = datasets.Dataset.from_dict({"paper_id": [], "length": []})
        return TokenizedPapers(empty_dataset, {}, 0, list(ids))
    tokenized = raw.map(_tokenize_batch, batched=True, batch_size=1000, remove_columns=["title", "abstract"],
                        fn_kwargs={"tokenizer": tokenizer, "max_length": max_sequence_length},
                        desc="tokenising papers")
    row_of = {pid: i for i, pid in enumerate(tokenized["paper_id"])}
    empty = int(np.sum(tokenized["is_empty"]))
    missing = [pid for pid in (paper_ids or []) if pid not in row_of]
    logger.info("papers: %d tokenised from %s (max %d tokens)%s", len(tokenized), path, max_sequence_length,
                f", {empty} without title and abstract" if empty else "")
    return TokenizedPapers(tokenized, row_of, empty, missing)


def nothing_to_learn(rows: "TrainingRows", papers: TokenizedPapers) -> Optional[str]:
    """Why training rows give the encoder nothing to learn (issue 41), or None: every paper without text (each input
    is the separator alone), or every row's positives equal to its negatives (the loss cannot tell them apart)."""
    if papers.row_of and papers.empty_papers == len(papers.row_of):
        return (f"none of the {len(papers.row_of)} training papers has a title or an abstract (every input is the "
                "separator alone)")
    if rows.rows and all(set(positives) == set(negatives) for _, positives, negatives in rows.rows):
        return f"in every one of the {len(rows.rows)} training rows the positives are the negatives"
    return None


# ---------------------------------------------------------------------------- train dataset

@dataclass
class RowFilterReport:
    """What happened to training rows whose papers are missing from the metadata."""

    rows_in: int
    rows_kept: int
    missing_papers: int
    examples: List[str]

    def log(self, what: str) -> None:
        if self.missing_papers:
            logger.warning("%s: %d papers missing from the metadata (e.g. %s); %d of %d rows dropped",
                           what, self.missing_papers, ", ".join(self.examples), self.rows_in - self.rows_kept,
                           self.rows_in)
        logger.info("%s: %d rows", what, self.rows_kept)


def build_example_dataset(rows: TrainingRows, papers: TokenizedPapers) -> Tuple[Any, RowFilterReport]:
    """Rows of paper ids -> a ``datasets.Dataset`` of paper row numbers (+ a ``length`` column).

    Triplets get columns ``query, positive, negative``; groups ``query, positives, negatives``.
    A triplet with a missing paper is dropped; a group loses its missing members and is dropped
    when its query, its target (first positive) or all of its negatives are missing.
    """
    import datasets

    row_of = papers.row_of
    lengths = papers.dataset["length"]
    missing: Dict[str, None] = {}
    queries, positives, negatives, total_lengths = [], [], [], []
    for query, pos, neg in rows.rows:
        for pid in (query, *pos, *neg):
            if pid not in row_of:
                missing.setdefault(pid)
        pos_rows = [row_of[p] for p in pos if p in row_of]
        neg_rows = [row_of[n] for n in neg if n in row_of]
        if query not in row_of or not pos or pos[0] not in row_of or not neg_rows:
            continue
        if rows.kind == TRIPLETS and (len(pos_rows) != len(pos) or len(neg_rows) != len(neg)):
            continue
        q_row = row_of[query]
        queries.append(q_row)
        positives.append(pos_rows)
        negatives.append(neg_rows)
        total_lengths.append(lengths[q_row] + sum(lengths[r] for r in pos_rows) + sum(lengths[r] for r in neg_rows))
    report = RowFilterReport(len(rows.rows), len(queries), len(missing), list(missing)[:5])
    if not queries:
        raise InputError(f"no training rows left: all {len(rows.rows)} {rows.kind} reference papers missing from the "
                         f"metadata ({len(missing)} of {len(rows.paper_ids())} papers missing, e.g. "
                         f"{', '.join(report.examples)})", path=rows.source or None)
    if rows.kind == TRIPLETS:
        columns = {"query": queries, "positive": [p[0] for p in positives], "negative": [n[0] for n in negatives]}
    else:
        columns = {"query": queries, "positives": positives, "negatives": negatives}
    columns["length"] = total_lengths
    return datasets.Dataset.from_dict(columns), report


# ---------------------------------------------------------------------- graph teacher vectors

def load_graph_teacher(embeddings_path: Path, papers: TokenizedPapers,
                       entity_names_path: Optional[Path] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Graph embeddings aligned to the paper rows, for the student-teacher loss (paper A.7.9).

    ``embeddings_path`` is a PyTorch-BigGraph ``embeddings_paper_id_0.vN.h5`` (or ``.npy``) and
    ``entity_names_path`` its ``entity_names_paper_id_0.json`` (default: next to the h5). Returns
    ``(vectors [papers, dim] float32, has_vector [papers] bool)``.
    """
    from scincl.io import entity_names_path as default_names_path
    from scincl.io import read_embeddings_matrix, read_id_list

    embeddings_path = Path(embeddings_path)
    names_path = Path(entity_names_path) if entity_names_path else default_names_path(embeddings_path.parent)
    names = read_id_list(names_path)
    matrix = read_embeddings_matrix(embeddings_path)
    if len(names) != len(matrix):
        raise InputError(f"{len(names)} entity names but {len(matrix)} embeddings in {embeddings_path}",
                         path=names_path)
    index = {name: i for i, name in enumerate(names)}
    vectors = np.zeros((len(papers.row_of), matrix.shape[1]), dtype=np.float32)
    has_vector = np.zeros(len(papers.row_of), dtype=bool)
    for paper_id, row in papers.row_of.items():
        i = index.get(paper_id)
        if i is not None:
            vectors[row] = matrix[i]
            has_vector[row] = True
    logger.info("graph teacher: %d of %d papers have a graph embedding (dim %d)", int(has_vector.sum()),
                len(has_vector), matrix.shape[1])
    return vectors, has_vector
