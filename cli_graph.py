#!/usr/bin/env python
"""`cli_graph.py`: citation-graph embeddings (PyTorch-BigGraph) and the FAISS kNN index.

Subcommands (each `--help` shows its docstring):
  train_biggraph            import + train + evaluate + export a BigGraph config (link-prediction table)
  import_edges              only the import step (e.g. before starting distributed ranks)
  export_embeddings         PBG checkpoint -> embeddings.h5|npy + entity_names_paper_id_0.json
  make_edges_bidirectional  add the reverse of every edge (co-citation graphs)
  get_largest_connected_subgraph, extract_ids_in_graph
  build_faiss               embeddings -> FAISS index + row -> paper_id mapping
  get_knn                   batched kNN search of an index -> neighbour ids + distances (npy)
  evaluate_graph_retrieval  graph embeddings as a retriever on held-out citation pairs (MAP, nDCG@10)

BigGraph config overrides use PBG's own syntax and may be repeated, as with `torchbiggraph_train`:
`-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64` (or `--overrides "a=1 b=2"`).

A table of library calls (the BigGraph `main()` shape: parse, call): each subcommand is the
library function of the same name and flags listed in `scincl/commands/graph.py`; `--help` shows its docstring.
"""
import sys

from scincl.cli import commands_of, gather_pbg_overrides, run_cli
from scincl.commands import graph as library

COMMANDS = commands_of(library)
globals().update(COMMANDS)  # `import cli_graph; cli_graph.<command>(...)` works from Python too
_argv_with_overrides = gather_pbg_overrides  # the name older scripts and tests use

if __name__ == "__main__":
    sys.argv[1:] = gather_pbg_overrides(sys.argv[1:])
    run_cli(COMMANDS)
