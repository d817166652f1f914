"""The project's benchmarks, one module per bench, run as ``python -m bench NAME [args]`` (``--list`` lists them).

A module with a ``__main__`` block is a runnable entry: ``bench_<name>.py`` is the bench ``<name>``, the others (the
bench table) keep their module name, and corpora/'s builders are ``<corpus>_corpus``. Shared code lives in
``harness.py`` (sessions, timing, child processes, ``--baseline-rev`` loading, the JSON result).
"""
