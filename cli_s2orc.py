#!/usr/bin/env python
"""`cli_s2orc.py`: the S2ORC stage, as in the original SciNCL README, and the demo (`scincl/commands/s2orc.py`)."""
from scincl.cli import front_end
from scincl.commands import s2orc

COMMANDS = front_end(globals(), s2orc)  # and its library functions by command name: `cli_s2orc.<command>(...)`
