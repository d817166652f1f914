"""The numba SHA-1 kernels (multi-buffer lanes and the scalar path) equal ``hashlib`` (issue #16)."""

from __future__ import annotations

import hashlib
import random
import struct

import numpy as np
import pytest

from tests.oracles import require_oracle

require_oracle("numba")

from pipeline.dedup import sha1_numba  # noqa: E402
from pipeline.dedup.hashes import _codepoints  # noqa: E402
from pipeline.dedup.shingles_numba import utf8_units, word_table  # noqa: E402


def hash32(data: bytes) -> int:
    """datasketch's ``sha1_hash32``: the first 4 digest bytes, little-endian."""
    return int(struct.unpack("<I", hashlib.sha1(data).digest()[:4])[0])


def packed(msgs: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ends = np.cumsum([len(m) for m in msgs], dtype=np.int64)
    return np.frombuffer(b"".join(msgs), dtype=np.uint8), ends - np.array([len(m) for m in msgs], np.int64), ends


@pytest.mark.parametrize("count", [1, sha1_numba.LANES - 1, sha1_numba.LANES, sha1_numba.LANES + 1, 3 * 201])
def test_slices_equal_hashlib_every_length(count):
    """Lengths 0..200 (one and several blocks, the 55/56 and 119/120 padding edges), shuffled so lane
    groups mix short and long messages and the last group is partly filled; the final messages sit at the
    buffer's end, where the lanes cannot read 56 bytes ahead."""
    rng = random.Random(count)
    lengths = [n % 201 for n in range(count)]
    rng.shuffle(lengths)
    msgs = [rng.randbytes(n) for n in lengths]
    got = sha1_numba.sha1_slices(*packed(msgs))
    assert got.dtype == np.uint32
    assert got.tolist() == [hash32(m) for m in msgs]


def test_slices_on_every_byte_value_and_offset():
    """All-0xFF and all-0x00 bytes (no sign or carry slips), 0x80 bytes like the padding marker, and
    messages that start at every offset mod 4 of a shared buffer with trailing bytes after them."""
    msgs = [b"\xff" * n for n in range(0, 70)] + [b"\x00" * n for n in range(0, 70)] + [b"\x80" * n for n in range(60)]
    buf = b"".join(msgs) + b"\xff" * 100
    ends = np.cumsum([len(m) for m in msgs], dtype=np.int64)
    lo = ends - np.array([len(m) for m in msgs], np.int64)
    got = sha1_numba.sha1_slices(np.frombuffer(buf, dtype=np.uint8), lo, ends)
    assert got.tolist() == [hash32(m) for m in msgs]
    assert sha1_numba.sha1_slices(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)


def test_scalar_kernel_equals_hashlib():
    rng = random.Random(5)
    w = np.empty(80, np.uint32)
    for n in [*range(0, 201), 1000, 4096]:
        data = rng.randbytes(n)
        buf = np.frombuffer(b"ab" + data + b"cd", dtype=np.uint8)
        assert int(sha1_numba.sha1_hash32(buf, 2, 2 + n, w)) == hash32(data), n


@pytest.mark.parametrize("ngram", [1, 3, 5, 13])
def test_windows_of_real_text_equal_hashlib(ngram):
    """Every K-gram window of real-looking Unicode text, against hashlib on the same bytes."""
    rng = random.Random(ngram)
    vocab = ["the", "of", "naïve", "日本語のテキスト", "σίσυφος", "x", "supercalifragilistic", "😀", "42", "a_b"]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 80))) for _ in range(60)]
    buf, lo, hi, unit_off = utf8_units(*_codepoints(texts), word_table(), False)
    hashes, win_off = sha1_numba.sha1_windows(buf, lo, hi, unit_off, ngram)
    data = bytes(buf)
    expected, offsets = [], [0]
    for d in range(len(texts)):
        first, n = unit_off[d], unit_off[d + 1] - unit_off[d]
        width = min(n, ngram)
        starts = range(n - ngram + 1) if n >= ngram else range(min(n, 1))
        expected += [hash32(data[lo[first + k] : hi[first + k + width - 1]]) for k in starts]
        offsets.append(len(expected))
    assert hashes.tolist() == expected
    assert win_off.tolist() == offsets
    assert max(hi[u + 12] - lo[u] for u in range(len(lo) - 12)) > 55  # some 13-grams need two blocks
