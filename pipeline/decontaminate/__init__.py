"""Decontamination against benchmarks (docs/dedup_index.md, Decontamination): word n-gram overlap with references.

:mod:`.ngrams` is the pure kernel (no Spark), :mod:`.batches` the Arrow batch bodies, and
:mod:`.spark.step` the Spark step the dedup stage runs before clustering.
"""
