#!/usr/bin/env python
"""`cli_triples.py`: triplet mining (SciNCL kNN, SPECTER-like, co-citation, pairs, oracle SciDocs) and metadata (the
library functions of `scincl/commands/triples.py:COMMANDS`; `--help` shows each docstring)."""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import triples as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_x; cli_x.<command>(...)` from Python

if __name__ == "__main__":
    run_cli(COMMANDS)
