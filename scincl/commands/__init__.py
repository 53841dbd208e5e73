"""The library functions behind the command lines, one table per front end.

``cli_s2orc.py``, ``cli_graph.py``, ``cli_triples.py`` and ``cli_pipeline.py`` run the ``COMMANDS`` tables of
:mod:`scincl.commands.s2orc`, :mod:`~scincl.commands.graph`, :mod:`~scincl.commands.triples` and
:mod:`~scincl.commands.pipeline`: subcommand name -> a library function, or a :class:`scincl.cli.Command` row
that says what the command line adds to it (the flags of its ``**kwargs``, the ones ``--help`` shows, old flag
names, what it prints). The function's name, signature and docstring are the subcommand's flags and ``--help``;
it takes the locks of the outputs it writes itself (:func:`scincl.output_lock.writes`). Library code never calls
a ``cli_*.py`` module; the pipelines call the stage packages directly.
"""
