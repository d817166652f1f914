"""Text kernels shared by several stages (pure Python, no Spark): the word tokens dedup shingles and
decontamination n-grams are made of."""
