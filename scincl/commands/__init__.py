"""The front ends' tables: ``cli_<name>.py`` runs ``COMMANDS`` of ``scincl/commands/<name>.py``, command name -> a
library function or a :class:`scincl.cli.Command` row saying what the command line adds to it."""
