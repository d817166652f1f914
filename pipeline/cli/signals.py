"""``python -m pipeline signals RUN --where 'gopher_quality.word_count < 50' -n 5``: documents sampled by their signal
values in ``filter/signals/`` (docs/stages.md, Signals), each with its signals named in the condition, the filter
stage's decision and the start of its text. Read with pyarrow on the driver (no Spark)."""

from __future__ import annotations

import random
import re
from typing import Any

from pipeline import storage
from pipeline.errors import UsageError
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import has_table, rows_by_doc_id

_TERM = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>|=)\s*(.+?)\s*$")
EXCERPT = 200


class SignalsError(UsageError):
    """A ``--where`` the signals table cannot answer, or a run without signals."""


def parse_where(where: str, columns: list[str]) -> tuple[Any, list[str]]:
    """A pyarrow filter expression of ``where`` (terms ``<column> <op> <value>`` joined by ``and``) and the columns it
    names; a :class:`SignalsError` naming ``--where`` otherwise."""
    import pyarrow.compute as pc

    expression = None
    named: list[str] = []
    for term in re.split(r"\s+and\s+", where.strip()):
        found = _TERM.match(term)
        if not found:
            raise SignalsError(
                f"--where: cannot read {term!r} (want '<filter>.<measure> <op> <value>', op one of < <= > >= == !=)"
            )
        column, op, text = found.groups()
        if column not in columns:
            known = ", ".join(c for c in columns if c not in ("doc_id", "source"))
            raise SignalsError(f"--where: no signal {column!r} in filter/signals/ (its columns: {known})")
        value = _value(text)
        field = pc.field(column)
        part = {
            "<": field < value,
            "<=": field <= value,
            ">": field > value,
            ">=": field >= value,
            "==": field == value,
            "=": field == value,
            "!=": field != value,
        }[op]
        expression = part if expression is None else expression & part
        named.append(column)
    if expression is None:
        raise SignalsError("--where: give a condition such as 'gopher_quality.word_count < 50'")
    return expression, list(dict.fromkeys(named))


def _value(text: str) -> Any:
    """A number, or a quoted string."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise SignalsError(f"--where: {text!r} is neither a number nor a quoted string") from None


def sample_signals(run: str, where: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` random documents whose signals satisfy ``where`` (fewer when fewer do): doc_id, source, the named
    signals, ``decision`` (``kept`` or the drop's reason) and ``excerpt``."""
    import pyarrow.dataset as ds

    if not has_table(run, layout.FILTER_SIGNALS):
        raise SignalsError(
            f"{run} has no {layout.FILTER_SIGNALS}/: the filter stage did not run, or ran before signals"
        )
    fs, inner = storage.resolve(storage.join(run, *layout.parts(layout.FILTER_SIGNALS)))
    dataset = ds.dataset(inner, filesystem=fs, format="parquet", exclude_invalid_files=True)
    expression, named = parse_where(where, dataset.schema.names)
    rows = dataset.to_table(columns=["doc_id", "source", *named], filter=expression).to_pylist()
    rows.sort(key=lambda r: r["doc_id"])
    picked = random.Random(seed).sample(rows, min(n, len(rows)))
    ids = [r["doc_id"] for r in picked]
    dropped = rows_by_doc_id(run, layout.FILTER_DROPPED, ids, ["doc_id", "reason"]) if ids else {}
    texts = rows_by_doc_id(run, layout.DOCUMENTS, ids, ["doc_id", "text"]) if ids else {}
    for row in picked:
        row["decision"] = dropped[row["doc_id"]]["reason"] if row["doc_id"] in dropped else "kept"
        row["excerpt"] = (texts.get(row["doc_id"], {}).get("text") or "")[:EXCERPT]
    return picked


def format_signals(row: dict[str, Any], named: list[str]) -> str:
    """One sampled document: doc_id, source, decision, the named signals, and the start of its text."""
    values = ", ".join(f"{c}={row[c]!r}" for c in named)
    text = " ".join(str(row["excerpt"]).split())
    return f"{row['doc_id']:>20}  {row['source']} {row['decision']} [{values}]\n    {text}"
