"""Object-store operations that a plain file system does not need: server-side concatenation and copy.

* ``gs://``: :func:`compose_tree` concatenates by object composition. One compose call takes at most
  32 sources, so more sources are composed in a tree of intermediate objects under a temporary
  prefix beside the destination, deleted afterwards. No object byte passes through this process.
* ``s3://``: :func:`s3_concat` builds a multipart upload. A source (or the rest of one) of at least
  5 MiB becomes ``UploadPartCopy`` parts (server side); smaller pieces are read and uploaded as one
  part once 5 MiB are buffered (every part but the last is >= 5 MiB, as S3 requires).
* Anything else streams (see :func:`pipeline.storage.concat`, which picks one of these itself).

File systems are resolved per call (never cached in module state; fsspec objects are not fork-safe).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from pipeline.storage.paths import resolve, scheme

COMPOSE_MAX = 32
S3_MIN_PART = 5 << 20
S3_MAX_COPY_PART = 5 << 30


def _inner_all(paths: Sequence[str]) -> list[str]:
    return [resolve(p)[1] for p in paths]


def _bucket(inner: str) -> str:
    return inner.split("/", 1)[0]


def compose_tree(sources: Sequence[str], dest: str, *, on_bytes: Callable[[int], None] | None = None) -> int:
    """Concatenate ``gs://`` ``sources`` into ``dest`` by composition (<= 32 sources per call); bytes."""
    fs, out = resolve(dest)
    inners = _inner_all(sources)
    sizes = [int(fs.size(p)) for p in inners]
    if not inners:
        fs.pipe_file(out, b"")
        return 0
    tmp = f"{out}.compose-{uuid.uuid4().hex[:12]}"
    made: list[str] = []
    try:
        level = inners
        depth = 0
        while len(level) > COMPOSE_MAX:
            nxt = []
            for i in range(0, len(level), COMPOSE_MAX):
                group = level[i : i + COMPOSE_MAX]
                if len(group) == 1:
                    nxt.append(group[0])
                    continue
                target = f"{tmp}/{depth:02d}-{i // COMPOSE_MAX:06d}"
                fs.merge(target, group)
                made.append(target)
                nxt.append(target)
            level, depth = nxt, depth + 1
        fs.merge(out, level)
    finally:
        for path in made:
            try:
                fs.rm_file(path)
            except FileNotFoundError:
                pass
    total = sum(sizes)
    if on_bytes:
        on_bytes(total)
    return total


def s3_concat(sources: Sequence[str], dest: str, *, on_bytes: Callable[[int], None] | None = None) -> int:
    """Concatenate ``s3://`` ``sources`` into ``dest`` with a multipart upload (copy parts where allowed)."""
    fs, out = resolve(dest)
    inners = _inner_all(sources)
    sizes = [int(fs.size(p)) for p in inners]
    total = sum(sizes)
    if total < S3_MIN_PART:  # one small object: a multipart upload would be one short part anyway
        with fs.open(out, "wb") as f:
            for p in inners:
                f.write(fs.cat_file(p))
        if on_bytes:
            on_bytes(total)
        return total
    bucket, key = out.split("/", 1)
    upload = fs.call_s3("create_multipart_upload", Bucket=bucket, Key=key)
    upload_id = upload["UploadId"]
    parts: list[dict] = []
    buf = bytearray()

    def put(data: bytes | bytearray) -> None:
        r = fs.call_s3(
            "upload_part", Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=len(parts) + 1, Body=bytes(data)
        )
        parts.append({"PartNumber": len(parts) + 1, "ETag": r["ETag"]})

    def copy(src: str, start: int, end: int) -> None:
        r = fs.call_s3(
            "upload_part_copy",
            Bucket=bucket,
            Key=key,
            UploadId=upload_id,
            PartNumber=len(parts) + 1,
            CopySource=src,
            CopySourceRange=f"bytes={start}-{end - 1}",
        )
        parts.append({"PartNumber": len(parts) + 1, "ETag": r["CopyPartResult"]["ETag"]})

    try:
        for src, size in zip(inners, sizes, strict=True):
            pos = 0
            if buf:  # complete the pending part from the head of this source
                take = min(S3_MIN_PART - len(buf), size)
                buf += fs.cat_file(src, start=0, end=take)
                pos = take
                if len(buf) >= S3_MIN_PART:
                    put(buf)
                    buf.clear()
            while size - pos >= S3_MIN_PART:
                n = min(size - pos, S3_MAX_COPY_PART)
                if 0 < size - pos - n < S3_MIN_PART:
                    n = size - pos - S3_MIN_PART  # leave a copyable tail
                copy(src, pos, pos + n)
                pos += n
            if pos < size:
                buf += fs.cat_file(src, start=pos, end=size)
                if len(buf) >= S3_MIN_PART:
                    put(buf)
                    buf.clear()
        if buf:
            put(buf)
        fs.call_s3(
            "complete_multipart_upload", Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
        )
    except BaseException:
        fs.call_s3("abort_multipart_upload", Bucket=bucket, Key=key, UploadId=upload_id)
        raise
    fs.invalidate_cache(out)
    if on_bytes:
        on_bytes(total)
    return total


def server_side_concat(sources: Sequence[str], dest: str) -> Callable[..., int] | None:
    """The server-side concatenation for ``dest`` when every source is in its bucket, else None."""
    kind = scheme(dest)
    if kind not in ("gs", "s3") or any(scheme(s) != kind for s in sources):
        return None
    bucket = _bucket(resolve(dest)[1])
    if any(_bucket(p) != bucket for p in _inner_all(sources)):
        return None
    return compose_tree if kind == "gs" else s3_concat
