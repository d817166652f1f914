"""Reproducible corpora of real and synthetic text from pinned public packages (PyPI sdists, Debian packages) and the
shared fixtures, the benches' and tests' inputs; built as ``python -m bench <name>_corpus [args]``.

One module per corpus (``real``, ``release``, ``mixed``, ``constant``, ``synthetic``); ``archives`` reads the pinned
archives, ``store`` says where corpora live, ``shingles`` is the near-copy measure. The JSON files beside them are the
pins. This package imports nothing of ``bench`` (bench imports it).
"""
