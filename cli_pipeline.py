#!/usr/bin/env python
"""`cli_pipeline.py`: training, embedding, evaluation, the whole pipeline and the experiments (the library functions
of `scincl/commands/pipeline.py:COMMANDS`; `--help` shows each docstring)."""
from scincl.cli import front_end
from scincl.commands import pipeline

COMMANDS = front_end(globals(), pipeline)  # and its library functions by command name: `cli_pipeline.<command>(...)`
