"""Regenerate the bundled sample in ``pipeline/sample/`` (three sources, three formats).

Near-duplicates are planted within each source and across sources; the ``web`` source also carries
a few bad records so a sample run shows the reject path. Run: ``python -m bench make_sample``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.corpus import documents, mutate, write_jsonl

SAMPLE = Path(__file__).resolve().parents[1] / "pipeline" / "sample"
BAD_LINES = [
    b'{"text": "an unterminated record',
    b'{"url": "https://example.org/no-text"}',
    b'{"text": 42}',
    b'{"text": "   "}',
    b'{"text": "bad bytes \xff\xfe in the middle"}',
    b'["not", "an", "object"]',
]


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rng = random.Random(7)
    docs = list(documents(420, seed=11, dup_rate=0.15, exact_rate=0.04))
    web, wiki, forum = docs[:200], docs[200:320], docs[320:]
    wiki += [mutate(rng.choice(web), rng, 0.03) for _ in range(15)]  # cross-source near-duplicates
    forum += [rng.choice(wiki) for _ in range(5)]  # cross-source exact duplicates
    (SAMPLE / "web").mkdir(parents=True, exist_ok=True)
    (SAMPLE / "wiki").mkdir(parents=True, exist_ok=True)
    (SAMPLE / "forum").mkdir(parents=True, exist_ok=True)
    write_jsonl(SAMPLE / "web" / "part-0000.jsonl", web[:100])
    write_jsonl(SAMPLE / "web" / "part-0001.jsonl", web[100:])
    with open(SAMPLE / "web" / "part-0001.jsonl", "ab") as f:
        for line in BAD_LINES:
            f.write(line + b"\n")
    write_jsonl(SAMPLE / "wiki" / "wiki.jsonl.gz", wiki, compress=True)
    table = pa.table({"body": forum, "thread": [f"t{i}" for i in range(len(forum))]})
    pq.write_table(table, SAMPLE / "forum" / "forum.parquet", row_group_size=40)
    print(json.dumps({"web": len(web) + len(BAD_LINES), "wiki": len(wiki), "forum": len(forum)}))


if __name__ == "__main__":
    main()
