"""Partitioned table creation and listing (data in partitions:
test_partition_data.py)."""

import pyarrow as pa

import fluss
from conftest import DEFAULT_RF, expect_error


async def test_partitioned_log_table(admin, db):
    path = fluss.TablePath(db, "plog")
    schema = fluss.Schema(pa.schema([
        pa.field("id", pa.int32()), pa.field("v", pa.string()), pa.field("dt", pa.string())]))
    await admin.create_table(path, fluss.TableDescriptor(
        schema, partition_keys=["dt"], bucket_count=2))
    info = await admin.get_table_info(path)
    assert info.is_partitioned() is True
    assert info.get_partition_keys() == ["dt"]
    assert info.get_bucket_keys() == []
    assert info.get_primary_keys() == []
    assert info.num_buckets == 2
    assert info.get_properties() == {"table.replication.factor": DEFAULT_RF}
    assert await admin.list_partition_infos(path) == []


async def test_partitioned_pk_table_default_bucket_key(admin, db):
    path = fluss.TablePath(db, "ppk")
    schema = fluss.Schema(pa.schema([
        pa.field("id", pa.int64()), pa.field("region", pa.string()),
        pa.field("dt", pa.string()), pa.field("v", pa.float64())]),
        primary_keys=["id", "region", "dt"])
    await admin.create_table(path, fluss.TableDescriptor(
        schema, partition_keys=["region", "dt"], bucket_count=3))
    info = await admin.get_table_info(path)
    assert info.is_partitioned() is True
    assert info.get_partition_keys() == ["region", "dt"]
    assert info.get_primary_keys() == ["id", "region", "dt"]
    # default bucket key = primary key minus partition keys
    assert info.get_bucket_keys() == ["id"]
    assert info.num_buckets == 3
    assert info.get_schema().get_columns() == [
        ("id", "bigint NOT NULL"), ("region", "string NOT NULL"),
        ("dt", "string NOT NULL"), ("v", "double")]
    assert info.get_properties() == {"table.replication.factor": DEFAULT_RF,
                                     "table.kv.format-version": "2"}
    assert await admin.list_partition_infos(path) == []


async def test_list_partitions_of_unpartitioned_table(admin, db):
    path = fluss.TablePath(db, "flat")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("a", pa.int32())]))))
    assert (await admin.get_table_info(path)).is_partitioned() is False
    await expect_error(37, admin.list_partition_infos(path))  # TABLE_NOT_PARTITIONED
