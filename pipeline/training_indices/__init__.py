"""The training run's index caches: megatron-core's GPTDataset and BlendedDataset files, built ahead of time.

Kernels (no Spark): :mod:`.describe` (split matrix, cache keys, per-source sample counts), :mod:`.gpt_indices`
(document, sample and shuffle indices), :mod:`.plan` (what to build for a config); the stage is ``stage.py``
(docs/training_indices.md).
"""
