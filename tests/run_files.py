"""Comparing two finished runs file by file, wherever they live (local disk, gs://, s3://): table contents as
sorted rows (part-file names and row order depend on how a table was written), every other file byte for
byte, and the files that record times or the run's own location compared without those fields."""

from __future__ import annotations

import json
import re
from typing import Any

import fsspec
import pyarrow.parquet as pq

# files that record wall times or the run directory's location: compared without those fields (see `comparable`)
TIMED = ("manifest.json", "report.json", "report.html")
TIME_KEY = re.compile(r"(^|_)(seconds|started|finished|elapsed|time)(_|$)")  # seconds, seconds_training, ...


def list_run(url: str) -> list[str]:
    """Every file below ``url`` relative to it, hidden (``.``) files left out, sorted."""
    fs, root = fsspec.core.url_to_fs(url)
    fs.invalidate_cache()
    root = root.rstrip("/")
    names = [p[len(root) + 1 :] for p in fs.find(root)]
    return sorted(n for n in names if not any(part.startswith(".") for part in n.split("/")))


def table_dirs(names: list[str]) -> set[str]:
    """Directories holding a ``_SUCCESS`` file of a Parquet write (stage markers under ``_stages/`` are not)."""
    return {n.rsplit("/", 1)[0] for n in names if n.endswith("/_SUCCESS") and not n.startswith("_stages/")}


def table_rows(url: str, table: str, names: list[str]) -> list[str]:
    """The rows of every Parquet file of ``table``, each as key-sorted JSON, sorted."""
    fs, root = fsspec.core.url_to_fs(url)
    rows = []
    for name in names:
        if name.startswith(table + "/") and name.endswith(".parquet") and "/_" not in name[len(table) :]:
            with fs.open(f"{root.rstrip('/')}/{name}", "rb") as f:
                rows += [json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(f).to_pylist()]
    return sorted(rows)


def _drop_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_times(v) for k, v in value.items() if not TIME_KEY.search(k)}
    if isinstance(value, list):
        return [_drop_times(v) for v in value]
    return value


def comparable(name: str, data: bytes, run: str) -> Any:
    """What must be equal between two runs: the bytes; for a stage marker and ``dedup/report.json`` the JSON
    without time fields and with the run's location as ``<run>``, a marker's file list without the Parquet part
    files (tables are compared by their rows) and files holding times; None for :data:`TIMED` files."""
    if name in TIMED:
        return None
    if not (name.startswith("_stages/") or name == "dedup/report.json"):
        return data
    found = _drop_times(json.loads(data.decode("utf-8").replace(run.rstrip("/"), "<run>")))
    files = found.get("outputs", {}).get("files")
    if files is not None:
        timed = (*TIMED, "dedup/report.json")  # their sizes vary with the times they hold
        found["outputs"]["files"] = {k: v for k, v in files.items() if not k.endswith(".parquet") and k not in timed}
    return found


def run_contents(url: str) -> dict[str, Any]:
    """``{table/: sorted rows, file: comparable(...)}`` of the run at ``url``."""
    fs, root = fsspec.core.url_to_fs(url)
    names = list_run(url)
    tables = table_dirs(names)
    found: dict[str, Any] = {f"{t}/": table_rows(url, t, names) for t in sorted(tables)}
    for name in names:
        if not any(name.startswith(t + "/") for t in tables):
            found[name] = comparable(name, fs.cat_file(f"{root.rstrip('/')}/{name}"), url)
    return found
