"""Metadata survives a restart of our server on the same data dir
(FLUSS_SERVER=ours only: the suite must own the process)."""

import pyarrow as pa
import pytest

import fluss
from conftest import connect, expect_error, unique

pytestmark = pytest.mark.ours_only


def snapshot_table(info):
    return {
        "table_id": info.table_id,
        "schema_id": info.schema_id,
        "created_time": info.created_time,
        "modified_time": info.modified_time,
        "num_buckets": info.num_buckets,
        "comment": info.comment,
        "primary_keys": info.get_primary_keys(),
        "bucket_keys": info.get_bucket_keys(),
        "partition_keys": info.get_partition_keys(),
        "properties": info.get_properties(),
        "custom_properties": info.get_custom_properties(),
        "columns": info.get_schema().get_columns(),
    }


def snapshot_db(info):
    d = info.get_database_descriptor()
    return {"name": info.database_name, "comment": d.comment,
            "custom": d.get_custom_properties(),
            "created_time": info.created_time, "modified_time": info.modified_time}


async def populate(admin):
    db = unique("persist")
    await admin.create_database(db, fluss.DatabaseDescriptor(
        comment="survives restarts", custom_properties={"k": "v"}))
    log = fluss.TablePath(db, "log")
    pk = fluss.TablePath(db, "pk")
    dropped = fluss.TablePath(db, "dropped")
    await admin.create_table(log, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("id", pa.int32()), pa.field("ts", pa.timestamp("ms")),
                                pa.field("tags", pa.list_(pa.string()))])),
        bucket_count=3, comment="log", custom_properties={"c": "1"}))
    await admin.create_table(pk, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("id", pa.int64()), pa.field("dt", pa.string()),
                                pa.field("m", pa.map_(pa.string(), pa.int32()))]),
                     primary_keys=["id", "dt"]),
        partition_keys=["dt"], bucket_count=2, comment="pk"))
    await admin.create_table(dropped, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("a", pa.int32())]))))
    await admin.drop_table(dropped)
    empty_db = unique("persist_empty")
    gone_db = unique("persist_gone")
    await admin.create_database(empty_db)
    await admin.create_database(gone_db)
    await admin.drop_database(gone_db)

    state = {
        "db": db, "empty_db": empty_db, "gone_db": gone_db,
        "db_info": snapshot_db(await admin.get_database_info(db)),
        "empty_info": snapshot_db(await admin.get_database_info(empty_db)),
        "tables": {p.table_name: snapshot_table(await admin.get_table_info(p))
                   for p in (log, pk)},
        "databases": set(await admin.list_databases()),
    }
    return state


async def verify(admin, state):
    db = state["db"]
    assert set(await admin.list_databases()) == state["databases"]
    assert await admin.database_exists("fluss") is True
    assert await admin.database_exists(state["gone_db"]) is False
    assert snapshot_db(await admin.get_database_info(db)) == state["db_info"]
    assert snapshot_db(await admin.get_database_info(state["empty_db"])) == state["empty_info"]
    assert await admin.list_tables(state["empty_db"]) == []
    assert sorted(await admin.list_tables(db)) == ["log", "pk"]
    for name, snap in state["tables"].items():
        assert snapshot_table(await admin.get_table_info(fluss.TablePath(db, name))) == snap
    assert await admin.table_exists(fluss.TablePath(db, "dropped")) is False
    await expect_error(7, admin.get_table_info(fluss.TablePath(db, "dropped")))

    # id counters continue after the restart: no id is reused
    newp = fluss.TablePath(db, "after_restart")
    await admin.create_table(newp, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("a", pa.int32())]))))
    new_id = (await admin.get_table_info(newp)).table_id
    assert new_id > max(s["table_id"] for s in state["tables"].values())
    # creating an existing database still fails
    await expect_error(6, admin.create_database(db))
    await admin.drop_database(db, cascade=True)
    await admin.drop_database(state["empty_db"], cascade=True)


@pytest.mark.parametrize("hard", [True, False], ids=["kill-9", "sigterm"])
async def test_restart_keeps_metadata(our_server, hard):
    conn = await connect(our_server.bootstrap)
    try:
        state = await populate(conn.get_admin())
    finally:
        await conn.close()

    if hard:
        assert our_server.kill9() == -9
    else:
        rc = our_server.stop()
        assert rc == 0, f"SIGTERM shutdown exit code {rc}; stderr:\n{our_server.stderr_tail()}"
    our_server.start()

    conn = await connect(our_server.bootstrap)
    try:
        await verify(conn.get_admin(), state)
    finally:
        await conn.close()


async def test_double_restart_is_stable(our_server):
    """Two restarts in a row without changes: nothing is lost or duplicated."""
    conn = await connect(our_server.bootstrap)
    try:
        state = await populate(conn.get_admin())
    finally:
        await conn.close()
    our_server.restart(hard=True)
    our_server.restart(hard=False)
    conn = await connect(our_server.bootstrap)
    try:
        await verify(conn.get_admin(), state)
    finally:
        await conn.close()
