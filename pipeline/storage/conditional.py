"""Conditional object writes: create an object only if absent, replace it only if unchanged.

GCS uses ``ifGenerationMatch`` (0: only if absent) on a multipart upload; S3 a PUT with
``If-None-Match: *`` or ``If-Match: <ETag>``. A write whose condition fails raises
:class:`FileExistsError` (someone else wrote first); the caller re-reads and decides. The run lock
(``pipeline/run/runlock.py``) and the dedup index's HEAD (docs/dedup_index.md, Commit) are built on these.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.errors import PipelineError
from pipeline.storage.paths import resolve

__all__ = ["NoConditionalWrite", "create_if_absent", "read_versioned", "replace_if_version"]


class NoConditionalWrite(PipelineError, ValueError):
    """The URL's store has no conditional write (only gs:// and s3:// do; local files use a lock)."""


def _split(url: str) -> tuple[str, Any, str, str]:
    fs, inner = resolve(url)
    bucket, _, key = inner.partition("/")
    return url.split("://", 1)[0], fs, bucket, key


def _gcs_upload(fs: Any, bucket: str, key: str, data: bytes, generation: str) -> str:
    """Multipart upload with ``ifGenerationMatch`` (0: only if absent); the new generation."""
    meta = json.dumps({"name": key})
    body = (
        (
            f"--==0==\nContent-Type: application/json; charset=UTF-8\n\n{meta}\n--==0==\n"
            "Content-Type: application/json\n\n"
        ).encode()
        + data
        + b"\n--==0==--"
    )
    out = fs.call(
        "POST",
        f"{fs._location}/upload/storage/v1/b/{bucket}/o",
        uploadType="multipart",
        headers={"Content-Type": 'multipart/related; boundary="==0=="'},
        data=body,
        json_out=True,
        ifGenerationMatch=generation,
    )
    fs.invalidate_cache()
    return str(out["generation"])


def create_if_absent(url: str, data: bytes) -> str:
    """Write ``url`` only if it does not exist (FileExistsError otherwise); the object's version."""
    scheme, fs, bucket, key = _split(url)
    if scheme in ("gs", "gcs"):
        return _gcs_upload(fs, bucket, key, data, "0")
    if scheme in ("s3", "s3a"):
        return _s3_put_if(fs, url, bucket, key, data, FileExistsError, IfNoneMatch="*")
    raise NoConditionalWrite(f"{scheme}:// has no conditional write ({url})")


def replace_if_version(url: str, data: bytes, version: str | None) -> str:
    """Overwrite ``url`` only if it is still at ``version`` (FileExistsError otherwise); the new version."""
    scheme, fs, bucket, key = _split(url)
    if scheme in ("gs", "gcs"):
        return _gcs_upload(fs, bucket, key, data, str(version))
    if scheme in ("s3", "s3a"):
        return _s3_put_if(fs, url, bucket, key, data, FileNotFoundError, IfMatch=str(version))
    raise NoConditionalWrite(f"{scheme}:// has no conditional write ({url})")


def _s3_put_if(fs: Any, url: str, bucket: str, key: str, data: bytes, lost: type[OSError], **condition: str) -> str:
    """S3 PUT under ``condition`` (If-None-Match / If-Match); FileExistsError when the precondition fails.

    ``lost`` is the error s3fs raises for the same outcome (the object exists / is gone).
    """
    try:
        out = fs.call_s3("put_object", Bucket=bucket, Key=key, Body=data, **condition)
    except OSError as exc:
        if "pre-condition" in str(exc) or "PreconditionFailed" in str(exc) or isinstance(exc, lost):
            raise FileExistsError(url) from None
        raise
    fs.invalidate_cache()
    return str(out["ETag"])


def read_versioned(url: str) -> tuple[bytes, str]:
    """An object's bytes and its version (GCS generation, S3 ETag); FileNotFoundError when absent."""
    scheme, fs, bucket, key = _split(url)
    fs.invalidate_cache()
    info = fs.info(f"{bucket}/{key}")
    version = str(info["generation"]) if scheme in ("gs", "gcs") else info["ETag"]
    return fs.cat_file(f"{bucket}/{key}"), version
