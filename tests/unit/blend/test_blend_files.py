"""blend/ files: .npy without pickles, blend.json schema and validator, Megatron blend strings."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from pipeline.blend import (
    BLEND_JSON_SCHEMA,
    blend_json_errors,
    build_blending_indices,
    megatron_data_path,
    parse_blend,
    read_blend,
    validate_blend_json,
    write_blend,
)

SOURCES = ["web", "code", "books"]
PREFIXES = ["megatron/web", "megatron/code", "megatron/books"]


def _write(out, n=3, mode="fixed"):
    weights = [0.5, 0.3, 0.2][:n] if n == 3 else list(range(1, n + 1))
    index, sample = build_blending_indices(weights, 1000, sizes=[10**4] * n, mode=mode)
    sources = SOURCES if n == 3 else [f"s{i}" for i in range(n)]
    prefixes = PREFIXES if n == 3 else [f"megatron/s{i}" for i in range(n)]
    doc = write_blend(
        out, index, sample, sources=sources, prefixes=prefixes, weights=weights, sizes=[10**4] * n, mode=mode
    )
    return index, sample, doc


def test_write_local_files_load_without_pickle(tmp_path):
    out = tmp_path / "blend"
    index, sample, doc = _write(str(out))
    assert sorted(p.name for p in out.iterdir()) == ["blend.json", "dataset_index.npy", "dataset_sample_index.npy"]
    loaded_index = np.load(out / "dataset_index.npy", allow_pickle=False)
    loaded_sample = np.load(out / "dataset_sample_index.npy", allow_pickle=False)
    assert loaded_index.dtype == np.uint8 and np.array_equal(loaded_index, index)
    assert loaded_sample.dtype == np.int64 and np.array_equal(loaded_sample, sample)
    on_disk = json.loads((out / "blend.json").read_text())
    assert on_disk == doc
    validate_blend_json(on_disk)
    assert on_disk["size"] == 1000 and on_disk["counts"] == [500, 300, 200]
    assert on_disk["achieved_ratios"] == [0.5, 0.3, 0.2]
    assert on_disk["data_path"] == "0.5 megatron/web 0.3 megatron/code 0.2 megatron/books"


def test_write_is_deterministic_and_works_on_fsspec_urls(tmp_path):
    _write(str(tmp_path / "a"))
    _write("file://" + str(tmp_path / "b"))
    for name in ("blend.json", "dataset_index.npy", "dataset_sample_index.npy"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    index, sample, _ = _write("memory://runs/x/blend", n=300, mode="megatron")
    got_index, got_sample, doc = read_blend("memory://runs/x/blend")
    assert got_index.dtype == np.int16 and np.array_equal(got_index, index)
    assert np.array_equal(got_sample, sample)
    assert doc["mode"] == "megatron" and doc["dataset_index_dtype"] == "int16"


def test_more_than_255_sources_round_trip(tmp_path):
    index, _, doc = _write(str(tmp_path), n=300)
    assert doc["dataset_index_dtype"] == "int16"
    assert np.array_equal(np.load(tmp_path / "dataset_index.npy", allow_pickle=False), index)


@pytest.fixture
def good_doc(tmp_path):
    return _write(str(tmp_path))[2]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.pop("weights"), "missing required key 'weights'"),
        (lambda d: d.update(extra=1), "unexpected key 'extra'"),
        (lambda d: d.update(mode="nemo"), "$.mode"),
        (lambda d: d.update(size=-1), "$.size"),
        (lambda d: d.update(size="1000"), "$.size: expected integer"),
        (lambda d: d["weights"].__setitem__(0, 0.9), "must sum to 1"),
        (lambda d: d["weights"].__setitem__(0, float("nan")), "$.weights[0]"),
        (lambda d: d["counts"].__setitem__(0, 499), "$.counts: sum"),
        (lambda d: d["prefixes"].pop(), "$.prefixes: has 2 entries for 3 sources"),
        (lambda d: d["sources"].__setitem__(1, "web"), "unique"),
        (lambda d: d["achieved_ratios"].__setitem__(1, 0.31), "$.achieved_ratios[1]"),
        (lambda d: d["sizes"].__setitem__(0, 10), "with oversample='error'"),
        (lambda d: d["files"].update(dataset_index="x.npy"), "$.files.dataset_index"),
        (lambda d: d.update(dataset_index_dtype="float32"), "$.dataset_index_dtype"),
        (lambda d: d.update(format="other/9"), "$.format"),
        (lambda d: d["sources"].__setitem__(0, True), "$.sources[0]: expected string"),
    ],
)
def test_validator_rejects_broken_documents(good_doc, mutate, needle):
    doc = copy.deepcopy(good_doc)
    mutate(doc)
    errors = blend_json_errors(doc)
    assert any(needle in e for e in errors), errors
    with pytest.raises(ValueError, match="invalid blend.json"):
        validate_blend_json(doc)


def test_validator_accepts_null_sizes_and_rejects_non_objects(good_doc):
    doc = copy.deepcopy(good_doc)
    doc["sizes"] = None
    validate_blend_json(doc)
    assert blend_json_errors([]) == ["$: expected object, got list []"]
    assert set(BLEND_JSON_SCHEMA["required"]) == set(good_doc)


def test_megatron_data_path_round_trips_through_parse_blend():
    path = megatron_data_path([30, 70], ["prefixA", "prefixB"])
    assert path == "0.3 prefixA 0.7 prefixB"
    assert parse_blend(path) == ([0.3, 0.7], ["prefixA", "prefixB"])
    assert megatron_data_path([3, 1], ["a", "b"], normalize=False) == "3.0 a 1.0 b"
    with pytest.raises(ValueError, match="whitespace"):
        megatron_data_path([1, 1], ["a b", "c"])
    with pytest.raises(ValueError, match="one weight per prefix"):
        megatron_data_path([1], ["a", "c"])


def test_parse_blend_forms_and_errors():
    assert parse_blend("30 prefixA 70 prefixB") == ([30.0, 70.0], ["prefixA", "prefixB"])
    assert parse_blend([30, "prefixA", 70, "prefixB"]) == ([30.0, 70.0], ["prefixA", "prefixB"])
    assert parse_blend("a b c") == (None, ["a", "b", "c"])
    with pytest.raises(ValueError, match="mixes"):
        parse_blend("30 a b c")
    with pytest.raises(ValueError, match="> 0"):
        parse_blend("0 a 1 b")
    with pytest.raises(ValueError, match="empty"):
        parse_blend("  ")


def test_left_out_sources_are_listed_only_when_there_are_some(tmp_path):
    index, sample = build_blending_indices([0.5, 0.5], 10, sizes=[10, 10])
    common = dict(sources=["web", "code"], prefixes=["megatron/web", "megatron/code"], weights=[1, 1], sizes=[10, 10])
    complete = write_blend(str(tmp_path / "a"), index, sample, **common)
    assert "left_out" not in complete and "left_out" not in (tmp_path / "a" / "blend.json").read_text()
    gone = [{"source": "books", "weight": 0.2, "why": "no documents survived"}]
    write_blend(str(tmp_path / "b"), index, sample, left_out=gone, **common)
    assert read_blend(str(tmp_path / "b"))[2]["left_out"] == gone
    assert blend_json_errors({**complete, "left_out": [{"source": "books"}]})
