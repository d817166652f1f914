"""The filter stage (docs/stages.md, Filters): language ID, Gopher / C4 / FineWeb quality rules and PII redaction,
each a :class:`pipeline.filter.base.BaseFilter` over Arrow batches, configured as an ordered list.

Kernels (no Spark): ``gopher_quality``, ``gopher_repetition``, ``c4``, ``fineweb`` (compiled line counts in
``line_counts_numba``), ``language``, ``pii``, ``outcome`` (decisions and measures of a batch) and ``thresholds``
(each rule's histogram bins). ``base`` (a filter's class: its declarations and hooks), ``options`` (its typed
options), ``registry`` (the filters, registered by their decorators), ``entries`` and ``plan`` (the config's lists,
checked and resolved), ``batches`` (Arrow in, Arrow out), ``stage`` (the Spark plan and its I/O), ``report_section``
(its entries of report.json). The text kernels the rules use are in :mod:`pipeline.text` (English words as spaCy
splits them: :mod:`pipeline.text.english`), the fastText predictor in :mod:`pipeline.fasttext`.
"""
