"""A corpus with every bad case of docs/bad_input.md, Records runs to the end; each bad record is a reject with its
reason."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter

import pytest

from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext

pytestmark = pytest.mark.spark
WORDS = (
    "river stone market light paper window garden letter silver morning engine harbor valley "
    "signal copper forest winter castle bridge candle meadow rocket violet thunder"
).split()
MAX_BYTES = 20_000


def _good(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(rng.randint(20, 60)))


BAD_MAKERS = {
    "malformed_json": lambda rng: rng.choice(
        [
            b'{"text": "cut',
            b"text without braces",
            b'{"text": "a"} trailing',
            b'{"text": "a",}',
            b"{'text': 'single quotes'}",
        ]
    ),
    "missing_text_field": lambda rng: rng.choice([b'{"title": "no text"}', b'{"text": null}', b"{}"]),
    "non_string_text": lambda rng: rng.choice(
        [b'{"text": 12}', b'{"text": ["a", "b"]}', b'{"text": {"k": 1}}', b'{"text": true}']
    ),
    "invalid_utf8": lambda rng: rng.choice(
        [
            b'{"text": "caf\xe9 au lait"}',
            b'{"text": "\xff\xfe"}',
            b'{"text": "half \xe2\x82"}',
            b'{"text": "lone \\udc80 surrogate"}',
        ]
    ),
    "empty_text": lambda rng: rng.choice([b'{"text": ""}', b'{"text": "   "}', b'{"text": "\\n\\t"}']),
    "text_too_large": lambda rng: json.dumps({"text": "x" * (MAX_BYTES + rng.randint(1, 500))}).encode(),
    "not_an_object": lambda rng: rng.choice([b"[1, 2, 3]", b'"just a string"', b"42", b"null"]),
}


def test_bad_input_corpus_runs_to_the_end_with_every_bad_record_accounted(spark, tmp_path):
    rng = random.Random(5)
    raw = tmp_path / "raw"
    raw.mkdir()
    planted: Counter[str] = Counter()
    lines, special_docs = [], 0
    for _ in range(3000):
        r = rng.random()
        if r < 0.3:
            reason = rng.choice(sorted(BAD_MAKERS))
            lines.append(BAD_MAKERS[reason](rng))
            planted[reason] += 1
        elif r < 0.35:
            text = _good(rng) + " <|endoftext|> " + _good(rng)
            lines.append(json.dumps({"text": text}).encode())
            special_docs += 1
        else:
            lines.append(json.dumps({"text": _good(rng)}).encode())
    (raw / "corpus.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    good_tail = b"".join(json.dumps({"text": _good(rng)}).encode() + b"\n" for _ in range(50))
    (raw / "cut.jsonl.gz").write_bytes(gzip.compress(good_tail)[:-30])  # truncated archive
    planted["unreadable_file"] += 1
    config = load_config_text(f"""
output: {tmp_path / "run"}
sources: [{{name: mixed, paths: ["{raw}"]}}]
ingest: {{max_text_bytes: {MAX_BYTES}, partitions: 3}}
tokenizer: {{train: true, vocab_size: 400}}
tokenize: {{partitions: 2}}
""")
    results = run_stages(RunContext(config, spark=spark), log=lambda *_: None)
    ingest = results["ingest"].counts["sources"]["mixed"]
    assert ingest["rejects_by_reason"] == dict(planted)
    assert ingest["rejected"] == sum(planted.values())
    rejects = spark.read.parquet(str(tmp_path / "run" / "rejects")).toPandas()
    assert Counter(rejects.reason) == planted
    assert (rejects.excerpt.str.len() <= 200).all()
    good_lines = 3000 - sum(v for k, v in planted.items() if k != "unreadable_file")
    assert ingest["documents"] >= good_lines  # plus whatever the truncated archive yielded before the cut
    assert results["tokenize"].counts["sources"]["mixed"]["documents_with_special_token_text"] >= 1
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    row = manifest["accounting"]["mixed"]
    assert row["documents_read"] == row["rejected"] + row["duplicates_removed"] + row["survivors"]
    assert row["survivors"] == row["written"] > 0
    assert special_docs > 0
