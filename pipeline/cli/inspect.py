"""``python -m pipeline inspect <prefix> [--tokenizer DIR|FILE] [--config CONF] [-n N]``: look at a dataset
before training.

Validates both files first, then prints counts, document-length statistics, a token-length
histogram and the first documents (in doc_id order: the order the tokenize stage wrote them),
decoded back to text with the run's tokenizer (``--config``: its ``tokenizer`` section, any kind), a
directory with vocab.json + merges.txt, or a model file whose kind its name tells (``.tiktoken``,
``tokenizer.json``, a SentencePiece ``.model``).
"""

from __future__ import annotations

import sys
import tempfile

from pipeline import storage
from pipeline.config import load_config
from pipeline.megatron import IndexedDatasetError, describe_dataset, validate
from pipeline.stage_api import layout
from pipeline.tokenizer import BPETokenizer
from pipeline.tokenizer.library import LibraryTokenizer
from pipeline.tokenizer.run_files import load_tokenizer

BAR_WIDTH = 40


def _strip_suffix(prefix: str) -> str:
    for suffix in (".bin", ".idx"):
        if prefix.endswith(suffix):
            return prefix[: -len(suffix)]
    return prefix


def file_kind(path: str) -> str | None:
    """The tokenizer kind a model file's name tells: tiktoken, huggingface or sentencepiece (None: a directory)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name.endswith(".json"):
        return "huggingface"
    if ".model" in name:
        return "sentencepiece"
    return None


def _decoder(tokenizer_dir: str):
    """``decode(ids) -> str`` of the tokenizer in ``tokenizer_dir`` (local or fsspec URL): GPT-2 files in a
    directory, or one model file run by its library."""
    kind = file_kind(tokenizer_dir)
    if kind is not None:
        return LibraryTokenizer(kind, storage.read_bytes(tokenizer_dir), pattern=".").decode
    with tempfile.TemporaryDirectory(prefix="inspect-") as tmp:
        paths = []
        for name in ("vocab.json", "merges.txt"):
            url = storage.join(tokenizer_dir, name)
            local = storage.join(tmp, name)
            with open(local, "wb") as f:
                f.write(storage.read_bytes(url))
            paths.append(local)
        tok = BPETokenizer.from_files(paths[0], paths[1])
    return tok.decode


def trace_documents(prefix: str, indices: list[int]) -> dict[int, dict]:
    """Where documents ``indices`` of ``<run>/megatron/<source>`` came from: doc_id, file, position.

    The tokenize stage writes a source's survivors in doc_id order, so document k is the k-th
    smallest doc_id of that source in ``<run>/dedup/survivors``. Returns {} when the prefix is not
    inside a run directory.
    """
    import posixpath

    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    parent, source = posixpath.split(prefix.replace("\\", "/").rstrip("/"))
    run, folder = posixpath.split(parent)
    survivors = storage.join(run, layout.SURVIVORS)
    if folder != "megatron" or not indices or not storage.exists(survivors):
        return {}
    fs, path = storage.resolve(survivors)
    dataset = ds.dataset(path, filesystem=fs, format="parquet", exclude_invalid_files=True)
    columns = [c for c in ("doc_id", "file", "position") if c in dataset.schema.names]
    table = dataset.to_table(columns=columns, filter=pc.field("source") == source)
    table = table.sort_by("doc_id")
    return {k: table.slice(k, 1).to_pylist()[0] for k in indices if k < table.num_rows}


def _print_report(info: dict, out, origins: dict[int, dict] | None = None) -> None:
    print(f"dataset   {info['prefix']}", file=out)
    print(f"dtype     {info['dtype']}", file=out)
    print(f"documents {info['documents']:,}", file=out)
    print(f"sequences {info['sequences']:,}", file=out)
    print(f"tokens    {info['tokens']:,}", file=out)
    stats = info["document_length"]
    if stats:
        print(
            "tokens per document: "
            + ", ".join(f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in stats.items()),
            file=out,
        )
    hist = info["length_histogram"]
    if hist:
        print("token-length histogram (tokens per document):", file=out)
        top = max(b["count"] for b in hist)
        for b in hist:
            bar = "#" * max(1, round(BAR_WIDTH * b["count"] / top))
            print(f"  [{b['min']:>8,}, {b['max_exclusive']:>8,})  {b['count']:>10,}  {bar}", file=out)
    for s in info["samples"]:
        more = ", first tokens shown" if s["truncated"] else ""
        origin = (origins or {}).get(s["document"])
        where = f", doc_id {origin['doc_id']}" if origin else ""
        if origin and "file" in origin:
            where += f" from {origin['file']} at {origin['position']}"
        print(f"--- document {s['document']} ({s['num_tokens']:,} tokens{more}{where}) ---", file=out)
        print(s["text"] if "text" in s else f"token ids: {s['tokens']}", file=out)


def inspect_main(prefix: str, tokenizer_dir: str | None = None, n_samples: int = 3, config: str | None = None) -> int:
    """Validate and describe the dataset at ``prefix``; 0 on success, 1 if invalid, 2 if missing. Samples are
    decoded with ``tokenizer_dir`` or else the tokenizer of the run config ``config``."""
    prefix = _strip_suffix(prefix)
    missing = [p for p in (f"{prefix}.idx", f"{prefix}.bin") if not storage.exists(p)]
    if missing:
        print(
            f"error: no IndexedDataset at prefix {prefix!r}: {', '.join(missing)} not found "
            "(give the path without .bin/.idx, e.g. <run>/megatron/<source>)",
            file=sys.stderr,
        )
        return 2
    try:
        report = validate(prefix)
    except IndexedDatasetError as exc:
        print(f"error: invalid dataset: {exc}", file=sys.stderr)
        return 1
    decode = None
    if config and not tokenizer_dir:
        decode = load_tokenizer(load_config(config)).decode
    elif tokenizer_dir:
        try:
            decode = _decoder(tokenizer_dir)
        except (OSError, ValueError) as exc:
            print(f"error: cannot load the tokenizer in {tokenizer_dir!r}: {exc}", file=sys.stderr)
            return 2
    info = describe_dataset(prefix, decode=decode, n_samples=n_samples)
    print(
        f"valid: {report.documents:,} documents, {report.tokens:,} tokens, {report.bin_bytes:,} bytes", file=sys.stdout
    )
    _print_report(info, sys.stdout, trace_documents(prefix, [s["document"] for s in info["samples"]]))
    return 0
