"""The bench table's rows as data: per row, the bench command, what it measures, how to show its figures.

Each :class:`Entry` is one row of the bench table (docs/benchmarks.md, The table). ``args`` are the default
sizes (about 55-60 minutes in all on 2 quiet cores, estimated from the table's figures), ``quick`` the sizes of a smoke
check (``python -m bench readme_table --quick``). ``cold`` entries run twice: first with empty caches (a fresh
numba cache and no JVM class-data archive), then steady on the caches that run left; the others run once,
their own warm-up or in-run cold figure being part of what they write. A :class:`Figure` turns the figures of
the bench's JSON result (bench/result.schema.json; name -> value) into the text of a cell; a figure the result
lacks says "not found". ``needs`` are files the bench cannot build itself: when one is absent the row says so.
``from_json`` rows are not run for the table: they print a figure file kept in the repository (the bench's own
``--from-json``), marked as such with that file's commits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCH_DATA = Path("/tmp/pipeline-bench")

Values = Mapping[str, float]


@dataclass(frozen=True)
class Figure:
    """One headline figure: ``show`` writes it from the result's values (a missing one raises KeyError)."""

    label: str
    show: Callable[[Values], str]
    steady: bool = True  # False: a cold figure the bench measures itself (shown in the cold column)


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
    note: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)

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


def _f(label: str, show: Callable[[Values], str], steady: bool = True) -> Figure:
    return Figure(label, show, steady)


def _cold_warm(values: Values, mode: str) -> str:
    wall = f"{values[mode + ' cold']:.0f} / {values[mode + ' warm']:.0f} s = {values[mode + ' cold/warm']:.2f}x"
    return f"{wall} (CPU {values[mode + ' CPU cold/warm']:.2f}x)"


PEER = SHARED / "peers" / "text_dedup_minhash_spark_6bb8e89.py"
RELEASE_200 = BENCH_DATA / "release-corpus-200mb"
RELEASE_1000 = BENCH_DATA / "release-corpus-1000mb"
VS_BIGCODE_FIGURES = (
    _f("speed-up", lambda v: f"{v['speed-up']:.2f}x"),
    _f("CPU", lambda v: f"{v['BigCode CPU']:.1f} vs {v['ours CPU']:.1f} s = {v['CPU ratio']:.2f}x"),
    _f("survivors", lambda v: f"{v['ours survivors']:.0f} vs {v['BigCode survivors']:.0f}"),
    _f("precision ours", lambda v: f"{v['precision ours']:.3f} (matched pair)"),
    _f("precision script", lambda v: f"{v['precision script']:.3f} (best match)"),
    _f("archive", lambda v: "mapped" if v["archive mapped"] else "recorded"),
    _f("features step", lambda v: f"{v['features step']:.1f} MB/s"),
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "minhash",
        "bench_minhash.py",
        "MinHash signatures per core vs datasketch (SHA-1, identical output)",
        ("--mb", "1"),
        ("--mb", "0.05", "--repeat", "1"),
        (
            _f("sha1", each(r"(\w+) sha1", lambda v, m: f"{m[1]} {v[m[0]] / v[m[1] + ' datasketch']:.1f}x")),
            _f("fast hash", each(r"(\w+) xxhash", lambda v, m: f"{m[1]} {v[m[0]] / v[m[1] + ' datasketch']:.1f}x")),
            _f("first calls", lambda v: f"{v['first calls']:.2f} s"),
        ),
        cold=True,
    ),
    Entry(
        "dedup_features",
        "bench_dedup_features.py",
        "dedup features step per core: SHA-1 kernels, doc_features",
        ("--mb", "20"),
        ("--mb", "1", "--repeat", "1"),
        (
            _f(
                "SHA-1 lanes",
                lambda v: f"{v['sha1 new lanes']:.1f} ns/shingle (previous {v['sha1 previous scalar']:.1f})",
            ),
            _f("doc_features", lambda v: f"{v['doc_features']:.1f} MB/s (previous {v['doc_features previous']:.1f})"),
            _f("first call", lambda v: f"{v['first call previous']:.1f} -> {v['first call']:.1f} s", steady=False),
        ),
    ),
    Entry(
        "dedup_stage",
        "bench_dedup_stage.py",
        "whole dedup stage on local[2]: MB/s, peak driver memory",
        ("--mb", "200"),
        ("--mb", "10"),
        (
            _f("MB/s", lambda v: f"{v['stage']:.2f} MB/s ({v['stage seconds']:.1f} s)"),
            _f("peak", lambda v: f"python {v['peak python']:.0f} / JVM {v['peak JVM']:.0f} MiB"),
        ),
        cold=True,
    ),
    Entry(
        "vs_bigcode_release",
        "bench_vs_bigcode.py",
        "ingest + dedup vs the BigCode script on the real release corpus: time, CPU, survivors, precision",
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
        note="not in the default set (--only vs_bigcode_synthetic)",
    ),
    Entry(
        "ingest",
        "bench_ingest.py",
        "ingest stage on local[2] vs a one-process JSON parse",
        ("--mb", "200"),
        ("--mb", "10"),
        (
            _f("stage", lambda v: f"{v['stage']:.1f} MB/s ({v['stage seconds']:.1f} s)"),
            _f("json.loads", lambda v: f"{v['json.loads']:.1f} MB/s"),
        ),
        cold=True,
    ),
    Entry(
        "warc",
        "bench_warc.py",
        "WARC to text per CPU second: ours (resiliparse, trafilatura) vs datatrove",
        ("--mb", "15", "--jobs", "2", "--only", "ours-resiliparse,ours-trafilatura,datatrove"),
        ("--mb", "1", "--jobs", "2", "--only", "ours-resiliparse,datatrove-1s"),
        (
            _f("MB/CPU s", each(r"[\w-]+", lambda v, m: f"{m[0]} {v[m[0]]:.3f}")),
            _f("ratios", each(r"(.+)/(.+)", lambda v, m: f"{m[1]} / {m[2]} {v[m[0]]:.2f}x")),
        ),
    ),
    Entry(
        "small_files",
        "bench_small_files.py",
        "ingest of many small files: seconds, splits, tasks, parts",
        ("--files", "5000"),
        ("--files", "200"),
        (
            _f("ingest", lambda v: f"{v['ingest']:.1f} s, {v['splits']:.0f} splits in {v['tasks']:.0f} tasks"),
            _f("Parquet parts", lambda v: f"{v['parts']:.0f}"),
        ),
        cold=True,
        needs=(SHARED / "fixtures" / "corpus.en",),
    ),
    Entry(
        "direct_tables",
        "bench_direct_tables.py",
        "write + scan a table: direct (pyarrow + fsspec) vs Spark Parquet",
        ("--jsonl", str(BENCH_DATA / "real-corpus-100mb.jsonl")),
        ("--mb", "5", "--rounds", "1"),
        (
            _f(
                "direct/native",
                each(
                    r"(write|read) direct/native",
                    lambda v, m: f"{m[1]} {v[m[1] + ' direct']:.2f} vs {v[m[1] + ' native']:.2f} s ({v[m[0]]:.2f}x)",
                ),
            ),
        ),
        needs=(BENCH_DATA / "real-corpus-100mb.jsonl",),
    ),
    Entry(
        "bpe",
        "bench_bpe.py",
        "BPE training; encoding per CPU s vs tiktoken and HF tokenizers",
        (),
        ("--mb", "1", "--encode-mb", "0.5", "--code-mb", "0.5", "--times", "1", "--repeat", "1"),
        (
            _f("train corpus.en", lambda v: f"{v['train corpus.en']:.3f} s"),
            _f("train time ours/HF", lambda v: f"{v['train ours/HF']:.2f}x"),
            _f(
                "vs tiktoken warm/cold",
                each(r"(.*) warm/tiktoken", lambda v, m: f"{m[1]} {v[m[0]]:.2f}x/{v[m[1] + ' cold/tiktoken']:.2f}x"),
            ),
            _f("kernel load", lambda v: f"{v['kernel load']:.2f} s", steady=False),
        ),
        needs=(SHARED / "fixtures" / "corpus.en",),
    ),
    Entry(
        "tokenize",
        "bench_tokenize.py",
        "tokenize stage's Python workers per CPU s vs the bare encoder",
        ("--repeat", "2"),
        ("--mb", "5", "--repeat", "1", "--partitions", "2"),
        (
            _f("ratio", lambda v: f"{v['workers/bare']:.2f}x"),
            _f("whole stage", lambda v: f"{v['whole stage/bare']:.2f}x"),
            _f("no-op floor", lambda v: f"{v['no-op floor']:.2f} CPU s"),
            _f("cold workers", lambda v: f"{v['cold/bare']:.2f}x", steady=False),
        ),
    ),
    Entry(
        "merge",
        "bench_merge.py",
        "shard merge vs a plain copy of the same bytes, peak memory",
        (),
        ("--total-mb", "20", "--shards", "8"),
        (
            _f("merge/copy", lambda v: f"{v['merge/copy']:.2f}x"),
            _f("peak traced", lambda v: f"{v['peak traced']:.2f} MB"),
        ),
    ),
    Entry(
        "blend",
        "bench_blend.py",
        "blending indices vs megatron-core's C++ helper (Megatron mode bit-equal)",
        ("--size", "100000000"),
        ("--size", "1000000", "--repeat", "1", "--datasets", "3"),
        (
            _f("ratio(best)", each(r"\d+ datasets (ours.*)", lambda v, m: f"{m[1]} {v[m[0]]:.2f}x")),
            _f(
                "first call",
                lambda v: f"compile {v['first call compile']:.2f} s, load {v['first call load']:.2f} s",
                steady=False,
            ),
        ),
    ),
    Entry(
        "dedup_index",
        "bench_dedup_index.py",
        "dedup against an index 10x its size vs without one",
        ("--mb", "1"),
        ("--mb", "0.1"),
        (
            _f("ratio", lambda v: f"{v['with/without']:.2f}x ({v['with commit/without']:.2f}x with the commit)"),
            _f("found", lambda v: f"{v['found']:.0f} of earlier runs"),
        ),
    ),
    Entry(
        "training_indices",
        "bench_training_indices.py",
        "megatron_cache/ files: ours vs megatron-core's builder",
        ("--repeat", "5"),
        ("--tokens", "1e7", "--repeat", "1"),
        (
            _f(
                "ours/megatron-core",
                lambda v: (
                    f"wall {v['seconds ours/megatron-core']:.2f}x fresh, {v['again ours/megatron-core']:.2f}x again; "
                    f"CPU {v['cpu ours/megatron-core']:.2f}x fresh, {v['cpu_again ours/megatron-core']:.2f}x again; "
                    f"{v['identical files']:.0f} files identical"
                ),
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
            _f(
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
        (
            _f("filter/(ingest+dedup)", lambda v: f"{v['filter/(ingest+dedup)']:.2f}x"),
            _f("whole run", lambda v: f"{v['whole run']:.2f}x"),
        ),
    ),
    Entry(
        "words",
        "bench_words.py",
        "English words per core: datatrove's split_into_words (spaCy) vs ours",
        ("--megabytes", "20"),
        ("--megabytes", "0.5"),
        (
            _f("identical", lambda v: f"{v['identical']:.0f}/{v['documents']:.0f}"),
            _f("cold", lambda v: f"{v['split_words']:.2f} MB/s ({v['split_words'] / v['datatrove']:.1f}x)"),
            _f("warm", lambda v: f"{v['count_words']:.2f} MB/s ({v['count_words'] / v['datatrove']:.1f}x)"),
        ),
    ),
    Entry(
        "pipeline",
        "bench_pipeline.py",
        "whole pipeline: seconds per stage by size, growth per doubling",
        ("--sizes", "50", "100", "200"),
        ("--sizes", "2", "4"),
        (
            _f("total", each(r"([\d.]+) MB total", lambda v, m: f"{m[1]} MB {v[m[0]]:.1f} s")),
            _f("growth", each(r"growth (\S+) MB", lambda v, m: f"{m[1]} MB x{v[m[0]]:.2f}")),
        ),
        cold=True,
    ),
    Entry(
        "cold_cluster",
        "bench_cold_cluster.py",
        "fresh standalone cluster, empty caches: first run over second, without and with the shipped numba cache",
        ("--mb", "20"),
        ("--mb", "2"),
        (_f("zip only", lambda v: _cold_warm(v, "zip")), _f("numba cache", lambda v: _cold_warm(v, "cache"))),
    ),
    Entry(
        "scale",
        "bench_scale.py",
        "whole run on a standalone cluster, 1 to 10 GB: CPU s per GB (docs/scaling.md)",
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        (_f("CPU s/GB", each(r"([\d.]+) GB", lambda v, m: f"{m[1]} GB {v[m[0]]:.0f}")),),
        from_json=REPO / "docs" / "scaling-1-to-10gb.json",
    ),
)


def by_name() -> dict[str, Entry]:
    """The entries by name."""
    return {e.name: e for e in ENTRIES}
