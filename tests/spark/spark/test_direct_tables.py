"""Direct tables (pipeline.spark.direct_tables): executors write and read Parquet with pyarrow and fsspec, and a
task attempt that fails after writing leaves nothing in the table (docs/running.md, Cluster and storage)."""

from __future__ import annotations

import fsspec
import pyarrow.parquet as pq
import pytest

from pipeline.spark.direct_tables import read_direct, write_direct
from pipeline.spark.tables import STORE_ENV, TableStore
from tests.storage_fixtures import S3_ENV, list_objects, new_bucket, restore_worker_env, spark_worker_env

pytestmark = pytest.mark.spark
ROWS = [(i, f"text {i} " + "é" * (i % 7), [i, i + 1] if i % 3 else None) for i in range(200)]
DDL = "id long, text string, ids array<long>"


@pytest.fixture(params=["local", "s3"])
def base(request, tmp_path, spark):
    """Where the tables go: a local directory written through fsspec, or a bucket on moto's S3."""
    if request.param == "local":
        yield str(tmp_path)
        return
    request.getfixturevalue("s3_emulator")
    old = spark_worker_env(spark, S3_ENV)
    try:
        yield new_bucket("s3")
    finally:
        restore_worker_env(spark, old)


def _pyarrow_rows(url: str, names: list[str]) -> list[tuple]:
    """Every row of every part file, read with pyarrow alone (no code under test)."""
    fs, root = fsspec.core.url_to_fs(url)
    rows = []
    for name in names:
        if name.endswith(".parquet"):
            with fs.open(f"{root}/{name}", "rb") as f:
                table = pq.read_table(f)
            rows += [tuple(r.values()) for r in table.to_pylist()]
    return rows


def _failed_tasks(spark, group: str) -> int:
    tracker = spark.sparkContext.statusTracker()
    stages = [s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds]
    return sum(tracker.getStageInfo(s).numFailedTasks for s in stages if tracker.getStageInfo(s))


def test_a_table_written_and_read_directly_holds_the_rows_and_only_final_files(spark, base):
    url = f"{base}/t/table"
    frame = spark.createDataFrame(ROWS, DDL).repartition(3)
    write_direct(frame, url)
    names = list_objects(url)
    parts = [n for n in names if n != "_SUCCESS"]
    assert "_SUCCESS" in names and 1 <= len(parts) <= 3
    assert all(n.startswith("part-") and n.endswith(".parquet") and "/" not in n for n in parts), names
    assert sorted(_pyarrow_rows(url, names), key=lambda r: r[0]) == [tuple(r) for r in ROWS]
    back = read_direct(spark, url)
    assert back.schema.simpleString() == "struct<id:bigint,text:string,ids:array<bigint>>"
    assert sorted(tuple(r) for r in back.collect()) == [tuple(r) for r in ROWS]
    assert back.where("id % 2 = 0").count() == 100


def test_dotted_column_names_are_written_and_read_back(spark, tmp_path):
    """filter/signals/ names its columns "<filter>.<measure>": mapInArrow resolves its input by unquoted names."""
    from pyspark.sql import functions as F

    url = f"{tmp_path}/signals"
    frame = spark.createDataFrame(ROWS, DDL).select("id", F.col("id").cast("double").alias("c4.sentences"))
    write_direct(frame, url)
    assert sorted(_pyarrow_rows(url, list_objects(url))) == [(i, float(i)) for i, _, _ in ROWS]
    back = read_direct(spark, url)
    assert back.columns == ["id", "c4.sentences"] and back.where(F.col("`c4.sentences`") > 100).count() == 99


def test_an_attempt_failing_after_its_write_leaves_no_file_and_the_retry_wins(spark, base):
    url = f"{base}/t/retried"
    write_direct(spark.createDataFrame([(1, "old", None)], DDL), url)  # an older table, replaced
    frame = spark.createDataFrame(ROWS, DDL).repartition(2)
    sc = spark.sparkContext
    sc.setJobGroup("direct-retry", "a direct write whose first attempt of partition 0 fails")
    sc.setLocalProperty("pipeline.inject_failure", "tables")
    try:
        write_direct(frame, url)
    finally:
        sc.setLocalProperty("pipeline.inject_failure", None)
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert _failed_tasks(spark, "direct-retry") >= 1  # the injected failure happened (after the file was written)
    names = list_objects(url)
    assert sorted(names) == ["_SUCCESS", "part-00000.parquet", "part-00001.parquet"]
    assert sorted(_pyarrow_rows(url, names), key=lambda r: r[0]) == [tuple(r) for r in ROWS]  # no row twice


def test_an_empty_frame_gives_a_table_with_its_schema(spark, base):
    url = f"{base}/t/empty"
    write_direct(spark.createDataFrame([], DDL), url)
    assert sorted(list_objects(url)) == ["_SUCCESS", "part-00000.parquet"]
    back = read_direct(spark, url)
    assert back.count() == 0 and [f.name for f in back.schema.fields] == ["id", "text", "ids"]


def test_reading_a_missing_table_names_it(spark, tmp_path):
    with pytest.raises(Exception, match="no Parquet files in table .*nowhere"):
        read_direct(spark, str(tmp_path / "nowhere"))


def test_a_run_directory_without_a_hadoop_file_system_is_direct(spark, s3_emulator, tmp_path):
    bucket = new_bucket("s3")
    store = TableStore(f"{bucket}/run", lambda: spark)
    old = {k: spark.sparkContext.environment.get(k) for k in STORE_ENV}
    try:
        assert store.mode == "direct"
        assert spark.sparkContext.environment.get("AWS_ENDPOINT_URL") == s3_emulator  # passed to the tasks
        store.write(spark.createDataFrame(ROWS, DDL), "dedup", "edges")
        assert sorted(tuple(r) for r in store.read("dedup", "edges").collect()) == [tuple(r) for r in ROWS]
        assert "dedup/edges/part-00000.parquet" in list_objects(f"{bucket}/run")
    finally:
        restore_worker_env(spark, old)
    assert TableStore(str(tmp_path / "run"), lambda: spark).mode == "native"


def test_a_native_table_is_read_back_with_the_schema_spark_infers_without_a_job(spark, tmp_path):
    """A table the store wrote is read with its known schema: the one Spark's own inference gives (every field,
    element and value nullable), the same rows, and no schema-inference job."""
    from pyspark.sql import functions as F

    frame = spark.range(5).select(
        F.col("id"),  # not nullable in the frame
        F.array(F.col("id"), F.lit(1)).alias("ids"),
        F.struct(F.lit("x").alias("tag"), F.create_map(F.lit("k"), F.col("id")).alias("m")).alias("s"),
    )
    assert not frame.schema["id"].nullable and not frame.schema["ids"].dataType.containsNull
    store = TableStore(str(tmp_path / "run"), lambda: spark)
    store.write(frame, "dedup", "t")
    inferred = spark.read.parquet(str(tmp_path / "run" / "dedup" / "t"))  # Spark's inference, not the store
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup())
    known = store.read("dedup", "t")
    assert set(tracker.getJobIdsForGroup()) == before  # defining the DataFrame ran no job
    assert known.schema == inferred.schema
    assert sorted(known.collect()) == sorted(inferred.collect())
    assert TableStore(str(tmp_path / "run"), lambda: spark).read("dedup", "t").schema == inferred.schema


def _row_groups(table_dir) -> list[int]:
    """Compressed bytes of each row group of the table's one data file."""
    (part,) = [p for p in table_dir.iterdir() if p.name.startswith("part-")]
    meta = pq.ParquetFile(part).metadata
    return [
        sum(meta.row_group(i).column(c).total_compressed_size for c in range(meta.num_columns))
        for i in range(meta.num_row_groups)
    ]


def test_a_native_table_has_row_groups_spark_can_split_unless_the_hadoop_conf_sets_their_size(spark, tmp_path):
    """~25 MB in one file: row groups of about ROW_GROUP_BYTES (parquet-mr sizes them by their compressed
    pages; Spark splits a file only between them), or one when ``parquet.block.size`` is set in the Hadoop
    conf (the user's choice wins). Hex digests: a payload that compresses little, whatever the codec."""
    from pyspark.sql import functions as F

    from pipeline.spark.tables import ROW_GROUP_BYTES

    digest = lambda salt: F.sha2(F.concat(F.col("id").cast("string"), F.lit(salt)), 512)  # noqa: E731
    frame = spark.range(0, 200_000, numPartitions=1).select(F.concat(digest("a"), digest("b")).alias("t"))
    store = TableStore(str(tmp_path / "run"), lambda: spark)
    store.write(frame, "documents")
    sizes = _row_groups(tmp_path / "run" / "documents")
    assert len(sizes) >= 2 and max(sizes) <= 1.5 * ROW_GROUP_BYTES, sizes
    assert store.read("documents").count() == 200_000
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("parquet.block.size", str(256 << 20))
    try:
        store.write(frame, "documents")
    finally:
        hadoop.unset("parquet.block.size")
    assert len(_row_groups(tmp_path / "run" / "documents")) == 1
