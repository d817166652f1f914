"""docs/config.md's table of sections stays true to the config schema and the filter registry (issue #42, item 6:
each docs page printed or checked by the tests that keep it true).

Checked per row: the section is a field of ``PipelineConfig``; every field of its dataclass is named in backticks;
every backticked name outside parentheses (where values and defaults go) is a field of it or of a dataclass it
holds; the ``filter`` row lists exactly the filters the package registers.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from pipeline.config import PipelineConfig, schema
from pipeline.filter import registry

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(\w+)` \| (.*) \|$", re.M)
FILTER_LIST = re.compile(r"\{name: ([\w|]+),")


def _dataclasses_in(kind: object) -> list[type]:
    """The dataclasses a field's type holds (``X``, ``X | None``, ``list[X]``)."""
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return [kind]
    return [found for arg in typing.get_args(kind) for found in _dataclasses_in(arg)]


def _field_names(cls: type) -> set[str]:
    """Its fields' names and, recursively, those of the dataclasses they hold."""
    hints = typing.get_type_hints(cls, vars(schema))
    found = set()
    for field in dataclasses.fields(cls):
        found.add(field.name)
        for inner in _dataclasses_in(hints[field.name]):
            found |= _field_names(inner)
    return found


def _outside_parentheses(text: str) -> str:
    kept, depth = [], 0
    for char in text:
        depth += char == "("
        if depth == 0:
            kept.append(char)
        depth -= char == ")" and depth > 0
    return "".join(kept)


def product_filters() -> list[str]:
    """The filters the package itself registers (not a test's or a plugin's)."""
    return sorted(n for n in registry.names() if registry.target(n).startswith("pipeline."))


def config_doc_problems(text: str, filters: list[str]) -> list[str]:
    """Every way ``text`` (docs/config.md) disagrees with the schema or ``filters``, one line each (the table of
    its "Sections" part; other parts' tables are not sections)."""
    part = text.split("\n## Sections\n", 1)[-1].split("\n## ", 1)[0]
    rows = {m[1]: m[2] for m in ROW.finditer(part)}
    hints = typing.get_type_hints(PipelineConfig, vars(schema))
    sections = [f.name for f in dataclasses.fields(PipelineConfig)]
    problems = [f"no row for the section {name!r}" for name in sections if name not in rows]
    problems += [f"a row for {name!r}, which is no section" for name in rows if name not in sections]
    for name, row in rows.items():
        found = _dataclasses_in(hints.get(name))
        if not found:
            continue
        own = [f.name for f in dataclasses.fields(found[0])]
        named = set(re.findall(r"`([a-z_][a-z0-9_]*)`", row))
        problems += [f"{name}: the key {key!r} is not documented" for key in own if key not in named]
        keys = set(re.findall(r"`([a-z_][a-z0-9_]*)`", _outside_parentheses(row)))
        problems += [f"{name}: {key!r} is no key of the section" for key in sorted(keys - _field_names(found[0]))]
    listed = FILTER_LIST.search(rows.get("filter", ""))
    documented = sorted(listed[1].split("|")) if listed else []
    if documented != filters:
        problems.append(f"filter: lists {documented}, the registry has {filters}")
    return problems


def test_the_config_page_names_every_key_and_filter() -> None:
    assert config_doc_problems((ROOT / "docs" / "config.md").read_text(encoding="utf-8"), product_filters()) == []


def test_a_stale_config_page_is_caught() -> None:
    """The check bites: a filter left out of the list, a key left out, a key that does not exist."""
    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    filters = product_filters()
    assert "url" in filters and "c4" in filters
    stale = text.replace("|c4|", "|").replace("`threshold`, ", "").replace("`seed`, `scheme`", "`seed`, `scheme2`")
    assert config_doc_problems(stale, filters) == [
        "dedup: the key 'threshold' is not documented",
        "dedup: the key 'scheme' is not documented",
        "dedup: 'scheme2' is no key of the section",
        f"filter: lists {sorted(set(filters) - {'c4'})}, the registry has {filters}",
    ]
    assert config_doc_problems(text.replace("| `tokenize` |", "| `tokenise` |"), filters) == [
        "no row for the section 'tokenize'",
        "a row for 'tokenise', which is no section",
    ]
