"""Our reading of lid.176.ftz and our predict against fastText's own predict (fasttext-predict) on the same model and
lines: the same labels in the same order for ``k=-1``, every probability within 1e-6; the FNV-1a hash against its
published test vectors and the signed-char rule computed here; a model we do not run falls back to fastText."""

from __future__ import annotations

import ctypes
import inspect
import itertools
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.errors import UsageError
from pipeline.fasttext import model as fasttext_model
from pipeline.fasttext.predict import FastTextPredictor, fnv1a
from pipeline.filter.rules.language import LanguageFilter
from tests.oracles import require_oracle
from tests.unit.filter.test_filter_language import _model_path, catalogue_documents

fasttext = require_oracle("fasttext")
TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def model_path() -> str:
    return _model_path()


@pytest.fixture(scope="module")
def oracle(model_path: str):
    return fasttext.load_model(model_path)


@pytest.fixture(scope="module")
def lines(shared_fixtures: Path) -> list[str]:
    """Catalogue documents in dozens of languages, German and English prose, source code, and lines with fastText's
    tokenisation corners: its whitespace set (not Python's), ``</s>`` inside a line, labels, a word of 1000+ bytes."""
    german = (shared_fixtures / "german.txt").read_text(encoding="utf-8")[:6000]
    english = (shared_fixtures / "corpus.en").read_text(encoding="utf-8")[:6000]
    texts = [t for _, t in catalogue_documents()] + [german[i : i + 1500] for i in range(0, 6000, 1500)]
    texts += [english[i : i + 1500] for i in range(0, 6000, 1500)] + [inspect.getsource(json)[:3000]]
    corners = [
        "",
        " ",
        "42",
        "🙂 🙂",
        "Guten Tag </s> the rest is never read",
        "</s>",
        "__label__en __label__de Bonjour tout le monde",
        "__label__xx",
        "nbsp\xa0joins words\u3000ideographic\u2003em space",
        "unit\x1fseparator \x85next line\u2028line separator",
        "nul\x00splits tab\tsplits\vvertical\fform\rreturn",
        "x" * 1200 + " " + "ü" * 700,
        "日本語のテキストです。これは言語識別のテストです。",
        "Ελληνικά κείμενα για τη δοκιμή",
    ]
    return [t.replace("\n", " ") for t in texts] + corners


def _theirs(oracle, line: str, threshold: float = 0.0) -> list[tuple[float, str]]:
    labels, probs = oracle.predict(line, k=-1, threshold=threshold, on_unicode_error="replace")
    return [(float(p), label.removeprefix("__label__")) for label, p in zip(labels, probs, strict=True)]


def _same(ours: list[tuple[float, str]], theirs: list[tuple[float, str]]) -> bool:
    return [label for _, label in ours] == [label for _, label in theirs] and all(
        abs(a - b) <= TOLERANCE for (a, _), (b, _) in zip(ours, theirs, strict=True)
    )


def test_fnv1a_published_vectors_and_signed_bytes() -> None:
    assert [fnv1a(b""), fnv1a(b"a"), fnv1a(b"foobar")] == [0x811C9DC5, 0xE40C292C, 0xBF9CF968]  # FNV's test vectors
    for text in ("é", "日本", "<ü>"):
        h = 2166136261
        for byte in text.encode("utf-8"):  # fastText: h ^ uint32_t(int8_t(c))
            h = ((h ^ ctypes.c_uint32(ctypes.c_int8(byte).value).value) * 16777619) % 2**32
        assert fnv1a(text.encode("utf-8")) == h
        assert h != _plain_fnv1a(text.encode("utf-8"))  # the quirk matters for bytes >= 0x80


def _plain_fnv1a(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) % 2**32
    return h


def test_the_model_file_is_read_whole(model_path: str, oracle, capsys: pytest.CaptureFixture[str]) -> None:
    model = fasttext_model.load(model_path)
    with capsys.disabled():
        print(f"\nlid.176.ftz args: {model.args}")
    args = model.args
    assert (args["loss"], args["word_ngrams"], args["minn"], args["maxn"]) == ("hs", 1, 2, 4)
    assert model.prune is not None and model.input.shape == (len(model.words) + len(model.prune), args["dim"])
    assert model.output.shape == (len(model.labels), args["dim"]) and len(model.labels) == 176  # lid.176: 176 languages
    assert model.words[0] == "</s>" and all(0 <= v < len(model.prune) for v in model.prune.values())
    assert all(0 <= k < int(args["bucket"]) for k in model.prune)
    returned = {label for label, _ in zip(*oracle.predict("Hello world, bonjour, hallo, hola", k=-1), strict=True)}
    assert returned <= set(model.labels)


def test_predict_equals_fasttext_on_every_line(lines: list[str], model_path: str, oracle) -> None:
    """k=-1: every label fastText returns, in its order, with its probability; the filter's top label too."""
    predictor = FastTextPredictor(fasttext_model.load(model_path))
    differ = [i for i, line in enumerate(lines) if not _same(predictor.predict(line, -1), _theirs(oracle, line))]
    assert differ == []
    probs, reached = predictor.probabilities(lines)  # all lines in one call, the cache now warm
    for i, line in enumerate(lines):
        theirs = dict((label, p) for p, label in _theirs(oracle, line))
        ours = {predictor.labels[j]: float(probs[i, j]) for j in np.flatnonzero(reached[i])}
        assert ours.keys() == theirs.keys()
        assert all(abs(ours[label] - theirs[label]) <= TOLERANCE for label in ours)


@pytest.mark.parametrize("threshold", [0.05, 0.3])
def test_threshold_prunes_as_fasttext_does(lines: list[str], model_path: str, oracle, threshold: float) -> None:
    predictor = FastTextPredictor(fasttext_model.load(model_path))
    assert all(_same(predictor.predict(x, -1, threshold), _theirs(oracle, x, threshold)) for x in lines)


def test_a_small_cache_starts_again_and_gives_the_same(lines: list[str], model_path: str, oracle) -> None:
    predictor = FastTextPredictor(fasttext_model.load(model_path), max_words=50, group_chars=2000)
    probs, reached = predictor.probabilities(lines)
    again, _ = predictor.probabilities(lines[::-1])
    np.testing.assert_array_equal(again[::-1], probs)
    assert len(predictor._slots) < 3000  # it was cleared on the way (the lines hold far more distinct words)
    for i in range(0, len(lines), 7):
        theirs = _theirs(oracle, lines[i])
        if theirs:
            j = predictor.labels.index(theirs[0][1])
            assert reached[i, j] and abs(float(probs[i, j]) - theirs[0][0]) <= TOLERANCE


@pytest.mark.parametrize("compiled", [True, False])
def test_word_ngrams_as_fasttext(tmp_path: Path, model_path: str, lines: list[str], switch, compiled: bool) -> None:
    """lid.176 with word bigrams, then trigrams, set in its args header (its pruned buckets then hold word n-gram
    rows too): our predictor, compiled and numpy, gives fastText's labels and probabilities for the same file."""
    data = bytearray(Path(model_path).read_bytes())
    ngrams_at = 8 + 5 * 4  # magic, version, then dim ws epoch minCount neg
    assert int.from_bytes(data[ngrams_at : ngrams_at + 4], "little") == 1
    switch.set(compiled)
    for n in (2, 3):
        data[ngrams_at : ngrams_at + 4] = n.to_bytes(4, "little")
        path = tmp_path / f"ngrams-{n}.ftz"
        path.write_bytes(bytes(data))
        predictor = FastTextPredictor(fasttext_model.load(str(path)))
        oracle = fasttext.load_model(str(path))
        for line in lines[::3] + ["", "__label__en hello world", "one </s> two", "naïve café 東京"]:
            assert _same(predictor.predict(line, -1), _theirs(oracle, line)), (n, line)
        texts = [t for _, t in catalogue_documents()][:40]
        result = LanguageFilter(model_path=str(path), min_score=0.3).apply(pa.RecordBatch.from_pydict({"text": texts}))
        expected = [oracle.predict(t.replace("\n", " "), k=1) for t in texts]
        want = [labels[0].removeprefix("__label__") for labels, _ in expected]
        assert result.columns["language"].to_pylist() == want
        scores = result.columns["language_score"].to_numpy()
        assert np.abs(scores - np.array([probs[0] for _, probs in expected])).max() <= TOLERANCE


def test_a_cut_model_file_names_the_key(tmp_path: Path, model_path: str) -> None:
    cut = tmp_path / "cut.ftz"
    cut.write_bytes(Path(model_path).read_bytes()[:5000])
    with pytest.raises(UsageError, match="model_path") as error:
        LanguageFilter(model_path=str(cut)).apply(pa.RecordBatch.from_pydict({"text": ["hello"]}))
    assert "\n" not in str(error.value) and "ends inside" in str(error.value)


def test_python_split_is_used_only_where_it_equals_fastText() -> None:
    """words_of takes str.split() unless the line holds a character it splits on and fastText does not (or \\0)."""
    import sys

    from pipeline.fasttext.predict import NOT_PY_SPLIT, words_of

    separators = [c for c in map(chr, range(sys.maxunicode + 1)) if len(f"a{c}b".split()) == 2]
    assert len(separators) > 6
    assert all(c in " \t\n\v\f\r" or NOT_PY_SPLIT.search(c) for c in separators)
    assert words_of("a\xa0b c\x00d") == ["a\xa0b", "c", "d", "</s>"]


@pytest.fixture
def switch():
    """The FILTER numba switch, restored after the test."""
    from pipeline.numba_backend import FILTER

    previous = FILTER.set(None)
    yield FILTER
    FILTER.set(previous)


def test_the_compiled_path_equals_the_numpy_path_bit_for_bit(lines: list[str], model_path: str, switch) -> None:
    """Both paths add the same rows in fastText's order; lines with newlines inside are read up to the first one."""
    import sys

    predictor = FastTextPredictor(fasttext_model.load(model_path))
    more = lines + [f"{a}\n{b}" for a, b in zip(lines[:20], lines[20:40], strict=True)]
    switch.set(True)
    compiled = predictor.hidden(more)
    assert "pipeline.fasttext.predict_numba" in sys.modules
    switch.set(False)
    numpy_path = predictor.hidden(more)
    np.testing.assert_array_equal(compiled[0], numpy_path[0])
    np.testing.assert_array_equal(compiled[1], numpy_path[1])
    assert (compiled[1] > 0).all() and np.abs(compiled[0]).sum() > 0


@pytest.mark.parametrize("compiled", [True, False])
def test_utf8_lines_read_as_fasttext_reads_them(lines: list[str], model_path: str, oracle, switch, compiled) -> None:
    """Arrow's bytes and offsets: newlines as spaces (datatrove's text), or the line cut at its first newline."""
    switch.set(compiled)
    predictor = FastTextPredictor(fasttext_model.load(model_path))
    texts = [f"{a}\n{b}" for a, b in zip(lines[:30], lines[30:60], strict=True)]
    encoded = [t.encode("utf-8") for t in texts]
    data = np.frombuffer(b"".join(encoded), np.uint8)
    offsets = np.cumsum([0, *map(len, encoded)])
    for newline_is_space, expected in ((True, [t.replace("\n", " ") for t in texts]), (False, lines[:30])):
        probs, reached = predictor.scores(*predictor.hidden_utf8(data, offsets, newline_is_space))
        for i, line in enumerate(expected):
            theirs = _theirs(oracle, line)
            ours = sorted(((float(probs[i, j]), predictor.labels[j]) for j in np.flatnonzero(reached[i])), reverse=True)
            assert [label for _, label in ours][:1] == [label for _, label in theirs][:1]
            assert all(abs(dict((b, a) for a, b in ours)[label] - p) <= TOLERANCE for p, label in theirs)


def test_the_kernel_ngram_rows_are_the_numpy_paths(model_path: str) -> None:
    """Words' n-gram rows through the kernel's n-gram writer (bucket modulo by :func:`_mod`'s multiplication) and
    as the numpy path lists them (numpy's ``%``), summed one after another: the same rows, the same vector."""
    from pipeline.fasttext import predict_numba as fasttext_numba

    predictor = FastTextPredictor(fasttext_model.load(model_path))
    bits, table, inp = predictor._kept_bits, predictor._bucket_rows, predictor.input
    bucket = np.uint64(predictor.bucket)
    m = np.uint64(fasttext_numba.magic(predictor.bucket))
    for text in ("hello", "Grüße", "日本語", "x" * 300, "a", "🙂🙂", "l'été"):
        word = np.frombuffer(f"<{text}>".encode(), np.uint8).copy()
        listed, ours = np.zeros(2000, np.int32), np.zeros(16, np.float32)
        n = fasttext_numba._ngrams_into(word, len(word), 2, 4, bucket, m, bits, table, -1, listed, 0)
        fasttext_numba._sum_rows(inp, listed, n, ours)
        rows, _ = predictor.rows([text])
        rows = rows[1:] if text in predictor.word_ids else rows
        expected = np.zeros(16, np.float32)
        for row in rows:
            expected += inp[row]
        assert n == len(rows)
        np.testing.assert_array_equal(listed[:n], rows)
        np.testing.assert_array_equal(ours, expected)


BUCKETS = [1, 2, 3, 7, 1000, 2**20, 2_000_000, 999_983, 10_000_000, 2**31 - 1, 2**31, 2**32 - 1]


@pytest.mark.parametrize("bucket", BUCKETS)
def test_the_kernel_modulo_is_the_remainder(bucket: int) -> None:
    """The kernel's bucket of a 32-bit hash (two multiplications by :func:`magic`) is ``hash % bucket`` for bucket
    counts small, odd, prime, powers of two and up to 2**32 - 1, over random hashes and both ends of the range."""
    from numba import njit

    from pipeline.fasttext import predict_numba as fasttext_numba

    @njit
    def buckets(hashes: np.ndarray, bucket: np.uint64, m: np.uint64, out: np.ndarray) -> None:
        for i in range(hashes.shape[0]):
            out[i] = fasttext_numba._mod(hashes[i], bucket, m)

    rng = np.random.default_rng(bucket)
    ends = np.arange(4096, dtype=np.uint64)
    hashes = np.concatenate([rng.integers(0, 2**32, 200_000, dtype=np.uint64), ends, 2**32 - 1 - ends])
    hashes = hashes.astype(np.uint32)
    out = np.empty(len(hashes), np.int64)
    buckets(hashes, np.uint64(bucket), np.uint64(fasttext_numba.magic(bucket)), out)
    np.testing.assert_array_equal(out, hashes.astype(np.int64) % bucket)


def test_the_filter_reads_sliced_and_null_texts(lines: list[str]) -> None:
    """A sliced batch, a null text and large_string give what the plain texts give (a null reads as empty)."""
    texts = [*lines[:25], None, *lines[25:40]]
    whole = pa.RecordBatch.from_pydict({"text": pa.array(["pad", *texts, "pad"], pa.string())}).slice(1, len(texts))
    plain = pa.RecordBatch.from_pydict({"text": pa.array([t or "" for t in texts], pa.large_string())})
    f = LanguageFilter(languages=["en"], min_score=0.5)
    a, b = f.apply(whole), f.apply(plain)
    assert a.columns["language"].to_pylist() == b.columns["language"].to_pylist()
    assert a.keep.tolist() == b.keep.tolist() and a.columns["language_score"].equals(b.columns["language_score"])
    assert len(set(a.columns["language"].to_pylist())) > 3


def test_the_compiled_word_table_finds_each_word_and_no_other() -> None:
    """The compiled path's dictionary table against a Python dict of the same words: words around its 8 and 16
    inline bytes, sharing those bytes and differing after them, multi-byte characters; each word found with its id,
    every cut, lengthened or changed word not found, even when looked for from the slot of the word it differs
    from by a byte (a slot is taken on its bytes, not on the hash); each word's FNV-1a hash given beside its id
    (the slot's, or computed for a word not found). A word is looked for where 16 bytes from its start run past
    the end of the buffer (read byte by byte) and where they do not (two 8-byte loads, masked)."""
    from pipeline.fasttext import predict_numba as fasttext_numba

    base = ["a", "the", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopr"]
    base += ["abcdefghijklmnopqrstuvwxyz" * 3, "abcdefghijklmnopqrstuvwxyZ" * 3, "Grüße", "日本語テキスト", "</s>"]
    words = base + [f"w{i:07d}xyz{i % 13}" for i in range(3000)]  # many: slots collide and probe on
    encoded = [w.encode() for w in words]
    word_bytes = np.frombuffer(b"".join(encoded), np.uint8)
    word_at = np.cumsum([0, *map(len, encoded)], dtype=np.int64)
    table = fasttext_numba.word_table(word_bytes, word_at)
    assert table.shape[0] >= 2 * len(words)
    ids = {w: i for i, w in enumerate(words)}
    asked = words + [w[:-1] for w in words] + [w + "x" for w in words] + [w[:-1] + "#" for w in words]
    asked += ["abcdefghijklmnopqrstuvwxyz" * 3 + "a", "abcdefghijklmnopqrstuvwxy" * 3, "", "abcdefgH"]
    for word, pad in itertools.product(asked, (b" ", b" " + b"\xff" * 20)):
        data = np.frombuffer(b"  " + word.encode() + pad, np.uint8)
        at, stop = 2, 2 + len(word.encode())
        key = np.uint64(fasttext_numba._word_key(data, at, stop))
        found, fnv = fasttext_numba._lookup(data, at, stop, key, table, word_bytes, word_at)
        assert (found, fnv) == (ids.get(word, -1), fnv1a(word.encode())), word
    for word in words:  # probed from a dictionary word's own slot, a word of other bytes is still not it
        other = (word[:-1] + ("#" if word[-1] != "#" else "%")).encode()
        data = np.frombuffer(other, np.uint8)
        key = np.uint64(fasttext_numba._word_key(np.frombuffer(word.encode(), np.uint8), 0, len(word.encode())))
        found, fnv = fasttext_numba._lookup(data, 0, len(data), key, table, word_bytes, word_at)
        assert (found, fnv) == (ids.get(other.decode(), -1), fnv1a(other)), word


def test_rows_are_summed_one_after_another_in_float32() -> None:
    """The kernel's row sum (eight rows per pass over the elements) rounds as fastText's ``addRow`` does: row after
    row in float32. Rows of large and small values make any other grouping or a wider accumulator differ; every
    count around the pass's eight, rows repeated and in any order."""
    from pipeline.fasttext import predict_numba as fasttext_numba

    rng = np.random.default_rng(7)
    inp = (rng.standard_normal((64, 24)) * 10.0 ** rng.integers(-6, 8, (64, 1))).astype(np.float32)
    for count in (0, 1, 7, 8, 9, 15, 16, 17, 40, 203):
        rows = rng.integers(0, len(inp), count).astype(np.int32)
        acc = rng.standard_normal(24).astype(np.float32)
        expected = acc.copy()
        for row in rows:
            expected = (expected + inp[row]).astype(np.float32)
        fasttext_numba._sum_rows(inp, rows, count, acc)
        np.testing.assert_array_equal(acc, expected, err_msg=str(count))


@pytest.mark.parametrize("compiled", [True, False])
def test_drop_newlines_as_str_replace(switch, compiled: bool) -> None:
    """The filter's newline deletion (``newline_replacement: ""``) on UTF-8 texts end to end: each text's bytes
    those of ``text.replace("\\n", "")``, empty texts, texts of newlines only, newlines at either end, none at all."""
    from pipeline.fasttext.predict import drop_newlines

    switch.set(compiled)
    for texts in (
        ["a\nb", "", "\n\n", "\nx\n", "", "ü\nö", "plain", "\n"],
        ["no newline", "", "at all"],
        ["", "", "\n"],
        ["tail\n"],
        [],
    ):
        encoded = [t.encode() for t in texts]
        data = np.frombuffer(b"".join(encoded) + b"\n\n", np.uint8)  # bytes past the last text are not read
        offsets = np.cumsum([0, *map(len, encoded)], dtype=np.int64)
        out, moved = drop_newlines(data, offsets)
        got = [out[a:b].tobytes().decode() for a, b in zip(moved[:-1], moved[1:], strict=True)]
        assert got == [t.replace("\n", "") for t in texts], texts
