"""Merge-blend: shards -> one ``megatron/<source>`` dataset per source, then the ``blend/`` index files."""
