"""The bench table's rows as data: per row, the bench command, what it measures, how to show its figures.

Each :class:`Entry` is one row of the bench table (docs/benchmarks.md, The table). ``args`` are the default
sizes, ``quick`` the sizes of a smoke check (``python -m bench readme_table --quick``). ``cold`` entries run
twice: first with empty caches (a fresh numba cache and no JVM class-data archive), then steady on the caches
that run left; the others run once, their own warm-up or in-run cold figure being part of what they write. A
:class:`Figure` turns the figures of the bench's JSON result (bench/result.schema.json; name -> value) into the
text of a cell: a format string over the figures' names, or a function; a figure the result lacks says "not
found". ``needs`` are files the bench cannot build itself: when one is absent the row says so. ``from_json`` rows
are not run for the table: they print a figure file kept in the repository (the bench's own ``--from-json``),
marked as such with that file's commits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCH_DATA = Path("/tmp/pipeline-bench")

Values = Mapping[str, float]


@dataclass(frozen=True)
class Figure:
    """One headline figure: ``show`` is a format string over the result's values, or a function of them (a
    missing value raises KeyError)."""

    label: str
    show: str | Callable[[Values], str]
    steady: bool = True  # False: a cold figure the bench measures itself (shown in the cold column)

    def text(self, values: Values) -> str:
        """The figure's cell text from the result's values."""
        return self.show.format_map(values) if isinstance(self.show, str) else self.show(values)


@dataclass(frozen=True)
class Entry:
    """One row of the bench table: ``python -m bench <bench>`` run with ``args`` (``quick`` for a smoke check)."""

    name: str
    script: str
    what: str
    args: tuple[str, ...]
    quick: tuple[str, ...]
    figures: tuple[Figure, ...]
    cold: bool = False
    needs: tuple[Path, ...] = ()
    default: bool = True
    from_json: Path | None = None

    @property
    def bench(self) -> str:
        """The bench's name for ``python -m bench NAME``."""
        return self.script.removesuffix(".py").removeprefix("bench_")


def each(pattern: str, show: Callable[[Values, re.Match[str]], str]) -> Callable[[Values], str]:
    """A figure shown once per value whose name matches ``pattern`` (in the result's order), joined by ", "."""

    def shown(values: Values) -> str:
        found = [show(values, m) for name in values if (m := re.fullmatch(pattern, name))]
        if not found:
            raise KeyError(pattern)
        return ", ".join(found)

    return shown


def _cold_warm(mode: str) -> str:
    return (
        f"{{{mode} cold:.0f}} / {{{mode} warm:.0f}} s = {{{mode} cold/warm:.2f}}x (CPU {{{mode} CPU cold/warm:.2f}}x)"
    )


F = Figure
PEER = SHARED / "peers" / "text_dedup_minhash_spark_6bb8e89.py"
RELEASE_200 = BENCH_DATA / "release-corpus-200mb"
RELEASE_1000 = BENCH_DATA / "release-corpus-1000mb"
VS_BIGCODE_FIGURES = (
    F("speed-up", "{speed-up:.2f}x"),
    F("CPU", "{BigCode CPU:.1f} vs {ours CPU:.1f} s = {CPU ratio:.2f}x"),
    F("survivors", "{ours survivors:.0f} vs {BigCode survivors:.0f}"),
    F("precision ours", "{precision ours:.3f} (matched pair)"),
    F("precision script", "{precision script:.3f} (best match)"),
    F("archive", lambda v: "mapped" if v["archive mapped"] else "recorded"),
    F("features step", "{features step:.1f} MB/s"),
)
VS_BIGCODE = "ingest + dedup vs the BigCode script on the real release corpus: time, CPU, survivors, precision"

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "vs_bigcode_release",
        "bench_vs_bigcode.py",
        VS_BIGCODE,
        ("--corpus", str(RELEASE_200), "--mb", "200"),
        ("--corpus", str(RELEASE_200), "--mb", "5", "--sample", "50"),
        VS_BIGCODE_FIGURES,
        cold=True,
        needs=(PEER, RELEASE_200),
    ),
    Entry(
        "vs_bigcode_release_1gb",
        "bench_vs_bigcode.py",
        "the same at 1 GB of the release corpus (steady only: the cold run is the 200 MB row's)",
        ("--corpus", str(RELEASE_1000), "--mb", "1000"),
        ("--corpus", str(RELEASE_1000), "--mb", "5", "--sample", "50"),
        VS_BIGCODE_FIGURES,
        needs=(PEER, RELEASE_1000),
    ),
    Entry(
        "vs_bigcode_synthetic",
        "bench_vs_bigcode.py",
        "the same on bench/corpus.py's synthetic text",
        ("--mb", "200"),
        ("--mb", "5", "--sample", "50"),
        VS_BIGCODE_FIGURES,
        needs=(PEER,),
        default=False,
    ),
    Entry(
        "tokenize",
        "bench_tokenize.py",
        "tokenize stage's Python workers per CPU s vs the bare encoder",
        ("--repeat", "2"),
        ("--mb", "5", "--repeat", "1", "--partitions", "2"),
        (
            F("ratio", "{workers/bare:.2f}x"),
            F("whole stage", "{whole stage/bare:.2f}x"),
            F("no-op floor", "{no-op floor:.2f} CPU s"),
            F("cold workers", "{cold/bare:.2f}x", steady=False),
        ),
    ),
    Entry(
        "blend",
        "bench_blend.py",
        "blending indices vs megatron-core's C++ helper (Megatron mode bit-equal)",
        ("--size", "100000000"),
        ("--size", "1000000", "--repeat", "1", "--datasets", "3"),
        (
            F("ratio(best)", each(r"\d+ datasets (ours.*)", lambda v, m: f"{m[1]} {v[m[0]]:.2f}x")),
            F("first call", "compile {first call compile:.2f} s, load {first call load:.2f} s", steady=False),
        ),
    ),
    Entry(
        "training_indices",
        "bench_training_indices.py",
        "megatron_cache/ files: ours vs megatron-core's builder",
        ("--repeat", "5"),
        ("--tokens", "1e7", "--repeat", "1"),
        (
            F(
                "ours/megatron-core",
                "wall {seconds ours/megatron-core:.2f}x fresh, {again ours/megatron-core:.2f}x again; "
                "CPU {cpu ours/megatron-core:.2f}x fresh, {cpu_again ours/megatron-core:.2f}x again; "
                "{identical files:.0f} files identical",
            ),
        ),
    ),
    Entry(
        "filter",
        "bench_filter.py",
        "each filter vs datatrove 0.10.1 (language: fastText predict), one core",
        ("--mb", "100", "--repeat", "1"),
        ("--mb", "1", "--repeat", "1"),
        (
            F(
                "ours/theirs",
                each(
                    r"(\w+) ours",
                    lambda v, m: (
                        f"{m[1]} {v[m[0]]:.2f} vs {v[m[1] + ' theirs']:.2f} MB/s ({v[m[0]] / v[m[1] + ' theirs']:.1f}x)"
                    ),
                ),
            ),
        ),
    ),
    Entry(
        "filter_stage",
        "bench_filter_stage.py",
        "filter stage (six filters) beside ingest + dedup, local[2]",
        ("--mb", "200"),
        ("--mb", "10"),
        (F("filter/(ingest+dedup)", "{filter/(ingest+dedup):.2f}x"), F("whole run", "{whole run:.2f}x")),
    ),
    Entry(
        "cold_cluster",
        "bench_cold_cluster.py",
        "fresh standalone cluster, empty caches: first run over second, without and with the shipped numba cache",
        ("--mb", "20"),
        ("--mb", "2"),
        (F("zip only", _cold_warm("zip")), F("numba cache", _cold_warm("cache"))),
    ),
    Entry(
        "scale",
        "bench_scale.py",
        "whole run on a standalone cluster, 1 to 10 GB: CPU s per GB (docs/scaling.md)",
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        (F("CPU s/GB", each(r"([\d.]+) GB", lambda v, m: f"{m[1]} GB {v[m[0]]:.0f}")),),
        from_json=REPO / "docs" / "scaling-1-to-10gb.json",
    ),
)


def by_name() -> dict[str, Entry]:
    """The entries by name."""
    return {e.name: e for e in ENTRIES}
