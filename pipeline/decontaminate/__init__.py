"""Decontamination against benchmarks (issue #17): word n-gram overlap with reference texts.

:mod:`.ngrams` is the pure kernel (no Spark), :mod:`.arrow_steps` the Arrow batch bodies, and
:mod:`.step` the Spark step the dedup stage runs before clustering.
"""
