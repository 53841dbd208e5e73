"""The library functions behind the command lines, one module per front end.

``cli_s2orc.py``, ``cli_graph.py``, ``cli_triples.py`` and ``cli_pipeline.py`` are tables over
:mod:`scincl.commands.s2orc`, :mod:`~scincl.commands.graph`, :mod:`~scincl.commands.triples` and
:mod:`~scincl.commands.pipeline` (:func:`scincl.cli.commands_of`: a module's ``COMMANDS`` table, or
its public functions). Each command has the subcommand's name, flags and docstring (``--help``);
where a stage package already has the function (``scincl/triples/``, ``scincl/corpus/stage.py``,
``scincl/knn/papers.py``) the table lists that function itself, otherwise the command here turns
command-line values (comma lists, strings) into the stage APIs' arguments and prints results.
Library code never calls a ``cli_*.py`` module; the pipelines call the stage packages directly.
"""
