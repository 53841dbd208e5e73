#!/usr/bin/env python
"""`cli_triples.py`: triplet mining and the triplets' metadata (`scincl/commands/triples.py`)."""
from scincl.cli import front_end
from scincl.commands import triples

COMMANDS = front_end(globals(), triples)  # and its library functions by command name: `cli_triples.<command>(...)`
