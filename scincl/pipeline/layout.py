"""Where one ``run_specter`` experiment puts each file (``RunPaths``), from its settings.

``shared`` (default: OUTPUT_DIR) holds what experiments can share (demo corpus, citations, graph,
base-model evaluation); ``run`` is the experiment directory (``--auto_output_dir`` layout).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from scincl.pipeline.settings import RunSettings, experiment_dir, model_dir_name


@dataclass
class RunPaths:
    """Every file and directory of one run."""

    shared: Path
    run: Path
    demo: Path
    scidocs_ids: Path
    metadata_ids: Path
    citations_dir: Path
    graph_dir: Path
    graph_ids: Path
    graph_embeddings: Path
    corpus_ids: Path
    query_ids: Path
    ann_index: Path
    triples: Path
    metadata: Path
    model: Path
    base_eval: Path
    eval: Path
    comparison: Path
    citations_train: Path
    citations_test: Path


def plan_paths(s: RunSettings, shared_dir: Optional[Path] = None, base_model: Optional[str] = None) -> RunPaths:
    """Derive every path from the settings (user-given paths win)."""
    shared = Path(shared_dir) if shared_dir is not None else Path(s.output_dir)
    run = experiment_dir(s)
    graph_dir = shared / "graph"
    suffix = ".gz" if s.gzip else ""
    corpus_ids = Path(s.train_s2orc_paper_ids or run / f"s2orc_paper_ids.seed_{s.corpus_seed}.json")
    query_name = f"query_s2orc_paper_ids.seed_{s.corpus_seed}"
    if s.sample_queries_ratio is not None and s.sample_queries_ratio < 1:
        query_name += f".ratio_{s.sample_queries_ratio}"
    query_ids = Path(s.train_query_s2orc_paper_ids or run / f"{query_name}.json")
    return RunPaths(
        shared=shared, run=run, demo=shared / "demo_corpus",
        scidocs_ids=Path(s.scidocs_paper_ids) if s.scidocs_paper_ids else shared / "scidocs_s2orc_paper_ids.json",
        metadata_ids=shared / "s2orc_metadata_id_mapping.json", citations_dir=shared / "citations", graph_dir=graph_dir,
        graph_ids=Path(s.graph_paper_ids_path) if s.graph_paper_ids_path else graph_dir / "entity_names_paper_id_0.json",
        graph_embeddings=Path(s.graph_embeddings_path) if s.graph_embeddings_path else graph_dir / "embeddings.h5",
        corpus_ids=corpus_ids, query_ids=query_ids,
        ann_index=Path(s.ann_index_path) if s.ann_index_path else Path(f"{corpus_ids}.{s.faiss_string_factory}.faiss"),
        triples=run / f"train_triples.csv{suffix}", metadata=run / f"train_metadata.jsonl{suffix}",
        model=run / model_dir_name(s, base_model), base_eval=shared / "base_model_eval", eval=run,
        comparison=run / "comparison", citations_train=shared / "citations" / "citations.train.tsv",
        citations_test=shared / "citations" / "citations.test.tsv",
    )
