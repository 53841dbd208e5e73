"""The commands tables of the front ends: ``cli_<name>.py`` runs :data:`COMMANDS` of ``scincl/commands/<name>.py``,
subcommand name -> a library function, or a :class:`scincl.cli.Command` row saying what the command line adds to it.
Library code never calls a ``cli_*.py`` module."""
