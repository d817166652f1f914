"""report.html's assembly: each stage draws its own sections (``Stage.report_html``) and the page places them
before the page's own section the stage's ``report_before`` names, so the dedup and spans sections stand where
they stood when report/ drew them (docs/running.md, The report)."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest

from pipeline.report.html import PLACES, render_html
from pipeline.run.registry import STAGES
from pipeline.stage_api.stage import Stage

DOC = {"doc_id": 7, "source": "web", "file": "a.jsonl", "position": 0, "characters": 11, "excerpt": "one two three"}


def _data() -> dict[str, Any]:
    """A report.json with an entry for every section the page can show but the filter stage's."""
    return {
        "run": "runs/x",
        "generated": "2026-01-01T00:00:00Z",
        "summary": {"documents_read": 3, "rejected": 1, "duplicates_removed": 1, "survivors": 1, "written": 1,
                    "survivor_ratio": 0.33, "tokens": 5},
        "sources": {},
        "timeline": {"stages": [{"stage": "ingest", "start": 0.0, "seconds": 1.0}],
                     "dedup_steps": [{"step": "features", "seconds": 0.5}]},
        "parameters": [{"key": "dedup.threshold", "value": 0.7}],
        "dedup": {
            "counts": {"exact_groups": 1},
            "cluster_size_histogram": {"2": 1},
            "lsh": None,
            "examples": {"web": {"near_duplicates": [{"component": 1, "cluster_size": 2, "jaccard": 0.8,
                                                      "survivor": DOC, "removed": {**DOC, "excerpt": "one two four"}}],
                                 "exact_duplicates": []}},
        },
        "rejects": {"examples": {"web": {"malformed_json": [{"file": "f", "position": 3, "detail": "",
                                                            "excerpt": "{"}]}}},
        "tokens": {"per_source": {"web": 5}, "length_histogram": {}},
        "blend": None,
        "spans": {"removed_bytes": {"web": {"lines": 4}}, "removed_ranges": {"web": {"lines": 1}},
                  "changed": {"web": 1}, "emptied": {}, "too_short": {}, "most_repeated": []},
    }  # fmt: skip


def _headings(page: str) -> list[str]:
    return re.findall(r"<h2>([^<]*)</h2>", page)


def test_the_stages_sections_stand_where_the_page_put_them_before_the_stages_drew_them() -> None:
    page = render_html(_data(), STAGES)
    assert _headings(page) == [
        "Documents per source",
        "Dedup",
        "What dedup removed, per source",
        "What ingest rejected, per reason",
        "Repeated spans",
        "Tokens and blend",
        "Timeline",
        "Parameters",
    ]
    assert "<mark>three</mark>" in page and "<mark>four</mark>" in page  # the dedup stage's near pair
    assert "dedup steps (seconds from the start of dedup)" in page and "dedup: features" in page


def test_without_the_stages_their_entries_are_tables_of_figures() -> None:
    """report/ draws neither section itself: without the stages the page shows their entries as any stage's."""
    page = render_html(_data())
    assert "What dedup removed" not in page and "Repeated spans" not in page and "<mark>" not in page
    assert _headings(page)[-4:] == ["Timeline", "Dedup", "Spans", "Parameters"]
    assert "What ingest rejected, per reason" in page  # the run's own section


class _Toy(Stage):
    name = "toy"
    tag: ClassVar[str] = ""

    def report_html(self, data: dict[str, Any]) -> list[str]:
        return [f"<h2>toy {self.tag}</h2>"]


def _toy(place: str, tag: str) -> Stage:
    return type(f"Toy{tag}", (_Toy,), {"report_before": place, "tag": tag})()


def test_a_stage_s_sections_go_before_the_page_s_section_it_names_in_run_order() -> None:
    stages = [_toy(place, f"{place} {i}") for place in reversed(PLACES) for i in (1, 2)]
    headings = _headings(render_html(_data(), stages))
    follows = {"rejects": "What ingest rejected, per reason", "tokens": "Tokens and blend", "timeline": "Timeline",
               "parameters": "Parameters"}  # fmt: skip
    assert set(follows) == set(PLACES)
    for place, section in follows.items():
        at = headings.index(section)
        assert headings[at - 2 : at] == [f"toy {place} 1", f"toy {place} 2"], headings


def test_a_place_the_page_has_not_is_refused_naming_the_stage() -> None:
    with pytest.raises(ValueError, match=r"toy: 'overview'"):
        render_html(_data(), [_toy("overview", "x")])


BLEND = {
    "sources": ["web/q0", "web/q1", "wiki"],  # web blended by quality bucket
    "weights": [1.0, 3.0, 4.0],
    "achieved": [0.12, 0.38, 0.5],
    "data_path": "1.0 /r/megatron/web/q0 3.0 /r/megatron/web/q1 4.0 /r/megatron/wiki",
    "mode": "by_weight",
    "size": 1000,
    "rehydrate": {"web": {"distinct_documents": 5, "copies_added": 2}},
}


def test_the_blend_chart_stands_beside_the_token_charts_and_its_data_path_after_them() -> None:
    """merge-blend draws the blend (Stage.report_charts, report_html): its chart inside Tokens and blend's charts,
    after the token chart; its size, data path and rehydration (web's buckets' weights together: 4 of 8) after
    them, before the timeline."""
    page = render_html({**_data(), "blend": BLEND}, STAGES)
    section = page[page.index("<h2>Tokens and blend</h2>") : page.index("<h2>Timeline</h2>")]
    charts, after = section.split("</div>", 1)
    assert charts.startswith('<h2>Tokens and blend</h2><div class="charts"><svg') and charts.count("<svg") == 2
    assert charts.index("tokens per source") < charts.index("blend: weights and achieved shares")
    assert after.startswith('<p class="meta">by_weight, 1,000 samples: <code>--data-path 1.0 /r/megatron/web/q0 ')
    assert '<td>web</td><td class="n">0.5</td><td class="n">5</td><td class="n">2</td><td class="n">7</td>' in after


def test_without_the_merge_blend_stage_the_blend_is_a_table_of_figures() -> None:
    """report/ draws no blend itself: without the stage its entry is shown as any stage's figures."""
    page = render_html({**_data(), "blend": BLEND})
    assert "blend: weights" not in page and '<p class="meta">by_weight' not in page
    assert _headings(page)[-5:] == ["Timeline", "Dedup", "Blend", "Spans", "Parameters"]
