"""Commands of `cli_graph.py`: citation-graph embeddings (PyTorch-BigGraph, ProNE, FastRP), the memory plan and the
FAISS kNN index, in the order `--help` lists them."""
from __future__ import annotations

from scincl.cli import Command
from scincl.eval.graph_retrieval import evaluate_graph_retrieval
from scincl.graph.biggraph import export_checkpoint, import_edge_files, train_biggraph
from scincl.graph.edges import extract_ids_in_graph, get_largest_connected_subgraph, make_edges_bidirectional
from scincl.graph.embed import embed_graph
from scincl.graph.memory_plan import plan_memory
from scincl.knn.papers import build_faiss, get_knn


def _outputs(result: dict) -> dict:
    """A graph run's result without its metric rows (those are in link_prediction.json/.md): what it prints."""
    return {k: v for k, v in result.items() if k != "metrics"}


COMMANDS = {
    "train_biggraph": Command(train_biggraph, show=_outputs), "embed_graph": Command(embed_graph, show=_outputs),
    "plan_memory": Command(plan_memory, show=lambda result: result["text"]),
    "import_edges": import_edge_files,
    "export_embeddings": export_checkpoint, "make_edges_bidirectional": make_edges_bidirectional,
    "get_largest_connected_subgraph": get_largest_connected_subgraph, "extract_ids_in_graph": extract_ids_in_graph,
    "build_faiss": build_faiss, "get_knn": get_knn,
    "evaluate_graph_retrieval": Command(evaluate_graph_retrieval, aliases={"paper_ids": "paper_ids_path"})}
