"""The spans stage (docs/spans.md): repeated spans removed from the documents dedup kept."""
