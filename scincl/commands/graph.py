"""`cli_graph.py`: citation-graph embeddings (PyTorch-BigGraph) and the FAISS kNN index.

Subcommands (each `--help` shows its docstring):
  train_biggraph            import + train + evaluate + export a BigGraph config (link-prediction table)
  embed_graph               the same outputs with --method pbg|prone|fastrp (ProNE, FastRP: minutes, no training)
  import_edges              only the import step (e.g. before starting distributed ranks)
  export_embeddings         PBG checkpoint -> embeddings.h5|npy + entity_names_paper_id_0.json
  make_edges_bidirectional  add the reverse of every edge (co-citation graphs)
  get_largest_connected_subgraph, extract_ids_in_graph
  build_faiss               embeddings -> FAISS index + row -> paper_id mapping
  get_knn                   batched kNN search of an index -> neighbour ids + distances (npy)
  evaluate_graph_retrieval  graph embeddings as a retriever on held-out citation pairs (MAP, nDCG@10)

BigGraph config overrides use PBG's own syntax and may be repeated, as with `torchbiggraph_train`:
`-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64` (or `--overrides "a=1 b=2"`).

:data:`COMMANDS` is the table: the library functions themselves (`scincl/graph/`, `scincl/knn/papers.py`),
except `train_biggraph` and `embed_graph` (they leave the metric rows out of what fire prints) and
`evaluate_graph_retrieval` (its `--paper_ids` is the library's `paper_ids_path`).
"""
from __future__ import annotations

from typing import Optional

from scincl.graph.biggraph import export_checkpoint, import_edge_files
from scincl.graph.edges import extract_ids_in_graph, get_largest_connected_subgraph, make_edges_bidirectional
from scincl.knn.papers import build_faiss, get_knn


def train_biggraph(config: str, train_edges: Optional[str] = None, test_edges: Optional[str] = None,
                   output_dir: Optional[str] = None, overrides: Optional[str] = None, rank: int = 0, seed: int = 0,
                   override: bool = False, random_baseline: bool = True, export_format: str = "h5",
                   importer: Optional[str] = None) -> dict:
    """Train citation-graph embeddings with PyTorch-BigGraph: import -> train -> eval -> export.

    python cli_graph.py train_biggraph demo --train_edges citations.train.tsv \\
        --test_edges citations.test.tsv --output_dir out/biggraph -p num_epochs=5

    CONFIG: a config module (biggraph_configs/*.py) or a bundled config name (demo, s2orc_768d_dot, ...).
    --train_edges/--test_edges: citing<TAB>cited TSVs (gzip ok); omit them to train on an existing
      import (e.g. one made by torchbiggraph_import_from_tsv or `import_edges`).
    --output_dir: keep import (graph/), checkpoints/, exports and metrics under this folder;
      without it the config's entity_path/checkpoint_path are used and exports go to checkpoint_path.
    -p key=value: PBG config overrides (repeatable), applied last.
    --rank: this machine's rank when the config sets num_machines > 1 (rank 0 evaluates + exports).
    --override: discard an existing import/checkpoint in these paths and start over.
    --random_baseline: also evaluate random embeddings of the same shape (reference row).
    --export_format: h5 (dataset `embeddings`) or npy.
    --importer: fast (polars, multi-threaded, out-of-core; the default) or pbg (PBG's own importer);
      both write the same entities per partition and edges per bucket for the same --seed.

    Writes embeddings.{h5,npy} + entity_names_paper_id_0.json, link_prediction.json/.md (test split:
    loss, mean rank, MRR, Hits@1/10/50, AUC) and biggraph_run.json; prints the output paths.
    """
    from scincl.graph.biggraph import train_biggraph as run

    result = run(config, train_edges, test_edges, overrides=overrides, output_dir=output_dir, rank=int(rank),
                 seed=int(seed), override=override, random_baseline=random_baseline, export_format=export_format,
                 importer=importer)
    return {k: v for k, v in result.items() if k != "metrics"}


def embed_graph(train_edges: str, output_dir: str, method: str = "pbg", config: Optional[str] = None,
                test_edges: Optional[str] = None, dimension: Optional[int] = None, settings: Optional[str] = None,
                overrides: Optional[str] = None, seed: int = 0, override: bool = False, random_baseline: bool = True,
                export_format: str = "h5") -> dict:
    """Citation-graph embeddings with --method pbg (PyTorch-BigGraph, the paper's), prone or fastrp.

    python cli_graph.py embed_graph citations.train.tsv out/graph --method fastrp \\
        --test_edges citations.test.tsv --dimension 128 --settings "normalization_strength=-0.5"

    Every method writes what train_biggraph exports: OUTPUT_DIR/embeddings.{h5,npy} +
    entity_names_paper_id_0.json (every paper of the train + test edges), and with --test_edges
    link_prediction.json/.md under PBG's protocol (the config's comparator and negatives), so
    build_faiss, get_knn and the triples are unchanged. --method pbg: train_biggraph with --config
    (default s2orc_768d_dot, paper §4.2) and -p overrides; --dimension sets PBG's dimension.
    --method prone|fastrp: --dimension (default: the config's) and --settings "key=value ..."
    (their paper defaults otherwise; embed_graph_run.json records method, settings, timings):
    {settings}
    An output made with other inputs, method or settings is refused unless --override.
    """
    from scincl.graph.embed import embed_graph as run

    result = run(train_edges, output_dir, method=method, config=config, test_edges=test_edges,
                 dimension=None if dimension is None else int(dimension), settings=settings, overrides=overrides,
                 seed=int(seed), override=override, random_baseline=random_baseline, export_format=export_format)
    return {k: v for k, v in result.items() if k != "metrics"}


def _method_settings_help() -> str:
    from scincl.graph.embedders import EMBEDDERS
    from scincl.graph.embedders.settings import settings_help

    lines = []
    for name, embedder in EMBEDDERS.items():
        lines.append(f"{name} ({embedder.paper}):")
        lines.extend("  " + line.strip() for line in settings_help(embedder.settings).splitlines())
    return "\n    ".join(lines)


embed_graph.__doc__ = embed_graph.__doc__.replace("{settings}", _method_settings_help())


def evaluate_graph_retrieval(embeddings_path: str, pairs_path: str, output_path: Optional[str] = None,
                             paper_ids: Optional[str] = None, metric: str = "cosine", k: int = 10,
                             max_queries: Optional[int] = None, seed: int = 0) -> dict:
    """Graph embeddings used directly as a retriever on held-out citation (or co-citation) pairs.

    python cli_graph.py evaluate_graph_retrieval out/embeddings.h5 citations.test.tsv --output_path retrieval.json

    Each citing paper of PAIRS_PATH (citing<TAB>cited, e.g. the test split BigGraph never saw) is a
    query; its cited papers are the relevant ones; the pool is every paper with an embedding
    (OpenMSD Table 7 protocol: MAP and nDCG@10 over the whole pool, self excluded). Pairs with a
    paper without embedding are counted and skipped. --max_queries samples queries with --seed.
    """
    from scincl.eval.graph_retrieval import evaluate_graph_retrieval as run

    return run(embeddings_path, pairs_path, output_path=output_path, paper_ids_path=paper_ids, metric=metric,
               k=int(k), max_queries=max_queries, seed=int(seed))


# The subcommands of cli_graph.py, in the order --help lists them.
COMMANDS = {
    "train_biggraph": train_biggraph, "embed_graph": embed_graph, "import_edges": import_edge_files,
    "export_embeddings": export_checkpoint, "make_edges_bidirectional": make_edges_bidirectional,
    "get_largest_connected_subgraph": get_largest_connected_subgraph, "extract_ids_in_graph": extract_ids_in_graph,
    "build_faiss": build_faiss, "get_knn": get_knn, "evaluate_graph_retrieval": evaluate_graph_retrieval}
