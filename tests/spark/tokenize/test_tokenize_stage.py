"""Train-tokenizer, tokenize and merge on local Spark, checked against megatron-core and in-process oracles."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest

from pipeline.cli.inspect import inspect_main
from pipeline.config import load_config_text
from pipeline.merge_blend.stage import merge_sources
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.tokenize.stage import INJECT_PROPERTY, run_tokenize
from pipeline.tokenizer import BPETokenizer, count_pretokens
from pipeline.tokenizer.run_files import load_tokenizer
from pipeline.train_tokenizer.stage import run_train_tokenizer
from tests.oracles import require_oracle

pytestmark = pytest.mark.spark


EOT = "<|endoftext|>"
WORDS = (
    "the",
    "data",
    "pipeline",
    "tokenizer",
    "merges",
    "Spark",
    "café",
    "naïve",
    "日本語",
    "don't",
    "we'll",
    "2024",
    "3.14",
    "x",
    "!!",
    "(",
    ")",
    "--",
    "über",
    "shard",
    "order",
    "a",
    "of",
    "to",
)
SOURCES = {"web": 60, "books": 25, "empty": 0}


def _text(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 4)):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40))))
    return "\n".join(lines) + ("  " if rng.random() < 0.2 else "")


@pytest.fixture(scope="module")
def survivors() -> pa.Table:
    """Survivors of three sources (one with none), signed 64-bit doc_ids, one special-token string."""
    rng = random.Random(7)
    rows = []
    for source, n in SOURCES.items():
        for _ in range(n):
            rows.append({"doc_id": rng.randint(-(2**63), 2**63 - 1), "source": source, "text": _text(rng)})
    rows[3]["text"] = f"before {EOT} after, and {EOT}{EOT} twice"
    rng.shuffle(rows)
    return pa.Table.from_pylist(
        rows, schema=pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())])
    )


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory, survivors) -> Path:
    """A small tokenizer trained in-process (no Spark) on the survivors, saved as GPT-2 files."""
    tok = BPETokenizer.train_from_counts(count_pretokens(survivors.column("text").to_pylist(), [EOT]), 320, [EOT])
    out = tmp_path_factory.mktemp("tok")
    tok.save(out)
    return out


@pytest.fixture(scope="module")
def tok(tok_dir) -> BPETokenizer:
    return BPETokenizer.from_files(tok_dir / "vocab.json", tok_dir / "merges.txt", [EOT])


def _write_survivors(run: Path, table: pa.Table, files: int = 3) -> None:
    out = run / "dedup" / "survivors"
    out.mkdir(parents=True)
    step = -(-table.num_rows // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), out / f"part-{i:05d}.parquet")


def _config(run: Path, tokenizer: str, extra: str = ""):
    sources = "\n".join(f'  - {{name: {s}, paths: ["{run}/raw"]}}' for s in SOURCES)
    return load_config_text(f"output: {run}\ntokenizer: {{{tokenizer}}}\n{extra}\nsources:\n{sources}\n")


def _tokenize_run(spark, root: Path, survivors, tok_dir, partitions: int, inject: bool = False):
    run = root / f"p{partitions}{'-inject' if inject else ''}"
    _write_survivors(run, survivors)
    config = _config(
        run, f'vocab: "{tok_dir}/vocab.json", merges: "{tok_dir}/merges.txt"', f"tokenize: {{partitions: {partitions}}}"
    )
    ctx = RunContext(config, spark=spark)
    if inject:
        spark.sparkContext.setLocalProperty(INJECT_PROPERTY, "tokenize")
    try:
        counts = run_tokenize(ctx, layout.SURVIVORS)  # as after the dedup stage
    finally:
        spark.sparkContext.setLocalProperty(INJECT_PROPERTY, None)
    return run, counts, merge_sources(ctx)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory, survivors, tok_dir):
    """Tokenize + merge runs, computed once per (partitions, inject)."""
    root, done = tmp_path_factory.mktemp("runs"), {}

    def get(partitions: int, inject: bool = False):
        if (partitions, inject) not in done:
            done[partitions, inject] = _tokenize_run(spark, root, survivors, tok_dir, partitions, inject)
        return done[partitions, inject]

    return get


def _expected(survivors: pa.Table, tok: BPETokenizer, source: str) -> list[list[int]]:
    rows = sorted((r for r in survivors.to_pylist() if r["source"] == source), key=lambda r: r["doc_id"])
    return [tok.encode(r["text"], split_special=False) + [tok.token_id(EOT)] for r in rows]


def _files(run: Path, sub: str) -> dict[str, bytes]:
    base = run / sub
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_megatron_core_reads_our_tokens_in_doc_id_order(runs, survivors, tok, tmp_path):
    mc = require_oracle("megatron.core.datasets.indexed_dataset")
    torch = require_oracle("torch")
    run, counts, merged = runs(3)
    eod = tok.token_id(EOT)
    assert counts["dtype"] == np.dtype(mc.DType.optimal_dtype(tok.vocab_size)).name
    assert counts["eod_id"] == eod
    for source, n in SOURCES.items():
        assert counts["sources"][source]["documents"] == n == merged["sources"][source]["documents"]
        if n == 0:
            continue
        expected = _expected(survivors, tok, source)
        ds = mc.IndexedDataset(str(run / "megatron" / source))
        assert len(ds) == n and list(ds.document_indices) == list(range(n + 1))
        assert [ds[i].tolist() for i in range(n)] == expected
        assert all(doc.count(eod) == 1 for doc in expected)  # a special string in text is plain text
        dtype = mc.DType.optimal_dtype(tok.vocab_size)
        builder = mc.IndexedDatasetBuilder(str(tmp_path / f"{source}.bin"), dtype=dtype)
        for doc in expected:
            builder.add_item(torch.tensor(doc, dtype=torch.int64))
            builder.end_document()
        builder.finalize(str(tmp_path / f"{source}.idx"))
        for ext in ("bin", "idx"):
            assert (run / "megatron" / f"{source}.{ext}").read_bytes() == (tmp_path / f"{source}.{ext}").read_bytes()
        assert merged["sources"][source]["tokens"] == sum(map(len, expected))
    assert (
        counts["sources"]["web"]["documents_with_special_token_text"]
        + counts["sources"]["books"]["documents_with_special_token_text"]
        == 1
    )


def test_source_without_survivors_is_not_published(runs):
    run, counts, merged = runs(3)
    assert counts["sources"]["empty"]["shards"] == 0
    assert merged["unpublished"] == ["empty"] and merged["sources"]["empty"]["published"] is False
    assert not list((run / "megatron").glob("empty.*"))


def test_shard_directory_holds_only_complete_pairs(runs):
    run, counts, _ = runs(8)
    names = [p.name for p in (run / "shards" / "books").iterdir()]
    stems = Counter(n.rsplit(".", 1)[0] for n in names)
    assert all(n.split(".")[-1] in ("bin", "idx") for n in names)
    assert set(stems.values()) == {2} and len(stems) == counts["sources"]["books"]["shards"]
    assert all(len(s) == len("part-00000") and s.startswith("part-") for s in stems)
    assert not (run / "shards" / "_tmp").exists()


def test_merged_output_does_not_depend_on_partition_count(runs):
    outputs = [_files(runs(p)[0], "megatron") for p in (1, 3, 8)]
    assert outputs[0] and outputs[0] == outputs[1] == outputs[2]
    assert runs(1)[1]["sources"]["web"]["shards"] == 1
    assert runs(8)[1]["sources"]["web"]["shards"] > 3


def test_spans_from_footers_give_the_same_shards_as_the_spans_job(
    spark, runs, survivors, tok_dir, tmp_path, monkeypatch
):
    """One source per file (so per row group): the stage reads the doc_id spans from the footers, runs no spans job,
    and writes the very shards the job's spans gave for the mixed files of ``runs(3)``."""
    import pipeline.tokenize.stage as stage

    mixed = runs(3)[0]  # before the patch: row groups of several sources, spans from the job
    run = tmp_path / "by-source"
    out = run / "dedup" / "survivors"
    web, books = (survivors.filter(pa.compute.equal(survivors.column("source"), s)) for s in ("web", "books"))
    # one file per writer: Spark's parquet-mr and pyarrow (the direct tables' writer) both store the statistics
    schema = "doc_id long, source string, text string"
    spark.createDataFrame(web.to_pylist(), schema).coalesce(1).write.parquet(str(out))
    pq.write_table(books, out / "part-books.parquet", row_group_size=16)

    def no_job(_survivors):
        raise AssertionError("the spans job ran although the footers tell the spans")

    monkeypatch.setattr(stage, "doc_id_spans", no_job)
    config = _config(run, f'vocab: "{tok_dir}/vocab.json", merges: "{tok_dir}/merges.txt"', "tokenize: {partitions: 3}")
    counts = run_tokenize(RunContext(config, spark=spark), layout.SURVIVORS)
    assert counts["sources"]["web"]["shards"] > 1
    assert _files(run, "shards") == _files(mixed, "shards")


def test_killed_task_attempt_leaves_output_identical_to_clean_run(runs):
    clean, _, _ = runs(3)
    killed, counts, _ = runs(3, inject=True)
    # partition 0's first attempt failed in every source that has documents: the failure did happen
    assert {s: c["retried_tasks"] for s, c in counts["sources"].items()} == {"web": 1, "books": 1, "empty": 0}
    assert _files(killed, "shards") == _files(clean, "shards")
    assert _files(killed, "megatron") == _files(clean, "megatron")
    leftovers = [p for p in killed.rglob("*") if "tmp" in p.name or "attempt" in p.name]
    assert leftovers == []


def test_inspect_prints_counts_and_decoded_text(runs, survivors, tok_dir, capsys):
    run, _, merged = runs(3)
    first = min((r for r in survivors.to_pylist() if r["source"] == "books"), key=lambda r: r["doc_id"])
    assert inspect_main(str(run / "megatron" / "books"), str(tok_dir), 2) == 0
    out = capsys.readouterr().out
    assert f"documents {SOURCES['books']}" in out and "histogram" in out
    assert first["text"][:60] in out
    assert inspect_main(str(run / "megatron" / "nothing"), None, 1) == 2
    assert "no IndexedDataset" in capsys.readouterr().err


def _oracle_counts(survivors: pa.Table, min_count: int, keep: int) -> dict[bytes, int]:
    counts = count_pretokens(survivors.column("text").to_pylist(), [EOT])
    frequent = sorted(((w, n) for w, n in counts.items() if n >= min_count), key=lambda x: (-x[1], x[0]))
    return dict(frequent[:keep])


@pytest.mark.parametrize(("min_count", "keep"), [(1, 2_000_000), pytest.param(2, 40, marks=pytest.mark.same_plan)])
def test_train_tokenizer_equals_in_process_training(spark, tmp_path, survivors, min_count, keep):
    _write_survivors(tmp_path, survivors, files=4)
    config = _config(
        tmp_path, f"train: true, vocab_size: 300, min_pretoken_count: {min_count}, max_distinct_pretokens: {keep}"
    )
    ctx = RunContext(config, spark=spark)
    counts = run_train_tokenizer(ctx, layout.SURVIVORS)  # as after the dedup stage
    table = _oracle_counts(survivors, min_count, keep)
    oracle = BPETokenizer.train_from_counts(table, 300, [EOT])
    trained = load_tokenizer(ctx.config)
    assert trained.merges == oracle.merges and trained.vocab == oracle.vocab
    assert counts["pretokens_kept"] == len(table)
    assert counts["pretokens_distinct"] == len(count_pretokens(survivors.column("text").to_pylist(), [EOT]))
    assert counts["documents_sampled"] == survivors.num_rows
    assert sorted(p.name for p in (tmp_path / "tokenizer").iterdir()) == ["merges.txt", "tokenizer.json", "vocab.json"]


def test_sample_does_not_depend_on_partitioning(spark, tmp_path, survivors):
    merges = []
    for files in (1, 5):
        run = tmp_path / f"f{files}"
        _write_survivors(run, survivors, files=files)
        ctx = RunContext(_config(run, "train: true, vocab_size: 300, sample_fraction: 0.5"), spark=spark)
        counts = run_train_tokenizer(ctx, layout.SURVIVORS)  # as after the dedup stage
        assert 0 < counts["documents_sampled"] < survivors.num_rows
        merges.append((counts["documents_sampled"], load_tokenizer(ctx.config).merges))
    assert merges[0] == merges[1]
