"""Blending (source, quality bucket) pairs (docs/blending.md, Quality buckets; issue #44 item 4): a whole local-Spark
run trains a fastText classifier, writes ``quality_bucket`` with the fasttext_classifier's ``buckets``, and
``blend.weights`` weighs one source bucket by bucket. Each bucket is its own Megatron dataset holding the tokenized
documents of that bucket (read here from the shards and the survivors' table), and the blend and the training
caches are megatron-core's own over the run's ``--data-path``: its C++ blending helper and its
BlendedMegatronDatasetBuilder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config_text
from pipeline.megatron import IndexedDataset
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.megatron_builder import GPT2_IDENTIFIERS, megatron_build
from tests.oracles import missing_oracle, require_oracle

REPO = Path(__file__).resolve().parents[3]
BUCKETS = 4
WEIGHTS = {"web/bucket=0": 0.1, "web/bucket=1": 0.5, "web/bucket=2": 1.0, "web/bucket=3": 2.0, "forum": 1.0}
CONFIG = """
output: {out}
spark:
  master: local[2]
  settings: {{spark.sql.shuffle.partitions: "4"}}
sources:
  - {{name: web, paths: [{repo}/pipeline/sample/web], format: jsonl}}
  - {{name: forum, paths: [{repo}/pipeline/sample/forum/forum.parquet], format: parquet, text_field: body}}
filter:
  - {{name: fasttext_classifier, model: run, score_label: hq, buckets: {buckets}, newline_replacement: " "}}
classifier:
  positives: [{{name: english, paths: [{shared}/corpus.en], format: text}}]
  negatives: {{from_run: 100}}
  label: hq
  seed: 3
  fasttext: {{wordNgrams: 2, bucket: 20000, dim: 16}}
tokenizer: {{train: true, vocab_size: 1000}}
tokenize: {{partitions: 2}}
blend: {{mode: megatron, oversample: wrap, weights: "{weights}", rehydrate: {{1: 1, 2: 2, 3: 3}}}}
training:
  tokenizer: {tokenizer}
  sequence_length: 32
  samples: [400, 0, 0]
  split: "100,0,0"
"""


@pytest.fixture(scope="module")
def bucket_run(spark, shared_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """The whole run of CONFIG (every stage), made once for this module."""
    fasttext = require_oracle("fasttext")
    if not hasattr(fasttext, "train_supervised"):
        missing_oracle("the fasttext module here cannot train (install fasttext-numpy2-wheel)")
    out = tmp_path_factory.mktemp("buckets") / "run"
    text = CONFIG.format(
        out=out,
        repo=REPO,
        shared=shared_fixtures,
        buckets=BUCKETS,
        weights=" ".join(f"{w} {n}" for n, w in WEIGHTS.items()),
        tokenizer=json.dumps(GPT2_IDENTIFIERS),
    )
    config = load_config_text(text)
    results = run_stages(RunContext(config, spark=spark), log=lambda _: None)
    return out, config, results


def _copies(run: Path) -> dict[int, int]:
    """Rehydration's copies of each survivor in a duplicate cluster ({1: 1, 2: 2, 3: 3}), from dedup/components/."""
    members: dict[int, int] = {}
    rows = pq.read_table(run / layout.COMPONENTS).to_pylist()
    for row in rows:
        members[row["component"]] = members.get(row["component"], 0) + 1
    return {row["doc_id"]: min(members[row["component"]], 3) for row in rows}


def _bucket_documents(run: Path) -> dict[int, list[np.ndarray]]:
    """web's tokenized documents per quality bucket, in doc_id order, each as many times as rehydration puts it
    back: the shards (doc_id order) matched with the survivors' ``quality_bucket`` sorted by doc_id."""
    shards = sorted((run / layout.SHARDS / "web").glob("*.idx"))
    documents = [seq for p in shards for seq in IndexedDataset(str(p)[: -len(".idx")])]
    rows = sorted(
        (r for r in pq.read_table(run / layout.SURVIVORS).to_pylist() if r["source"] == "web"),
        key=lambda r: r["doc_id"],
    )
    assert len(rows) == len(documents) > 0
    copies = _copies(run)
    out: dict[int, list[np.ndarray]] = {b: [] for b in range(BUCKETS)}
    for row, seq in zip(rows, documents, strict=True):
        out[row["quality_bucket"]] += [seq] * copies.get(row["doc_id"], 1)
    return out


@pytest.mark.spark
def test_each_bucket_of_the_source_is_its_own_megatron_dataset(bucket_run) -> None:
    run, _, _ = bucket_run
    want = _bucket_documents(run)
    published = [b for b in range(BUCKETS) if want[b]]
    assert len(published) >= 2  # the run's buckets give the blend more than one dataset of web
    for bucket, documents in want.items():
        prefix = run / layout.MEGATRON / "web" / f"bucket={bucket}"
        if not documents:
            assert not Path(f"{prefix}.idx").exists()
            continue
        got = IndexedDataset(str(prefix))
        assert len(got) == got.num_documents == len(documents)
        assert all(np.array_equal(got[i], d) for i, d in enumerate(documents))
    assert not (run / layout.MEGATRON / "web.idx").exists() and not (run / layout.MEGATRON / "web.bin").exists()
    assert (run / layout.MEGATRON / "forum.idx").exists()
    report = json.loads((run / layout.REPORT_JSON).read_text())
    assert report["blend"]["sources"] == json.loads((run / layout.BLEND / "blend.json").read_text())["sources"]
    assert set(report["blend"]["rehydrate"]) == {"web", "forum"}
    assert "rehydration" in (run / layout.REPORT_HTML).read_text()


@pytest.mark.spark
def test_the_blend_is_megatron_cores_over_the_pairs_weights(bucket_run) -> None:
    helpers_cpp = require_oracle("megatron.core.datasets.helpers_cpp")
    mcore_utils = require_oracle("megatron.core.datasets.utils")
    run, _, results = bucket_run
    want = _bucket_documents(run)
    blend = json.loads((run / layout.BLEND / "blend.json").read_text())
    names = [f"web/bucket={b}" for b in range(BUCKETS) if want[b]] + ["forum"]
    assert blend["sources"] == names
    assert blend["prefixes"] == [f"megatron/{n}" for n in names]
    prefixes, weights = mcore_utils.get_blend_from_list(blend["data_path"].split())
    assert prefixes == blend["prefixes"]
    expected = mcore_utils.normalize([WEIGHTS[n] for n in names])
    assert weights == pytest.approx(expected, rel=1e-12)
    # megatron-core's BlendedDataset builds its indices with this C++ helper over the normalised weights (the
    # config's: a --data-path's printed doubles, normalised again, may differ in the last bit and break a tie
    # elsewhere; the training caches below are built from the printed ones)
    size = blend["size"]
    index = np.zeros(size, dtype=np.int16)
    sample = np.zeros(size, dtype=np.int64)
    helpers_cpp.build_blending_indices(index, sample, np.asarray(expected, dtype=np.float64), len(names), size, False)
    assert np.array_equal(np.load(run / layout.BLEND / "dataset_index.npy", allow_pickle=False), index)
    sizes = [len(want[b]) for b in range(BUCKETS) if want[b]]
    assert blend["sizes"][:-1] == sizes
    # the heavy buckets are drawn more often than they hold documents: blend.oversample wrap's sample % size
    wrapped = sample % np.asarray(blend["sizes"], dtype=np.int64)[index]
    assert np.array_equal(np.load(run / layout.BLEND / "dataset_sample_index.npy", allow_pickle=False), wrapped)
    assert not np.array_equal(wrapped, sample)
    assert blend["counts"] == np.bincount(index, minlength=len(names)).tolist()
    assert size == sum(blend["sizes"])
    merged = results["merge-blend"].counts["merge"]["sources"]["web"]
    assert merged["documents"] == sum(sizes)  # the source's accounted documents are its buckets' together


@pytest.mark.spark
def test_the_training_caches_are_megatron_cores_over_the_bucket_prefixes(bucket_run, tmp_path, monkeypatch) -> None:
    torch = require_oracle("torch")
    run, config, results = bucket_run
    counts = results["training-indices"].counts
    assert "/megatron/web/bucket=3" in counts["data_path"]
    monkeypatch.setattr(torch.distributed, "get_rank", lambda *a: 0)
    reference = tmp_path / "reference"
    built = megatron_build(config.training, counts["data_path"], reference, GPT2_IDENTIFIERS)
    ours = run / layout.MEGATRON_CACHE
    names = sorted(os.listdir(reference))
    assert names and sorted(os.listdir(ours)) == names
    assert all((reference / n).read_bytes() == (ours / n).read_bytes() for n in names)
    train = built[0]
    assert train is not None and len(train) >= 400  # megatron-core rounds the blend's size up
    paths = [Path(d.dataset_path) for d in train.datasets]
    assert [p.name for p in paths][:-1] == [
        n.split("/")[1] for n in json.loads((run / layout.BLEND / "blend.json").read_text())["sources"][:-1]
    ]
    # the samples megatron-core's BlendedDataset draws per (source, bucket) follow the weights
    drawn = np.bincount(train.dataset_index, minlength=len(paths))
    assert (
        drawn.sum() == len(train) and drawn[paths.index(next(p for p in paths if p.name == "bucket=0"))] < drawn.max()
    )
