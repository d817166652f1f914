"""What a finished stage wrote, recorded in its ``_SUCCESS`` marker, and the check resume makes before reusing it.

Recorded per stage (cheap at write and at check time, whatever the data size):

* every file under the stage's output directories, with its size (hidden ``.``-files such as Hadoop's
  ``.crc`` are left out); a file missing, resized or added since is a mismatch;
* for each IndexedDataset pair (``.bin`` + ``.idx``): the xxh3-64 of the whole ``.idx`` (an index is
  12 bytes per document), and of the first and last MiB of the ``.bin``; the ``.bin``'s size must
  also be the one its index implies.

A same-size overwrite in the middle of a ``.bin`` is not seen here; ``python -m pipeline inspect``
reads every byte.
"""

from __future__ import annotations

import posixpath
from typing import Any

import xxhash

from pipeline import storage
from pipeline.megatron.format import HEADER_SIZE, IndexedDatasetError, parse_header

SAMPLE_BYTES = 1 << 20  # the .bin's head and tail hashed


def list_files(run_dir: str, outputs: tuple[str, ...]) -> dict[str, int]:
    """``{path relative to the run directory: size}`` of the files under ``outputs`` (a stage's directories;
    hidden files left out)."""
    found: dict[str, int] = {}
    fs, root = storage.resolve(run_dir)
    root = root.rstrip("/")
    if hasattr(fs, "invalidate_cache"):
        fs.invalidate_cache()
    for sub in outputs:
        base = f"{root}/{sub}"
        if not fs.exists(base):
            continue
        for path, info in fs.find(base, detail=True).items():
            rel = path[len(root) + 1 :]
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            found[rel] = int(info["size"])
    return found


def _hash_ranges(fs, path: str, size: int) -> str:
    """xxh3-64 of the first and last :data:`SAMPLE_BYTES` of a file (the whole file when small)."""
    digest = xxhash.xxh3_64()
    with fs.open(path, "rb") as f:
        digest.update(f.read(SAMPLE_BYTES))
        if size > SAMPLE_BYTES:
            f.seek(max(size - SAMPLE_BYTES, SAMPLE_BYTES))
            digest.update(f.read(SAMPLE_BYTES))
    return digest.hexdigest()


def _pairs(files: dict[str, int]) -> list[str]:
    """Prefixes (relative) that have both a ``.bin`` and an ``.idx`` among ``files``."""
    return sorted(p[:-4] for p in files if p.endswith(".idx") and p[:-4] + ".bin" in files)


def record(run_dir: str, outputs: tuple[str, ...]) -> dict[str, Any]:
    """What to store in the marker: the files with sizes and the checksums of each ``.bin``/``.idx`` pair."""
    files = list_files(run_dir, outputs)
    fs, root = storage.resolve(run_dir)
    root = root.rstrip("/")
    checksums = {}
    for prefix in _pairs(files):
        checksums[prefix + ".idx"] = xxhash.xxh3_64(fs.cat_file(f"{root}/{prefix}.idx")).hexdigest()
        checksums[prefix + ".bin"] = _hash_ranges(fs, f"{root}/{prefix}.bin", files[prefix + ".bin"])
    return {"files": files, "checksums": checksums, "checksum": "xxh3_64: whole .idx; .bin first+last MiB"}


def _bin_size_from_index(idx: bytes, where: str) -> int:
    """The ``.bin`` size an index implies: last pointer + last length * itemsize (0 when empty)."""
    header = parse_header(idx[:HEADER_SIZE], where)
    if len(idx) != header.expected_idx_size():
        raise IndexedDatasetError(f"{where}: {len(idx)} bytes, its header implies {header.expected_idx_size()}")
    n = header.sequence_count
    if n == 0:
        return 0
    import numpy as np

    lengths = np.frombuffer(idx, dtype="<i4", count=n, offset=HEADER_SIZE)
    pointers = np.frombuffer(idx, dtype="<i8", count=n, offset=HEADER_SIZE + 4 * n)
    return int(pointers[-1]) + int(lengths[-1]) * header.dtype.itemsize


def verify(run_dir: str, outputs: tuple[str, ...], recorded: dict[str, Any] | None) -> list[str]:
    """Why the outputs no longer match its marker (each reason names a file); [] when they match."""
    if not recorded or "files" not in recorded:
        return []
    now = list_files(run_dir, outputs)
    want: dict[str, int] = recorded["files"]
    problems = [f"{p}: missing" for p in sorted(set(want) - set(now))]
    problems += [
        f"{p}: {now[p]} bytes, {want[p]} when the stage finished"
        for p in sorted(set(want) & set(now))
        if now[p] != want[p]
    ]
    problems += [f"{p}: not written by the stage" for p in sorted(set(now) - set(want))]
    fs, root = storage.resolve(run_dir)
    root = root.rstrip("/")
    for prefix in _pairs(want):
        idx_rel, bin_rel = prefix + ".idx", prefix + ".bin"
        if idx_rel not in now or bin_rel not in now:
            continue
        idx = fs.cat_file(f"{root}/{idx_rel}")
        if xxhash.xxh3_64(idx).hexdigest() != recorded.get("checksums", {}).get(idx_rel):
            problems.append(f"{idx_rel}: checksum differs from the one recorded when the stage finished")
        try:
            implied = _bin_size_from_index(idx, idx_rel)
            if implied != now[bin_rel]:
                problems.append(
                    f"{bin_rel}: {now[bin_rel]} bytes, its index {posixpath.basename(idx_rel)} implies {implied}"
                )
        except IndexedDatasetError as exc:
            problems.append(str(exc))
        if now[bin_rel] == want[bin_rel] and _hash_ranges(fs, f"{root}/{bin_rel}", now[bin_rel]) != recorded.get(
            "checksums", {}
        ).get(bin_rel):
            problems.append(f"{bin_rel}: checksum differs from the one recorded when the stage finished")
    return problems
