"""FineWeb's compiled line kernels (pipeline/filter/rules/line_counts_numba.py) against facts computed from Python
strings the way datatrove 0.10.1's ``FineWebQualityFilter`` computes them (its line split, its ``find_duplicates``), on
real documents in many scripts (translation catalogues, sources, Debian docs, the fixtures) and on edge cases: Unicode
whitespace lines, CRLF, astral characters, non-ASCII terminal punctuation; and the filter's compiled and Python
paths giving the same results."""

from __future__ import annotations

import gettext
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.filter.outcome import text_bytes
from pipeline.filter.rules.fineweb import FineWebFilter
from pipeline.numba_backend import FILTER
from pipeline.text.chars import space_table, table_of
from pipeline.text.punctuation import TERMINAL_PUNCTUATION
from tests.filter_corpus import edge_cases, real_documents
from tests.oracles import require_oracle

dt_repetition = require_oracle("datatrove.pipeline.filters.gopher_repetition_filter")
require_oracle("numba")  # the compiled kernels: a failure in CI when it does not import

EDGES = [
    "",
    "\n",
    "one line",
    "a.\n\n \n\t\nb!\r\nc?\r\n",
    "\u3000\n\u00a0 \n\u2028\n\x85\n\x1c\x1d\nword\u3000\n",  # lines of Unicode whitespace only are blank
    "中文句子。\n另一行！\n第三行\n中文句子。\n",
    "😀 emoji line😀\n𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral.\n😀 emoji line😀\n",
    "ends in a Devanagari danda।\nArabic question؟\nEthiopic full stop።\n",
    "dup\ndup\ndup\n dup\ndup \n\n\ndup\n",
    "x" * 40 + "\n" + "y" * 30 + "\n" + "é" * 30 + "\n" + "é" * 31 + ".\n",
    "trailing newlines\n\n\n",
    "\n\nleading newlines.",
]


def _catalogue_texts(every: int = 40) -> list[str]:
    """Translated strings of every ``every``-th translation catalogue under /usr/share/locale, one text each."""
    texts = []
    for path in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo"))[::every]:
        try:
            with open(path, "rb") as handle:
                catalogue = gettext.GNUTranslations(handle)
        except (OSError, UnicodeDecodeError, IndexError, ValueError):
            continue
        texts.append("\n".join(v for k, v in sorted(catalogue._catalog.items(), key=lambda kv: str(kv[0])) if k))
    return [t[:20_000] for t in texts if t.strip()]


@pytest.fixture(scope="module")
def texts(shared_fixtures) -> list[str]:
    docs = [text for _, text in real_documents(shared_fixtures, per_kind=30_000) + edge_cases()]
    catalogues = _catalogue_texts()
    assert sum(not t.isascii() for t in catalogues) > 10, "too few non-ASCII catalogues on this machine"
    return docs + catalogues + EDGES


def _expected(text: str, stop: tuple[str, ...], limit: int) -> tuple[int, int, int, int, int]:
    """What datatrove's filter computes: non-blank lines, those ending in ``stop``, those of at most ``limit``
    characters, the text's characters less its newlines, and ``find_duplicates``' duplicated characters."""
    lines = [line for line in text.split("\n") if line.strip() != ""]
    ended = sum(1 for line in lines if line.endswith(stop))
    short = sum(1 for line in lines if len(line) <= limit)
    return len(lines), ended, short, len(text.replace("\n", "")), dt_repetition.find_duplicates(lines)[1]


@pytest.mark.parametrize("stop", [tuple(TERMINAL_PUNCTUATION), (".", "。", "😀")], ids=["terminal", "few"])
def test_line_kernels_count_as_datatrove_s_line_rules(texts, stop):
    from pipeline.filter.rules import line_counts_numba

    batch = pa.RecordBatch.from_pydict({"text": pa.array(texts, pa.string())})
    data, offsets = text_bytes(batch)
    counts = np.zeros((len(texts), 4), dtype=np.int64)
    line_counts_numba.line_counts(data, offsets, table_of(stop), space_table(), 30.0, counts)
    repeated = np.zeros(len(texts), dtype=np.int64)
    line_counts_numba.duplicate_chars(data, offsets, np.arange(len(texts)), space_table(), repeated)
    expected = [_expected(t, stop, 30) for t in texts]
    got = [(*row, dup) for row, dup in zip(counts.tolist(), repeated.tolist(), strict=True)]
    wrong = [(t[:60], e, g) for t, e, g in zip(texts, expected, got, strict=True) if tuple(g) != e]
    assert not wrong, wrong[:3]
    assert sum(e[4] > 0 for e in expected) > 20  # duplicated lines
    assert sum(e[0] != len(t.split("\n")) for e, t in zip(expected, texts, strict=True)) > 20  # blank lines


def test_text_bytes_of_a_sliced_batch_with_nulls():
    """The bytes and offsets of a sliced column with nulls and of a large_string column are each text's UTF-8."""
    texts = ["a\nb", None, "é😀", "", "last"]
    for kind in (pa.string(), pa.large_string()):
        batch = pa.RecordBatch.from_pydict({"text": pa.array(texts, kind)}).slice(1, 4)
        data, offsets = text_bytes(batch)
        got = [data[a:b].tobytes().decode() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        assert got == [t or "" for t in texts[1:]]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"line_punct_thr": 0.5, "line_punct_exclude_zero": True, "short_line_length": 50, "new_line_ratio": 0.1}],
)
def test_compiled_and_python_paths_give_the_same_results(texts, kwargs):
    batch = pa.RecordBatch.from_pydict({"text": pa.array(texts, pa.string())})
    previous = FILTER.set(False)
    try:
        python = FineWebFilter(**kwargs).apply(batch)
        FILTER.set(True)
        compiled = FineWebFilter(**kwargs).apply(batch)
    finally:
        FILTER.set(previous)
    assert compiled.keep.tolist() == python.keep.tolist()
    assert compiled.reason == python.reason and compiled.detail == python.detail
    for key, values in python.measures.items():
        np.testing.assert_array_equal(compiled.measures[key], values, err_msg=key)
    assert len(set(python.reason)) >= 4
