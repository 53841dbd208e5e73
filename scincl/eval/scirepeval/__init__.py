"""SciRepEval (Singh et al. 2023) with the official protocol of the ``allenai/scirepeval`` repository (issue 44).

Reading order: ``tasks`` (the task table), ``data`` (the local layout and the hub), ``metrics`` (the scoring),
``report`` (averages and the table), ``evaluate`` (``cli_pipeline.py evaluate_scirepeval``).
"""
