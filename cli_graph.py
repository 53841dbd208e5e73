#!/usr/bin/env python
"""`cli_graph.py`: citation-graph embeddings and the FAISS kNN index (the library functions of
`scincl/commands/graph.py:COMMANDS`). BigGraph config overrides take PBG's own repeatable syntax, as
`torchbiggraph_train` does: `-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64`."""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import graph as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_x; cli_x.<command>(...)` from Python

if __name__ == "__main__":
    run_cli(COMMANDS)
