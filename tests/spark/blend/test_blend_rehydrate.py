"""Rehydration (docs/blending.md, Rehydration; issue #45 item 4): survivors put back in the blend by the size of
the duplicate cluster they stand for, FineWeb-2's rule.

The Spark tests share one small run (module fixture) of a corpus made of clusters of known sizes (near copies
and exact copies of a random text), with FineWeb-2's table in ``blend.rehydrate`` and a ``training`` section.
Cluster sizes and copies are computed here from ``dedup/components/`` and the table itself, not by the code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.blend.rehydrate import copies_for, rehydrate_rules
from pipeline.config import ConfigError, load_config_text
from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.merge_blend import rehydrate as rehydrate_module
from pipeline.run.preflight import check_stage_configs
from pipeline.stage_api import layout
from tests.megatron_builder import GPT2_IDENTIFIERS, megatron_build

# FineWeb-2's rehydration weights (issue #45): a lower bound of the cluster size -> copies
FINEWEB2 = {1: 1, 2: 2, 3: 3, 4: 3, 5: 5, 100: 8, 1000: 1}
TOKENIZER = GPT2_IDENTIFIERS


def fineweb2_copies(size: int, table: dict[int, int] = FINEWEB2) -> int:
    """The copies the table gives a cluster of ``size``: the value at the largest bound not above it."""
    best = None
    for bound in sorted(table):
        if bound <= size:
            best = table[bound]
    assert best is not None
    return best


BASE = "output: {out}\nsources:\n  - name: web\n    paths: [{data}]\ntokenizer: {{train: true}}\n"


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("{1: 0}", "blend.rehydrate.1"),
        ("{1: 1, 2: -3}", "blend.rehydrate.2"),
        ("{1: 1, 5: 2, 3: 1}", "blend.rehydrate.3"),
        ("{1: 1, 3: 2, 3: 4}", None),  # YAML keeps the last of a repeated key: valid
        ("{2: 2}", "blend.rehydrate"),
        ("{0: 1}", "blend.rehydrate.0"),
        ("{1: 1, two: 2}", "blend.rehydrate.two"),
        ("{1: 1.5}", "blend.rehydrate.1"),
        ("{}", "blend.rehydrate"),
        ("[1, 2]", "blend.rehydrate"),
    ],
)
def test_bad_rehydrate_tables_are_refused_before_spark_naming_the_key(tmp_path, value, key):
    text = BASE.format(out=tmp_path / "run", data=tmp_path / "a.jsonl")
    if key is None:
        check_stage_configs(load_config_text(text, [f"blend.rehydrate={value}"]))
        return
    with pytest.raises(ConfigError) as err:
        check_stage_configs(load_config_text(text, [f"blend.rehydrate={value}"]))
    assert err.value.key == key
    assert "\n" not in str(err.value)


def test_rehydration_is_off_by_default(tmp_path):
    """Markers of older runs, which left the keys out when off, still resume: tests/unit/run/test_run_stage.py."""
    from pipeline.run.registry import stage

    config = load_config_text(BASE.format(out=tmp_path / "run", data=tmp_path / "a.jsonl"))
    assert config.blend.rehydrate is None
    assert stage("merge-blend").config_values(config)["blend"]["rehydrate"] is None
    assert stage("dedup").config_values(config)["cluster_sizes"] is False


def test_copies_follow_fineweb2s_table_for_every_size():
    sizes = np.arange(1, 3001)
    got = copies_for(sizes, rehydrate_rules({str(k): v for k, v in FINEWEB2.items()}) or [])
    assert got.tolist() == [fineweb2_copies(int(s)) for s in sizes]


def test_repeat_documents_writes_each_document_copies_times_in_order(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    docs = [rng.integers(0, 60000, size=int(n)).astype(np.uint16) for n in rng.integers(0, 40, size=50)]
    prefix = str(tmp_path / "src")
    with IndexedDatasetWriter(prefix, dtype=np.uint16) as writer:
        for d in docs:
            writer.add_document(d)
    copies = rng.integers(1, 6, size=len(docs))
    monkeypatch.setattr(rehydrate_module, "CHUNK_TOKENS", 37)  # many chunks, some of one document
    rehydrate_module.repeat_documents(prefix, copies)
    got = IndexedDataset(prefix)
    want = [d for d, c in zip(docs, copies, strict=True) for _ in range(int(c))]
    assert len(got) == len(want) == got.num_documents
    assert all(np.array_equal(got[i], w) for i, w in enumerate(want))
    assert sorted(os.listdir(tmp_path)) == ["src.bin", "src.idx"]


# -- one small Spark run -----------------------------------------------------------------------------------------

CLUSTERS = [1] * 80 + [2] * 4 + [3] * 3 + [4] * 3 + [5] * 2 + [7, 12, 100]


def _corpus(directory: Path) -> None:
    """Two sources of clusters: a random text, its near copies (one word changed each) and some exact copies."""
    rng = np.random.default_rng(45)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(n))) for n in rng.integers(3, 9, 3000)]
    rows: dict[str, list[str]] = {"web": [], "wiki": []}
    for c, size in enumerate(CLUSTERS):
        base = [words[i] for i in rng.integers(0, len(words), size=120)]
        for member in range(size):
            text = list(base)
            if member % 4 != 3:  # every fourth member an exact copy of the text
                text[(member * 7) % len(text)] = f"variant{member}"
            rows["web" if (c + member) % 3 else "wiki"].append(" ".join(text))
    directory.mkdir()
    for source, texts in rows.items():
        with open(directory / f"{source}.jsonl", "w") as out:
            out.writelines(json.dumps({"text": t}) + "\n" for t in texts)


@pytest.fixture(scope="module")
def rehydrated_run(spark, tmp_path_factory):
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    root = tmp_path_factory.mktemp("rehydrate")
    _corpus(root / "data")
    text = (
        f"output: {root / 'run'}\nspark: {{master: 'local[2]'}}\nsources:\n"
        f"  - name: web\n    paths: [{root / 'data' / 'web.jsonl'}]\n"
        f"  - name: wiki\n    paths: [{root / 'data' / 'wiki.jsonl'}]\n"
        "dedup: {num_perm: 128, threshold: 0.7, ngram: 5, min_tokens: 5}\n"
        "tokenizer: {train: true, vocab_size: 400}\ntokenize: {partitions: 2}\n"
        f"blend:\n  rehydrate: {json.dumps(FINEWEB2)}\n"
        f"training:\n  tokenizer: {json.dumps(TOKENIZER)}\n  sequence_length: 64\n"
        "  samples: [300, 20, 10]\n  split: '80,12,8'\n"
    )
    config = load_config_text(text)
    results = run_stages(RunContext(config, spark=spark), log=lambda *_: None)
    return root / "run", config, results


def _rows(run: Path, table: str) -> list[dict]:
    return pq.read_table(run / table).to_pylist()


def _expected_copies(run: Path) -> dict[str, list[tuple[int, int]]]:
    """Per source, (doc_id, copies) of every survivor in doc_id order, from dedup/components/ and FINEWEB2."""
    members: dict[int, int] = {}
    component_of: dict[int, int] = {}
    for row in _rows(run, layout.COMPONENTS):
        members[row["component"]] = members.get(row["component"], 0) + 1
        component_of[row["doc_id"]] = row["component"]
    out: dict[str, list[tuple[int, int]]] = {}
    for row in sorted(_rows(run, layout.SURVIVORS), key=lambda r: r["doc_id"]):
        size = members[component_of[row["doc_id"]]] if row["doc_id"] in component_of else 1
        out.setdefault(row["source"], []).append((row["doc_id"], fineweb2_copies(size)))
    return out


@pytest.mark.spark
def test_cluster_sizes_are_the_clusters_the_survivors_stand_for(rehydrated_run):
    run, _, _ = rehydrated_run
    sizes = {r["doc_id"]: r["cluster_size"] for r in _rows(run, layout.CLUSTER_SIZES)}
    survivors = _rows(run, layout.SURVIVORS)
    assert sorted(sizes) == sorted(r["doc_id"] for r in survivors)
    # every cluster of the corpus was found whole: the sizes are the ones it was made of
    assert sorted(sizes.values()) == sorted(CLUSTERS)
    copies = {d: c for rows in _expected_copies(run).values() for d, c in rows}
    assert {d: fineweb2_copies(s) for d, s in sizes.items()} == copies


@pytest.mark.spark
def test_megatron_datasets_hold_each_survivor_copies_times(rehydrated_run):
    run, _, results = rehydrated_run
    merged = results["merge-blend"].counts["merge"]["sources"]
    for source, rows in _expected_copies(run).items():
        shards = sorted(p for p in (run / layout.SHARDS / source).glob("*.idx"))
        distinct = [seq for p in shards for seq in IndexedDataset(str(p)[: -len(".idx")])]
        assert len(distinct) == len(rows)
        want = [seq for seq, (_, c) in zip(distinct, rows, strict=True) for _ in range(c)]
        got = IndexedDataset(str(run / layout.MEGATRON / source))
        assert len(got) == len(want)
        assert all(np.array_equal(got[i], w) for i, w in enumerate(want))
        added = sum(c for _, c in rows) - len(rows)
        assert added > 0
        assert (merged[source]["distinct_documents"], merged[source]["copies_added"]) == (len(rows), added)


@pytest.mark.spark
def test_accounting_counts_copies_as_added_documents_beside_the_weights(rehydrated_run):
    run, _, _ = rehydrated_run
    manifest = json.loads((run / layout.MANIFEST).read_text())
    report = json.loads((run / layout.REPORT_JSON).read_text())
    expected = _expected_copies(run)
    blend = json.loads((run / layout.BLEND / "blend.json").read_text())
    for source, rows in expected.items():
        row = manifest["accounting"][source]
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"]
        assert row["written"] == len(rows)
        added = sum(c for _, c in rows) - len(rows)
        assert row["copies_added"] == added
        assert report["blend"]["rehydrate"][source] == {"distinct_documents": len(rows), "copies_added": added}
        assert blend["sizes"][blend["sources"].index(source)] == len(rows) + added
    import jsonschema

    schema = Path(__file__).resolve().parents[3] / "pipeline" / "report" / "schema.json"
    jsonschema.validate(report, json.loads(schema.read_text()), cls=jsonschema.Draft202012Validator)
    html = (run / layout.REPORT_HTML).read_text()
    assert "copies added" in html and "rehydration" in html


@pytest.mark.spark
def test_the_blends_sample_counts_follow_the_copies(rehydrated_run):
    run, _, _ = rehydrated_run
    blend = json.loads((run / layout.BLEND / "blend.json").read_text())
    index = np.load(run / layout.BLEND / "dataset_index.npy", allow_pickle=False)
    sample = np.load(run / layout.BLEND / "dataset_sample_index.npy", allow_pickle=False)
    expected = _expected_copies(run)
    with_copies = [sum(c for _, c in expected[s]) for s in blend["sources"]]
    # weights from the sizes, S = every document: each source gives exactly its documents with copies, once each
    assert np.bincount(index, minlength=len(with_copies)).tolist() == with_copies
    for k, n in enumerate(with_copies):
        assert sorted(sample[index == k].tolist()) == list(range(n))


@pytest.mark.spark
def test_megatron_core_loads_the_rehydrated_blend_from_the_training_caches(rehydrated_run, tmp_path, monkeypatch):
    from tests.oracles import require_oracle

    torch = require_oracle("torch")
    gpt_dataset = require_oracle("megatron.core.datasets.gpt_dataset")
    helpers = require_oracle("megatron.core.datasets.helpers")
    run, config, results = rehydrated_run
    counts = results["training-indices"].counts

    def build(cache: Path):
        return megatron_build(config.training, counts["data_path"], cache, TOKENIZER)

    monkeypatch.setattr(torch.distributed, "get_rank", lambda *a: 0)
    reference = tmp_path / "reference"
    built = build(reference)
    ours = run / layout.MEGATRON_CACHE
    names = sorted(os.listdir(reference))
    assert sorted(os.listdir(ours)) == names
    assert all((reference / n).read_bytes() == (ours / n).read_bytes() for n in names)

    def refuse(*args, **kwargs):
        raise AssertionError("megatron-core tried to build an index instead of loading it")

    with monkeypatch.context() as patched:
        for name in ("build_sample_idx", "build_blending_indices", "build_exhaustive_blending_indices"):
            patched.setattr(helpers, name, refuse)
        patched.setattr(gpt_dataset, "_build_document_index", refuse)
        patched.setattr(gpt_dataset, "_build_shuffle_index", refuse)
        loaded = build(ours)
    expected = _expected_copies(run)
    train = loaded[0]
    assert train is not None and len(train) == len(built[0]) > 0
    for dataset in train.datasets:  # megatron-core's view of each source holds the documents with copies
        source = Path(dataset.dataset_path).name
        assert dataset.dataset.sequence_lengths.size == sum(c for _, c in expected[source])
