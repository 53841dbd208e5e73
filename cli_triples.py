#!/usr/bin/env python
"""`cli_triples.py`: triplet mining (SciNCL kNN, SPECTER-like, co-citation, pairs, oracle SciDocs) and metadata (the
library functions of `scincl/commands/triples.py:COMMANDS`; `--help` shows each docstring)."""
from scincl.cli import front_end
from scincl.commands import triples

COMMANDS = front_end(globals(), triples)  # and its library functions by command name: `cli_triples.<command>(...)`
