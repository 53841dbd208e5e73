#!/usr/bin/env python
"""`cli_pipeline.py`: training, embedding, evaluation, the whole pipeline and the experiments (the library functions
of `scincl/commands/pipeline.py:COMMANDS`; `--help` shows each docstring)."""
from scincl.cli import commands_of, library_functions, run_cli
from scincl.commands import pipeline as library

COMMANDS = commands_of(library)
globals().update(library_functions(COMMANDS))  # `import cli_x; cli_x.<command>(...)` from Python

if __name__ == "__main__":
    run_cli(COMMANDS)
