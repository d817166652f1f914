"""The train-classifier stage (docs/stages.md, The train-classifier stage): a fastText classifier trained in the run
on configured positives against documents of the run (or files), for the ``fasttext_classifier`` filter's
``model: run``."""
