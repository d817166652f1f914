"""Where Spark reads and writes the run's Parquet tables (``documents/``, ``rejects/``, ``dedup/*``).

Every other file of a run goes through fsspec in Python; Parquet tables go through Spark's Hadoop
file systems. One mechanism, chosen once per run and logged (logger ``pipeline.tables``):

* **native**: the session's Hadoop has a FileSystem for the run directory's scheme (local paths
  always; ``gs://`` on Dataproc through the GCS connector; ``s3://`` on EMR through EMRFS;
  ``s3a://`` with hadoop-aws). ``ctx.table(...)`` is the path in the run directory; Spark writes
  and reads it directly. This is the fast path on a cluster.
* **staged**: no Hadoop FileSystem for the scheme (a laptop or the emulator tests writing to
  ``gs://``/``s3://``). ``ctx.table(...)`` is a local working directory; after every stage the
  runner calls :meth:`TableStore.sync`, which uploads each changed table (its files, without
  Hadoop's ``.crc`` side files) to the run directory through fsspec, replacing the old copy. Before a
  stage runs, the runner calls :meth:`TableStore.fetch` for each table the stage reads (its
  ``Stage.reads``): a table not in the working directory (a resumed run in a new process) is
  downloaded then, never as a side effect of asking for its path.
  Staged tables need the driver and the executors to share a disk, so they are refused on a
  non-local master: install the cluster's connector instead.

The Spark checkpoint directory follows the same rule: when the run directory is not
Hadoop-visible, checkpoints go to the local working directory.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile

from pipeline import storage
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.tables")


def hadoop_supports(spark, path: str) -> bool:
    """Whether the session's Hadoop configuration has a FileSystem for ``path``'s scheme."""
    if storage.is_local(path):
        return True
    scheme = path.split("://", 1)[0]
    jvm = getattr(spark, "_jvm", None) or getattr(getattr(spark, "sparkContext", None), "_jvm", None)
    if jvm is None:  # Spark Connect: no JVM here; the cluster owns its connectors
        return True
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
        return True
    except Exception:  # UnsupportedFileSystemException, ClassNotFoundException
        return False


def _signature(local: str) -> tuple:
    """Names, sizes and mtimes of a local table's files (detects a rewrite)."""
    found = []
    for root, _, files in os.walk(local):
        for name in files:
            p = os.path.join(root, name)
            st = os.stat(p)
            found.append((os.path.relpath(p, local), st.st_size, st.st_mtime_ns))
    return tuple(sorted(found))


class TableStore:
    """Hadoop-visible locations of a run's tables, and their upload to an object-store run directory."""

    def __init__(self, run_dir: str, spark_getter) -> None:
        self.run_dir = run_dir
        self._spark = spark_getter
        self._mode: str | None = None
        self._work: str | None = None
        self._synced: dict[str, tuple] = {}

    @property
    def mode(self) -> str:
        """``native`` or ``staged`` (decided on first use, then logged)."""
        if self._mode is None:
            spark = self._spark()
            self._mode = "native" if hadoop_supports(spark, self.run_dir) else "staged"
            if self._mode == "staged":
                master = spark.sparkContext.master
                if not master.startswith("local"):
                    raise PipelineError(
                        f"Spark's Hadoop has no FileSystem for {self.run_dir.split('://')[0]}:// on master "
                        f"{master}; install the cluster's connector (GCS connector, EMRFS or hadoop-aws)"
                    )
                log.warning(
                    "tables: staged (no Hadoop FileSystem for %s; Spark writes Parquet to %s "
                    "and the driver uploads it to the run directory)",
                    self.run_dir,
                    self.work,
                )
            else:
                log.info("tables: native (Spark reads and writes Parquet in %s)", self.run_dir)
        return self._mode

    @property
    def work(self) -> str:
        """The local working directory of staged tables (deleted when the process exits)."""
        if self._work is None:
            self._work = tempfile.mkdtemp(prefix="pipeline-tables-")
            atexit.register(shutil.rmtree, self._work, True)
        return self._work

    def path(self, *parts: str) -> str:
        """The Hadoop-visible location of the table ``parts`` (no I/O; see :meth:`fetch`)."""
        remote = storage.join(self.run_dir, *parts)
        if self.mode == "native":
            return remote
        local = os.path.join(self.work, *parts)
        self._synced.setdefault("/".join(parts), _signature(local) if os.path.isdir(local) else ())
        return local

    def fetch(self, *parts: str) -> None:
        """Make the run directory's table ``parts`` readable at :meth:`path`: when staged, download it
        unless this process already holds it (written or fetched here). Native tables need nothing."""
        if self.mode == "native":
            return
        key = "/".join(parts)
        remote = storage.join(self.run_dir, *parts)
        local = os.path.join(self.work, *parts)
        if key not in self._synced and storage.exists(remote):
            shutil.rmtree(local, ignore_errors=True)
            _download(remote, local)
        self._synced.setdefault(key, _signature(local) if os.path.isdir(local) else ())

    def checkpoint_dir(self, wanted: str) -> str:
        """``wanted`` when Hadoop can write there, else a local directory (logged)."""
        if hadoop_supports(self._spark(), wanted):
            return wanted
        local = os.path.join(self.work, "_checkpoints")
        log.warning("checkpoints: %s is not Hadoop-visible in this session; using %s", wanted, local)
        return local

    def sync(self) -> list[str]:
        """Upload every staged table written since its last sync; the tables uploaded."""
        if self._mode != "staged":
            return []
        done = []
        for key, seen in sorted(self._synced.items()):
            local = os.path.join(self.work, *key.split("/"))
            now = _signature(local) if os.path.isdir(local) else ()
            if now != seen and now:
                _upload(local, storage.join(self.run_dir, *key.split("/")))
                self._synced[key] = now
                done.append(key)
        return done


def _upload(local: str, remote: str) -> None:
    """Replace ``remote`` with the files of ``local`` (Hadoop's hidden ``.crc`` files left out)."""
    storage.remove(remote)
    fs, root = storage.resolve(remote)
    src, dst = [], []
    for base, _, files in os.walk(local):
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(base, name)
            src.append(path)
            dst.append(f"{root.rstrip('/')}/{os.path.relpath(path, local).replace(os.sep, '/')}")
    if src:
        fs.put(src, dst)


def _download(remote: str, local: str) -> None:
    """Copy every file below ``remote`` into ``local``."""
    fs, root = storage.resolve(remote)
    root = root.rstrip("/")
    files = [p for p in fs.find(root)]
    dst = [os.path.join(local, *p[len(root) + 1 :].split("/")) for p in files]
    for d in dst:
        os.makedirs(os.path.dirname(d), exist_ok=True)
    if files:
        fs.get(files, dst)


def _scratch() -> str:
    """A local directory for one staged table outside any run (deleted when the process exits)."""
    path = tempfile.mkdtemp(prefix="pipeline-table-")
    atexit.register(shutil.rmtree, path, True)
    return path


def write_table_at(spark, frame, url: str) -> None:
    """Write ``frame`` as Parquet at ``url``, a location outside the run directory (e.g. a dedup index).

    The same rule as the run's tables: natively when Spark's Hadoop can write ``url``, else written to a
    local scratch directory and uploaded through fsspec (a local master only).
    """
    if hadoop_supports(spark, url):
        frame.write.mode("overwrite").parquet(url)
        return
    local = os.path.join(_scratch(), "table")
    frame.write.mode("overwrite").parquet(local)
    _upload(local, url)


def read_table_at(spark, url: str, ddl: str):
    """The Parquet table at ``url`` with schema ``ddl`` (downloaded first when Spark cannot read its scheme)."""
    if not hadoop_supports(spark, url):
        local = os.path.join(_scratch(), "table")
        _download(url, local)
        url = local
    return spark.read.schema(ddl).parquet(url)
