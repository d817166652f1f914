"""The fasttext_classifier filter (docs/stages.md, The fastText classifier) against datatrove 0.10.1's
FastTextClassifierFilter: models trained here by the fastText library (every loss, word n-grams 1-3, ``.bin``
and quantized ``.ftz``) on the Python documentation's sources, decisions, texts and per-label mean scores
compared on documents of the same documentation, and the options' one-line errors."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pipeline.config import ConfigError
from pipeline.filter.options import parse
from pipeline.filter.rules import fasttext_classifier as fc
from tests.oracles import missing_oracle, require_oracle

DOCS = Path("/usr/share/doc/python3.11/html/_sources")
LABELS = ("library", "reference", "tutorial", "howto")


def _fasttext() -> Any:
    """The fastText library with training (fasttext-numpy2-wheel; fasttext-predict has no train_supervised)."""
    module = require_oracle("fasttext")
    if not hasattr(module, "train_supervised"):
        missing_oracle("the fasttext module here cannot train (install fasttext-numpy2-wheel)")
    return module


def _pages() -> dict[str, list[str]]:
    """Label -> the text of its pages (the Python documentation's reStructuredText sources)."""
    if not DOCS.is_dir():
        missing_oracle(f"{DOCS} (Debian's python3.11-doc) is absent", "tool")
    return {
        label: [p.read_text(encoding="utf-8", errors="replace") for p in sorted((DOCS / label).glob("*.rst.txt"))]
        for label in LABELS
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """(the training file: one labelled paragraph a line, documents held out for scoring)."""
    pages = _pages()
    rng = random.Random(0)
    lines, held = [], []
    for label, texts in pages.items():
        for i, text in enumerate(texts):
            if i % 7 == 3:  # held out: scored, not trained on
                held.append(text[:6000])
                continue
            for para in text.split("\n\n"):
                para = " ".join(para.split())
                if len(para) > 20:
                    lines.append(f"__label__{label} {para}")
    rng.shuffle(lines)
    train = tmp_path_factory.mktemp("fasttext") / "train.txt"
    train.write_text("\n".join(lines[:6000]) + "\n", encoding="utf-8")
    return train, held


MODELS = [
    ("softmax", 1, False),
    ("softmax", 2, True),
    ("ns", 2, False),
    ("ns", 1, True),
    ("hs", 1, False),
    ("hs", 3, False),
    ("hs", 1, True),
    ("ova", 3, False),
    ("ova", 1, True),
]


TRAIN = """
import sys, fasttext
train, loss, ngrams, quantize, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
subwords = 2 if loss == "hs" else 0, 4 if loss == "hs" else 0
model = fasttext.train_supervised(
    input=train, loss=loss, wordNgrams=ngrams, dim=16, epoch=3, bucket=20000, thread=1, minn=subwords[0],
    maxn=subwords[1], verbose=0,
)
if quantize:
    model.quantize(input=train, retrain=False, dsub=2, qnorm=True, cutoff=0)
model.save_model(out)
"""


def _train(corpus: tuple[Path, list[str]], loss: str, ngrams: int, quantize: bool) -> str:
    """A model trained by the fastText library, in a fresh process: in a process that has predicted (through the
    library and numba) this build's training can stop on "Encountered NaN". Trained once per parameters beside
    the module's corpus; tests only read it."""
    _fasttext()
    path = corpus[0].parent / f"{loss}-{ngrams}.{'ftz' if quantize else 'bin'}"
    if path.is_file():
        return str(path)
    args = [str(corpus[0]), loss, str(ngrams), "1" if quantize else "0", str(path)]
    done = subprocess.run([sys.executable, "-c", TRAIN, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return str(path)


def _datatrove(path: str, docs: list[str], **kwargs: Any) -> list[tuple[bool, str, dict[str, float]]]:
    """datatrove's filter over ``docs``: (kept, text, label -> mean score) each, through the fastText library."""
    require_oracle("datatrove")
    from datatrove.data import Document
    from datatrove.pipeline.filters.fasttext_filter import FastTextClassifierFilter
    from fasttext.FastText import _FastText

    mode = kwargs.pop("filter_mode", "document").upper()
    oracle = FastTextClassifierFilter(path, filter_mode=mode, **kwargs)
    oracle._model = _FastText(model_path=path)  # the library's own model and predict, not datatrove's asset cache
    out = []
    for i, text in enumerate(docs):
        doc = Document(text=text, id=str(i))
        kept = bool(oracle.filter(doc))
        out.append((kept, doc.text, {k.removeprefix("__label__"): v for k, v in doc.metadata.items()}))
    return out


def _ours(path: str, docs: list[str], **kwargs: Any) -> list[tuple[bool, str, dict[str, float]]]:
    step = fc.FastTextClassifierFilter(model=path, **kwargs)
    batch = pa.RecordBatch.from_pydict({"doc_id": list(range(len(docs))), "source": ["s"] * len(docs), "text": docs})
    result = step.apply(batch)
    texts = docs if result.text is None else result.text.to_pylist()
    out = []
    for i in range(len(docs)):
        means = {
            label.removeprefix(f"{fc.NAME}."): float(v[i])
            for label, v in result.measures.items()
            if not math.isnan(v[i])
        }
        kept = bool(result.keep[i])
        out.append((kept, texts[i] if kept else "", means))
    return out


@pytest.mark.parametrize(("loss", "ngrams", "quantize"), MODELS)
@pytest.mark.parametrize("mode", ["document", "paragraph", "sentence"])
def test_same_as_datatrove(corpus: tuple[Path, list[str]], loss: str, ngrams: int, quantize: bool, mode: str) -> None:
    path = _train(corpus, loss, ngrams, quantize)
    docs = corpus[1][:: 3 if mode == "sentence" else 1][:40] + ["", "  \n ", "library\n\nreference"]
    # whitespace that str.strip() removes and fastText reads as part of a word, at either end; \0, the reverse
    docs += ["\xa0library module\n", "tutorial howto \x1c", "\u3000the reference\u3000 ", "\xa0", "\0 howto"]
    # newlines inside words (deleted: the words join), at the ends, alone; whitespace at the ends longer than the
    # few bytes read there first, and a text of whitespace that long
    docs += ["\nlibrary\nmodule\n\n", "refer\nence how\n\nto", "\n", " \n\t" * 40 + "howto tutorial" + "\n " * 50]
    docs += [" " * 200, "\r\n" * 70 + "\xa0library"]
    decisions: list[bool] = []
    for kwargs in (
        {"keep_labels": [("library", 0.5)]},
        {"remove_labels": [("tutorial", 0.3), ("howto", 0.2)]},
        {"keep_labels": [("reference", 0.25)], "newline_replacement": " "},
    ):
        ours = _ours(path, docs, filter_mode=mode, **kwargs)
        theirs = _datatrove(path, docs, filter_mode=mode, **kwargs)
        assert [k for k, _, _ in ours] == [k for k, _, _ in theirs], kwargs
        assert [t for k, t, _ in ours if k] == [t for k, t, _ in theirs if k], kwargs
        for (_, _, a), (_, _, b) in zip(ours, theirs, strict=True):
            assert a.keys() == b.keys()
            for label in a:
                assert abs(a[label] - b[label]) <= 1e-6, (label, a[label], b[label])
        decisions += [k for k, _, _ in ours]
    assert 0 < sum(decisions) < len(decisions), "the thresholds should keep some documents and drop others"


def test_a_model_ours_does_not_run_goes_through_fasttext(
    corpus: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model our predictor does not run (an output matrix quantized with norms, which fastText makes only for
    256 labels or more: marked so here) is predicted by the fastText library, as datatrove's filter predicts."""
    path = _train(corpus, "softmax", 2, False)
    monkeypatch.setitem(fc._OURS, fc.local_model(path), None)
    docs = corpus[1][:20] + ["", "library\n\nreference"]
    kwargs: dict[str, Any] = {"keep_labels": [("library", 0.5)], "filter_mode": "paragraph"}
    ours, theirs = _ours(path, docs, **kwargs), _datatrove(path, docs, **kwargs)
    assert [(k, t) for k, t, _ in ours] == [(k, t) for k, t, _ in theirs]
    assert [m for _, _, m in ours] == [m for _, _, m in theirs]


def test_paragraphs_as_datatrove() -> None:
    require_oracle("datatrove")
    from datatrove.utils.text import split_into_paragraphs

    for text in ["a\n\nb\n", "\n\na\n \nb\r\nc", "", "x", "a\n\n\n", "p\u2028q\n\n r"] + _pages()["howto"][:5]:
        assert fc.split_paragraphs(text) == split_into_paragraphs(text)


def _err(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse(fc.FastTextClassifierOptions, values, "filter.3", fc.NAME)
    return str(info.value)


def test_option_errors(corpus: tuple[Path, list[str]], tmp_path: Path) -> None:
    path = _train(corpus, "softmax", 1, False)
    assert "filter.3.model" in _err({})
    assert "filter.3.model" in _err({"model": str(tmp_path / "absent.bin")})
    (tmp_path / "not.bin").write_bytes(b"not a model at all")
    assert "filter.3.model" in _err({"model": str(tmp_path / "not.bin")})
    assert "filter.3.keep_labels.0" in _err({"model": path, "keep_labels": [["nope", 0.5]]})
    assert "filter.3.remove_labels.1" in _err({"model": path, "remove_labels": [["library", 0.5], ["x", 0.1]]})
    assert "filter.3.keep_labels.0" in _err({"model": path, "keep_labels": [["library", 1.5]]})
    assert "filter.3.remove_labels.0" in _err({"model": path, "remove_labels": [["library", -0.1]]})
    assert "filter.3.remove_labels" in _err(
        {"model": path, "keep_labels": ["library", 0.5], "remove_labels": [["howto", 0.1]]}
    )
    assert "filter.3.filter_mode" in _err({"model": path, "filter_mode": "words"})
    assert "filter.3.newline_replacement" in _err({"model": path, "newline_replacement": "\n"})
    one = parse(
        fc.FastTextClassifierOptions,
        {"model": path, "keep_labels": ["library", 1], "filter_mode": "PARAGRAPH"},
        "f",
        fc.NAME,
    )
    assert one.keep_labels == [("library", 1.0)] and one.filter_mode == "paragraph"
    assert one.files() == {"model": path}


@pytest.fixture
def switch():
    """The FILTER numba switch, restored after the test."""
    from pipeline.numba_backend import FILTER

    previous = FILTER.set(None)
    yield FILTER
    FILTER.set(previous)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize(("loss", "ngrams", "quantize"), MODELS)
def test_probabilities_as_fasttext(
    corpus: tuple[Path, list[str]], loss: str, ngrams: int, quantize: bool, compiled: bool, switch: Any
) -> None:
    """Every label's probability within 1e-6 of the fastText library's ``predict(k=-1)``, the same labels returned,
    on each paragraph of the held-out pages and on lines of dictionary words cut or lengthened around the compiled
    path's 8 and 16 inline bytes: through our predictor (it runs every one of these models), compiled and numpy."""
    switch.set(compiled)
    path = _train(corpus, loss, ngrams, quantize)
    lines = [" ".join(p.split()) for text in corpus[1][:30] for p in text.split("\n\n")] + ["", "json"]
    words = sorted({w for line in lines for w in line.split() if 7 <= len(w.encode()) <= 40})[::5]
    lines += [" ".join(w[:-1] + " " + w + " " + w + "x" + " " + w[:-1] + "#" for w in words[i : i + 40])
              for i in range(0, len(words), 40)]  # fmt: skip
    step = fc.FastTextClassifierFilter(model=path)
    assert fc.predictor(fc.local_model(path)) is not None
    ours = step.predict(lines)
    assert ("pipeline.fasttext.predict_numba" in sys.modules) or not compiled
    library = fc.library_model(path)
    for line, got in zip(lines, ours, strict=True):
        labels, probs = library.predict(line, k=-1)
        want = {label.removeprefix("__label__"): float(p) for label, p in zip(labels, probs, strict=True)}
        assert got.keys() == want.keys(), line
        assert all(abs(got[k] - want[k]) <= 1e-6 for k in want), (line, got, want)
