#!/usr/bin/env python
"""`cli_pipeline.py`: training, evaluation, the pipeline and the experiments (`scincl/commands/pipeline.py`)."""
from scincl.cli import front_end
from scincl.commands import pipeline

COMMANDS = front_end(globals(), pipeline)  # and its library functions by command name: `cli_pipeline.<command>(...)`
