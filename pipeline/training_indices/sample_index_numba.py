"""The compiled sample-index loop; imported only when the training numba backend is on (:mod:`.gpt_indices`)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def fill_sample_index(lengths, doc_index, sequence_length, count, extra, out):  # noqa: ANN001, ANN201
    """Rows 0..count of ``out``: walk the document stream, ``sequence_length`` tokens per sample, each sample
    reading ``extra`` more; a last partial sample stops at the last document's end minus ``extra``."""
    last = doc_index.shape[0] - 1
    row = 0
    offset = 0
    out[0, 0] = 0
    out[0, 1] = 0
    for s in range(1, count + 1):
        remaining = sequence_length + extra
        while remaining != 0:
            length = lengths[doc_index[row]] - offset
            remaining -= length
            if remaining <= 0:
                offset += remaining + length - extra
                remaining = 0
            elif row == last:
                offset = lengths[doc_index[row]] - extra
                break
            else:
                row += 1
                offset = 0
        out[s, 0] = row
        out[s, 1] = offset
