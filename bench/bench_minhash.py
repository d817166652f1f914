"""MinHash signature throughput per core: datasketch (used carefully) vs ours (SHA-1) vs ours (xxhash).

Run: ``python -m bench minhash [--mb 2] [--num-perm 256] [--scheme affine32]``.

How it measures: docs/benchmarks.md, Method notes, minhash.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

import numpy as np
from datasketch import MinHash

from bench.harness import REPO, best_of, write_result
from pipeline.dedup import minhash_signatures, shingles
from pipeline.numba_backend import DEDUP

CORPUS = REPO.parent / "shared" / "fixtures" / "corpus.en"


def _sentences(rng: np.random.Generator) -> list[str]:
    if CORPUS.is_file():
        lines = [ln.strip() for ln in CORPUS.read_text(encoding="utf-8").splitlines() if ln.strip()]
        if lines:
            return lines
    vocab = [f"w{i}" for i in range(20000)]
    ranks = np.minimum(rng.zipf(1.2, size=200_000), len(vocab)) - 1
    words = [vocab[r] for r in ranks]
    return [" ".join(words[i : i + 15]) + " ." for i in range(0, len(words), 15)]


def make_docs(target_bytes: int, total_mb: float, seed: int = 0) -> list[str]:
    """Random documents of about ``target_bytes`` UTF-8 bytes each, ``total_mb`` MB in all."""
    rng = np.random.default_rng(seed)
    sents = _sentences(rng)
    docs, total = [], 0
    while total < total_mb * 1e6:
        parts, size = [], 0
        while size < target_bytes:
            s = sents[int(rng.integers(len(sents)))]
            if size and size + len(s) > target_bytes * 1.2:
                break
            parts.append(s)
            size += len(s.encode("utf-8")) + 1
        doc = " ".join(parts)
        docs.append(doc)
        total += len(doc.encode("utf-8"))
    return docs


def datasketch_signatures(texts: Sequence[str], num_perm: int, seed: int, scheme: str) -> np.ndarray:
    """Datasketch used carefully: permutations built once, one update_batch per document."""
    proto = MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
    perms = proto.permutations
    out = np.empty((len(texts), num_perm), dtype=proto.hashvalues.dtype)
    for i, t in enumerate(texts):
        m = MinHash(num_perm=num_perm, seed=seed, scheme=scheme, permutations=perms)
        m.update_batch(shingles(t))
        out[i] = m.hashvalues
    return out


def _batched(texts: Sequence[str], batch: int, **kw) -> np.ndarray:
    return np.concatenate([minhash_signatures(texts[i : i + batch], **kw) for i in range(0, len(texts), batch)])


def run(label: str, texts: list[str], args: argparse.Namespace) -> dict[str, tuple[float, str]]:
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    kw = dict(num_perm=args.num_perm, seed=1, ngram=5, scheme=args.scheme)
    warm = texts[:8]  # imports, permutation caches and first-call costs stay out of the timings
    datasketch_signatures(warm, args.num_perm, 1, args.scheme)
    for h in ("sha1", "xxhash"):
        minhash_signatures(warm, hash=h, **kw)
    t_ds, ref = best_of(lambda: datasketch_signatures(texts, args.num_perm, 1, args.scheme), args.repeat)
    t_sha, ours = best_of(lambda: _batched(texts, args.batch, hash="sha1", **kw), args.repeat)
    if not np.array_equal(ours, ref):
        raise SystemExit(f"{label}: SHA-1 signatures differ from datasketch")
    t_xx, _ = best_of(lambda: _batched(texts, args.batch, hash="xxhash", **kw), args.repeat)
    mean_len = mb * 1e6 / len(texts)
    print(
        f"\n{label}: {len(texts)} docs, mean {mean_len:,.0f} bytes, {mb:.2f} MB, P={args.num_perm}, "
        f"scheme={args.scheme}, batch={args.batch}"
    )
    print(f"  datasketch (sha1)  {mb / t_ds:8.2f} MB/s")
    print(f"  ours sha1          {mb / t_sha:8.2f} MB/s   x{t_ds / t_sha:5.1f} vs datasketch  (bit-identical)")
    print(f"  ours xxhash        {mb / t_xx:8.2f} MB/s   x{t_ds / t_xx:5.1f} vs datasketch")
    size = label.split()[0]
    return {
        f"{size} datasketch": (mb / t_ds, "MB/s"),
        f"{size} sha1": (mb / t_sha, "MB/s"),
        f"{size} xxhash": (mb / t_xx, "MB/s"),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of text per document size (default 1)")
    ap.add_argument("--num-perm", type=int, default=256)
    ap.add_argument("--scheme", default="affine32", choices=["affine32", "legacy"])
    ap.add_argument("--batch", type=int, default=1024, help="documents per minhash_signatures call")
    ap.add_argument("--repeat", type=int, default=2, help="timing repeats for ours (best is kept)")
    ap.add_argument("--no-numba", action="store_true", help="time the pure-numpy fallback paths")
    args = ap.parse_args(argv)
    DEDUP.set(not args.no_numba)
    backend = "numba" if DEDUP.enabled() else "numpy"
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, pid {os.getpid()}, single process, backend {backend}"
    )
    t0 = time.perf_counter()
    for scheme in ("affine32", "legacy"):
        for h in ("sha1", "xxhash"):
            minhash_signatures(["first call compiles the kernels"], num_perm=8, scheme=scheme, hash=h)
    first = time.perf_counter() - t0
    print(f"first calls (JIT compile or cache load, imports, word table): {first:.2f} s wall")
    figures = {"first calls": (first, "s")}
    figures |= run("short docs (~100 B)", make_docs(100, args.mb), args)
    figures |= run("long docs (~5 KB)", make_docs(5000, args.mb), args)
    write_result("minhash", args, figures)


if __name__ == "__main__":
    main()
