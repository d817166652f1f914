"""report.html's Repeated spans section, which the spans stage draws (pipeline/spans/report_html.py), from a
report.json ``spans`` entry."""

from __future__ import annotations

from pipeline.spans.report_html import report_html


def test_the_section_shows_each_source_s_figures_and_the_most_repeated_spans_escaped() -> None:
    spans = {
        "removed_bytes": {"web": {"sentences": 120, "exact_substring": 4500},
                          "wiki": {"sentences": 0, "exact_substring": 7}},
        "removed_ranges": {"web": {"sentences": 3, "exact_substring": 12},
                           "wiki": {"sentences": 0, "exact_substring": 1}},
        "changed": {"web": 9, "wiki": 1},
        "emptied": {"web": 2, "wiki": 0},
        "too_short": {"web": 1, "wiki": 0},
        "most_repeated": [
            {"kind": "exact_substring", "copies": 31, "bytes": 88, "kept_doc_id": -4, "example_doc_id": 17,
             "text": "<b>cookie</b> & notice"},
        ],
    }  # fmt: skip
    page = "".join(report_html({"spans": spans}))
    assert "<h2>Repeated spans</h2>" in page
    # kinds in name order: exact_substring, sentences; bytes, then ranges, then documents changed, emptied, too short
    cells = [4500, 120, 12, 3, 9, 2, 1]
    assert "<tr><td>web</td>" + "".join(f'<td class="n">{n:,}</td>' for n in cells) + "</tr>" in page
    assert "<tr><td>wiki</td>" + "".join(f'<td class="n">{n}</td>' for n in (7, 0, 1, 0, 1, 0, 0)) + "</tr>" in page
    assert '<td class="n">31</td><td class="n">88</td><td class="n">-4</td><td class="n">17</td>' in page
    assert "&lt;b&gt;cookie&lt;/b&gt; &amp; notice" in page and "<b>cookie" not in page


def test_no_section_without_the_stage() -> None:
    assert report_html({"dedup": {}}) == []
