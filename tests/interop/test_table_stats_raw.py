"""GET_TABLE_STATS (tablet server) and GET_LAKE_SNAPSHOT (both roles) on the
wire, as 0.9.1 answers them:

* GET_TABLE_STATS answers per bucket, in request order, echoing bucket and
  partition ids: a primary-key bucket's live rows (inserts add, updates do
  not, deletes of present keys remove, deletes of missing keys do nothing),
  a log bucket's records (high watermark - log start); an unknown table or
  bucket 21 UNKNOWN_TABLE_OR_BUCKET, a partitioned table's bucket without
  a partition id 21, a table whose changelog image is WAL 15
  INVALID_TABLE_EXCEPTION (no count kept).
* GET_LAKE_SNAPSHOT: there is no lake tier, so every table answers 53
  LAKE_SNAPSHOT_NOT_EXIST ("Lake table snapshot doesn't exist for table:
  db.t, table id: N"), also through pyfluss's get_latest_lake_snapshot; a
  missing table 7; snapshot_id together with readable=true -1.
"""

import fluss
import pyarrow as pa

from conftest import expect_error, unique
from logutil import raw_tablet, wait_ready
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, as_int32, as_int64, decode,
                     decode_error, f_bytes, f_varint, handshake, table_path_msg)

GET_TABLE_STATS, GET_LAKE_SNAPSHOT = 1059, 1032
SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string())])


def table_stats(rc, table_id, buckets):
    """buckets: [(bucket, partition_id or None)] -> [{bucket, partition,
    error_code, error_message, row_count}] in answer order."""
    body = f_varint(1, table_id)
    for b, pid in buckets:
        body += f_bytes(2, (f_varint(1, pid) if pid is not None else b"") + f_varint(2, b))
    rtype, resp = rc.call(GET_TABLE_STATS, body)
    assert rtype == RESPONSE_SUCCESS, decode_error(resp)
    out = []
    for raw in decode(resp).get(1, []):
        f = decode(raw)
        out.append(dict(bucket=as_int32(f[4][0]),
                        partition=as_int64(f[3][0]) if 3 in f else None,
                        error_code=as_int32(f[1][0]) if 1 in f else 0,
                        error_message=f[2][0].decode() if 2 in f else None,
                        row_count=as_int64(f[5][0]) if 5 in f else None))
    return out


def total_rows(answer):
    assert all(a["error_code"] == 0 and a["row_count"] is not None for a in answer), answer
    return sum(a["row_count"] for a in answer)


async def create(admin, db, name, buckets, pk=True, **props):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"] if pk else None), bucket_count=buckets,
        properties=props))
    await wait_ready(admin, path, buckets)
    return path, (await admin.get_table_info(path)).table_id


async def test_primary_key_and_log_counts(conn, admin, db):
    # first: pyfluss's writers lose their table when get_server_nodes
    # refreshes the metadata
    rc = await raw_tablet(admin)
    try:
        pk, pk_id = await create(admin, db, "pk", 3)
        table = await conn.get_table(pk)
        w = table.new_upsert().create_writer()
        for i in range(100):
            w.upsert({"id": i, "name": f"n{i}"})
        await w.flush()
        answer = table_stats(rc, pk_id, [(2, None), (0, None), (1, None)])
        assert [a["bucket"] for a in answer] == [2, 0, 1]
        assert all(a["partition"] is None for a in answer)
        assert total_rows(answer) == 100
        for i in range(0, 100, 2):  # updates: the count stays
            w.upsert({"id": i, "name": "again"})
        for i in range(0, 100, 5):  # deletes of present keys
            w.delete({"id": i})
        for i in range(1000, 1010):  # deletes of keys never written
            w.delete({"id": i})
        await w.flush()
        assert total_rows(table_stats(rc, pk_id, [(b, None) for b in range(3)])) == 80

        log, log_id = await create(admin, db, "log", 2, pk=False)
        lw = (await conn.get_table(log)).new_append().create_writer()
        for i in range(37):
            lw.append({"id": i, "name": "x"})
        await lw.flush()
        assert total_rows(table_stats(rc, log_id, [(0, None), (1, None)])) == 37
        # an empty request: an empty answer
        assert table_stats(rc, log_id, []) == []
    finally:
        rc.close()


async def test_stats_refusals(admin, db):
    pk, pk_id = await create(admin, db, "pk", 1)
    wal, wal_id = await create(admin, db, "wal", 1, **{"table.changelog.image": "WAL"})
    parted = fluss.TablePath(db, "parted")
    await admin.create_table(parted, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("id", pa.int32()), pa.field("day", pa.string())]),
                     primary_keys=["id", "day"]),
        partition_keys=["day"], bucket_count=1))
    parted_id = (await admin.get_table_info(parted)).table_id
    rc = await raw_tablet(admin)
    try:
        answer = table_stats(rc, pk_id, [(0, None), (7, None)])
        assert answer[0]["row_count"] == 0 and answer[0]["error_code"] == 0
        assert answer[1]["error_code"] == 21 and answer[1]["row_count"] is None
        assert answer[1]["error_message"]
        (a,) = table_stats(rc, 987654321, [(0, None)])
        assert a["error_code"] == 21, a
        (a,) = table_stats(rc, parted_id, [(0, None)])
        assert a["error_code"] == 21, a
        (a,) = table_stats(rc, parted_id, [(0, 424242)])
        assert (a["error_code"], a["partition"]) == (21, 424242), a
        (a,) = table_stats(rc, wal_id, [(0, None)])
        assert a["error_code"] == 15, a
        assert "WAL" in a["error_message"] and a["row_count"] is None
    finally:
        rc.close()


def lake_snapshot(rc, db, table, snapshot_id=None, readable=None):
    body = f_bytes(1, table_path_msg(db, table))
    if snapshot_id is not None:
        body += f_varint(2, snapshot_id)
    if readable is not None:
        body += f_varint(3, 1 if readable else 0)
    rtype, resp = rc.call(GET_LAKE_SNAPSHOT, body)
    assert rtype == RESPONSE_ERROR, resp
    return decode_error(resp)


async def test_lake_snapshot_never_exists(server, admin, db):
    path, tid = await create(admin, db, "t", 1)
    host, port = server.bootstrap.split(":")
    rc_cs = handshake(host, int(port))
    rc_ts = await raw_tablet(admin)
    try:
        for rc in (rc_cs, rc_ts):
            code, msg = lake_snapshot(rc, db, "t")
            assert code == 53, (code, msg)
            assert msg == f"Lake table snapshot doesn't exist for table: {db}.t, table id: {tid}"
            code, msg = lake_snapshot(rc, db, "t", snapshot_id=3)
            assert code == 53 and msg.endswith(f"table id: {tid}, snapshot id: 3"), msg
            code, msg = lake_snapshot(rc, db, "t", readable=True)
            assert code == 53 and msg.startswith("Lake table readable snapshot"), msg
            code, msg = lake_snapshot(rc, db, "t", readable=False)
            assert code == 53 and msg.startswith("Lake table snapshot"), msg
            assert lake_snapshot(rc, db, unique("missing"))[0] == 7
            code, msg = lake_snapshot(rc, db, "t", snapshot_id=1, readable=True)
            assert code == -1 and "cannot set both snapshot_id and readable=true" in msg, msg
    finally:
        rc_cs.close()
        rc_ts.close()
    await expect_error(53, admin.get_latest_lake_snapshot(path))
