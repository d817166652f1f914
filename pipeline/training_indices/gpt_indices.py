"""A GPTDataset's three indices from its documents' lengths alone (docs/training_indices.md, The indices).

* epochs: the fewest passes over the split's tokens ``T`` that give ``samples * L + extra`` tokens;
  with several, the last is shuffled on its own when it contributes fewer than 80 % of an epoch's samples.
* ``document_index`` (int32): the split's documents once per epoch, shuffled by
  ``numpy.random.RandomState(seed)`` (the full epochs together, then the last one).
* ``sample_index`` ((S + 1) x 2, int32 unless the document index or a length passes int32): where each
  sample starts, as (position in ``document_index``, token offset); sample ``s`` reads ``L + extra`` tokens
  from there and the next starts ``L`` tokens later.
* ``shuffle_index`` (uint32, int64 from 2^32 - 1 samples): the samples shuffled by the same random state
  (the samples before the separate last epoch, then those after).

The shuffles call numpy's ``RandomState.shuffle`` itself, in megatron-core's order, so the same draws
happen (on int64 copies: :func:`shuffled`). The sample index is vectorised numpy; a process moves to the
compiled loop (:mod:`.sample_index_numba`, switch ``PIPELINE_TRAINING_NUMBA``) after ``NUMBA_AFTER``
document-index entries, when loading numba pays off (docs/training_indices.md, The indices).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.errors import PipelineError
from pipeline.numba_backend import TRAINING

INT32_MAX = int(np.iinfo(np.int32).max)
UINT32_MAX = int(np.iinfo(np.uint32).max)
# document-index entries per process on the numpy path before the compiled loop: numpy takes ~20 ns more per
# entry, loading numba ~0.6 s
NUMBA_AFTER = 30_000_000
FINAL_EPOCH_THRESHOLD = 0.80  # a last epoch giving fewer samples than this share of an epoch is shuffled apart


@dataclass(frozen=True)
class GptIndices:
    """The three arrays and the figures they came from."""

    document_index: np.ndarray
    sample_index: np.ndarray
    shuffle_index: np.ndarray
    epochs: int
    tokens_per_epoch: int
    separate_final_epoch: bool


def num_epochs(tokens_per_epoch: int, num_samples: int, sequence_length: int, extra: int) -> int:
    """Passes over the split needed for ``num_samples`` samples (at least 1)."""
    wanted = num_samples * sequence_length + extra
    if tokens_per_epoch >= wanted:
        return 1
    if tokens_per_epoch <= 0:
        raise PipelineError(f"the split has no tokens but {num_samples} samples are asked of it")
    return -(-wanted // tokens_per_epoch)


def shuffled(values: np.ndarray, rng: np.random.RandomState, dtype: type) -> np.ndarray:
    """``rng.shuffle`` of a 1-D array (in place when it is int64), returned as ``dtype``. The draws and swaps do
    not depend on the item size, and numpy swaps 8-byte items on a faster path: shuffled as int64, then cast."""
    wide = values if values.dtype == np.int64 else values.astype(np.int64)
    rng.shuffle(wide)
    return wide.astype(dtype)


def document_index(documents: np.ndarray, epochs: int, rng: np.random.RandomState, separate: bool) -> np.ndarray:
    """The split's documents ``epochs`` times, shuffled (the last epoch on its own when ``separate``)."""
    if separate and epochs > 1:
        first = document_index(documents, epochs - 1, rng, False)
        last = document_index(documents, 1, rng, False)
        return np.concatenate((first, last))
    return shuffled(np.tile(documents, epochs), rng, np.int32)


def shuffle_index(first: int, total: int, rng: np.random.RandomState) -> np.ndarray:
    """``[0, first)`` shuffled, then ``[first, total)`` shuffled (uint32; int64 from ``2^32 - 2`` samples)."""
    dtype = np.int64 if total >= UINT32_MAX - 1 else np.uint32
    head = shuffled(np.arange(0, first, dtype=np.int64), rng, dtype)
    if first == total:
        return head
    return np.concatenate((head, shuffled(np.arange(first, total, dtype=np.int64), rng, dtype)))


def sample_count(epochs: int, tokens_per_epoch: int, sequence_length: int, extra: int, drop_last: bool) -> int:
    """Samples in the sample index: whole ones, or with a last partial one (the C++ helper's float division)."""
    tokens = epochs * tokens_per_epoch - extra
    if drop_last:
        return tokens // sequence_length
    return int(np.ceil(np.float32(tokens) / np.float32(sequence_length)))


def sample_index_dtype(lengths: np.ndarray, doc_index: np.ndarray) -> np.dtype:
    """int32 while the document index's length and every length fit int32, else int64."""
    largest = max(int(doc_index.shape[0]), int(lengths.max()) if lengths.size else 0)
    return np.dtype(np.int32 if largest <= INT32_MAX else np.int64)


def sample_index_numpy(
    lengths: np.ndarray, doc_index: np.ndarray, sequence_length: int, count: int, extra: int, out: np.ndarray
) -> None:
    """Vectorised: row ``s`` is the document holding token ``s * L + extra - 1`` of the stream and ``s * L``'s
    offset in it; a last partial sample past the end stops at the last document's end minus ``extra``."""
    out[0] = 0
    if count == 0:
        return
    stream = np.take(lengths, doc_index)  # each position's length, in stream order
    total = int(np.sum(stream, dtype=np.int64))
    # int32 sums are exact while the stream and the last key fit: half the memory traffic of int64
    dtype = np.int32 if total + sequence_length + extra <= INT32_MAX else np.int64
    ends = np.cumsum(stream, dtype=dtype)  # token position after each document of the stream
    # sample s starts in the first document ending past token s * L + extra - 1: the number of ends below
    # s * L + extra, i.e. of ends with (end - extra) // L < s (a count per quotient, then a running sum)
    quotient = ends + (sequence_length - extra)  # (end - extra) // L + 1, from 0 up
    quotient //= sequence_length
    rows = np.cumsum(np.bincount(quotient, minlength=count + 2)[: count + 1])[1:]
    past = rows >= doc_index.shape[0]
    rows[past] = doc_index.shape[0] - 1
    offsets = np.arange(1, count + 1, dtype=dtype)
    offsets *= sequence_length  # s * L ...
    offsets -= ends.take(rows)  # ... minus where its document starts in the stream
    offsets += stream.take(rows)
    offsets[past] = int(stream[-1]) - extra
    out[1:, 0] = rows
    out[1:, 1] = offsets


def sample_index(
    lengths: np.ndarray,
    doc_index: np.ndarray,
    sequence_length: int,
    epochs: int,
    tokens_per_epoch: int,
    drop_last: bool,
    extra: int,
) -> np.ndarray:
    """The (S + 1) x 2 sample index (module doc)."""
    count = sample_count(epochs, tokens_per_epoch, sequence_length, extra, drop_last)
    out = np.empty((count + 1, 2), dtype=sample_index_dtype(lengths, doc_index))
    if TRAINING.use("sample_index", int(doc_index.shape[0]), after=NUMBA_AFTER):
        # lazy: importing numba and loading the compiled loop costs seconds; the numpy path never pays it
        from pipeline.training_indices.sample_index_numba import fill_sample_index

        fill_sample_index(lengths, doc_index, sequence_length, count, extra, out)
    else:
        sample_index_numpy(lengths, doc_index, sequence_length, count, extra, out)
    return out


def build_gpt_indices(
    lengths: np.ndarray,
    documents: tuple[int, int],
    num_samples: int,
    *,
    sequence_length: int,
    seed: int,
    extra: bool = True,
    drop_last: bool = True,
) -> GptIndices:
    """The indices of the documents ``[beg, end)`` of a dataset whose sequence lengths are ``lengths`` (int32)."""
    beg, end = documents
    add = int(extra)
    tokens = int(np.sum(lengths[beg:end], dtype=np.int64))
    epochs = num_epochs(tokens, num_samples, sequence_length, add)
    separate = False
    before_last = 0
    if epochs > 1:
        before_last = ((epochs - 1) * tokens - add) // sequence_length
        from_last = num_samples - before_last
        per_epoch = (tokens - add) // sequence_length
        if not 0 <= from_last <= per_epoch + 1:
            raise PipelineError(f"last epoch would give {from_last} samples of {per_epoch} per epoch")
        separate = from_last < int(FINAL_EPOCH_THRESHOLD * per_epoch)
    rng = np.random.RandomState(seed)
    docs = document_index(np.arange(beg, end, dtype=np.int64), epochs, rng, separate)
    samples = sample_index(lengths, docs, sequence_length, epochs, tokens, drop_last, add)
    total = samples.shape[0] - 1
    shuffled = shuffle_index(before_last if separate else total, total, rng)
    return GptIndices(docs, samples, shuffled, epochs, tokens, separate)
