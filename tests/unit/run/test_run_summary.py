"""The end-of-run summary and the blend's left-out sources (issue 14, item 12), without Spark."""

from __future__ import annotations

import logging

from pipeline.config import load_config_text
from pipeline.merge_blend.stage import left_out_sources
from pipeline.report.summary import summary_text

ROW = {"documents_read": 3, "rejected": 1, "duplicates_removed": 0, "survivors": 2, "written": 2}


def _config(tmp_path, extra: str = "", weights: tuple = (1, 2, 3)):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    sources = "".join(
        f'  - {{name: {n}, paths: ["{data}"], weight: {w}}}\n'
        for n, w in zip(("web", "wiki", "code"), weights, strict=True)
    )
    return load_config_text(f"output: {tmp_path / 'run'}\ntokenizer: {{train: true}}\n{extra}sources:\n{sources}")


def test_summary_lists_sources_in_config_order_after_a_resume():
    # a resumed run reads its counts back from key-sorted JSON: the accounting arrives alphabetically
    data = {
        "config": {"sources": [{"name": "web"}, {"name": "wiki"}, {"name": "code"}]},
        "accounting": {"code": ROW, "web": ROW, "wiki": ROW},
        "stages": {},
    }
    lines = [line.split()[0] for line in summary_text(data).splitlines() if line.startswith("  ")]
    assert lines == ["web", "wiki", "code"]


def test_a_weighted_source_without_survivors_is_warned_about_and_listed(tmp_path, caplog):
    config = _config(tmp_path)
    with caplog.at_level(logging.WARNING, logger="pipeline"):
        entries = left_out_sources(config, ["wiki"])
    assert entries == [{"source": "wiki", "weight": 2.0, "why": "no documents survived"}]
    assert any("wiki" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    data = {"config": {"sources": []}, "accounting": {}, "stages": {"merge-blend": {"counts": {"left_out": entries}}}}
    assert "left out of the blend: wiki (weight 2.0: no documents survived)" in summary_text(data)


def test_blend_weights_string_gives_the_left_out_weight(tmp_path):
    config = _config(tmp_path, extra='blend: {weights: "30 web 70 wiki 5 code"}\n')
    assert left_out_sources(config, ["code"]) == [{"source": "code", "weight": 5.0, "why": "no documents survived"}]
    assert left_out_sources(config, []) == []
