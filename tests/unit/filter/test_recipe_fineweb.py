"""conf/fineweb.yaml is FineWeb's recipe (datatrove 0.10.1's examples/fineweb.py) with its parameters, and
conf/commoncrawl.yaml runs the same filters. Contract: docs/recipes.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import load_config
from pipeline.filter import registry
from pipeline.filter.options import parse
from tests.oracles import require_oracle

REPO = Path(__file__).resolve().parents[3]
FINEWEB_ORDER = ["url", "language", "gopher_repetition", "gopher_quality", "c4", "fineweb", "pii"]


def _filters(name: str) -> list[dict]:
    return [dict(entry) for entry in load_config(REPO / "conf" / name).filter]


def test_fineweb_config_loads_with_the_recipe_in_its_order() -> None:
    cfg = load_config(REPO / "conf" / "fineweb.yaml")
    assert [e["name"] for e in cfg.filter] == FINEWEB_ORDER
    assert {s.format for s in cfg.sources} == {"warc"}
    assert cfg.ingest.html_extractor == "trafilatura"
    d = cfg.dedup
    assert (d.num_perm, d.bands, d.rows, d.ngram, d.verify) == (112, 14, 8, 5, False)


def test_commoncrawl_runs_the_same_filters() -> None:
    assert _filters("commoncrawl.yaml") == _filters("fineweb.yaml")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_filters_options_are_datatrove_finewebs() -> None:
    """Every option of each filter, defaults filled in, equals the argument of the datatrove class FineWeb builds
    (examples/fineweb.py's constructors: C4QualityFilter(filter_no_terminal_punct=False), the others bare)."""
    require_oracle("datatrove")
    import inspect

    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        LanguageFilter,
        URLFilter,
    )

    recipe = {
        "url": (URLFilter, {}),
        "gopher_repetition": (GopherRepetitionFilter, {}),
        "gopher_quality": (GopherQualityFilter, {}),
        "c4": (C4QualityFilter, {"filter_no_terminal_punct": False}),
        "fineweb": (FineWebQualityFilter, {}),
    }
    entries = {e["name"]: e for e in _filters("fineweb.yaml")}
    for name, (cls, given) in recipe.items():
        theirs = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()} | given
        options = parse(
            registry.options_class(name), {k: v for k, v in entries[name].items() if k != "name"}, name, name
        )
        for key, value in options.values().items():
            if key in theirs and value is not None and theirs[key] is not None:
                want = theirs[key]
                assert (list(value) if isinstance(value, tuple) else value) == (
                    list(want) if isinstance(want, tuple) else want
                ), (name, key, value, want)
    # LanguageFilter(): FineWeb ran it when datatrove's default was English; 0.10.1's default keeps every language,
    # so the recipe names English, at the threshold that is still datatrove's default
    lang = inspect.signature(LanguageFilter.__init__).parameters
    assert entries["language"]["min_score"] == lang["language_threshold"].default == 0.65
    assert entries["language"]["languages"] == ["en"]
    compared = sum(len(entries[name]) for name in recipe)
    assert compared >= 6, entries  # the comparison above saw the recipe's entries
