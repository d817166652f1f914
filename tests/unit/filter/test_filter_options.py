"""Every filter option is checked before any Spark job starts, each bad one a one-line error naming
``filter.<index>.<key>`` (docs/stages.md, The filter stage; docs/bad_input.md, Config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli.commands import main as cli_main
from pipeline.config import ConfigError, load_config_text
from pipeline.filter.rules.language import default_model_path
from pipeline.run.preflight import check_stage_configs
from tests.config_texts import config_text, write_jsonl

LID_LABELS = 176  # lid.176.ftz's languages


def _run_without_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: str) -> int:
    """``python -m pipeline run`` of a config with ``filters`` as its filter list; Spark must not start."""
    config = tmp_path / "c.yaml"
    config.write_text(config_text(write_jsonl(tmp_path), output=str(tmp_path / "run")) + f"filter: {filters}\n")

    def no_spark(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark must not start for a bad filter option")

    monkeypatch.setattr("pipeline.spark.session.build_session", no_spark)
    return cli_main(["run", "--config", str(config)])


def _not_a_model(tmp_path: Path) -> str:
    path = tmp_path / "model.bin"
    path.write_bytes(b"this is not a fastText model\n" * 10)
    return str(path)


def _no_words(tmp_path: Path) -> str:
    path = tmp_path / "empty.txt"
    path.write_text("\n  \n", encoding="utf-8")
    return str(path)


CASES = [
    # issue 46 item 10: found late, or without the key
    ("[{name: language, languages: []}]", "filter.0.languages"),
    ("[{name: language, min_score: .nan}]", "filter.0.min_score"),
    ("[{name: c4}, {name: pii, email_replacement: []}]", "filter.1.email_replacement"),
    ("[{name: pii, phone_region: ZZ}]", "filter.0.phone_region"),
    ("[{name: language, model_path: /nonexistent/lid.176.ftz}]", "filter.0.model_path"),
    ("[{name: gopher_quality, min_doc_words: -1}]", "filter.0.min_doc_words"),
    ("[{name: c4, bad_words_file: /nonexistent/words.txt}]", "filter.0.bad_words_file"),
    # item 11: out of range
    ("[{name: language, languages: [fr], min_score: -0.1}]", "filter.0.min_score"),
    ("[{name: language, languages: [fr], min_score: 1.5}]", "filter.0.min_score"),
    ("[{name: language, min_score: .inf}]", "filter.0.min_score"),
    ("[{name: gopher_quality, max_doc_words: .inf}]", "filter.0.max_doc_words"),
    ("[{name: gopher_repetition, dup_line_frac: 2.5}]", "filter.0.dup_line_frac"),
    ("[{name: gopher_repetition, top_n_grams: [[2, 1.5]]}]", "filter.0.top_n_grams.0"),
    ("[{name: gopher_quality, max_bullet_lines_ratio: 1.1}]", "filter.0.max_bullet_lines_ratio"),
    ("[{name: fineweb, line_punct_thr: -1}]", "filter.0.line_punct_thr"),
    ("[{name: fineweb, char_duplicates_ratio: .nan}]", "filter.0.char_duplicates_ratio"),
    ("[{name: language, languages: [en, xx]}]", "filter.0.languages"),
]


@pytest.mark.parametrize(("filters", "key"), CASES)
def test_a_bad_option_is_one_line_naming_its_key_before_spark(tmp_path, monkeypatch, capsys, filters, key) -> None:
    assert _run_without_spark(tmp_path, monkeypatch, filters) == 2
    err = capsys.readouterr().err.strip()
    assert f"config key '{key}'" in err and len(err.splitlines()) == 1, err


def test_a_model_path_that_is_not_a_model_names_the_key_and_the_file(tmp_path, monkeypatch, capsys) -> None:
    """Issue 46 item 8: one line, not a traceback."""
    path = _not_a_model(tmp_path)
    assert _run_without_spark(tmp_path, monkeypatch, f"[{{name: language, model_path: {path}}}]") == 2
    err = capsys.readouterr().err.strip()
    assert "config key 'filter.0.model_path'" in err and path in err and "not a fastText model" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_bad_words_file_without_words(tmp_path, monkeypatch, capsys) -> None:
    path = _no_words(tmp_path)
    assert _run_without_spark(tmp_path, monkeypatch, f"[{{name: c4, bad_words_file: {path}}}]") == 2
    err = capsys.readouterr().err.strip()
    assert "config key 'filter.0.bad_words_file'" in err and path in err and len(err.splitlines()) == 1


def test_known_languages_are_the_model_s_labels(tmp_path) -> None:
    """What a known code is: a label of the model in use (lid.176's 176), whatever ISO lists."""
    from tests.oracles import require_oracle

    fasttext = require_oracle("fasttext")
    ranked = fasttext.load_model(default_model_path()).predict("hello", k=-1)[0]  # the labels its search reaches
    labels = [label.removeprefix("__label__") for label in ranked]
    assert len(labels) > LID_LABELS * 0.9
    text = config_text(write_jsonl(tmp_path))
    check_stage_configs(
        load_config_text(text + f"filter: [{{name: language, languages: [{', '.join(map(repr, labels))}]}}]\n")
    )
    for code in ("xx", "eng", "EN", "zh-Hans"):  # not labels of lid.176 (its codes: en, zh, ...)
        with pytest.raises(ConfigError) as caught:
            check_stage_configs(load_config_text(text + f"filter: [{{name: language, languages: [{code}]}}]\n"))
        assert caught.value.key == "filter.0.languages" and code in str(caught.value)


def test_the_same_filter_twice_is_refused_naming_both(tmp_path, monkeypatch, capsys) -> None:
    """Issue 46 item 12: refused (docs/stages.md, The filter stage), in the run's list and a source's own."""
    assert _run_without_spark(tmp_path, monkeypatch, "[{name: c4}, {name: pii}, {name: c4, min_num_sentences: 1}]") == 2
    err = capsys.readouterr().err.strip()
    assert "config key 'filter.2.name'" in err and "filter.0 and filter.2" in err and len(err.splitlines()) == 1
    text = config_text(write_jsonl(tmp_path), sources={"web": "filter: [{name: pii}, {name: pii}]"})
    with pytest.raises(ConfigError) as caught:
        check_stage_configs(load_config_text(text))
    assert caught.value.key == "sources.0.filter.1.name" and "sources.0.filter.0 and sources.0.filter.1" in str(
        caught.value
    )
    check_stage_configs(load_config_text(text.replace("{name: pii}]", "{name: c4}]")))  # different filters: fine


def test_good_options_pass(tmp_path) -> None:
    text = config_text(write_jsonl(tmp_path))
    good = (
        "filter: [{name: language, languages: [en, fr], min_score: 0.0}, {name: gopher_repetition, dup_line_frac: 1},"
        " {name: fineweb, line_punct_thr: 0}, {name: pii, email_replacement: '', phone_region: gb},"
        " {name: c4, min_num_sentences: -1}]\n"
    )
    check_stage_configs(load_config_text(text + good))


def test_an_unquoted_norwegian_code_is_named_as_yaml_s_boolean(tmp_path, monkeypatch, capsys) -> None:
    """YAML 1.1 reads ``no`` (Norwegian's lid.176 code) unquoted as false: the error says to quote it."""
    assert _run_without_spark(tmp_path, monkeypatch, "[{name: language, languages: [en, no]}]") == 2
    err = capsys.readouterr().err.strip()
    assert "config key 'filter.0.languages.1'" in err and "quote it" in err and len(err.splitlines()) == 1
    text = config_text(write_jsonl(tmp_path))
    check_stage_configs(load_config_text(text + "filter: [{name: language, languages: [en, 'no']}]\n"))
