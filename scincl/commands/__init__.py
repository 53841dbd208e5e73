"""The library functions behind the command lines, one module per front end.

``cli_s2orc.py``, ``cli_graph.py``, ``cli_triples.py`` and ``cli_pipeline.py`` are tables over
:mod:`scincl.commands.s2orc`, :mod:`~scincl.commands.graph`, :mod:`~scincl.commands.triples` and
:mod:`~scincl.commands.pipeline`: each public function here is one subcommand, with the same name,
flags and docstring (``--help``). It turns command-line values (comma lists, strings) into the
stage APIs' arguments and calls them; the work itself lives in the stage packages. Library code
calls these functions, never a ``cli_*.py`` module.
"""
