#!/usr/bin/env python
"""`cli_s2orc.py`: the S2ORC stage (citation graph extraction, id mappings) and the demo corpus (the library
functions of `scincl/commands/s2orc.py:COMMANDS`, with the names and flags of the original SciNCL README)."""
from scincl.cli import front_end
from scincl.commands import s2orc

COMMANDS = front_end(globals(), s2orc)  # and its library functions by command name: `cli_s2orc.<command>(...)`
