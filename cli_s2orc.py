#!/usr/bin/env python
"""`cli_s2orc.py`: fire front end (subcommands = the public functions below; `--help` shows each docstring)."""
from __future__ import annotations

from scincl.cli import commands_of, run_cli

# Subcommands are the public functions defined in this file (see scincl.cli.commands_of).


if __name__ == "__main__":
    run_cli(commands_of(globals()))
