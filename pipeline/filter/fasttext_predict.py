"""fastText's supervised predict over a model read by :mod:`pipeline.filter.fasttext_model`, in numpy, for many
lines at once; the same labels and probabilities as fastText's ``predictLine`` (hierarchical softmax models).

fastText reads a line as words split on its whitespace bytes (space, ``\\t \\n \\v \\f \\r \\0``), a newline giving
the end-of-sentence word ``</s>`` that ends the line; a word starting with ``__label__`` is a label, not input. A
word adds its dictionary row (when it has one), then one row per character n-gram of ``<word>`` (``minn`` to
``maxn`` code points, FNV-1a over the UTF-8 bytes with each byte sign-extended, modulo ``bucket``, kept only when the
prune index has it). The hidden vector is those rows summed in that order in float32, times ``1 / rows``.
Hierarchical softmax walks the Huffman tree of the label counts: at an inner node ``f = sigmoid(output row .
hidden)``, the left child adds ``log(1 - f + 1e-5)`` and the right ``log(f + 1e-5)``; a branch whose score falls
below ``log(threshold + 1e-5)`` is not followed. A label's probability is ``exp`` of its leaf's score.

The cost fastText pays per word (hashing its n-grams) is paid here once per distinct word: each word's row list is
kept in a pool, and a line is the pool slices of its words, gathered and summed by numpy.
"""

from __future__ import annotations

import re

import numpy as np

from pipeline.filter.fasttext_model import FastTextModel

EOS = "</s>"
BOW, EOW = "<", ">"
LABEL_PREFIX = "__label__"
SPLIT = re.compile("[^ \t\n\v\f\r\x00]+")  # fastText's words: runs of anything but its whitespace bytes
# characters str.split() treats as whitespace and fastText does not, and \0 which fastText does
NOT_PY_SPLIT = re.compile("[\x00\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
CHUNK_ROWS = 1 << 20  # rows gathered at once (64 MB of float32 at dim 16)


def fnv1a(data: bytes) -> int:
    """fastText's dictionary hash: 32-bit FNV-1a, each byte sign-extended (``uint32_t(int8_t(c))``) first."""
    h = 2166136261
    for byte in data:
        h = ((h ^ (byte | 0xFFFFFF00 if byte & 0x80 else byte)) * 16777619) & 0xFFFFFFFF
    return h


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


class FastTextPredictor:
    """Label probabilities of lines, as fastText's predict gives them on the same model."""

    def __init__(self, model: FastTextModel) -> None:
        args = model.args
        if args["loss"] != "hs" or int(args["word_ngrams"]) > 1:
            raise ValueError(f"only hierarchical softmax models without word n-grams (loss {args['loss']})")
        self.labels = [label.removeprefix(LABEL_PREFIX) for label in model.labels]
        self.minn, self.maxn, self.bucket = int(args["minn"]), int(args["maxn"]), int(args["bucket"])
        self.word_ids = {w: i for i, w in enumerate(model.words)}
        self.nwords = len(model.words)
        self.prune = model.prune
        self.input = model.input
        self.tree = HierarchicalSoftmax(model.label_counts, model.output)
        self._slot: dict[str, int] = {}  # word -> its row list's slot in the pool
        self._pool: list[int] = []  # row lists of the words seen, one after the other
        self._start: list[int] = []
        self._length: list[int] = []

    def rows(self, word: str) -> list[int]:
        """The input rows fastText adds for ``word``, in its order: the word's own row, then its n-grams'."""
        wid = self.word_ids.get(word, -1)
        out = [] if wid < 0 else [wid]
        if word == EOS or self.maxn <= 0:
            return out
        chars = BOW + word + EOW
        size = len(chars)
        for i in range(size):
            for n in range(self.minn, min(self.maxn, size - i) + 1):
                if n == 1 and (i == 0 or i + n == size):
                    continue
                h = fnv1a(chars[i : i + n].encode("utf-8", "surrogatepass")) % self.bucket
                if self.prune is None:
                    out.append(self.nwords + h)
                elif h in self.prune:
                    out.append(self.nwords + self.prune[h])
        return out

    def _slots(self, words: list[str]) -> list[int]:
        slot = self._slot
        out = list(map(slot.get, words))
        if None in out:
            for i, s in enumerate(out):
                if s is None:
                    out[i] = slot.get(words[i])
                    if out[i] is None:
                        rows = self.rows(words[i])
                        out[i] = slot[words[i]] = len(self._start)
                        self._start.append(len(self._pool))
                        self._length.append(len(rows))
                        self._pool.extend(rows)
        return out  # type: ignore[return-value]

    def hidden(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(hidden vectors float32 (lines, dim), rows per line); a line of no rows has a zero vector."""
        slots = [self._slots(words_of(line)) for line in lines]
        pool, start, length = (np.array(x, dtype=np.int64) for x in (self._pool, self._start, self._length))
        out = np.zeros((len(lines), self.input.shape[1]), dtype=np.float32)
        counts = np.zeros(len(lines), dtype=np.int64)
        for i, line_slots in enumerate(slots):
            ids = np.array(line_slots, dtype=np.int64)
            lens = length[ids]
            total = int(lens.sum())
            counts[i] = total
            if total == 0:
                continue
            # each word's pool slice, end to end: position p of word w is start[w] + p
            begin = np.repeat(start[ids] - np.cumsum(lens) + lens, lens)
            rows = pool[begin + np.arange(total)]
            vectors = self.input[rows]
            # rows summed one after another (numpy reduces axis 0 of a C-ordered array row by row)
            total_vector = vectors.sum(axis=0, dtype=np.float32)
            out[i] = total_vector * np.float32(1.0 / total)
        return out, counts

    def probabilities(self, lines: list[str], threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities (lines, labels) float32, whether fastText returns each label with ``k=-1``); a line that
        gives fastText no input rows returns no label."""
        hidden, counts = self.hidden(lines)
        scores, reached = self.tree.log_scores(hidden, threshold)
        reached &= (counts > 0)[:, None]
        return _expf(scores), reached

    def predict(self, line: str, k: int = 1, threshold: float = 0.0) -> list[tuple[float, str]]:
        """fastText's ``predict(line, k, threshold)``: [(probability, label)], best first."""
        probs, reached = self.probabilities([line], threshold)
        order = np.argsort(-probs[0], kind="stable")
        ranked = [(float(probs[0, j]), self.labels[j]) for j in order if reached[0, j]]
        return ranked if k < 0 else ranked[:k]


def _expf(x: np.ndarray) -> np.ndarray:
    """``expf`` of float32 values: exp in float64 rounded once to float32 (C's correctly rounded ``expf`` nearly
    always agrees; numpy's own float32 exp can be an ulp off)."""
    return np.exp(x.astype(np.float64)).astype(np.float32)
