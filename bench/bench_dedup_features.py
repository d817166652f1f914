"""The dedup features step per core, before and after issue #16, in one run: SHA-1 kernels and ``doc_features``.

Run: ``python -m bench dedup_features [--mb 20] [--repeat 3]``.

How it measures: docs/benchmarks.md, Method notes, dedup_features.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from numba import njit

from bench.corpus import documents
from bench.harness import BaselineError, best_of, child_env, module_at, write_result
from pipeline.dedup import batches as B
from pipeline.dedup import sha1_numba
from pipeline.dedup.bands import band_keys
from pipeline.dedup.hashes import _codepoints, sha1_hash32_many
from pipeline.dedup.minhash import signatures_from_hashes
from pipeline.dedup.shingles import shingles
from pipeline.dedup.shingles_numba import utf8_units, word_table
from pipeline.dedup.token_counts import token_counts

MIN_TOKENS = 5


@njit(cache=True, nogil=True)
def _scalar_all(buf: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The new scalar kernel on every slice (what the lanes leave to it: long messages)."""
    w = np.empty(80, np.uint32)
    out = np.empty(lo.shape[0], np.uint32)
    for i in range(lo.shape[0]):
        out[i] = sha1_numba.sha1_hash32(buf, lo[i], hi[i], w)
    return out


def _windows(lo: np.ndarray, hi: np.ndarray, unit_off: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Byte start and end of every K-gram window of each document (one short window below K units)."""
    starts, ends = [], []
    for d in range(len(unit_off) - 1):
        first, n = unit_off[d], unit_off[d + 1] - unit_off[d]
        if n >= k:
            starts.append(lo[first : first + n - k + 1])
            ends.append(hi[first + k - 1 : first + n])
        elif n:
            starts.append(lo[first : first + 1])
            ends.append(hi[first + n - 1 : first + n])
    return np.concatenate(starts), np.concatenate(ends)


def _cold_first_call(load_module: str) -> float:
    """Wall seconds of ``m.sha1_windows``' first call (``m`` as ``load_module`` imports it) in a fresh process
    with an empty numba cache (what a new executor pays once), numba's own start-up excluded."""
    code = (
        "import time, numpy as np; from numba import njit; njit(lambda a: a.sum())(np.zeros(2)); "
        f"{load_module}; t = time.perf_counter(); "
        "m.sha1_windows(np.zeros(9, np.uint8), np.zeros(1, np.int64), np.ones(1, np.int64), np.array([0, 1]), 5); "
        "print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**child_env(), "NUMBA_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


SHA1_PATH = "pipeline/dedup/sha1_numba.py"
BASELINE_REV = "31bc121"  # the scalar kernel before issue #16 (uint64 words, padding built byte by byte)
PREV_SHA1: list = []  # sha1_numba at --baseline-rev, loaded by main


def _replace_docs(
    h: np.ndarray, offsets: np.ndarray, docs: np.ndarray, new: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``(h, offsets)`` with the segments of ``docs`` replaced by ``new`` (same order)."""
    parts = [h[offsets[d] : offsets[d + 1]] for d in range(len(offsets) - 1)]
    for d, seg in zip(docs.tolist(), new, strict=True):
        parts[d] = seg
    return (np.concatenate(parts) if parts else h[:0]), np.concatenate([[0], np.cumsum([len(p) for p in parts])])


def _prev_features(batches: list[pa.RecordBatch], p: B.LshParams) -> Iterator[pa.ListArray]:
    """``doc_features``' band keys as computed before #16: token counts in their own pass, then the
    eligible texts tokenised again and hashed with the previous scalar kernel."""
    for batch in batches:
        texts = batch.column("text").to_pylist()
        ntok = token_counts(texts)
        B._content_hash(texts)
        eligible = np.flatnonzero(ntok >= MIN_TOKENS)
        sub = [texts[i] for i in eligible]
        buf, lo, hi, unit_off = utf8_units(*_codepoints(sub), word_table(), False)
        hashes, win_off = PREV_SHA1[0].sha1_windows(buf, lo, hi, unit_off, p.ngram)
        over = np.flatnonzero(np.diff(win_off) > (p.max_shingles or 0))
        if len(over):
            new = [sha1_hash32_many(shingles(sub[d], p.ngram, p.shingle, p.max_shingles)) for d in over.tolist()]
            hashes, win_off = _replace_docs(hashes, win_off, over, new)
        sigs = signatures_from_hashes(hashes, win_off, p.num_perm, p.seed, p.scheme)
        yield B._key_lists(band_keys(sigs, p.bands, p.rows).view(np.int64), eligible, len(texts))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=20.0, help="MB of corpus text (default 20)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--baseline-rev",
        default=BASELINE_REV,
        help=f"git revision of the previous SHA-1 kernel (default {BASELINE_REV})",
    )
    args = ap.parse_args(argv)
    try:
        PREV_SHA1[:] = [module_at(args.baseline_rev, SHA1_PATH)]
    except BaselineError as exc:
        raise SystemExit(str(exc)) from None
    texts, size = [], 0
    for doc in documents(10**9, seed=0):
        if size >= args.mb * 1e6:
            break
        texts.append(doc)
        size += len(doc.encode("utf-8"))
    mb = size / 1e6
    col = pa.array(texts)
    batches = [
        pa.RecordBatch.from_arrays(
            [pa.array(np.arange(i, i + len(col.slice(i, 10_000)))), col.slice(i, 10_000)], names=["doc_id", "text"]
        )
        for i in range(0, len(texts), 10_000)
    ]
    p = B.LshParams(256, 1, 5, "affine32", "sha1", "word", 100_000, 25, 10)
    print(
        f"{len(texts)} documents, {mb:.1f} MB, {len(batches)} batches; P=256, K=5 words, sha1; "
        f"CPU s, best of {args.repeat}"
    )

    buf, lo, hi, unit_off = utf8_units(*_codepoints(texts), word_table(), False)
    starts, ends = _windows(lo, hi, unit_off, 5)
    n = len(starts)
    runs = {
        "previous scalar (uint64, per-byte padding)": lambda: PREV_SHA1[0].sha1_windows(buf, lo, hi, unit_off, 5)[0],
        "new scalar (uint32, whole-word padding)": lambda: _scalar_all(buf, starts, ends),
        f"new lanes ({sha1_numba.LANES} one-block shingles at once)": lambda: sha1_numba.sha1_windows(
            buf, lo, hi, unit_off, 5
        )[0],
    }
    print(
        f"\nSHA-1 of {n:,} shingle windows ({np.mean(ends - starts):.1f} bytes on average, "
        f"{np.mean(ends - starts > 55):.2%} over one block)"
    )
    base, ref = None, None
    figures: dict[str, tuple[float, str]] = {}
    for label, fn in runs.items():
        fn()  # compile or load from the cache
        t, got = best_of(fn, args.repeat)
        ref = got if ref is None else ref
        if not np.array_equal(got, ref):
            raise SystemExit(f"{label}: hashes differ from the previous kernel")
        base = base or t
        print(f"  {label:48s} {t:6.3f} s  {t / n * 1e9:6.1f} ns/shingle  x{base / t:4.2f}")
        figures[f"sha1 {label.split(' (')[0]}"] = (t / n * 1e9, "ns/shingle")

    cold_old, cold_new = (
        _cold_first_call(f"from bench.harness import module_at; m = module_at({args.baseline_rev!r}, {SHA1_PATH!r})"),
        _cold_first_call("import pipeline.dedup.sha1_numba as m"),
    )
    print(f"  first call with an empty numba cache (compilation): previous {cold_old:.1f} s, new {cold_new:.1f} s")

    list(_prev_features(batches[:1], p))
    list(B.doc_features(iter(batches[:1]), p, MIN_TOKENS))
    t_old, old = best_of(lambda: list(_prev_features(batches, p)), args.repeat)
    t_new, new = best_of(lambda: list(B.doc_features(iter(batches), p, MIN_TOKENS)), args.repeat)
    if [k.to_pylist() for k in old] != [b.column("keys").to_pylist() for b in new]:
        raise SystemExit("doc_features: band keys differ from the previous computation")
    print("\ndoc_features (band keys identical)")
    print(f"  {'previous (two tokenising passes, scalar SHA-1)':48s} {t_old:6.3f} s  {mb / t_old:6.1f} MB/s")
    print(f"  {'new (one pass, SHA-1 lanes)':48s} {t_new:6.3f} s  {mb / t_new:6.1f} MB/s  x{t_old / t_new:4.2f}")
    figures["doc_features"] = (mb / t_new, "MB/s")
    figures["doc_features previous"] = (mb / t_old, "MB/s")
    figures["first call previous"], figures["first call"] = (cold_old, "s"), (cold_new, "s")
    write_result("dedup_features", args, figures)


if __name__ == "__main__":
    main()
