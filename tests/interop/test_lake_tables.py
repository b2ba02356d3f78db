"""Lake tables (issue 21, item 1): a flussd started with Fluss's lake keys

    datalake.format: iceberg
    datalake.iceberg.type: hadoop
    datalake.iceberg.warehouse: <dir>

injects `table.datalake.format=iceberg` into every new table, creates the
Iceberg table of each table with `table.datalake.enabled=true` (at CREATE,
or when ALTER turns the lake on) in the Hadoop layout under the warehouse,
and shows the lake options as `table.datalake.iceberg.*` in the table info
of lake tables (pyfluss, the raw GET_TABLE_INFO and METADATA). pyiceberg
opens each table from its directory and sees the reference's mapping:
column ids from 1, the system columns, the primary key as identifier
fields, the partition spec, the sort order and the `fluss.*` properties.

Refusals checked: a lake table without a lake cluster,
non-STRING partition keys on lake tables, a lake table that already exists
(LAKE_TABLE_ALREADY_EXIST), a table format other than the cluster's, and a
server configured with keys of another format or an unsupported catalog.
"""

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, free_ports, server_message
from lakeutil import lake_args, lake_session
from logutil import wait_ready
from test_alter_table import SET, alter, table_info

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

LAKE = {"table.datalake.enabled": "true"}


def open_iceberg(warehouse: Path, db: str, name: str):
    """The table as pyiceberg reads it from its directory (version hint)."""
    return pyiceberg_table.StaticTable.from_metadata(str(warehouse / db / name))


def fields(tbl):
    return [(f.field_id, f.name, str(f.field_type), f.required) for f in tbl.schema().fields]


@pytest.fixture
async def lake(start_server, tmp_path):
    async with lake_session(start_server, tmp_path, "lakedb") as (srv, _state, admin, db, wh):
        yield srv, admin, db, wh


async def test_log_table_mapping(lake):
    srv, admin, db, wh = lake
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string()),
                        ("small", pa.int16()), ("ts", pa.timestamp("us", tz="UTC")),
                        ("amount", pa.decimal128(10, 2)), ("raw", pa.binary()),
                        ("day", pa.date32())])
    path = fluss.TablePath(db, "events")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(schema), bucket_count=3,
                                                         properties=LAKE))
    await wait_ready(admin, path, 3)

    props = (await admin.get_table_info(path)).get_properties()
    assert props["table.datalake.enabled"] == "true"
    assert props["table.datalake.format"] == "iceberg"
    assert props["table.datalake.iceberg.type"] == "hadoop"
    assert props["table.datalake.iceberg.warehouse"] == str(wh)
    # the stored descriptor (raw GET_TABLE_INFO) shows them too, METADATA the same
    raw = table_info(srv, db, "events")["table_json"]["properties"]
    assert raw["table.datalake.iceberg.warehouse"] == str(wh)

    tbl = open_iceberg(wh, db, "events")
    assert fields(tbl) == [
        (1, "id", "int", True), (2, "name", "string", False), (3, "small", "int", False),
        (4, "ts", "timestamptz", False), (5, "amount", "decimal(10, 2)", False),
        (6, "raw", "binary", False), (7, "day", "date", False),
        (8, "__bucket", "int", True), (9, "__offset", "long", True),
        (10, "__timestamp", "timestamptz", True)]
    assert tbl.metadata.format_version == 2
    assert tbl.metadata.location == f"file://{wh}/{db}/events"
    assert tbl.schema().identifier_field_ids == []
    spec = tbl.spec()
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields] == \
        [(8, 1000, "__bucket", "identity")]
    order = tbl.sort_order()
    assert order.order_id == 1
    assert [(f.source_id, str(f.direction), str(f.null_order)) for f in order.fields] == \
        [(9, "ASC", "NULLS FIRST")]
    p = tbl.properties
    assert p["write.parquet.compression-codec"] == "zstd"
    assert p["fluss.table.datalake.enabled"] == "true"
    assert p["fluss.table.datalake.format"] == "iceberg"
    assert p["fluss.table.replication.factor"] == "1"
    assert p["fluss.table-id"] == str((await admin.get_table_info(path)).table_id)
    assert "write.delete.mode" not in p
    assert tbl.current_snapshot() is None
    assert tbl.scan().to_arrow().num_rows == 0
    hint = (wh / db / "events" / "metadata" / "version-hint.text").read_text()
    assert hint == "1"


async def test_pk_and_partitioned_mapping(lake):
    srv, admin, db, wh = lake
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False),
                        pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    path = fluss.TablePath(db, "kv")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["dt", "id"]), partition_keys=["dt"], bucket_count=4,
        properties=LAKE,
        custom_properties={"owner": "ops",
                           "iceberg.write.metadata.delete-after-commit.enabled": "true"}))
    tbl = open_iceberg(wh, db, "kv")
    assert [(f.field_id, f.name) for f in tbl.schema().fields] == [
        (1, "dt"), (2, "id"), (3, "v"), (4, "__bucket"), (5, "__offset"), (6, "__timestamp")]
    assert sorted(tbl.schema().identifier_field_ids) == [1, 2]
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in tbl.spec().fields] == \
        [(1, 1000, "dt", "identity"), (2, 1001, "id_bucket", "bucket[4]")]
    p = tbl.properties
    assert p["write.delete.mode"] == p["write.update.mode"] == p["write.merge.mode"] == \
        "merge-on-read"
    assert p["write.metadata.delete-after-commit.enabled"] == "true"  # iceberg.* passed on
    assert p["fluss.owner"] == "ops"  # custom properties too


async def test_format_injected_without_lake(lake):
    srv, admin, db, wh = lake
    path = fluss.TablePath(db, "plain")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([("id", pa.int32())])), bucket_count=1))
    props = (await admin.get_table_info(path)).get_properties()
    assert props["table.datalake.format"] == "iceberg"
    assert "table.datalake.iceberg.type" not in props  # the lake is off for this table
    assert not (wh / db / "plain").exists()


async def test_alter_turns_the_lake_on(lake):
    srv, admin, db, wh = lake
    path = fluss.TablePath(db, "later")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([("id", pa.int32()), ("v", pa.string())])), bucket_count=2))
    assert not (wh / db / "later").exists()
    assert alter(srv, db, "later", configs=[("table.datalake.enabled", "true", SET)]) == (0, None)
    tbl = open_iceberg(wh, db, "later")
    assert [f.name for f in tbl.schema().fields] == ["id", "v", "__bucket", "__offset",
                                                      "__timestamp"]
    assert (await admin.get_table_info(path)).get_properties()["table.datalake.iceberg.type"] \
        == "hadoop"
    # off and on again: the lake table made for this table is taken back as it is
    assert alter(srv, db, "later", configs=[("table.datalake.enabled", "false", SET)]) == (0, None)
    assert "table.datalake.iceberg.type" not in \
        (await admin.get_table_info(path)).get_properties()
    assert alter(srv, db, "later", configs=[("table.datalake.enabled", "true", SET)]) == (0, None)
    assert open_iceberg(wh, db, "later").metadata.table_uuid == tbl.metadata.table_uuid


async def test_alter_follows_into_the_lake(lake):
    """ALTER TABLE on a lake table reaches its Iceberg table as a new
    metadata version: properties as fluss.* (custom ones too), and ADD
    COLUMN as a new schema whose column takes the next id and sits before
    the system columns (0.9.1's Iceberg catalog refuses column changes)."""
    srv, admin, db, wh = lake
    path = fluss.TablePath(db, "evolving")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([("id", pa.int32()), ("v", pa.string())])), bucket_count=1,
        properties=LAKE))
    assert alter(srv, db, "evolving", configs=[("table.datalake.freshness", "1min", SET),
                                                ("owner", "ops", SET)]) == (0, None)
    tbl = open_iceberg(wh, db, "evolving")
    assert tbl.properties["fluss.table.datalake.freshness"] == "1min"
    assert tbl.properties["fluss.owner"] == "ops"
    assert len(tbl.metadata.metadata_log) == 1  # v1 named by v2

    assert alter(srv, db, "evolving", adds=[("score", {"type": "BIGINT"}, 0, "points")]) == \
        (0, None)
    tbl = open_iceberg(wh, db, "evolving")
    assert tbl.metadata.current_schema_id == 1
    assert fields(tbl) == [(1, "id", "int", False), (2, "v", "string", False),
                           (6, "score", "long", False), (3, "__bucket", "int", True),
                           (4, "__offset", "long", True), (5, "__timestamp", "timestamptz", True)]
    assert tbl.schema().find_field("score").doc == "points"
    assert tbl.metadata.last_column_id == 6
    assert [s.schema_id for s in tbl.metadata.schemas] == [0, 1]
    assert (wh / db / "evolving" / "metadata" / "version-hint.text").read_text() == "3"

    # a nested column: the next id, its element the one after (Iceberg's
    # SchemaUpdate), before the system columns
    assert alter(srv, db, "evolving", adds=[("tags", {"type": "ARRAY", "element_type":
                                                      {"type": "STRING"}}, 0)]) == (0, None)
    tbl = open_iceberg(wh, db, "evolving")
    assert tbl.metadata.current_schema_id == 2
    assert [f.name for f in tbl.schema().fields] == ["id", "v", "score", "tags", "__bucket",
                                                     "__offset", "__timestamp"]
    tags = tbl.schema().find_field("tags")
    assert (tags.field_id, tags.field_type.element_id, tags.field_type.element_required) == \
        (7, 8, False)
    assert tbl.metadata.last_column_id == 8


async def test_refusals(lake):
    srv, admin, db, wh = lake

    async def refused(name, desc):
        with pytest.raises(fluss.FlussError) as ei:
            await admin.create_table(fluss.TablePath(db, name), desc)
        assert not await admin.table_exists(fluss.TablePath(db, name))
        return ei.value.error_code, server_message(ei.value)

    by_int = pa.schema([("p", pa.int32()), ("v", pa.string())])
    code, msg = await refused("by_int", fluss.TableDescriptor(
        fluss.Schema(by_int), partition_keys=["p"], bucket_count=1, properties=LAKE))
    assert code == 15 and "Partition key only support string type for iceberg" in msg, msg
    other = {**LAKE, "table.datalake.format": "paimon"}
    code, msg = await refused("other", fluss.TableDescriptor(
        fluss.Schema(pa.schema([("id", pa.int32())])), bucket_count=1, properties=other))
    assert code == 15 and "'paimon'" in msg, msg

    # a lake table outlives its Fluss table (as in the reference): the name
    # cannot be taken again with the lake on
    path = fluss.TablePath(db, "again")
    desc = fluss.TableDescriptor(fluss.Schema(pa.schema([("id", pa.int32())])), bucket_count=1,
                                 properties=LAKE)
    await admin.create_table(path, desc)
    await admin.drop_table(path, ignore_if_not_exists=False)
    code, msg = await refused("again", desc)
    assert code == 54 and msg.startswith(f"Table {db}.again already exists."), msg


async def test_no_lake_cluster(server, admin, db):
    """The session server has no datalake.format: a lake table is refused as
    0.9.1 refuses it, and no table gets a format."""
    with pytest.raises(fluss.FlussError) as ei:
        await admin.create_table(fluss.TablePath(db, "t"), fluss.TableDescriptor(
            fluss.Schema(pa.schema([("id", pa.int32())])), bucket_count=1, properties=LAKE))
    assert ei.value.error_code == 15
    assert "the Fluss cluster doesn't enable datalake tables" in server_message(ei.value)
    path = fluss.TablePath(db, "plain")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([("id", pa.int32())])), bucket_count=1))
    assert "table.datalake.format" not in (await admin.get_table_info(path)).get_properties()


@pytest.mark.parametrize("args, message", [
    (["-D", "datalake.format=paimon", "-D", "datalake.paimon.warehouse=/tmp/x"],
     "datalake.format 'paimon' is not supported by flussd"),
    (["-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
      "-D", "datalake.iceberg.warehouse=/tmp/x", "-D", "datalake.paimon.metastore=fs"],
     "Invalid configuration 'datalake.paimon.metastore' for 'iceberg' datalake format"),
    (["-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=rest",
      "-D", "datalake.iceberg.warehouse=/tmp/x"],
     "datalake.iceberg.type 'rest' is not supported"),
    (["-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop"],
     "datalake.iceberg.warehouse must be set"),
    (["-D", "datalake.format=delta"], "Could not parse value 'delta' for key 'datalake.format'"),
])
def test_bad_server_config(tmp_path, args, message):
    cs, ts = free_ports(2)
    binary = os.environ.get("FLUSSD", REPO / "build" / "flussd")
    proc = subprocess.run([str(binary), "--data-dir", str(tmp_path / "d"),
                           "-D", f"bind.listeners=FLUSS://127.0.0.1:{cs}",
                           "-D", f"tablet-server.bind.listeners=FLUSS://127.0.0.1:{ts}", *args],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert message in proc.stderr, proc.stderr
