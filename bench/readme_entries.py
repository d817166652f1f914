"""The bench table's rows as data: per row, the bench command, what it measures, how to pull its figures.

Each :class:`Entry` is one row of the bench table (docs/benchmarks.md, The table). ``args`` are the default
sizes (about 55-60 minutes in all on 2 quiet cores, estimated from the table's figures), ``quick`` the sizes of a smoke
check (``python -m bench readme_table --quick``). ``cold`` entries run twice: first with empty caches (a fresh
numba cache and no JVM class-data archive), then steady on the caches that run left; the others run once,
their own warm-up or in-run cold figure being part of what they print. A :class:`Figure` is a regular
expression searched in the bench's stdout (multi-line); every match becomes ``fmt`` filled with its groups
(``\\1`` ...), several matches joined by ``", "``. ``needs`` are files the bench cannot build itself: when
one is absent the row says so. ``from_json`` rows are not run for the table: they print a figure file
kept in the repository (the bench's own ``--from-json``), marked as such with that file's commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCH_DATA = Path("/tmp/pipeline-bench")
NUM = r"([-\d.,]+)"


@dataclass(frozen=True)
class Figure:
    """One headline figure: ``pattern`` searched in the bench's stdout, each match written as ``fmt``."""

    label: str
    pattern: str
    fmt: str = r"\1"
    steady: bool = True  # False: a cold figure the bench measures itself (shown in the cold column)


@dataclass(frozen=True)
class Entry:
    """One row of the bench table: ``bench/<script>`` run with ``args`` (``quick`` for a smoke check)."""

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
    after: str | None = None  # an entry whose output this one reads (run first when both are selected)
    note: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def bench(self) -> str:
        """The bench's name for ``python -m bench NAME``."""
        return self.script.removesuffix(".py").removeprefix("bench_")


def _f(label: str, pattern: str, fmt: str = r"\1", steady: bool = True) -> Figure:
    return Figure(label, pattern, fmt, steady)


PEER = SHARED / "peers" / "text_dedup_minhash_spark_6bb8e89.py"
RELEASE_200 = BENCH_DATA / "release-corpus-200mb"
RELEASE_1000 = BENCH_DATA / "release-corpus-1000mb"
VS_BIGCODE_FIGURES = (
    _f("speed-up", r"^speed-up: ([\d.]+x)"),
    _f("CPU", r"^CPU seconds, all processes: BigCode ([\d.]+), ours ([\d.]+) = ([\d.]+x)", r"\1 vs \2 s = \3"),
    _f(
        "survivors",
        r"^BigCode script[^\n]*?\s+\d+\.\d\s+(\d+).*\n^ingest \+ dedup \(here\)\s+\d+\.\d\s+(\d+)",
        r"\2 vs \1",
    ),
    _f("precision ours", r"^ingest \+ dedup \(here\)\s+\d+\s+\d+\s+(\S+)\s+\S+$", r"\1 (matched pair)"),
    _f("precision script", r"^BigCode script\s+\d+\s+\d+\s+n/a\s+(\S+)$", r"\1 (best match)"),
    _f("archive", r"class-data archive (mapped|recorded)"),
    _f("features step", r"^our features step: ([\d.]+) MB/s", r"\1 MB/s"),
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "minhash",
        "bench_minhash.py",
        "MinHash signatures per core vs datasketch (SHA-1, identical output)",
        ("--mb", "1"),
        ("--mb", "0.05", "--repeat", "1"),
        (
            _f("sha1", r"^(short|long) docs.*\n.*\n^  ours sha1 .*x\s*([\d.]+) vs", r"\1 \2x"),
            _f("fast hash", r"^(short|long) docs.*\n.*\n.*\n^  ours xxhash .*x\s*([\d.]+) vs", r"\1 \2x"),
            _f("first calls", r"^first calls .*: ([\d.]+ s) wall"),
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
            _f("SHA-1 lanes", r"^  new lanes .*?([\d.]+) ns/shingle\s+x([\d.]+)", r"\1 ns/shingle (x\2)"),
            _f("doc_features", r"^  new \(one pass.*?([\d.]+) MB/s\s+x([\d.]+)", r"\1 MB/s (x\2)"),
            _f(
                "first call",
                r"empty numba cache \(compilation\): previous ([\d.]+) s, new ([\d.]+) s",
                r"\1 -> \2 s",
                steady=False,
            ),
        ),
    ),
    Entry(
        "features_sizes",
        "bench_features_sizes.py",
        "doc_features MB/s per core by document size, real vs synthetic",
        ("--mb", "16"),
        ("--mb", "1", "--repeat", "1", "--real-mb", "10"),
        (
            _f(
                "real 2 MB",
                r"^real.*(?:\n  .*)*?\n  joined, 2000 kB\s.*?([\d.]+) MB/s\s+([\d.]+) MB/s",
                r"\2 MB/s (before \1)",
            ),
            _f("synthetic/real", r"^synthetic / real .*?: x([\d.]+)", r"x\1"),
            _f("verification", r"^verification.*previous\s+([\d.]+) MB/s, new\s+([\d.]+) MB/s", r"\1 -> \2 MB/s"),
        ),
    ),
    Entry(
        "dedup_stragglers",
        "bench_dedup_stragglers.py",
        "features step task times in Spark with 2-4 MB documents",
        ("--mb", "40"),
        ("--mb", "4", "--big", "1,1.5", "--file-mb", "1"),
        (_f("largest/median", r"^  (\w+)\s+\d+ tasks: .*?\(x\s*([\d.]+);", r"\1 x\2"),),
    ),
    Entry(
        "dedup_stage",
        "bench_dedup_stage.py",
        "whole dedup stage on local[2]: MB/s, peak driver memory",
        ("--mb", "200"),
        ("--mb", "10"),
        (
            _f("MB/s", r"^dedup stage on local\[2\]: ([\d.]+ s) = ([\d.]+) MB/s", r"\2 MB/s (\1)"),
            _f("peak", r"^peak driver memory: python (\d+) MiB, JVM (\d+) MiB", r"python \1 / JVM \2 MiB"),
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
            _f("stage", r"^ingest stage on local\[2\]: ([\d.]+ s) = ([\d.]+) MB/s", r"\2 MB/s (\1)"),
            _f("json.loads", r"^baseline, one process json.loads per line: .*= ([\d.]+) MB/s", r"\1 MB/s"),
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
            _f("MB/CPU s", r"^(\S+)\s+\d+ pages .*?([\d.]+) MB/CPU s", r"\1 \2"),
            _f("ratios", r"^ratio (\S+) / (\S+): ([\d.]+x)", r"\1 / \2 \3"),
        ),
    ),
    Entry(
        "small_files",
        "bench_small_files.py",
        "ingest of many small files: seconds, splits, tasks, parts",
        ("--files", "5000"),
        ("--files", "200"),
        (
            _f(
                "ingest",
                r"^ingest stage on local\[2\]: ([\d.]+ s) \((\d+) splits in (\d+) tasks\)",
                r"\1, \2 splits in \3 tasks",
            ),
            _f("Parquet parts", r"^documents/: (\d+) Parquet parts"),
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
                r"^(write|read): native ([\d.]+) s, direct ([\d.]+) s, direct/native ([\d.]+x)",
                r"\1 \3 vs \2 s (\4)",
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
            _f("train corpus.en", r"^\[1\] train corpus.en .*?: ([\d.]+ s)"),
            _f("train time ours/HF", r"^\[2\] .*ours/HF = ([\d.]+x)"),
            _f(
                "vs tiktoken warm/cold",
                r"^    (\S[^\n]*?)(?:\s+[\d.]+){5}\s+([\d.]+)x\s*([\d.]+)x",
                r"\1 \2x/\3x",
            ),
            _f("kernel load", r"kernel load ([\d.]+ s)", steady=False),
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
            _f("ratio", r"^stage Python workers / bare encoder, per core = ([\d.]+x)"),
            _f("whole stage", r"whole stage incl\. JVM = ([\d.]+x)"),
            _f("no-op floor", r"no-op mapInArrow.*?: ([\d.]+) CPU s", r"\1 CPU s"),
            _f("cold workers", r"first run \(cold workers\) = ([\d.]+x)", steady=False),
        ),
    ),
    Entry(
        "merge",
        "bench_merge.py",
        "shard merge vs a plain copy of the same bytes, peak memory",
        (),
        ("--total-mb", "20", "--shards", "8"),
        (
            _f("merge/copy", r"^ratio merge/copy throughput: ([\d.]+)", r"\1x"),
            _f("peak traced", r"^merge tracemalloc peak: ([\d.]+ MB)"),
        ),
    ),
    Entry(
        "blend",
        "bench_blend.py",
        "blending indices vs megatron-core's C++ helper (Megatron mode bit-equal)",
        ("--size", "100000000"),
        ("--size", "1000000", "--repeat", "1", "--datasets", "3"),
        (
            _f("ratio(best)", r"^  (ours[^\n]*?)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+[\d.]+$", r"\1 \2x"),
            _f(
                "first call",
                r"^first call in a fresh process.*?: ([\d.]+) s compiling.*?, ([\d.]+) s loading",
                r"compile \1 s, load \2 s",
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
            _f(
                "ratio",
                r"^ratio with index / without \(dedup stage\): ([\d.]+); including the commit: ([\d.]+)",
                r"\1x (\2x with the commit)",
            ),
            _f("found", r"removed \d+ \+ (\d+) duplicates of earlier runs", r"\1 of earlier runs"),
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
                r"^ratio ours / megatron-core \(medians\): (.*?); (\d+) files identical: (\w+)",
                r"\1; \2 files identical: \3",
            ),
        ),
    ),
    Entry(
        "filter_rules",
        "bench_filter_rules.py",
        "rule filters vs datatrove 0.10.1, MB/s of CPU, rules alone",
        ("--megabytes", "10"),
        ("--megabytes", "0.5"),
        (
            _f(
                "ours/datatrove",
                r"^(gopher_repetition|gopher_quality|c4|fineweb)\s+[\d.]+ MB/s\s+[\d.]+\s+([\d.]+)",
                r"\1 \2x",
            ),
        ),
        needs=(SHARED / "fixtures",),
    ),
    Entry(
        "filter",
        "bench_filter.py",
        "each filter vs datatrove 0.10.1 (language: fastText predict), one core",
        ("--mb", "100", "--repeat", "1"),
        ("--mb", "1", "--repeat", "1"),
        (_f("ours/theirs", r"^(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+x)", r"\1 \3 vs \2 MB/s (\4)"),),
    ),
    Entry(
        "filter_stage",
        "bench_filter_stage.py",
        "filter stage (six filters) beside ingest + dedup, local[2]",
        ("--mb", "200"),
        ("--mb", "10"),
        (
            _f("filter/(ingest+dedup)", r"^filter stage / \(ingest \+ dedup\): ([\d.]+)", r"\1x"),
            _f("whole run", r"^whole run with filters / without: ([\d.]+)", r"\1x"),
        ),
    ),
    Entry(
        "filter_breakdown",
        "bench_filter_breakdown.py",
        "CPU s per filter inside the filter stage's batch step",
        ("--mb", "50"),
        ("--mb", "2"),
        (
            _f("total", r"one process: ([\d.]+ CPU s) \(([\d.]+ MB/s)\)", r"\1 (\2)"),
            _f("per filter", r"^  (\w+)\s+([\d.]+) s\s+([\d.]+) %", r"\1 \3 %"),
        ),
        needs=(BENCH_DATA / "run-filter-stage-on" / "documents",),
        after="filter_stage",
    ),
    Entry(
        "words",
        "bench_words.py",
        "English words per core: datatrove's split_into_words (spaCy) vs ours",
        ("--megabytes", "20"),
        ("--megabytes", "0.5"),
        (
            _f("identical", r"^identical word lists: (\d+/\d+)"),
            _f("cold", r"^ours split_words \(cold\):\s+([\d.]+) MB/s\s+\(([\d.]+x)\)", r"\1 MB/s (\2)"),
            _f("warm", r"^ours count_words \(warm\):\s+([\d.]+) MB/s\s+\(([\d.]+x)\)", r"\1 MB/s (\2)"),
        ),
    ),
    Entry(
        "pipeline",
        "bench_pipeline.py",
        "whole pipeline: seconds per stage by size, growth per doubling",
        ("--sizes", "50", "100", "200"),
        ("--sizes", "2", "4"),
        (
            _f("total", r"^(\d+(?:\.\d+)?)\s+(?:[\d.]+\s+)*?([\d.]+)$", r"\1 MB \2 s"),
            _f("growth", r"^growth ([\d.]+->[\d.]+) MB.*?total ([\d.]+)", r"\1 MB x\2"),
        ),
        cold=True,
    ),
    Entry(
        "scale",
        "bench_scale.py",
        "whole run on a standalone cluster, 1 to 10 GB: CPU s per GB (docs/scaling.md)",
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        ("--from-json", "docs/scaling-1-to-10gb.json"),
        (_f("CPU s/GB", r"^\| ([\d.]+) \|(?: [^|]+ \|){10} (\d+) \|", r"\1 GB \2"),),
        from_json=REPO / "docs" / "scaling-1-to-10gb.json",
    ),
)


def by_name() -> dict[str, Entry]:
    """The entries by name."""
    return {e.name: e for e in ENTRIES}
