"""fastText's supervised predict over a model read by :mod:`pipeline.fasttext.model`, in numpy, for many
lines at once; the same labels and probabilities as fastText's ``predictLine``.

fastText reads a line as words split on its whitespace bytes (space, ``\\t \\n \\v \\f \\r \\0``), a newline giving
the end-of-sentence word ``</s>`` that ends the line; a word starting with ``__label__`` is a label, not input. A
word adds its dictionary row (when it has one), then one row per character n-gram of ``<word>`` (``minn`` to
``maxn`` code points, FNV-1a over the UTF-8 bytes with each byte sign-extended, modulo ``bucket``, kept only when the
prune index has it). With word n-grams (``wordNgrams`` n > 1), after every word's rows come the rows of the line's
2..n-word n-grams (its input words' hashes, ``</s>`` and words outside the dictionary included, labels not),
by first word then length: fastText's ``addWordNgrams`` (``h = h * 116049371 + next`` over the hashes read as
int32 widened to uint64, bucket ``h % bucket``, kept when the prune index has it). The hidden vector is those rows
summed in that order in float32, times ``1 / rows``.
Hierarchical softmax walks the Huffman tree of the label counts: at an inner node ``f = sigmoid(output row .
hidden)``, the left child adds ``log(1 - f + 1e-5)`` and the right ``log(f + 1e-5)``; a branch whose score falls
below ``log(threshold + 1e-5)`` is not followed. A label's probability is ``exp`` of its leaf's score.
Softmax, one-vs-all and negative sampling (:class:`LinearOutput`) take a dot product per label (float32, in order),
then a softmax (``expf(d - max)``, summed label by label, divided) or fastText's 513-value sigmoid table; a label
is returned when its probability is at least the threshold, as ``exp(log(p + 1e-5))``. ``expf`` is computed as
exp in float64 rounded once: glibc's ``expf`` differs from that by one ulp on about one value in a thousand, so a
probability can differ from fastText's by one float32 ulp (within 1e-6).

Two paths give the same vectors bit for bit: the compiled one (``fasttext_numba``, chosen by the FILTER numba switch,
``PIPELINE_FILTER_NUMBA``) reads the lines' UTF-8 bytes and adds each word's rows as fastText does, the dictionary
words' rows precomputed; the numpy one pays for a word's n-gram hashes once per distinct word (each word's row list
is kept in a pool, and a line is the pool slices of its words, gathered and summed by numpy).
"""

from __future__ import annotations

import re
from itertools import chain, repeat
from types import ModuleType

import numpy as np

from pipeline.fasttext.model import FastTextModel
from pipeline.numba_backend import FILTER

EOS = "</s>"
BOW, EOW = "<", ">"
LABEL_PREFIX = "__label__"
SPLIT = re.compile("[^ \t\n\v\f\r\x00]+")  # fastText's words: runs of anything but its whitespace bytes
# characters str.split() treats as whitespace and fastText does not, and \0 which fastText does
NOT_PY_SPLIT = re.compile("[\x00\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
GROUP_CHARS = 1 << 18  # characters of lines whose rows are gathered at once (at most ~4 rows a character)
MAX_WORDS = 1 << 20  # distinct words whose row lists are kept; the cache starts again beyond


def fnv1a(data: bytes) -> int:
    """fastText's dictionary hash: 32-bit FNV-1a, each byte sign-extended (``uint32_t(int8_t(c))``) first."""
    h = 2166136261
    for byte in data:
        h = ((h ^ (byte | 0xFFFFFF00 if byte & 0x80 else byte)) * 16777619) & 0xFFFFFFFF
    return h


_EOS_HASH = np.uint32(fnv1a(EOS.encode()))


def words_of(line: str) -> list[str]:
    """fastText's input words of one line (no newline inside): up to the first ``</s>``, labels left out; the
    line's own end is the last word, ``</s>``."""
    line = line.partition("\n")[0]  # fastText reads up to the first newline
    words = line.split() if NOT_PY_SPLIT.search(line) is None else SPLIT.findall(line)
    if EOS in line and EOS in words:
        words = words[: words.index(EOS)]
    if LABEL_PREFIX in line:
        words = [w for w in words if not w.startswith(LABEL_PREFIX)]
    words.append(EOS)
    return words


class HierarchicalSoftmax:
    """The Huffman tree fastText builds from the label counts, and its predict for many hidden vectors at once."""

    def __init__(self, counts: np.ndarray, output: np.ndarray) -> None:
        n = len(counts)
        self.n = n
        count = np.full(2 * n - 1, 1e15)
        count[:n] = counts
        self.left = np.full(2 * n - 1, -1, dtype=np.int64)
        self.right = np.full(2 * n - 1, -1, dtype=np.int64)
        leaf, node = n - 1, n
        for i in range(n, 2 * n - 1):
            pick = []
            for _ in range(2):
                if leaf >= 0 and count[leaf] < count[node]:
                    pick.append(leaf)
                    leaf -= 1
                else:
                    pick.append(node)
                    node += 1
            self.left[i], self.right[i] = pick
            count[i] = count[pick[0]] + count[pick[1]]
        self.output = np.ascontiguousarray(output[: n - 1], dtype=np.float32)

    def log_scores(self, hidden: np.ndarray, threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(leaf scores (lines, labels) float32, whether fastText's search reaches each leaf) for float32 hidden
        vectors (lines, dim); scores are summed as fastText sums them, in float32 from the root down."""
        lines, dim = hidden.shape
        dot = np.zeros((lines, self.n - 1), dtype=np.float32)
        for j in range(dim):  # dotRow: d += w[j] * x[j], j in order, each product rounded to float32
            dot += self.output[:, j] * hidden[:, j : j + 1]
        f = (1.0 / (np.float32(1) + _expf(-dot)).astype(np.float64)).astype(np.float32)
        log_left = np.log((1.0 - f.astype(np.float64)).astype(np.float32).astype(np.float64) + 1e-5).astype(np.float32)
        log_right = np.log(f.astype(np.float64) + 1e-5).astype(np.float32)
        floor = np.float32(np.log(np.float64(np.float32(threshold)) + 1e-5))
        score = np.zeros((2 * self.n - 1, lines), dtype=np.float32)
        reached = np.zeros((2 * self.n - 1, lines), dtype=bool)
        root = 2 * self.n - 2
        reached[root] = score[root] >= floor
        for node in range(root, self.n - 1, -1):  # children have smaller numbers than their parent
            k = node - self.n
            for child, step in ((self.left[node], log_left[:, k]), (self.right[node], log_right[:, k])):
                score[child] = score[node] + step
                reached[child] = reached[node] & (score[child] >= floor)
        return score[: self.n].T.copy(), reached[: self.n].T.copy()


MAX_SIGMOID = 8  # fastText's sigmoid table: 512 + 1 values over [-8, 8]
SIGMOID_TABLE_SIZE = 512


def sigmoid_table() -> np.ndarray:
    """fastText's ``t_sigmoid_``: ``1 / (1 + expf(-x))`` in double, stored as float, for x = i * 16 / 512 - 8."""
    i = np.arange(SIGMOID_TABLE_SIZE + 1)
    x = (i * 2 * MAX_SIGMOID).astype(np.float32) / np.float32(SIGMOID_TABLE_SIZE) - np.float32(MAX_SIGMOID)
    return (1.0 / (1.0 + _expf(-x).astype(np.float64))).astype(np.float32)


class LinearOutput:
    """fastText's softmax and one-vs-all (negative sampling's too) outputs: a dot product per label, then a
    softmax or fastText's table sigmoid, for many hidden vectors at once."""

    def __init__(self, loss: str, output: np.ndarray) -> None:
        self.softmax = loss == "softmax"
        self.output = np.ascontiguousarray(output, dtype=np.float32)
        self.table = sigmoid_table()

    def log_scores(self, hidden: np.ndarray, threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(``std_log`` of each label's probability (lines, labels) float32, whether fastText's ``findKBest``
        keeps it: probability at least ``threshold``)."""
        lines, dim = hidden.shape
        n = self.output.shape[0]
        dot = np.zeros((lines, n), dtype=np.float32)
        for j in range(dim):  # dotRow: d += w[j] * x[j], j in order, each product rounded to float32
            dot += self.output[:, j] * hidden[:, j : j + 1]
        if self.softmax:
            top = dot.max(axis=1, keepdims=True) if n else dot
            e = _expf(dot - top)
            z = np.zeros(lines, dtype=np.float32)
            for i in range(n):  # z += output[i], label by label
                z += e[:, i]
            probs = e / z[:, None]
        else:  # Loss::sigmoid: 0 below -8, 1 above 8, else the table at int((x + 8) * 512 / 8 / 2)
            at = ((dot + np.float32(MAX_SIGMOID)) * np.float32(SIGMOID_TABLE_SIZE) / np.float32(MAX_SIGMOID)) / (
                np.float32(2)
            )
            inside = np.clip(np.nan_to_num(at, nan=0.0), 0, SIGMOID_TABLE_SIZE).astype(np.int64)
            probs = np.where(
                dot < -MAX_SIGMOID, np.float32(0), np.where(dot > MAX_SIGMOID, np.float32(1), self.table[inside])
            ).astype(np.float32)
        logs = np.log(probs.astype(np.float64) + 1e-5).astype(np.float32)  # std_log
        return logs, probs >= np.float32(threshold)


class _Slots(dict[str, int]):
    """word -> its slot (row list number); a word not seen before gets the next slot and waits in ``pending``."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []

    def __missing__(self, word: str) -> int:
        slot = self[word] = len(self)
        self.pending.append(word)
        return slot


class _Growing:
    """An int64 array appended to in blocks (its capacity doubles)."""

    def __init__(self) -> None:
        self.data = np.zeros(1024, dtype=np.int64)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self.data):
            grown = np.zeros(max(need, 2 * len(self.data)), dtype=np.int64)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : need] = values
        self.size = need


class FastTextPredictor:
    """Label probabilities of lines, as fastText's predict gives them on the same model."""

    def __init__(self, model: FastTextModel, max_words: int = MAX_WORDS, group_chars: int = GROUP_CHARS) -> None:
        args = model.args
        if args["loss"] not in ("hs", "softmax", "ova", "ns"):
            raise ValueError(f"not a supervised loss ({args['loss']})")
        if model.output_norms is not None:  # dotRow would scale each product sum by its norm after the sum
            raise ValueError("an output matrix quantized with norms is not supported")
        self.labels = [label.removeprefix(LABEL_PREFIX) for label in model.labels]
        self.minn, self.maxn, self.bucket = int(args["minn"]), int(args["maxn"]), int(args["bucket"])
        self.word_ngrams = int(args["word_ngrams"])
        self.word_ids = {w: i for i, w in enumerate(model.words)}
        self.nwords = len(model.words)
        # bucket -> its input row (-1 when pruned away): the prune index as a table
        self._direct = self.nwords if model.prune is None else -1  # bucket b's row, nwords + b, without the table
        if model.prune is None:
            self._bucket_rows = self.nwords + np.arange(self.bucket, dtype=np.int32)
            self._kept_bits = None
        else:
            self._bucket_rows = np.full(self.bucket, -1, dtype=np.int32)
            keys = np.fromiter(model.prune.keys(), dtype=np.int64, count=len(model.prune))
            self._bucket_rows[keys] = self.nwords + np.fromiter(model.prune.values(), np.int64, len(model.prune))
            # the same as one bit per bucket (250 KB for lid.176, where the table is 8 MB): most n-grams are
            # pruned away, and this answers for them without a cache miss
            self._kept_bits = np.packbits(self._bucket_rows >= 0, bitorder="little")
        self.input = model.input
        self._dictionary(model.words)
        self.tree: HierarchicalSoftmax | LinearOutput = (
            HierarchicalSoftmax(model.label_counts, model.output)
            if args["loss"] == "hs"
            else LinearOutput(str(args["loss"]), model.output)
        )
        self.max_words, self.group_chars = max_words, group_chars
        self.clear()

    def _dictionary(self, words: list[str]) -> None:
        """The compiled path's dictionary: the words' UTF-8 bytes, each word's rows (its own, then its n-grams'),
        and the kept buckets as bits; its hash table is built by the kernel on first use (:meth:`_word_table`)."""
        encoded = [w.encode("utf-8", "surrogateescape") for w in words]
        self._word_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        self._word_at = np.cumsum([0, *map(len, encoded)], dtype=np.int64)
        self._table: np.ndarray | None = None
        rows, lengths = self.rows(list(words)) if words else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self._word_rows = rows.astype(np.int32)
        self._word_rows_at = np.cumsum(np.append(0, lengths), dtype=np.int64)
        self._own_only = bool(np.array_equal(self._word_rows, np.arange(len(words))))  # each word: its own row alone
        self._eos = self.word_ids.get(EOS, -1)
        if self._kept_bits is None:
            self._kept_bits = np.full((self.bucket + 7) // 8, 255, dtype=np.uint8)

    def _word_table(self, kernel: ModuleType) -> np.ndarray:
        """The compiled path's hash table of the dictionary (``word_table``), built once."""
        if self._table is None:
            self._table = kernel.word_table(self._word_bytes, self._word_at)
        return self._table

    def clear(self) -> None:
        """Forget the row lists of the words seen so far."""
        self._slots = _Slots()  # word -> its slot: its row list is pool[start[slot]:][:length[slot]]
        self._pool, self._start, self._length = _Growing(), _Growing(), _Growing()

    def rows(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(the input rows fastText adds for each word, end to end; rows per word): a word's own row when the
        dictionary has it, then its n-grams' rows, by start code point then length."""
        count = len(words)
        wid = np.fromiter(map(self.word_ids.get, words, repeat(-1)), dtype=np.int64, count=count)
        chars = np.fromiter(map(len, words), dtype=np.int64, count=count) + len(BOW) + len(EOW)
        grams = self._ngram_rows(BOW + (EOW + BOW).join(words) + EOW, chars)  # (code points, sizes): row or -1
        if EOS in words:  # </s> has no n-grams
            eos = words.index(EOS)
            at = int(chars[:eos].sum())
            grams[at : at + int(chars[eos])] = -1
        kept = grams >= 0
        per_word = np.add.reduceat(kept.sum(axis=1), np.cumsum(chars) - chars) if count else chars
        own = (wid >= 0).astype(np.int64)
        lengths = own + per_word
        at_word = np.cumsum(lengths) - lengths  # where each word's rows start
        rows = np.empty(int(lengths.sum()), dtype=np.int64)
        rows[at_word[own == 1]] = wid[own == 1]  # a word's own row first, then its n-grams in their order
        rest = np.ones(len(rows), dtype=bool)
        rest[at_word[own == 1]] = False
        rows[rest] = grams[kept]  # row-major: by start code point, then by size
        return rows, lengths

    def _ngram_rows(self, joined: str, chars: np.ndarray) -> np.ndarray:
        """Input rows (-1: pruned away or not an n-gram of its word) of the n-grams of each code point of
        ``joined`` (words end to end, ``chars`` code points each), one column per size ``minn..maxn``."""
        data = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        signed = data.astype(np.int8).astype(np.int32).view(np.uint32)  # uint32_t(int8_t(c))
        if len(data) == len(joined):  # all ASCII: a code point is a byte
            total, first, later = len(data), signed, []
        else:
            starts = np.flatnonzero((data & 0xC0) != 0x80)  # each code point's first byte
            total, first = len(starts), signed[starts]
            width = np.diff(np.append(starts, len(data)))
            # per further byte j: (the code points that have one, that byte of each)
            later = [(has, signed[starts[has] + j]) for j in range(1, 4) if len(has := np.flatnonzero(width > j))]
        first = np.append(first, np.zeros(self.maxn, dtype=np.uint32))  # padding past the end: never an n-gram
        # code points left from each one to its word's end (the word included)
        left = np.repeat(np.cumsum(chars), chars) - np.arange(total)
        h = np.full(total, 2166136261, dtype=np.uint32)
        out = np.full((total, self.maxn - self.minn + 1), -1, dtype=np.int32)
        prime = np.uint32(16777619)
        for n in range(1, self.maxn + 1):  # the n-gram from g is the (n-1)-gram from g and code point g + n - 1
            h = (h ^ first[n - 1 : n - 1 + total]) * prime
            for has, byte in later:
                keep = has >= n - 1
                g = has[keep] - (n - 1)
                h[g] = (h[g] ^ byte[keep]) * prime
            if n < self.minn:
                continue
            ok = left >= n
            if n == 1:  # a single character at either end is only BOW or EOW
                ok &= (left > 1) & (np.arange(total) - np.repeat(np.cumsum(chars) - chars, chars) > 0)
            bucket = (h % np.uint32(self.bucket)).astype(np.int64)
            if self._kept_bits is not None:
                ok &= ((self._kept_bits[bucket >> 3] >> (bucket & 7).astype(np.uint8)) & 1).astype(bool)
            at = np.flatnonzero(ok)
            out[at, n - self.minn] = self._bucket_rows[bucket[at]]
        return out

    def word_ngram_rows(self, words: list[str]) -> np.ndarray:
        """The input rows of the word n-grams (2 to ``word_ngrams`` words) of a line's input words (:func:`words_of`),
        as fastText's ``addWordNgrams`` orders them: each word's hash as an int32 widened to 64 bits, ``h = h *
        116049371 + next`` modulo 2**64, bucket ``h % bucket``, kept when the prune index has it."""
        hashes = [fnv1a(w.encode("utf-8", "surrogatepass")) for w in words]
        signed = [h - (1 << 32) if h >= 1 << 31 else h for h in hashes]
        rows = []
        for i, first in enumerate(signed):
            h = first % (1 << 64)
            for following in signed[i + 1 : i + self.word_ngrams]:
                h = (h * 116049371 + following) % (1 << 64)
                row = int(self._bucket_rows[h % self.bucket])
                if row >= 0:
                    rows.append(row)
        return np.asarray(rows, dtype=np.int64)

    def _resolve_pending(self) -> None:
        """The row lists of the words given slots since the last call."""
        pending = self._slots.pending
        if not pending:
            return
        rows, lengths = self.rows(pending)
        pending.clear()
        self._start.extend(self._pool.size + np.cumsum(lengths) - lengths)
        self._length.extend(lengths)
        self._pool.extend(rows)

    def hidden(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(hidden vectors float32 (lines, dim), rows per line); a line of no rows has a zero vector."""
        kernel = _compiled(sum(map(len, lines)))
        if kernel is None:
            return self._hidden_numpy(lines)
        encoded = [line.encode("utf-8", "surrogatepass") for line in lines]
        offsets = np.cumsum([0, *map(len, encoded)], dtype=np.int64)
        return self._hidden_compiled(kernel, np.frombuffer(b"".join(encoded), np.uint8), offsets, False)

    def hidden_utf8(
        self, data: np.ndarray, offsets: np.ndarray, newline_is_space: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hidden` of lines given as valid UTF-8 bytes, line ``i`` being ``data[offsets[i]:offsets[i + 1]]``
        (uint8, int64 offsets, as an Arrow string array holds them); a newline is a space with ``newline_is_space``
        (datatrove's normalisation), else it ends the line."""
        kernel = _compiled(int(offsets[-1] - offsets[0]) if len(offsets) else 0)
        if kernel is not None:
            return self._hidden_compiled(kernel, data, offsets, newline_is_space)
        raw = data.tobytes()
        lines = [raw[a:b].decode("utf-8", "surrogateescape") for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        return self._hidden_numpy([x.replace("\n", " ") for x in lines] if newline_is_space else lines)

    def _hidden_compiled(
        self, kernel: ModuleType, data: np.ndarray, offsets: np.ndarray, newline_is_space: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros((len(offsets) - 1, self.input.shape[1]), dtype=np.float32)
        counts = np.zeros(len(offsets) - 1, dtype=np.int64)
        data = data.view()
        data.flags.writeable = False  # one compiled signature whether the bytes came from Arrow or from str
        kernel.hidden(
            data, offsets.astype(np.int64, copy=False), newline_is_space, self._word_table(kernel), self._word_bytes,
            self._word_at, self._word_rows, self._word_rows_at, self._own_only, self._eos, self.minn, self.maxn,
            self.bucket, self._kept_bits, self._bucket_rows, self.input, out, counts, self.word_ngrams, _EOS_HASH,
            self._direct,
        )  # fmt: skip
        return out, counts

    def _hidden_numpy(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hidden` in numpy, each distinct word's row list kept."""
        out = np.zeros((len(lines), self.input.shape[1]), dtype=np.float32)
        counts = np.zeros(len(lines), dtype=np.int64)
        for first, stop in _groups(lines, self.group_chars):
            if len(self._slots) > self.max_words:
                self.clear()
            per_line = [words_of(line) for line in lines[first:stop]]
            words = list(chain.from_iterable(per_line))
            slots = np.fromiter(map(self._slots.__getitem__, words), dtype=np.int64, count=len(words))
            self._resolve_pending()
            lengths = self._length.data[slots]
            total = int(lengths.sum())
            # each word's pool slice, end to end: the p-th row of word w is pool[start[w] + p]
            begin = np.repeat(self._start.data[slots] - np.cumsum(lengths) + lengths, lengths)
            vectors = self.input[self._pool.data[begin + np.arange(total)]]
            line_rows = np.add.reduceat(lengths, np.cumsum([0] + [len(x) for x in per_line[:-1]]))
            at = 0
            for i, n in enumerate(line_rows.tolist()):
                line = vectors[at : at + n]
                at += n
                if self.word_ngrams > 1:  # the word n-grams' rows after the words' own
                    line = np.concatenate([line, self.input[self.word_ngram_rows(per_line[i])]])
                    n = len(line)
                counts[first + i] = n
                if n:  # rows summed one after another (numpy reduces axis 0 of a C-ordered array row by row)
                    out[first + i] = line.sum(axis=0, dtype=np.float32) * np.float32(1.0 / n)
        return out, counts

    def probabilities(self, lines: list[str], threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities (lines, labels) float32, whether fastText returns each label with ``k=-1``); a line that
        gives fastText no input rows returns no label."""
        return self.scores(*self.hidden(lines), threshold)

    def scores(self, hidden: np.ndarray, counts: np.ndarray, threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`probabilities` of hidden vectors and their rows per line (:meth:`hidden`, :meth:`hidden_utf8`)."""
        scores, reached = self.tree.log_scores(hidden, threshold)
        reached &= (counts > 0)[:, None]
        return _expf(scores), reached

    def predict(self, line: str, k: int = 1, threshold: float = 0.0) -> list[tuple[float, str]]:
        """fastText's ``predict(line, k, threshold)``: [(probability, label)], best first."""
        probs, reached = self.probabilities([line], threshold)
        order = np.argsort(-probs[0], kind="stable")
        ranked = [(float(probs[0, j]), self.labels[j]) for j in order if reached[0, j]]
        return ranked if k < 0 else ranked[:k]


def _compiled(size: int) -> ModuleType | None:
    """The compiled kernel when this call on ``size`` characters runs compiled (the FILTER switch), else None."""
    if not FILTER.use("fasttext", size):
        return None
    # lazy: importing numba and loading (or compiling) the kernel costs seconds, paid only by calls that use it
    from pipeline.fasttext import predict_numba as fasttext_numba

    return fasttext_numba


def drop_newlines(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``data`` less every newline byte, ``offsets`` moved to match) for texts ``data[offsets[i]:offsets[i + 1]]``
    (``offsets[0]`` 0); the arrays themselves when there is no newline. One compiled pass when the FILTER switch
    compiles, numpy otherwise."""
    kernel = _compiled(int(offsets[-1]) if len(offsets) else 0)
    if kernel is not None:
        out = np.empty(len(data), dtype=np.uint8)
        moved = np.empty(len(offsets), dtype=np.int64)
        size = kernel.drop_newlines(data, offsets.astype(np.int64, copy=False), out, moved)
        return (data, offsets) if size < 0 else (out[:size], moved)
    newline = data == 10
    if not newline.any():
        return data, offsets
    gone = np.searchsorted(np.flatnonzero(newline), offsets)  # newlines before each offset
    return data[~newline], offsets - gone


def _groups(lines: list[str], group_chars: int) -> list[tuple[int, int]]:
    """Consecutive lines of about ``group_chars`` characters in all (a longer line alone): each group's rows are
    gathered at once (at most a few rows per character)."""
    out, first, size = [], 0, 0
    for i, line in enumerate(lines):
        if size and size + len(line) > group_chars:
            out.append((first, i))
            first, size = i, 0
        size += len(line)
    if first < len(lines):
        out.append((first, len(lines)))
    return out


def _expf(x: np.ndarray) -> np.ndarray:
    """``expf`` of float32 values: exp in float64 rounded once to float32 (C's correctly rounded ``expf`` nearly
    always agrees; numpy's own float32 exp can be an ulp off)."""
    return np.exp(x.astype(np.float64)).astype(np.float32)
