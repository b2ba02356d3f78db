"""Table admin API (CREATE/DROP/LIST/EXISTS/GET_TABLE_INFO) via pyfluss."""

import pyarrow as pa
import pytest

import fluss
from conftest import DEFAULT_RF, assert_recent_ms, expect_error, unique

E = fluss.ErrorCode


def log_schema():
    return fluss.Schema(pa.schema([
        pa.field("id", pa.int32()),
        pa.field("name", pa.string()),
        pa.field("ts", pa.timestamp("us")),
    ]))


def pk_schema():
    return fluss.Schema(pa.schema([
        pa.field("id", pa.int64()),
        pa.field("region", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
    ]), primary_keys=["id", "region"])


async def test_create_log_table(admin, db):
    path = fluss.TablePath(db, "events")
    desc = fluss.TableDescriptor(
        log_schema(), bucket_count=3, comment="an event log",
        properties={"table.log.arrow.compression.type": "ZSTD"},
        custom_properties={"owner": "interop", "x.y": "z"})
    await admin.create_table(path, desc)

    assert await admin.table_exists(path) is True
    assert await admin.list_tables(db) == ["events"]

    info = await admin.get_table_info(path)
    assert info.table_path.database_name == db
    assert info.table_path.table_name == "events"
    assert info.table_id >= 0
    assert info.schema_id == 1
    assert info.num_buckets == 3
    assert info.comment == "an event log"
    assert info.has_primary_key() is False
    assert info.get_primary_keys() == []
    assert info.get_bucket_keys() == []
    assert info.get_partition_keys() == []
    assert info.is_partitioned() is False
    assert info.get_column_names() == ["id", "name", "ts"]
    assert info.get_column_count() == 3
    assert info.get_schema().get_columns() == [
        ("id", "int"), ("name", "string"), ("ts", "timestamp")]
    assert info.get_custom_properties() == {"owner": "interop", "x.y": "z"}
    props = info.get_properties()
    assert props == {"table.log.arrow.compression.type": "ZSTD",
                     "table.replication.factor": DEFAULT_RF}
    assert_recent_ms(info.created_time, "created_time")
    assert_recent_ms(info.modified_time, "modified_time")
    assert info.modified_time >= info.created_time


async def test_create_log_table_with_bucket_key(admin, db):
    path = fluss.TablePath(db, "keyed_log")
    await admin.create_table(path, fluss.TableDescriptor(
        log_schema(), bucket_count=4, bucket_keys=["name"]))
    info = await admin.get_table_info(path)
    assert info.get_bucket_keys() == ["name"]
    assert info.num_buckets == 4
    assert info.get_primary_keys() == []


async def test_create_log_table_defaults(admin, db):
    """No bucket count, no comment, no properties: server fills defaults."""
    path = fluss.TablePath(db, "plain")
    await admin.create_table(path, fluss.TableDescriptor(log_schema()))
    info = await admin.get_table_info(path)
    assert info.num_buckets == 1  # default.bucket.number
    assert info.comment is None
    assert info.get_custom_properties() == {}
    assert info.get_properties() == {"table.replication.factor": DEFAULT_RF}


async def test_create_pk_table(admin, db):
    path = fluss.TablePath(db, "accounts")
    desc = fluss.TableDescriptor(
        pk_schema(), bucket_count=2, comment="pk table",
        custom_properties={"team": "a"})
    await admin.create_table(path, desc)

    assert await admin.table_exists(path) is True
    info = await admin.get_table_info(path)
    assert info.schema_id == 1
    assert info.num_buckets == 2
    assert info.comment == "pk table"
    assert info.has_primary_key() is True
    assert info.get_primary_keys() == ["id", "region"]
    # default bucket key = primary key minus partition keys
    assert info.get_bucket_keys() == ["id", "region"]
    assert info.get_partition_keys() == []
    assert info.get_schema().get_primary_keys() == ["id", "region"]
    # PK columns come back NOT NULL although declared nullable
    assert info.get_schema().get_columns() == [
        ("id", "bigint NOT NULL"), ("region", "string NOT NULL"),
        ("amount", "decimal(10,2)")]
    assert info.get_custom_properties() == {"team": "a"}
    assert info.get_properties() == {"table.replication.factor": DEFAULT_RF,
                                     "table.kv.format-version": "2"}
    assert_recent_ms(info.created_time, "created_time")


async def test_create_pk_table_with_bucket_key_subset(admin, db):
    path = fluss.TablePath(db, "pk_bk")
    await admin.create_table(path, fluss.TableDescriptor(
        pk_schema(), bucket_count=5, bucket_keys=["region"]))
    info = await admin.get_table_info(path)
    assert info.get_bucket_keys() == ["region"]
    assert info.get_primary_keys() == ["id", "region"]
    assert info.num_buckets == 5


async def test_table_formats_from_descriptor(admin, db):
    """log_format / kv_format kwargs arrive as table.log.format / table.kv.format."""
    path = fluss.TablePath(db, "fmt")
    await admin.create_table(path, fluss.TableDescriptor(
        pk_schema(), log_format="arrow", kv_format="compacted"))
    props = (await admin.get_table_info(path)).get_properties()
    assert props.get("table.log.format") == "ARROW"
    assert props.get("table.kv.format") == "COMPACTED"
    assert props.get("table.kv.format-version") == "2"
    assert props.get("table.replication.factor") == DEFAULT_RF


async def test_table_ids_distinct_and_increasing(admin, db):
    ids = []
    for i in range(4):
        path = fluss.TablePath(db, f"t{i}")
        await admin.create_table(path, fluss.TableDescriptor(log_schema()))
        ids.append((await admin.get_table_info(path)).table_id)
    assert ids == sorted(ids) and len(set(ids)) == len(ids), ids
    assert sorted(await admin.list_tables(db)) == ["t0", "t1", "t2", "t3"]

    # drop + re-create gets a fresh, larger id
    await admin.drop_table(fluss.TablePath(db, "t0"))
    await admin.create_table(fluss.TablePath(db, "t0"), fluss.TableDescriptor(log_schema()))
    new_id = (await admin.get_table_info(fluss.TablePath(db, "t0"))).table_id
    assert new_id > max(ids)


async def test_create_existing_table(admin, db):
    path = fluss.TablePath(db, "dup")
    await admin.create_table(path, fluss.TableDescriptor(log_schema(), comment="first"))
    before = await admin.get_table_info(path)

    await expect_error(8, admin.create_table(path, fluss.TableDescriptor(log_schema())))
    await expect_error(8, admin.create_table(path, fluss.TableDescriptor(pk_schema()),
                                             ignore_if_exists=False))
    await admin.create_table(path, fluss.TableDescriptor(pk_schema(), comment="second"),
                             ignore_if_exists=True)
    after = await admin.get_table_info(path)
    assert after.table_id == before.table_id
    assert after.comment == "first"
    assert after.get_primary_keys() == []
    assert after.created_time == before.created_time
    assert await admin.list_tables(db) == ["dup"]


async def test_missing_table_errors(admin, db):
    path = fluss.TablePath(db, "nope")
    assert await admin.table_exists(path) is False
    await expect_error(7, admin.get_table_info(path))
    await expect_error(7, admin.drop_table(path))
    await expect_error(7, admin.drop_table(path, ignore_if_not_exists=False))
    await admin.drop_table(path, ignore_if_not_exists=True)
    assert await admin.list_tables(db) == []


async def test_table_in_missing_database(admin):
    missing = unique("nodb")
    path = fluss.TablePath(missing, "t")
    await expect_error(4, admin.create_table(path, fluss.TableDescriptor(log_schema())))
    await expect_error(4, admin.create_table(path, fluss.TableDescriptor(log_schema()),
                                             ignore_if_exists=True))
    assert await admin.database_exists(missing) is False
    await expect_error(7, admin.get_table_info(path))
    assert await admin.table_exists(path) is False


async def test_drop_table(admin, db):
    keep = fluss.TablePath(db, "keep")
    gone = fluss.TablePath(db, "gone")
    await admin.create_table(keep, fluss.TableDescriptor(log_schema()))
    await admin.create_table(gone, fluss.TableDescriptor(pk_schema()))
    assert sorted(await admin.list_tables(db)) == ["gone", "keep"]

    await admin.drop_table(gone)
    assert await admin.table_exists(gone) is False
    assert await admin.table_exists(keep) is True
    assert await admin.list_tables(db) == ["keep"]
    await expect_error(7, admin.get_table_info(gone))
    await admin.drop_table(gone, ignore_if_not_exists=True)
    await expect_error(7, admin.drop_table(gone))


async def test_same_table_name_in_two_databases(admin, db):
    other = unique("db2")
    await admin.create_database(other)
    try:
        p1, p2 = fluss.TablePath(db, "t"), fluss.TablePath(other, "t")
        await admin.create_table(p1, fluss.TableDescriptor(log_schema(), comment="one"))
        await admin.create_table(p2, fluss.TableDescriptor(pk_schema(), comment="two"))
        i1, i2 = await admin.get_table_info(p1), await admin.get_table_info(p2)
        assert i1.table_id != i2.table_id
        assert (i1.comment, i2.comment) == ("one", "two")
        await admin.drop_table(p1)
        assert await admin.table_exists(p2) is True
    finally:
        await admin.drop_database(other, ignore_if_not_exists=True, cascade=True)


async def test_get_table_via_connection(conn, db):
    """FlussConnection.get_table (metadata path) agrees with get_table_info."""
    admin = conn.get_admin()
    path = fluss.TablePath(db, "viaconn")
    await admin.create_table(path, fluss.TableDescriptor(pk_schema(), bucket_count=2))
    table = await conn.get_table(path)
    ti = table.get_table_info()
    assert ti.table_id == (await admin.get_table_info(path)).table_id
    assert ti.num_buckets == 2
    assert table.has_primary_key() is True
    assert table.arrow_schema.names == ["id", "region", "amount"]
