"""``python -m pipeline inspect <prefix> [--tokenizer DIR] [-n N]``: look at a dataset before training.

Validates both files first, then prints counts, document-length statistics, a token-length
histogram and the first documents (in doc_id order: the order the tokenize stage wrote them),
decoded back to text when a tokenizer directory (vocab.json + merges.txt) is given.
"""

from __future__ import annotations

import sys
import tempfile

from pipeline import storage
from pipeline.megatron import IndexedDatasetError, describe_dataset, validate

BAR_WIDTH = 40


def _strip_suffix(prefix: str) -> str:
    for suffix in (".bin", ".idx"):
        if prefix.endswith(suffix):
            return prefix[: -len(suffix)]
    return prefix


def _decoder(tokenizer_dir: str):
    """``decode(ids) -> str`` of the tokenizer in ``tokenizer_dir`` (local or fsspec URL)."""
    from pipeline.tokenizer import BPETokenizer

    with tempfile.TemporaryDirectory(prefix="inspect-") as tmp:
        paths = []
        for name in ("vocab.json", "merges.txt"):
            url = storage.join(tokenizer_dir, name)
            local = storage.join(tmp, name)
            with open(local, "wb") as f:
                f.write(storage.read_bytes(url))
            paths.append(local)
        tok = BPETokenizer.from_files(*paths)
    return tok.decode


def _print_report(info: dict, out) -> None:
    print(f"dataset   {info['prefix']}", file=out)
    print(f"dtype     {info['dtype']}", file=out)
    print(f"documents {info['documents']:,}", file=out)
    print(f"sequences {info['sequences']:,}", file=out)
    print(f"tokens    {info['tokens']:,}", file=out)
    stats = info["document_length"]
    if stats:
        print("tokens per document: " + ", ".join(
            f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in stats.items()), file=out)
    hist = info["length_histogram"]
    if hist:
        print("token-length histogram (tokens per document):", file=out)
        top = max(b["count"] for b in hist)
        for b in hist:
            bar = "#" * max(1, round(BAR_WIDTH * b["count"] / top))
            print(f"  [{b['min']:>8,}, {b['max_exclusive']:>8,})  {b['count']:>10,}  {bar}", file=out)
    for s in info["samples"]:
        more = ", first tokens shown" if s["truncated"] else ""
        print(f"--- document {s['document']} ({s['num_tokens']:,} tokens{more}) ---", file=out)
        print(s["text"] if "text" in s else f"token ids: {s['tokens']}", file=out)


def inspect_main(prefix: str, tokenizer_dir: str | None = None, n_samples: int = 3) -> int:
    """Validate and describe the dataset at ``prefix``; 0 on success, 1 if invalid, 2 if missing."""
    prefix = _strip_suffix(prefix)
    missing = [p for p in (f"{prefix}.idx", f"{prefix}.bin") if not storage.exists(p)]
    if missing:
        print(f"error: no IndexedDataset at prefix {prefix!r}: {', '.join(missing)} not found "
              "(give the path without .bin/.idx, e.g. <run>/megatron/<source>)", file=sys.stderr)
        return 2
    try:
        report = validate(prefix)
    except IndexedDatasetError as exc:
        print(f"error: invalid dataset: {exc}", file=sys.stderr)
        return 1
    decode = None
    if tokenizer_dir:
        try:
            decode = _decoder(tokenizer_dir)
        except (OSError, ValueError) as exc:
            print(f"error: cannot load the tokenizer in {tokenizer_dir!r}: {exc}", file=sys.stderr)
            return 2
    info = describe_dataset(prefix, decode=decode, n_samples=n_samples)
    print(f"valid: {report.documents:,} documents, {report.tokens:,} tokens, {report.bin_bytes:,} bytes",
          file=sys.stdout)
    _print_report(info, sys.stdout)
    return 0
