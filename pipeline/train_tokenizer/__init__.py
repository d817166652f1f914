"""The train-tokenizer stage: BPE merges learned from a sample of the survivors (docs/tokenizer.md, Training)."""
