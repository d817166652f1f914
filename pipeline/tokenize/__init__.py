"""Tokenize: survivors -> ``shards/<source>/part-NNNNN.{bin,idx}`` with the trained tokenizer."""
