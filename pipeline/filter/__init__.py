"""The filter stage (docs/stages.md, Filters): language ID, Gopher / C4 / FineWeb quality rules and PII redaction,
each a :class:`pipeline.stage_api.filter.Filter` over Arrow batches, configured as an ordered list.

Kernels (no Spark): ``words`` (English words and sentences as datatrove's spaCy tokenizer splits them),
``gopher_quality``, ``gopher_repetition``, ``c4``, ``fineweb``, ``language``, ``pii``, and the rule filters' shared
helpers ``punctuation`` (character sets), ``chars`` (code point tables), ``repetition`` (duplicates, n-grams),
``outcome`` (decisions and measures of a batch), ``options`` (a filter's typed options); ``registry`` (the filters,
registered by their decorators), ``batches`` (Arrow in, Arrow out), ``stage`` (the Spark plan and its I/O).
"""
