#!/usr/bin/env python
"""`cli_pipeline.py`: training, embedding, evaluation, the whole pipeline and the experiments.

A table of library calls (the BigGraph `main()` shape: parse, call): each subcommand is the library
function `scincl/commands/pipeline.py:COMMANDS` names for it, with its flags; `--help` shows its docstring.
"""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import pipeline as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_pipeline; cli_pipeline.<command>(...)` works from Python too

if __name__ == "__main__":
    run_cli(COMMANDS)
