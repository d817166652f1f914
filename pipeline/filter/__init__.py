"""The filter stage (docs/stages.md, Filters): language ID, Gopher / C4 / FineWeb quality rules and PII redaction,
each a :class:`pipeline.stage_api.filter.Filter` over Arrow batches, configured as an ordered list.

Kernels (no Spark): ``gopher_quality``, ``gopher_repetition``, ``c4``, ``fineweb`` (compiled line counts in
``line_counts_numba``), ``language``, ``pii``, ``outcome`` (decisions and measures of a batch) and ``thresholds``
(each rule's threshold and histogram bins). ``options`` (a filter's typed options), ``registry`` (the filters,
registered by their decorators), ``entries`` and ``plan`` (the config's lists, checked and resolved), ``batches``
(Arrow in, Arrow out), ``stage`` (the Spark plan and its I/O). The text kernels the rules use are in
:mod:`pipeline.text` (English words as spaCy splits them: :mod:`pipeline.text.english`), the fastText predictor
in :mod:`pipeline.fasttext`.
"""
