#!/usr/bin/env python
"""`cli_graph.py`: citation-graph embeddings and the FAISS kNN index (the library functions of
`scincl/commands/graph.py:COMMANDS`). BigGraph config overrides take PBG's own repeatable syntax, as
`torchbiggraph_train` does: `-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64`."""
from scincl.cli import front_end
from scincl.commands import graph

COMMANDS = front_end(globals(), graph)  # and its library functions by command name: `cli_graph.<command>(...)`
