"""Text kernels (pure Python and numpy, no Spark): the word tokens dedup shingles and decontamination n-grams are
made of (``words``); for the filters, code point tables (``chars``), datatrove's punctuation sets
(``punctuation``), duplicate lines and word n-grams (``repetition``, compiled twin ``repetition_numba``), rows of
an Arrow string column replaced (``replace_rows``), and English words and sentences as spaCy splits them
(``english``)."""
