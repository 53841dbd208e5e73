"""The command-line plumbing of the ``cli_*.py`` front ends, one package.

- :mod:`scincl.cli.run`: :func:`run_cli` (logging, ``--help``, user errors as one line, SIGTERM) and
  :func:`commands_of` (a commands module's table);
- :mod:`scincl.cli.flags`: a command's flags checked before it runs (names, types, ranges via
  :mod:`scincl.settings.schema`, output paths and locks) and the marks a commands table puts on a library
  function (:func:`accepts_flags`, :func:`flag_aliases`, :func:`repeatable_flags`, ...);
- :mod:`scincl.cli.help`: ``COMMAND --help``, every flag with type, default and source.
"""
from scincl.cli.flags import (accepts_flags, check_flags, command_flags, flag_aliases, gather_repeated_flags,
                              repeatable_flags)
from scincl.cli.run import commands_of, gather_pbg_overrides, os_error_message, run_cli, take_wait_flag

__all__ = ["accepts_flags", "check_flags", "command_flags", "commands_of", "flag_aliases", "gather_pbg_overrides",
           "gather_repeated_flags", "os_error_message", "repeatable_flags", "run_cli", "take_wait_flag"]
