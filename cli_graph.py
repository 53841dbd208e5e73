#!/usr/bin/env python
"""`cli_graph.py`: the commands of `scincl/commands/graph.py`. BigGraph config overrides take PBG's own syntax, as
`torchbiggraph_train` does: `-p num_epochs=5 -p dimension=64` or `-p num_epochs=5 dimension=64`."""
from scincl.cli import front_end
from scincl.commands import graph

COMMANDS = front_end(globals(), graph)  # and its library functions by command name: `cli_graph.<command>(...)`
