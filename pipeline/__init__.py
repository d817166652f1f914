"""Spark pipeline from raw documents to Megatron IndexedDataset training files.

Pure kernels (no Spark import) live in ``pipeline.dedup``, ``pipeline.tokenizer``,
``pipeline.megatron`` and ``pipeline.blend``; the Spark stages that apply them live in the
``stage`` modules of those packages and are imported only when a stage runs.
"""

__version__ = "0.1.0"
