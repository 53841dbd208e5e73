"""The library functions behind the command lines, one module per front end.

``cli_s2orc.py``, ``cli_graph.py``, ``cli_triples.py`` and ``cli_pipeline.py`` are tables over
:mod:`scincl.commands.s2orc`, :mod:`~scincl.commands.graph`, :mod:`~scincl.commands.triples` and
:mod:`~scincl.commands.pipeline` (:func:`scincl.cli.commands_of`: a module's ``COMMANDS`` table). Each command has the subcommand's
name, flags and docstring (``--help``); the tables list the stage packages' functions themselves (``scincl/corpus/stage.py``,
``scincl/graph/stage.py``, ``scincl/graph/biggraph.py``, ``scincl/knn/papers.py``, ``scincl/triples/``,
``scincl/model/train.py``, ...) with the CLI's marks (:mod:`scincl.cli.flags`: extra flags, aliases,
what the command line prints); a command defined here only prints what a library call returns.
Library code never calls a ``cli_*.py`` module; the pipelines call the stage packages directly.
"""
