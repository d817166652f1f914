"""Conformance of the training-indices kernels with megatron-core 0.16.1's C++ helper and config rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.numba_backend import TRAINING
from pipeline.training_indices import describe
from pipeline.training_indices.gpt_indices import sample_count, sample_index, sample_index_dtype, sample_index_numpy
from pipeline.training_indices.tasks import write_npy
from tests.backends import numba_backend
from tests.oracles import require_oracle

helpers_cpp = require_oracle("megatron.core.datasets.helpers_cpp")
mcore_config = require_oracle("megatron.core.datasets.blended_megatron_dataset_config")
mcore_builder = require_oracle("megatron.core.datasets.blended_megatron_dataset_builder")


def _case(rng, docs, longest):
    lengths = rng.integers(0, longest, size=docs).astype(np.int32)
    lengths[rng.integers(docs)] = max(2, int(lengths.max()))  # at least one non-empty document
    epochs = int(rng.integers(1, 4))
    doc_index = np.tile(np.arange(docs, dtype=np.int32), epochs)
    rng.shuffle(doc_index)
    return lengths, doc_index, epochs, int(lengths.sum())


@pytest.mark.parametrize("numba", [False, True])
@pytest.mark.parametrize("wide", [False, True])
def test_sample_index_equals_the_cpp_helper(numba, wide):
    rng = np.random.default_rng(7)
    helper = helpers_cpp.build_sample_idx_int64 if wide else helpers_cpp.build_sample_idx_int32
    with numba_backend(TRAINING, numba):
        for case in range(200):
            lengths, doc_index, epochs, tokens = _case(rng, int(rng.integers(1, 60)), int(rng.integers(1, 40)))
            seq = int(rng.integers(2, 50))
            extra = int(rng.integers(0, 2))
            drop_last = bool(rng.integers(0, 2))
            if epochs * tokens - extra < seq and drop_last:
                continue
            want = helper(lengths, doc_index, seq, epochs, tokens, drop_last, extra)
            got = sample_index(lengths, doc_index, seq, epochs, tokens, drop_last, extra)
            assert got.shape == want.shape, case
            assert np.array_equal(got.astype(np.int64), want.astype(np.int64)), (case, seq, extra, drop_last)
            if not wide:
                assert got.dtype == want.dtype == np.int32


@pytest.mark.parametrize("numba", [False, True])
def test_sample_index_of_a_stream_past_int32_tokens_equals_the_cpp_helper(numba):
    """More than 2^31 tokens in the stream (the numpy path then sums in int64); the index itself stays int32."""
    lengths = np.array([2**30, 2**30 - 5, 7, 2**29, 0, 3], dtype=np.int32)
    rng = np.random.default_rng(3)
    doc_index = np.tile(np.arange(lengths.size, dtype=np.int32), 2)
    rng.shuffle(doc_index)
    tokens = int(lengths.sum(dtype=np.int64))
    with numba_backend(TRAINING, numba):
        for seq, extra, drop_last in ((2**27 + 3, 1, True), (2**28 - 1, 0, True), (2**26 + 11, 1, False)):
            want = helpers_cpp.build_sample_idx_int32(lengths, doc_index, seq, 2, tokens, drop_last, extra)
            got = sample_index(lengths, doc_index, seq, 2, tokens, drop_last, extra)
            assert got.dtype == want.dtype and np.array_equal(got, want), (seq, extra, drop_last)


def test_a_split_of_a_million_documents_does_not_import_numba():
    """The default path (numba importable, the tests' threshold removed) builds the indices with numpy alone."""
    code = (
        "import sys, numpy as np\n"
        "from pipeline.training_indices.gpt_indices import build_gpt_indices\n"
        "lengths = np.random.default_rng(0).integers(1, 3000, size=1_000_000).astype(np.int32)\n"
        "built = build_gpt_indices(lengths, (0, 1_000_000), 600_000, sequence_length=4096, seed=1)\n"
        "print('numba' in sys.modules, built.sample_index.shape[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PIPELINE_NUMBA_AFTER", "PIPELINE_TRAINING_NUMBA")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    imported, rows = out.stdout.split()
    assert imported == "False" and int(rows) > 600_000


def test_partial_sample_count_uses_single_precision():
    """ceil(float(x) / L) in C++ is float32: 2^24 + 1 tokens over L = 1 rounds to 2^24."""
    assert sample_count(1, 2**24 + 2, 1, 1, drop_last=False) == 2**24
    assert sample_count(1, 2**24 + 2, 1, 1, drop_last=True) == 2**24 + 1


@pytest.mark.parametrize("split", ["969,30,1", "969, 30, 1", "98,2", "1,0,0", "0.5,0.3,0.2", "3"])
def test_split_matrix_equals_megatron_core(split):
    vector = mcore_config.parse_and_normalize_split(split)
    assert describe.split_vector(split) == vector
    assert describe.split_matrix(vector) == mcore_config.convert_split_vector_to_split_matrix(vector)


@pytest.mark.parametrize("weights", [[0.3, 0.7], [1.0, 1.0, 1.0], [0.1, 0.2, 0.3, 0.15, 0.25]])
def test_samples_per_source_equal_megatron_core(weights):
    w = describe.normalize(weights)
    sizes = [1000003, 3001, 17]
    for surplus in (0.0, 0.005, 0.5):
        got = describe.samples_per_source(w, sizes, surplus)
        assert got == mcore_builder._get_size_per_split_per_dataset(w, sizes, surplus=surplus)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(7, dtype=np.int32)[::-1],
        np.arange(12, dtype=np.int64).reshape(6, 2),
        np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
        np.array([], dtype=np.uint32),
        np.arange(5, dtype=np.int16),
    ],
)
def test_write_npy_writes_the_bytes_numpy_save_writes(tmp_path, array):
    """The oracle is numpy.save itself (what megatron-core calls); the loaded array is the one given."""
    ours, theirs = tmp_path / "ours.npy", tmp_path / "theirs.npy"
    write_npy(str(ours), array)
    np.save(theirs, np.ascontiguousarray(array), allow_pickle=True)
    assert ours.read_bytes() == theirs.read_bytes()
    loaded = np.load(ours)
    assert loaded.dtype == array.dtype and np.array_equal(loaded, array)


@pytest.mark.parametrize(
    ("entries", "longest", "dtype"),
    [(2**31 - 1, 2**31 - 1, np.int32), (2**31, 5, np.int32), (10, 2**31 - 1, np.int64), (10, 2**31, np.int64)],
)
def test_sample_index_type_is_chosen_as_megatron_core_chooses(monkeypatch, entries, longest, dtype):
    """The document-index length at which megatron-core 0.16.1's ``helpers.build_sample_idx`` moves to its int64
    helper, read from its own dispatch: a zero-stride view stands for a document index of ``entries`` entries
    (no memory), and the C++ helpers are replaced by recorders so that nothing walks it."""
    helpers = require_oracle("megatron.core.datasets.helpers")
    chosen = []

    def recorder(dtype):
        def helper(*args):
            chosen.append(dtype)
            return np.zeros((2, 2), dtype=dtype)

        return helper

    monkeypatch.setattr(helpers, "build_sample_idx_int32", recorder(np.int32))
    monkeypatch.setattr(helpers, "build_sample_idx_int64", recorder(np.int64))
    lengths = np.array([5, longest, 3], dtype=dtype)
    doc_index = np.broadcast_to(np.int32(0), (entries,))
    helpers.build_sample_idx(lengths, doc_index, 4, 1, 10, True, True)
    assert sample_index_dtype(lengths, doc_index) == chosen[0]


@pytest.mark.parametrize("numba", [False, True])
def test_an_int64_sample_index_equals_the_cpp_int64_helper(numba):
    """The kernels fill an int64 index (what a document index past 2^31 - 1 entries gets: more than 8 GiB, so
    the end-to-end case cannot run here) as megatron-core's C++ int64 helper does, values and type."""
    rng = np.random.default_rng(11)
    with numba_backend(TRAINING, numba):
        for case in range(100):
            lengths, doc_index, epochs, tokens = _case(rng, int(rng.integers(1, 80)), int(rng.integers(1, 60)))
            seq, extra, drop_last = int(rng.integers(2, 50)), int(rng.integers(0, 2)), bool(rng.integers(0, 2))
            if epochs * tokens - extra < seq and drop_last:
                continue
            want = helpers_cpp.build_sample_idx_int64(lengths, doc_index, seq, epochs, tokens, drop_last, extra)
            count = sample_count(epochs, tokens, seq, extra, drop_last)
            got = np.full((count + 1, 2), -7, dtype=np.int64)
            if numba:
                from pipeline.training_indices.sample_index_numba import fill_sample_index

                fill_sample_index(lengths, doc_index, seq, count, extra, got)
            else:
                sample_index_numpy(lengths, doc_index, seq, count, extra, got, epochs * tokens)
            assert want.dtype == np.int64 and np.array_equal(got, want), (case, seq, extra, drop_last)
