"""ALTER_TABLE (1044) on the wire and with pyfluss (which has no alter
call: the changes go over a raw connection to the coordinator).

* every refusal 0.9.1 makes, with its code and words (properties that are
  not alterable, enabling the data lake, bad values, op types, positions,
  NOT NULL columns, existing columns, properties and columns together, a
  missing table and ignore_if_not_exists);
* GET_TABLE_SCHEMA for every schema id, GET_TABLE_INFO with the latest;
* a log table written across ADD COLUMN: stored batches come back byte for
  byte under their own schema id; pyfluss reads them aligned to its
  scanner's schema (with_fixed_schema), projected, or each batch under
  its write-time schema; a PRODUCE_LOG with the old schema id is stored;
* (ours) everything survives a restart (kill -9).

The Java client's side (Admin.alterTable, writers and lookups across the
change, PK tables) is JavaAlterTable, run from here too.
"""

import asyncio
import json
import subprocess
import time

import pyarrow as pa
import pytest

import fluss

from conftest import IS_OURS, REPO, SERVER_KIND, unique
from logutil import (build_batch, create_log_table, fetch_log, parse_batches, produce_log,
                     raw_tablet, read_all, records_of)
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, as_int32, decode, decode_error,
                     enc_varint, f_bytes, f_varint, handshake, table_path_msg)

ALTER_TABLE = 1044
GET_TABLE_SCHEMA = 1011
SET, DELETE, APPEND = 0, 1, 2

SCHEMA_V1 = pa.schema([("id", pa.int32()), ("name", pa.string())])
SCHEMA_V2 = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.int64())])


def alter_body(db, table, configs=(), adds=(), drops=(), renames=(), modifies=(),
               ignore=False):
    """AlterTableRequest; configs (key, value or None, op), adds (name, type
    JSON, position[, comment]), drops names, renames (old, new), modifies
    (name, type JSON or None)."""
    body = f_bytes(1, table_path_msg(db, table)) + f_varint(2, 1 if ignore else 0)
    for key, value, op in configs:
        body += f_bytes(3, f_bytes(1, key) + (f_bytes(2, value) if value is not None else b"")
                        + f_varint(3, op))
    for add in adds:
        name, typ, pos = add[:3]
        msg = f_bytes(1, name) + f_bytes(2, json.dumps(typ))
        if len(add) > 3:
            msg += f_bytes(3, add[3])
        body += f_bytes(4, msg + f_varint(4, pos))
    for name in drops:
        body += f_bytes(5, f_bytes(1, name))
    for old, new in renames:
        body += f_bytes(6, f_bytes(1, old) + f_bytes(2, new))
    for name, typ in modifies:
        body += f_bytes(7, f_bytes(1, name) + (f_bytes(2, json.dumps(typ)) if typ else b""))
    return body


def alter(server, db, table, **kw):
    """-> (0, None) or (error code, first line of the message)."""
    with handshake(server.host, server.coordinator_port) as c:
        rtype, resp = c.call(ALTER_TABLE, alter_body(db, table, **kw))
    if rtype == RESPONSE_SUCCESS:
        return 0, None
    assert rtype == RESPONSE_ERROR, (rtype, resp)
    code, msg = decode_error(resp)
    return code, (msg or "").split("\n")[0]


def table_info(server, db, table):
    with handshake(server.host, server.coordinator_port) as c:
        rtype, info = c.get_table_info(db, table)
    assert rtype == RESPONSE_SUCCESS, info
    return info


def table_schema(server, db, table, schema_id=None):
    """-> (schema id, schema JSON) or (error code, message)."""
    body = f_bytes(1, table_path_msg(db, table))
    if schema_id is not None:
        body += f_varint(2, schema_id)
    with handshake(server.host, server.coordinator_port) as c:
        rtype, resp = c.call(GET_TABLE_SCHEMA, body)
    if rtype == RESPONSE_ERROR:
        return decode_error(resp)
    f = decode(resp)
    return as_int32(f[1][0]), json.loads(f[2][0])


def names(schema_json):
    return [c["name"] for c in schema_json["columns"]]


@pytest.fixture
async def log_table(admin, db):
    await create_log_table(admin, db, "t", SCHEMA_V1, bucket_count=1)
    return db, "t"


LATE = "The option 'table.datalake.enabled' cannot be altered for tables that were created " \
       "before the Fluss cluster enabled datalake."


@pytest.mark.parametrize("kw, code, message", [
    (dict(configs=[("table.log.ttl", "1d", SET)]), 56,
     "The option 'table.log.ttl' is not supported to alter yet."),
    (dict(configs=[("table.foo", "1", SET)]), 56,
     "The option 'table.foo' is not supported to alter yet."),
    (dict(configs=[("table.log.ttl", None, DELETE)]), 56,
     "The option 'table.log.ttl' is not supported to alter yet."),
    (dict(configs=[("table.datalake.enabled", "true", SET)]), 56, LATE),
    (dict(configs=[("table.datalake.enabled", "false", SET)]), 56, LATE),
    (dict(configs=[("table.log.tiered.local-segments", "0", SET)]), 39,
     "'table.log.tiered.local-segments' must be greater than 0."),
    (dict(configs=[("table.log.tiered.local-segments", "x", SET)]), 39,
     "Invalid value for config 'table.log.tiered.local-segments'. Reason: Could not parse "
     "value 'x' for key 'table.log.tiered.local-segments'."),
    (dict(configs=[("table.datalake.freshness", "soon", SET)]), 39,
     "Invalid value for config 'table.datalake.freshness'. Reason: Could not parse value "
     "'soon' for key 'table.datalake.freshness'."),
    (dict(configs=[("k", "v", APPEND)]), -1,
     "java.lang.IllegalArgumentException: Unsupported alter configs op type 2"),
    (dict(configs=[("k", None, SET)]), -1,
     "java.lang.IllegalStateException: Field 'config_value' is not set"),
    (dict(adds=[("name", {"type": "STRING"}, 0)]), 56, "Column name already exists."),
    (dict(adds=[("n", {"type": "BIGINT", "nullable": False}, 0)]), -1,
     "java.lang.IllegalArgumentException: Column n must be nullable."),
    (dict(adds=[("n", {"type": "BIGINT"}, 1)]), -1,
     "java.lang.IllegalArgumentException: Unsupported ColumnPositionType: 1"),
    (dict(adds=[("n", {"type": "NOPE"}, 0)]), -1, "java.lang.IllegalArgumentException: "),
    (dict(adds=[("n", {"type": "BIGINT"}, 0)], configs=[("k", "v", SET)]), 56,
     "Table alteration can only be applied to one of the following: table properties or "
     "table schema."),
    (dict(modifies=[("name", {"type": "STRING"})]), -1,
     "org.apache.fluss.exception.SchemaChangeException: Not support modify column now."),
    (dict(modifies=[("name", None)]), -1,
     'java.lang.IllegalArgumentException: argument "content" is null'),
])
async def test_refusals(server, log_table, kw, code, message):
    db, t = log_table
    before = table_info(server, db, t)
    got_code, got_msg = alter(server, db, t, **kw)
    assert got_code == code, got_msg
    assert got_msg.startswith(message), got_msg
    after = table_info(server, db, t)
    assert after == before, "a refused ALTER TABLE changed the table"


async def test_missing_table(server, db):
    assert alter(server, db, "nope", configs=[("k", "v", SET)]) == \
        (7, f"Table '{db}.nope' does not exist.")
    assert alter(server, db, "nope", adds=[("n", {"type": "INTEGER"}, 0)]) == \
        (7, f"Table '{db}.nope' does not exist.")
    assert alter(server, db, "nope", configs=[("k", "v", SET)], ignore=True) == (0, None)
    assert alter(server, db, "nope", adds=[("n", {"type": "INTEGER"}, 0)], ignore=True) == (0, None)
    assert alter(server, db, "nope") == (0, None)  # nothing to change: not even looked up


async def test_properties_set_and_reset(server, log_table):
    db, t = log_table
    before = table_info(server, db, t)
    assert alter(server, db, t, configs=[
        ("table.datalake.freshness", "1min", SET), ("table.log.tiered.local-segments", "4", SET),
        ("owner", "a", SET), ("note", "n", SET)]) == (0, None)
    info = table_info(server, db, t)
    props, custom = info["table_json"]["properties"], info["table_json"]["custom_properties"]
    assert props["table.datalake.freshness"] == "1min"
    assert props["table.log.tiered.local-segments"] == "4"
    assert custom == {"owner": "a", "note": "n"}
    assert info["schema_id"] == 1
    assert info["created_time"] == before["created_time"]
    assert info["modified_time"] == before["modified_time"]  # 0.9.1 keeps it
    # a key both set and reset ends up reset; resetting an absent key is fine
    assert alter(server, db, t, configs=[
        ("table.datalake.freshness", None, DELETE), ("note", "m", SET), ("note", None, DELETE),
        ("absent", None, DELETE)]) == (0, None)
    info = table_info(server, db, t)
    assert "table.datalake.freshness" not in info["table_json"]["properties"]
    assert info["table_json"]["properties"]["table.log.tiered.local-segments"] == "4"
    assert info["table_json"]["custom_properties"] == {"owner": "a"}
    # the same values again: nothing changes
    assert alter(server, db, t, configs=[("owner", "a", SET)]) == (0, None)
    assert table_info(server, db, t) == info


async def test_add_column_schemas(server, log_table):
    db, t = log_table
    assert alter(server, db, t, adds=[("score", {"type": "BIGINT"}, 0, "points")]) == (0, None)
    assert alter(server, db, t, adds=[
        ("pos", {"type": "ROW", "fields": [{"name": "x", "field_type": {"type": "INTEGER"}},
                                           {"name": "y", "field_type": {"type": "STRING"}}]}, 0),
        ("z", {"type": "DOUBLE"}, 0)]) == (0, None)
    info = table_info(server, db, t)
    assert info["schema_id"] == 3
    s1, s2, s3 = (table_schema(server, db, t, i) for i in (1, 2, 3))
    assert (s1[0], names(s1[1])) == (1, ["id", "name"])
    assert (s2[0], names(s2[1])) == (2, ["id", "name", "score"])
    assert (s3[0], names(s3[1])) == (3, ["id", "name", "score", "pos", "z"])
    assert table_schema(server, db, t) == s3
    assert info["table_json"]["schema"] == s3[1]
    cols = s3[1]["columns"]
    assert cols[2] == {"name": "score", "data_type": {"type": "BIGINT"}, "comment": "points",
                       "id": 2}
    # ids never reused: the ROW's fields are numbered after its column
    assert [c["id"] for c in cols] == [0, 1, 2, 3, 6]
    assert [f["field_id"] for f in cols[3]["data_type"]["fields"]] == [4, 5]
    assert s3[1]["highest_field_id"] == 6
    assert table_schema(server, db, t, 4) == \
        (9, f"Schema for table {db}.{t} with schema id 4 does not exist.")


async def write_rows(conn, path, rows):
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    w.write_arrow_batch(pa.RecordBatch.from_pylist(rows, schema=table.arrow_schema))
    await w.flush()
    return table


async def test_log_table_across_add_column(server, conn, admin, log_table):
    db, t = log_table
    path = fluss.TablePath(db, t)
    await write_rows(conn, path, [{"id": 1, "name": "a"}, {"id": 2, "name": None}])
    assert alter(server, db, t, adds=[("score", {"type": "BIGINT"}, 0)]) == (0, None)
    info = await admin.get_table_info(path)
    assert info.schema_id == 2
    t2 = await write_rows(conn, path, [{"id": 3, "name": "c", "score": 30},
                                       {"id": 4, "name": None, "score": None}])
    assert t2.arrow_schema == SCHEMA_V2

    # a writer still on schema 1: the reference stores its batch as it is
    rc = await raw_tablet(admin)
    try:
        # compressed like the table's own batches: a projecting reference
        # server writes the table's codec into every projected batch
        stale = build_batch(pa.RecordBatch.from_pylist([{"id": 5, "name": "e"}],
                                                       schema=SCHEMA_V1), schema_id=1,
                            codec="zstd", level=3)
        _, resp = produce_log(rc, info.table_id, {0: stale})
        assert resp[0]["error_code"] == 0, resp
        _, fetched = fetch_log(rc, info.table_id, {0: 0})
        batches = parse_batches(records_of(fetched))
        assert [b["schema_id"] for b in batches] == [1, 2, 1]
        assert all(b["crc_ok"] for b in batches)
        # as stored: all but the base offset and commit time the server assigns
        raw = batches[2]["raw"]
        assert raw[8:13] + raw[21:] == stale[8:13] + stale[21:]
        # a projection of columns every schema has; one of the new column
        # fails on the batches without it, as in 0.9.1
        _, proj = fetch_log(rc, info.table_id, {0: 0}, projection=[0, 1])
        assert proj[0]["error_code"] == 0, proj
        assert [b["schema_id"] for b in parse_batches(proj[0]["records"])] == [1, 2, 1]
        _, bad = fetch_log(rc, info.table_id, {0: 0}, projection=[0, 2])
        assert bad[0]["error_code"] == 34, bad
        assert bad[0]["error_message"] == \
            "Projected fields [0, 2] is out of bound for schema with 2 fields.", bad
    finally:
        rc.close()

    want = [{"id": 1, "name": "a", "score": None}, {"id": 2, "name": None, "score": None},
            {"id": 3, "name": "c", "score": 30}, {"id": 4, "name": None, "score": None},
            {"id": 5, "name": "e", "score": None}]
    fixed = await read_all(conn, admin, path, t2.new_scan().with_fixed_schema(True))
    assert fixed.schema == SCHEMA_V2
    assert fixed.to_pylist() == want
    projected = await read_all(conn, admin, path, t2.new_scan().project([0, 1]))
    assert projected.to_pylist() == [{k: r[k] for k in ("id", "name")} for r in want]
    # without a fixed schema each batch keeps the schema it was written with
    scanner = await t2.new_scan().create_record_batch_log_scanner()
    scanner.subscribe_buckets({0: fluss.EARLIEST_OFFSET})
    seen = []
    while sum(len(b) for _, b in seen) < len(want):
        for rb in await asyncio.wait_for(scanner.poll_record_batch(500), 30):
            seen.append((rb.batch.schema, rb.batch.to_pylist()))
    assert [s for s, _ in seen] == [SCHEMA_V1, SCHEMA_V2, SCHEMA_V1]
    assert [r for _, rows in seen for r in rows] == \
        [{k: v for k, v in r.items() if k != "score" or i in (2, 3)} for i, r in enumerate(want)]


async def test_survives_restart(our_server, conn, admin, db):
    await create_log_table(admin, db, "r", SCHEMA_V1, bucket_count=1)
    path = fluss.TablePath(db, "r")
    await write_rows(conn, path, [{"id": 1, "name": "a"}])
    assert alter(our_server, db, "r", configs=[("table.datalake.freshness", "2min", SET),
                                               ("owner", "o", SET)]) == (0, None)
    assert alter(our_server, db, "r", adds=[("score", {"type": "BIGINT"}, 0)]) == (0, None)
    await write_rows(conn, path, [{"id": 2, "name": "b", "score": 7}])
    before = table_info(our_server, db, "r")
    schemas = [table_schema(our_server, db, "r", i) for i in (1, 2)]
    await conn.close()
    our_server.restart(hard=True)
    assert table_info(our_server, db, "r") == before
    assert [table_schema(our_server, db, "r", i) for i in (1, 2)] == schemas
    c2 = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers":
                                                          our_server.bootstrap}))
    try:
        a2 = c2.get_admin()
        t = await c2.get_table(path)
        got = await read_all(c2, a2, path, t.new_scan().with_fixed_schema(True))
        assert got.to_pylist() == [{"id": 1, "name": "a", "score": None},
                                   {"id": 2, "name": "b", "score": 7}]
        # and the next schema id continues
        assert alter(our_server, db, "r", adds=[("z", {"type": "INTEGER"}, 0)]) == (0, None)
        assert table_info(our_server, db, "r")["schema_id"] == 3
    finally:
        await c2.close()


def run_java(bootstrap, *args):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), bootstrap, "JavaAlterTable",
                           *args], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out


def test_java_alter_table(server):
    """Properties, ADD COLUMN on log and PK tables through the Java client;
    against ours also DROP/RENAME COLUMN (fluss-c extensions), then a
    restart and the same reads again."""
    out = run_java(server.bootstrap, SERVER_KIND)
    assert "JAVA ALTER OK" in out, out[-3000:]
    if IS_OURS:
        server.restart(hard=True)
        out = run_java(server.bootstrap, "verify")
        assert "JAVA ALTER VERIFY OK" in out, out[-3000:]


EVO_V1 = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int64()),
                    ("c", pa.string())])


async def test_drop_rename_column(our_server, conn, admin, db):
    """fluss-c extensions (0.9.1 answers -1 'Not support drop/rename column
    now.', see JavaAlterTable): a dropped column's values vanish from every
    read, a renamed one keeps them, a new column of a dropped one's name
    starts empty; pyfluss aligns batches by column id; projections are the
    latest schema's positions, translated per batch."""
    await create_log_table(admin, db, "evo", EVO_V1, bucket_count=1)
    path = fluss.TablePath(db, "evo")
    await write_rows(conn, path, [{"id": 1, "a": "a1", "b": 10, "c": "c1"},
                                  {"id": 2, "a": None, "b": None, "c": "c2"}])
    srv = our_server
    assert alter(srv, db, "evo", drops=["nope"]) == (56, "Column nope does not exist.")
    assert alter(srv, db, "evo", renames=[("nope", "x")]) == (56, "Column nope does not exist.")
    assert alter(srv, db, "evo", renames=[("c", "b")]) == (56, "Column b already exists.")
    assert alter(srv, db, "evo", drops=["a"]) == (0, None)
    assert alter(srv, db, "evo", renames=[("c", "label")]) == (0, None)
    assert alter(srv, db, "evo", renames=[("label", "label")]) == (0, None)  # no new schema
    assert alter(srv, db, "evo", adds=[("a", {"type": "STRING"}, 0)]) == (0, None)
    info = table_info(srv, db, "evo")
    assert info["schema_id"] == 4
    latest = table_schema(srv, db, "evo")[1]
    assert [(c["name"], c["id"]) for c in latest["columns"]] == \
        [("id", 0), ("b", 2), ("label", 3), ("a", 4)]
    assert latest["highest_field_id"] == 4
    assert names(table_schema(srv, db, "evo", 2)[1]) == ["id", "b", "c"]
    t4 = await write_rows(conn, path, [{"id": 3, "b": 30, "label": "c3", "a": "a3"}])

    want = [{"id": 1, "b": 10, "label": "c1", "a": None},
            {"id": 2, "b": None, "label": "c2", "a": None},
            {"id": 3, "b": 30, "label": "c3", "a": "a3"}]
    got = await read_all(conn, admin, path, t4.new_scan().with_fixed_schema(True))
    assert got.to_pylist() == want
    projected = await read_all(conn, admin, path, t4.new_scan().project([0, 2]))
    assert projected.to_pylist() == [{"id": r["id"], "label": r["label"]} for r in want]

    rc = await raw_tablet(admin)
    try:
        _, resp = fetch_log(rc, info["table_id"], {0: 0}, projection=[0, 2])
        assert resp[0]["error_code"] == 0, resp
        batches = parse_batches(resp[0]["records"])
        assert [b["schema_id"] for b in batches] == [1, 4]
        _, bad = fetch_log(rc, info["table_id"], {0: 0}, projection=[3])
        assert bad[0]["error_code"] == 34, bad
        assert bad[0]["error_message"] == \
            "Projected fields [3] is out of bound for schema with 4 fields."
    finally:
        rc.close()


async def test_put_kv_schema_ids(server, admin, db):
    """PUT_KV after ADD COLUMN: a batch of an older schema id is merged (its
    value stored as it came, like 0.9.1's DefaultRowMerger), one of the new
    id too; a schema id past the latest is refused in the reference's
    words. The changelog is written under the schema id of its time."""
    from test_pk_raw import compacted_row, key, kv_batch, lookup, make_table, put_kv
    name = unique("pk_evo")
    tid = await make_table(admin, db, name)
    rc = await raw_tablet(admin)
    try:
        assert put_kv(rc, tid, {0: kv_batch([(key(7), compacted_row(7, "x", 1))])})[0][
            "error_code"] == 0
        assert alter(server, db, name, adds=[("extra", {"type": "INTEGER"}, 0)]) == (0, None)
        # schema 2's row: id, name, score and extra = 5 (one null-bitmap byte
        # covers all four columns). The reference's tablet server learns of
        # the new schema a moment after the answer; ours before it.
        new = compacted_row(7, "x2", 4) + enc_varint(5)
        deadline = time.monotonic() + 20
        while True:
            got = put_kv(rc, tid, {0: kv_batch([(key(7), new)], schema_id=2)})[0]
            if got["error_code"] == 0 or time.monotonic() > deadline:
                break
            assert not IS_OURS, got
            await asyncio.sleep(0.1)
        assert got["error_code"] == 0, got
        bad = put_kv(rc, tid, {0: kv_batch([(key(9), compacted_row(9, "z", 3))], schema_id=3)})
        assert (bad[0]["error_code"], bad[0]["error_message"]) == \
            (9, "Invalid schema id: 3, latest schema id: 2")
        old = compacted_row(8, "y", 2)
        assert put_kv(rc, tid, {0: kv_batch([(key(8), old)], schema_id=1)})[0][
            "error_code"] == 0
        assert lookup(rc, tid, 0, [key(8), key(7)]) == [b"\x01\x00" + old, b"\x02\x00" + new]
        _, fetched = fetch_log(rc, tid, {0: 0})
        assert [b["schema_id"] for b in parse_batches(records_of(fetched))] == [1, 2, 2]
    finally:
        rc.close()
