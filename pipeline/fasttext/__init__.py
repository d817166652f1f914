"""fastText's supervised predict (fastText 0.9.2, as the fasttext-predict 0.9.2.x wheel builds it) reproduced with
numpy and numba: ``model`` reads a ``.bin`` / ``.ftz`` model file, ``predict`` gives the labels and probabilities
of many lines at once (every supervised loss, with or without word n-grams; lid.176 is one), ``predict_numba`` is
its compiled path. The language filter uses it (pipeline/filter/rules/language.py) and falls back to fasttext-predict
for any other model. tests/unit/fasttext/test_fasttext_predict.py compares it with fasttext-predict on the same
model and lines.
"""
