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
# document-index entries per process on the numpy path before the compiled loop (which costs a numba load)
NUMBA_AFTER = 30_000_000
BLOCK = 1 << 16  # stream positions per block of the numpy sample index (its temporaries stay in cache)
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
    # an int32 length never passes int32: read the lengths only when they are wider
    wide = lengths.size and lengths.dtype.itemsize > 4
    largest = max(int(doc_index.shape[0]), int(lengths.max()) if wide else 0)
    return np.dtype(np.int32 if largest <= INT32_MAX else np.int64)


def sample_index_numpy(
    lengths: np.ndarray,
    doc_index: np.ndarray,
    sequence_length: int,
    count: int,
    extra: int,
    out: np.ndarray,
    total: int | None = None,
) -> None:
    """Vectorised: row ``s`` is the document holding token ``s * L + extra - 1`` of the stream and ``s * L``'s
    offset in it; a last partial sample past the end stops at the last document's end minus ``extra``.

    The stream runs in blocks of ``BLOCK`` positions whose temporaries stay in the CPU's cache. Position ``i``
    ends at token ``end_i`` (a running sum); sample ``s`` starts in the first position with
    ``q_i = (end_i - extra) // L + 1 > s``, i.e. its row is the number of positions with ``q_i <= s`` (a count
    per quotient, then a running sum). ``total``, the stream's tokens when the caller knows them (epochs x tokens
    per epoch), is checked at the end; without it a pass sums them first."""
    out[0] = 0
    if count == 0:
        return
    n = int(doc_index.shape[0])
    if total is None:
        total = int(np.sum(np.take(lengths, doc_index), dtype=np.int64))
    # int32 sums are exact while the stream and every key fit: half the memory traffic of int64
    dtype = np.dtype(np.int32 if total + sequence_length + extra <= INT32_MAX else np.int64)
    starts = np.empty(min(n, BLOCK) + 1, dtype=dtype)  # starts[j]: where position a + j of the block starts
    quotient = np.empty(min(n, BLOCK), dtype=dtype)
    carry = 0  # tokens before the block
    first = 1  # the first sample whose row is not written yet
    for a in range(0, n, BLOCK):
        m = min(n, a + BLOCK) - a
        ends = starts[1 : m + 1]
        if lengths.dtype == dtype:
            np.take(lengths, doc_index[a : a + m], out=ends)
        else:
            ends[:] = np.take(lengths, doc_index[a : a + m])
        starts[0] = carry
        ends[0] += carry
        np.cumsum(ends, out=ends)
        carry = int(ends[-1])
        # the samples s in [first, stop) start in this block: q_{a-1} <= s < q_{a+m-1}
        stop = min(count + 1, (carry - extra) // sequence_length + 1)
        if stop <= first:
            continue
        q = quotient[:m]
        np.add(ends, sequence_length - extra - first * sequence_length, out=q)
        q //= sequence_length  # q_i - first; below 0: counted for every sample from first on
        np.maximum(q, 0, out=q)
        rows = np.cumsum(np.bincount(q)[: stop - first])  # per sample: positions of the block with q_i <= s
        offsets = starts.take(rows)  # where the sample's document starts
        np.subtract(np.arange(first, stop, dtype=dtype) * sequence_length, offsets, out=offsets)
        rows += a
        out[first:stop, 0] = rows
        out[first:stop, 1] = offsets
        first = stop
    if carry != total:
        raise PipelineError(f"the document index holds {carry} tokens, not the {total} of its epochs")
    if first <= count:  # a last partial sample: the last document's end minus extra
        out[first:, 0] = n - 1
        out[first:, 1] = int(lengths[doc_index[n - 1]]) - extra


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
        sample_index_numpy(lengths, doc_index, sequence_length, count, extra, out, epochs * tokens_per_epoch)
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
