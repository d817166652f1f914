"""Object-store operations against emulators speaking the real APIs (fake-gcs-server, moto server):
merging by composition / multipart copy, and preflight failures that end a run before Spark."""

from __future__ import annotations

import os
import random

import fsspec
import numpy as np
import pytest

from pipeline.megatron import IndexedDataset, IndexedDatasetWriter, merge_indexed_datasets
from pipeline.run import preflight
from pipeline.storage import objectstore
from tests.storage_fixtures import list_objects, new_bucket

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _write_shards(root: str, n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    prefixes = []
    for i in range(n):
        prefix = f"{root}/part-{i:05d}"
        with IndexedDatasetWriter(prefix, dtype=np.uint16) as w:
            for _ in range(i % 4):  # some shards hold zero documents
                w.add_document([rng.randrange(60000) for _ in range(rng.randrange(1, 50))])
        prefixes.append(prefix)
    return prefixes


@pytest.fixture
def bin_bytes_read(monkeypatch):
    """Bytes of ``.bin`` objects read from gs:// by this process (ranged reads and downloads)."""
    import gcsfs

    counter = {"bytes": 0, "compose_calls": [], "max_sources": 0}
    cat, get, merge = gcsfs.GCSFileSystem._cat_file, gcsfs.GCSFileSystem._get_file, gcsfs.GCSFileSystem._merge

    async def counting_cat(self, path, *args, **kwargs):
        data = await cat(self, path, *args, **kwargs)
        if ".bin" in str(path):
            counter["bytes"] += len(data)
        return data

    async def counting_get(self, rpath, lpath, *args, **kwargs):
        if ".bin" in str(rpath):
            counter["bytes"] += int((await self._info(rpath))["size"])
        return await get(self, rpath, lpath, *args, **kwargs)

    async def counting_merge(self, path, paths, *args, **kwargs):
        counter["compose_calls"].append(len(paths))
        return await merge(self, path, paths, *args, **kwargs)

    from fsspec.asyn import sync_wrapper

    monkeypatch.setattr(gcsfs.GCSFileSystem, "_cat_file", counting_cat)
    monkeypatch.setattr(gcsfs.GCSFileSystem, "_get_file", counting_get)
    monkeypatch.setattr(gcsfs.GCSFileSystem, "_merge", counting_merge)
    monkeypatch.setattr(gcsfs.GCSFileSystem, "merge", sync_wrapper(counting_merge))
    return counter


def test_merging_100_shards_on_gcs_composes_in_a_tree_and_downloads_no_bin_bytes(
    gcs_emulator, tmp_path, bin_bytes_read
):
    bucket = new_bucket("gs")
    remote = _write_shards(f"{bucket}/shards", 100)
    local = _write_shards(str(tmp_path / "shards"), 100)
    bin_bytes_read["bytes"] = 0
    result = merge_indexed_datasets(remote, f"{bucket}/megatron/web")
    assert bin_bytes_read["bytes"] == 0
    calls = bin_bytes_read["compose_calls"]
    assert len(calls) >= 2 and max(calls) <= objectstore.COMPOSE_MAX and sum(calls) > 100
    merge_indexed_datasets(local, str(tmp_path / "web"))
    fs = fsspec.filesystem("gs")
    for ext in ("bin", "idx"):
        assert fs.cat_file(f"{bucket}/megatron/web.{ext}") == (tmp_path / f"web.{ext}").read_bytes()
    assert [p for p in list_objects(bucket) if not p.startswith("shards/")] == ["megatron/web.bin", "megatron/web.idx"]
    assert len(IndexedDataset(f"{bucket}/megatron/web")) == result.sequences > 0


def test_compose_limit_is_real_on_the_emulator(gcs_emulator):
    bucket = new_bucket("gs")
    fs = fsspec.filesystem("gs")
    parts = [f"{bucket}/p/{i:02d}" for i in range(33)]
    for i, p in enumerate(parts):
        fs.pipe_file(p, bytes([i]) * 3)
    with pytest.raises(Exception, match="32"):
        fs.merge(f"{bucket}/direct", parts)
    assert objectstore.compose_tree(parts, f"{bucket}/tree") == 99
    assert fs.cat_file(f"{bucket}/tree") == b"".join(bytes([i]) * 3 for i in range(33))


def test_s3_concat_uses_copy_parts_of_at_least_5_mib(s3_emulator, monkeypatch):
    bucket = new_bucket("s3")
    fs = fsspec.filesystem("s3")
    rng = np.random.default_rng(1)
    sizes = [6 << 20, 1000, (7 << 20) + 3, 10, 2 << 20]
    blobs = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]
    srcs = [f"{bucket}/in/{i}.bin" for i in range(len(blobs))]
    for p, b in zip(srcs, blobs, strict=True):
        fs.pipe_file(p, b)
    calls = []
    real = type(fs).call_s3

    def spy(self, method, *args, **kwargs):
        calls.append((method, kwargs.get("CopySourceRange") or len(kwargs.get("Body", b""))))
        return real(self, method, *args, **kwargs)

    monkeypatch.setattr(type(fs), "call_s3", spy)
    total = objectstore.s3_concat(srcs, f"{bucket}/out.bin")
    assert total == sum(sizes)
    assert fs.cat_file(f"{bucket}/out.bin") == b"".join(blobs)
    copies = [c for m, c in calls if m == "upload_part_copy"]
    uploads = [c for m, c in calls if m == "upload_part"]
    assert copies, calls
    parts = [m for m, _ in calls if m in ("upload_part", "upload_part_copy")]
    assert len(parts) == len(copies) + len(uploads)
    assert all(u >= objectstore.S3_MIN_PART for u in uploads[:-1])  # moto also enforces this


def test_merge_on_s3_is_byte_identical_to_local(s3_emulator, tmp_path):
    bucket = new_bucket("s3")
    remote = _write_shards(f"{bucket}/shards", 7, seed=3)
    local = _write_shards(str(tmp_path / "shards"), 7, seed=3)
    merge_indexed_datasets(remote, f"{bucket}/m")
    merge_indexed_datasets(local, str(tmp_path / "m"))
    fs = fsspec.filesystem("s3")
    for ext in ("bin", "idx"):
        assert fs.cat_file(f"{bucket}/m.{ext}") == (tmp_path / f"m.{ext}").read_bytes()


# --- preflight: the run ends before Spark, naming the path, and writes nothing -------------------


@pytest.fixture
def no_spark(monkeypatch):
    import pipeline.spark.session as ss

    def refuse(*_a, **_k):
        raise AssertionError("Spark must not start")

    monkeypatch.setattr(ss, "build_session", refuse)


def _run_cli(capsys, output: str, *extra: str) -> tuple[int, str]:
    from pipeline.cli.commands import main

    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        code = main(["run", "--config", "conf/local.yaml", "--set", f"output={output}", *extra])
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().err


def _buckets(scheme: str) -> list[str]:
    fs = fsspec.filesystem(scheme)
    fs.invalidate_cache()
    return sorted(fs.ls(""))


def test_missing_bucket_ends_the_run_before_spark(gcs_emulator, no_spark, capsys):
    before = _buckets("gs")
    code, err = _run_cli(capsys, "gs://no-such-bucket-x1/runs/a")
    assert code == 2
    assert "gs://no-such-bucket-x1" in err and "does not exist" in err and "output" in err
    assert _buckets("gs") == before


def test_permission_error_ends_the_run_before_spark(s3_emulator, no_spark, capsys):
    from moto.core.authorization import enable_iam_authentication

    bucket = new_bucket("s3")
    fsspec.filesystem("s3").invalidate_cache()
    with enable_iam_authentication():  # the dummy key is unknown to IAM: every request is refused
        code, err = _run_cli(capsys, f"{bucket}/runs/a")
    assert code == 2
    assert f"{bucket}/runs/a" in err and "permission denied" in err
    assert list_objects(bucket) == []


def test_unreachable_endpoint_ends_the_run_before_spark(gcs_emulator, no_spark, capsys, monkeypatch):
    from tests.storage_fixtures import free_port

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setattr(preflight, "PROBE_TIMEOUT", 3.0)
    code, err = _run_cli(capsys, "gs://some-bucket/runs/a")
    assert code == 2
    assert "gs://some-bucket" in err and "cannot reach" in err
    assert not os.path.exists(os.path.join(REPO, "gs:"))


def test_credentials_in_the_config_are_refused_without_echoing_them(tmp_path):
    from pipeline.config import ConfigError, load_config_text

    text = open(os.path.join(REPO, "conf", "local.yaml")).read()
    config = load_config_text(text, [f"output={tmp_path / 'run'}"])
    config.spark.settings["spark.hadoop.fs.s3a.secret.key"] = "SHH"
    with pytest.raises(ConfigError) as caught:
        preflight.check_paths(config)
    assert "spark.settings.spark.hadoop.fs.s3a.secret.key" in str(caught.value) and "SHH" not in str(caught.value)
