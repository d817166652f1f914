"""The tokenize stage's hot path without Spark: Arrow buffers in, bulk writes out, same bytes as before."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.tokenize.batches import count_special_text, holds_any, utf8_buffers

EOT = "<|endoftext|>"


def _docs(seed: int, n: int, hi: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(hi) for _ in range(rng.choice([0, 1, 3, 50, 700]))] for _ in range(n)]


def _flat(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum([len(d) for d in docs], dtype=np.int64)
    return np.array([t for d in docs for t in d], dtype=np.int32), ends


@pytest.mark.parametrize(("dtype", "hi"), [(np.uint16, 65535), (np.int32, 2**31 - 1)])
def test_add_documents_writes_the_bytes_of_add_document(tmp_path: Path, dtype, hi: int) -> None:
    docs = _docs(1, 300, hi)
    with IndexedDatasetWriter(str(tmp_path / "one"), dtype=dtype, buffer_bytes=4096) as w:
        for d in docs:
            w.add_document(d)
    with IndexedDatasetWriter(str(tmp_path / "bulk"), dtype=dtype, buffer_bytes=4096) as w:
        for lo, up in ((0, 7), (7, 7), (7, 150), (150, 300)):  # several calls, one of them empty
            w.add_documents(*_flat(docs[lo:up]))
        assert w.num_documents == 300 and w.num_tokens == sum(map(len, docs))
    for ext in ("bin", "idx"):
        assert (tmp_path / f"one.{ext}").read_bytes() == (tmp_path / f"bulk.{ext}").read_bytes()
    ds = IndexedDataset(str(tmp_path / "bulk"))
    assert [ds[i].tolist() for i in range(len(docs))] == docs


def test_add_documents_rejects_bad_input_and_names_the_document(tmp_path: Path) -> None:
    prefix = str(tmp_path / "x")
    ids, ends = _flat([[1, 2], [3], [4, 70000, 5]])
    with pytest.raises(ValueError, match=r"token id 70000 does not fit uint16 \[0, 65535\] \(document 2 of"):
        with IndexedDatasetWriter(prefix) as w:
            w.add_documents(ids, ends)
    assert list(tmp_path.iterdir()) == []  # nothing left behind
    with IndexedDatasetWriter(prefix) as w:
        with pytest.raises(ValueError, match="must rise to len"):
            w.add_documents(np.arange(4, dtype=np.int32), np.array([2, 3]))
        with pytest.raises(ValueError, match="must rise to len"):
            w.add_documents(np.arange(4, dtype=np.int32), np.array([3, 2, 4]))
        with pytest.raises(ValueError, match="must be integers"):
            w.add_documents(np.array([1.5]), np.array([1]))
        with pytest.raises(ValueError, match="without document ends"):
            w.add_documents(np.arange(2, dtype=np.int32), np.array([], dtype=np.int64))
        assert w.num_documents == 0


@pytest.mark.parametrize("large", [False, True])
def test_utf8_buffers_are_the_texts_bytes(large: bool) -> None:
    texts = ["ab", None, "cdé 日本", "", f"x{EOT}y", None, "🙂" * 5]
    column = pa.array(texts, pa.large_string() if large else pa.string())
    for sliced in (column, column[1:], column[3:5], column[7:]):
        data, offsets = utf8_buffers(sliced)
        assert offsets.dtype == np.int64 and offsets.size == len(sliced) + 1
        got = [bytes(data[a:b]).decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        assert got == [t or "" for t in sliced.to_pylist()]
    chunked = pa.chunked_array([pa.array(["a", "b"]), pa.array([None, "d"])])
    data, offsets = utf8_buffers(chunked)
    assert bytes(data[offsets[0] : offsets[-1]]) == b"abd" and offsets.tolist() == [0, 1, 2, 2, 3]


def test_utf8_buffers_reject_invalid_utf8_and_non_strings() -> None:
    bad = pa.Array.from_buffers(
        pa.string(), 2, [None, pa.py_buffer(np.array([0, 1, 3], np.int32).tobytes()), pa.py_buffer(b"a\xc3\x28")]
    )
    with pytest.raises(ValueError, match="invalid UTF-8"):
        utf8_buffers(bad)
    with pytest.raises(ValueError, match="must be a string column"):
        utf8_buffers(pa.array([b"raw"], pa.binary()))


def test_count_special_text_matches_python() -> None:
    rng = random.Random(3)
    pieces = ["a", " ", EOT, "<|endoftext", "|>", "<|pad|>", "é"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(6))) for _ in range(400)] + [None]
    column = pa.array(texts)
    for specials in ((EOT,), (EOT, "<|pad|>"), ()):
        expected = sum(1 for t in texts if t and any(s in t for s in specials))
        assert count_special_text(column, specials) == expected
        data, offsets = utf8_buffers(column)
        assert count_special_text(column, specials, data[offsets[0] : offsets[-1]].tobytes()) == expected
        assert count_special_text(column, specials, data[offsets[0] : offsets[-1]]) == expected  # searched in place
    plain = pa.array(["no special", "here <|endoftext", None])
    assert count_special_text(plain, (EOT,), b"no specialhere <|endoftext") == 0
    assert count_special_text(plain, (EOT,), np.frombuffer(b"no specialhere <|endoftext", np.uint8)) == 0
    assert count_special_text(pa.array(["a.b", "a*b"]), ("a.b",), b"a.ba*b") == 1  # a literal, not a pattern


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_holds_any_agrees_with_bytes_containment(seed: int) -> None:
    """The one-pass search for many needles against Python's own ``in``: needles sharing their first bytes, one
    the prefix of another, regex metacharacters, at the very end, in a view at an offset."""
    rng = random.Random(seed)
    pool = [EOT.encode(), b"<|pad|>", b"<|", b"|>", "日本".encode(), b"aaab", b"abab", b"ab", b"<a>", b"</a>", b"e"]
    pool.append(b"a.b")
    for _ in range(400):
        needles = rng.sample(pool, rng.randrange(1, 5))
        hay = bytes(rng.choice(b"ab<|>e/. \xe6") for _ in range(rng.randrange(40)))
        if rng.random() < 0.5:
            needle = rng.choice(needles)
            at = rng.randrange(len(hay) + 1)
            hay = hay[:at] + needle[: rng.randrange(len(needle) + 1)] + hay[at:]  # often a prefix only
        data = np.frombuffer(hay, dtype=np.uint8)
        assert holds_any(data, needles) == any(n in hay for n in needles), (hay, needles)
        assert holds_any(data[1:], needles) == any(n in hay[1:] for n in needles)
        assert holds_any(hay, needles) == any(n in hay for n in needles)
    assert not holds_any(np.zeros(0, np.uint8), [b"xy"]) and not holds_any(np.zeros(1, np.uint8), [b"xy"])
    assert holds_any(np.zeros(0, np.uint8), [b""]) and not holds_any(b"abc", [])


@pytest.mark.parametrize(
    ("dtype", "ids", "bad"),
    [
        (np.uint16, np.array([5, -1, 7], np.int32), -1),  # negative: caught by the unsigned view's max
        (np.uint16, np.array([5, 65536], np.int32), 65536),
        (np.uint16, np.array([2**40], np.int64), 2**40),
        (np.uint16, np.array([3, -(2**63)], np.int64), -(2**63)),
        (np.uint16, np.array([70000], np.uint32), 70000),
        (np.int32, np.array([1, 2**31], np.int64), 2**31),
        (np.int32, np.array([-(2**31) - 1], np.int64), -(2**31) - 1),
        (np.uint8, np.array([-1], np.int8), -1),  # same width: the unsigned view would read 255
        (np.uint16, np.array([-1], np.int16), -1),
    ],
)
def test_add_documents_range_check_per_input_type(tmp_path: Path, dtype, ids: np.ndarray, bad: int) -> None:
    """Out of range ids of every integer input type are refused, never wrapped; ids that fit are written."""
    with IndexedDatasetWriter(str(tmp_path / "x"), dtype=dtype) as w:
        with pytest.raises(ValueError, match=f"token id {bad} does not fit"):
            w.add_documents(ids, np.array([ids.size]))
        w.add_documents(np.array([0, np.iinfo(dtype).max], dtype=np.int64), np.array([2]))  # the extremes fit
    assert IndexedDataset(str(tmp_path / "x"))[0].tolist() == [0, int(np.iinfo(dtype).max)]
