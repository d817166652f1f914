"""A class-data archive (JDK CDS) for local Spark JVMs, so runs after the first start faster.

A ``local`` session's JVM loads and verifies ~20,000 classes from Spark's jars before its first job.
The first run on a machine asks the JVM to write the classes it loaded to an archive when it exits
(``-XX:ArchiveClassesAtExit``); later runs map that archive (``-XX:SharedArchiveFile``): ingest +
dedup of 200 MB went from 25.3 to 23.0 s on 2 cores. The archive lives in the user cache
(``$XDG_CACHE_HOME/spark-pretrain-pipeline/jvm``, default ``~/.cache/...``), keyed by the Java build,
the pyspark version and the class path; about 140 MB each. ``PIPELINE_JVM_ARCHIVE=off``, or any CDS
option of your own in ``spark.driver.extraJavaOptions``, turns it off (docs/running.md).

The JVM writes an archive's header last, so a file that starts with the header's magic number is
complete; the archive is written under a temporary name and only such a file is promoted to the
name later runs map (a truncated archive would crash the JVM that maps it).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

DYNAMIC_MAGIC = bytes.fromhex("a8ab0bf0")  # CDS_DYNAMIC_ARCHIVE_MAGIC 0xf00baba8, little-endian
ABANDONED_SECONDS = 600  # a partial archive this old belongs to a JVM that died while writing it
UNUSED_SECONDS = 7 * 86400  # archives of other Java / pyspark builds, unused this long, are removed
USER_CDS_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "Xshare", "DumpSharedSpaces")
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # an unusable archive is skipped; its warning would go to stdout


def archive_directory() -> Path:
    """Where the archives live: ``$XDG_CACHE_HOME`` (default ``~/.cache``) ``/spark-pretrain-pipeline/jvm``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spark-pretrain-pipeline" / "jvm"


def archive_key(java_banner: str, settings: Mapping[str, str]) -> str:
    """What an archive depends on: the Java build, pyspark's jars and the extra class path settings."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted((p.name, p.stat().st_size) for p in jars.glob("*.jar")) if jars.is_dir() else []
    extra = [settings.get(k, "") for k in ("spark.jars", "spark.driver.extraClassPath", "spark.jars.packages")]
    text = repr((java_banner.strip(), pyspark.__version__, listing, extra))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_complete(path: Path) -> bool:
    """True when ``path`` starts with a dynamic archive's magic number (its header, written last)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == DYNAMIC_MAGIC
    except OSError:
        return False


def _tidy(directory: Path, key: str, now: float) -> None:
    """Promote finished partial archives (``classes-KEY.ID.part``); drop abandoned partials and archives
    other than ``key``'s unused for a week."""
    final = directory / f"classes-{key}.jsa"
    for path in [*directory.glob("classes-*.*.part"), *directory.glob("classes-*.jsa")]:
        try:  # another session may be tidying at the same time: a file gone meanwhile is skipped
            if path.suffix == ".part" and is_complete(path):
                os.replace(path, directory / f"{path.name.split('.')[0]}.jsa")
            elif path.suffix == ".part" and now - path.stat().st_mtime > ABANDONED_SECONDS:
                path.unlink()
            elif path.suffix == ".jsa" and path != final and now - path.stat().st_mtime > UNUSED_SECONDS:
                path.unlink()
        except FileNotFoundError:
            continue


def archive_path(java_banner: str, settings: Mapping[str, str]) -> Path:
    """The archive a local session with these settings maps once it exists."""
    return archive_directory() / f"classes-{archive_key(java_banner, settings)}.jsa"


def archive_options(java_banner: str, settings: Mapping[str, str], user_options: str | None) -> str | None:
    """JVM options that map this machine's archive, or ask the JVM to write one at exit; None when off.

    Off when ``PIPELINE_JVM_ARCHIVE`` is ``off``/``0``/``false``, when ``user_options`` hold a CDS
    option of their own, or when the cache directory cannot be written.
    """
    if os.environ.get("PIPELINE_JVM_ARCHIVE", "").lower() in ("off", "0", "false", "no"):
        return None
    if any(flag in (user_options or "") for flag in USER_CDS_FLAGS):
        return None
    final = archive_path(java_banner, settings)
    directory, key = final.parent, final.stem.removeprefix("classes-")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _tidy(directory, key, time.time())
        if is_complete(final):
            os.utime(final)  # in use: not removed as unused
            return f"-XX:SharedArchiveFile={final} {QUIET}"
        if not os.access(directory, os.W_OK):
            return None
    except OSError:  # a read-only or full home directory: start without an archive
        return None
    part = directory / f"classes-{key}.{os.getpid()}-{uuid.uuid4().hex[:8]}.part"
    return f"-XX:ArchiveClassesAtExit={part} {QUIET}"
