#!/usr/bin/env python
"""`cli_s2orc.py`: the S2ORC stage (citation graph extraction, id mappings) and the demo corpus.

Subcommands keep the names and flags of the original SciNCL README, so its commands can be pasted.
Every command streams the shards in `--workers` processes, logs counts, writes its outputs
atomically, reuses existing outputs unless `--override`, and turns bad input into one error line
(malformed lines are counted and skipped unless `--strict`).

A table of library calls (the BigGraph `main()` shape: parse, call): each subcommand is the
library function of the same name and flags listed in `scincl/commands/s2orc.py`; `--help` shows its docstring.
"""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import s2orc as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_s2orc; cli_s2orc.<command>(...)` works from Python too

if __name__ == "__main__":
    run_cli(COMMANDS)
