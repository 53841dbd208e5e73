#!/usr/bin/env python
"""`cli_s2orc.py`: the S2ORC stage (citation graph extraction, id mappings) and the demo corpus (the library
functions of `scincl/commands/s2orc.py:COMMANDS`, with the names and flags of the original SciNCL README)."""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import s2orc as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_x; cli_x.<command>(...)` from Python

if __name__ == "__main__":
    run_cli(COMMANDS)
