"""Triplets with their texts as a Hugging Face ``datasets`` dataset (issue 44, ``cli_triples.py export_dataset``).

SPECTER's and SciNCL's training data exist elsewhere only as id lists; this export gives the triplets the
layout sentence-transformers trains on: one row per triplet with the text columns ``anchor``, ``positive``,
``negative`` (in that order: ``SentenceTransformerTrainer`` hands a dataset's columns to the loss in order, and
``losses.TripletLoss`` takes (anchor, positive, negative)), followed by the three paper ids
(``anchor_id``, ``positive_id``, ``negative_id``). Drop the id columns before training
(``dataset.select_columns(TEXT_COLUMNS)``): sentence-transformers would otherwise pass them to the loss as
three more texts.

The texts are formed exactly as ``cli_pipeline.py train`` forms them (:mod:`scincl.model.data`): the rows
are read by :func:`~scincl.model.data.read_training_rows` (a triples CSV, or a groups jsonl turned into
triplets by :func:`~scincl.model.data.groups_to_triplets`), the papers by
:func:`~scincl.model.data.iter_metadata`, each text is :func:`~scincl.model.data.paper_text`
(``title + sep_token + abstract``, a missing part empty), and a triplet with a paper missing from the
metadata is dropped and counted, as :func:`~scincl.model.data.build_example_dataset` drops it.

Output folder: ``Dataset.save_to_disk`` (``datasets.load_from_disk(OUTPUT_DIR)``), the same rows as Parquet in
``OUTPUT_DIR/data/train-00000-of-00001.parquet`` (the file name the Hugging Face hub reads as the ``train``
split) and ``OUTPUT_DIR/export_report.json`` (counts).
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Dict, List

from scincl.errors import InputError
from scincl.io import write_json
from scincl.model.data import groups_to_triplets, iter_metadata, paper_text, read_training_rows
from scincl.provenance import OutputRecord
from scincl.temporaries import make_temporary_dir
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("anchor", "positive", "negative")  # sentence-transformers' (anchor, positive, negative) triplets
ID_COLUMNS = ("anchor_id", "positive_id", "negative_id")
# The separator of BERT, SciBERT and all-MiniLM-L6-v2 (``tokenizer.sep_token``, which ``train`` uses).
DEFAULT_SEP_TOKEN = "[SEP]"
PARQUET_FILE = "data/train-00000-of-00001.parquet"
REPORT_FILE = "export_report.json"


def triplet_texts(triples_path: Path, metadata_path: Path, sep_token: str = DEFAULT_SEP_TOKEN
                  ) -> tuple[Dict[str, List[str]], Dict[str, int]]:
    """The dataset's columns (:data:`TEXT_COLUMNS` + :data:`ID_COLUMNS`) and the counts of what was dropped.

    Only the papers the triplets name are kept in memory.
    """
    rows = groups_to_triplets(read_training_rows(Path(triples_path)))
    needed = set(rows.paper_ids())
    texts: Dict[str, str] = {}
    for paper_id, title, abstract in iter_metadata(Path(metadata_path)):
        if paper_id in needed and paper_id not in texts:
            texts[paper_id] = paper_text(title, abstract, sep_token)
    columns: Dict[str, List[str]] = {name: [] for name in (*TEXT_COLUMNS, *ID_COLUMNS)}
    for query, positives, negatives in rows.rows:
        ids = (query, positives[0], negatives[0])
        if any(pid not in texts for pid in ids):
            continue
        for text_column, id_column, pid in zip(TEXT_COLUMNS, ID_COLUMNS, ids):
            columns[text_column].append(texts[pid])
            columns[id_column].append(pid)
    missing = sorted(needed - set(texts))
    counts = {"triplets_in_file": len(rows.rows), "triplets": len(columns["anchor"]),
              "triplets_dropped": len(rows.rows) - len(columns["anchor"]), "papers": len(needed) - len(missing),
              "papers_missing_from_metadata": len(missing)}
    if missing:
        logger.warning("%d of %d papers of %s are missing from %s (e.g. %s); %d triplets dropped", len(missing),
                       len(needed), triples_path, metadata_path, ", ".join(missing[:5]), counts["triplets_dropped"])
    if not columns["anchor"]:
        raise InputError(f"no triplet left: every one of the {len(rows.rows)} triplets names a paper missing from "
                         f"{metadata_path} ({len(missing)} papers missing, e.g. {', '.join(missing[:5])})",
                         path=triples_path)
    return columns, counts


@writes("output_dir")
def export_dataset(triples_path: str, metadata_path: str, output_dir: str, sep_token: str = DEFAULT_SEP_TOKEN,
                   override: bool = False) -> Path:
    """Write triplets with their texts as a Hugging Face dataset (save_to_disk + Parquet); returns OUTPUT_DIR.

    Columns ``anchor``, ``positive``, ``negative`` (the texts, ``title + sep_token + abstract`` as ``train``
    forms them) and ``anchor_id``, ``positive_id``, ``negative_id`` (the paper ids). Load it with
    ``datasets.load_from_disk(OUTPUT_DIR)`` or ``datasets.load_dataset("parquet", data_files=
    "OUTPUT_DIR/data/*.parquet")``; train sentence-transformers on
    ``dataset.select_columns(["anchor", "positive", "negative"])`` with ``losses.TripletLoss``. Share it with
    ``huggingface-cli upload --repo-type dataset USER/NAME OUTPUT_DIR/data data``.

    Args:
        triples_path: ``query_paper_id,positive_id,negative_id`` CSV(.gz), or groups jsonl(.gz) (turned into
            triplets as ``train`` does).
        metadata_path: metadata jsonl(.gz) ``{"paper_id","title","abstract"}`` or a SciDocs ``paper_metadata_*.json``.
        output_dir: the dataset folder (``save_to_disk``), with ``data/train-00000-of-00001.parquet`` and
            ``export_report.json`` (counts of triplets and of papers missing from the metadata).
        sep_token: the separator between title and abstract: the tokenizer's ``sep_token`` of the model to
            train (``[SEP]`` for BERT, SciBERT and all-MiniLM-L6-v2).
        override: rebuild an existing output. Without it an existing output is reused when its record
            (``OUTPUT_DIR.made_by.json``) says it was made from the same files and settings, else refused.

    Example: ``python cli_triples.py export_dataset train_triples.csv train_metadata.jsonl triplets_dataset``
    """
    import datasets

    out = Path(output_dir)
    record = OutputRecord(out, command="export_dataset", settings={"command": "export_dataset", "sep_token": sep_token},
                          inputs=[triples_path, metadata_path])
    if record.reusable(override):
        return out
    columns, counts = triplet_texts(Path(triples_path), Path(metadata_path), sep_token)
    dataset = datasets.Dataset.from_dict(columns, features=datasets.Features(
        {name: datasets.Value("string") for name in columns}))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = make_temporary_dir(out.parent, "dataset")  # a killed export leaves no half dataset at OUTPUT_DIR
    try:
        dataset.save_to_disk(str(partial))
        (partial / PARQUET_FILE).parent.mkdir(parents=True)
        dataset.to_parquet(str(partial / PARQUET_FILE))
        write_json(partial / REPORT_FILE, {"triples_path": str(triples_path), "metadata_path": str(metadata_path),
                                           "sep_token": sep_token, **counts})
        if out.exists():
            shutil.rmtree(out)
        partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    record.write()  # last: the folder is complete
    logger.info("wrote %d triplets (%d papers) to %s (and %s)", counts["triplets"], counts["papers"], out,
                out / PARQUET_FILE)
    return out
