#!/usr/bin/env python
"""`cli_graph.py`: citation-graph embeddings (PyTorch-BigGraph) and the FAISS kNN index.

BigGraph config overrides use PBG's own syntax and may be repeated, as with `torchbiggraph_train`:
`-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64` (or `--overrides "a=1 b=2"`).

A table of library calls (the BigGraph `main()` shape: parse, call): each subcommand is the
library function of the same name and flags listed in `scincl/commands/graph.py`; `--help` shows its docstring.
"""
from scincl.cli import commands_of, gather_pbg_overrides, library_functions, run_cli
from scincl.commands import graph as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_graph; cli_graph.<command>(...)` works from Python too
_argv_with_overrides = gather_pbg_overrides  # the name older scripts and tests use

if __name__ == "__main__":
    run_cli(COMMANDS)
