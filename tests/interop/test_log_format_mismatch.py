"""Records of another log format sent to a table (issue: an independent Go
client for Fluss 0.9.1 writes INDEXED rows when the table JSON carries no
table.log.format, into a table whose format is the default ARROW).

The reference stores such a batch as it is, and every reader of the bucket
then fails on it (pyfluss: "Invalid continuation marker"): a poison batch.
fluss-c refuses it (14 CORRUPT_RECORD_EXCEPTION) and says what the writer
did wrong: the table's log format and what the records are
(KNOWN_DIFFERENCES). The same test runs against both servers.
"""

import asyncio

import pyarrow as pa
import pytest

import fluss
from conftest import IS_REFERENCE
from logutil import (CORRUPT_RECORD, build_batch, build_raw_batch, create_log_table,
                     indexed_row, produce_log, raw_tablet, read_all, row_record,
                     wait_ready)
from rawwire import RESPONSE_SUCCESS


def indexed_records(rows):
    return b"".join(row_record(indexed_row(i, s.encode())) for i, s in rows)

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string())])


def arrow_rows(lo, hi):
    return pa.record_batch([pa.array(list(range(lo, hi)), pa.int32()),
                            pa.array([f"a{i}" for i in range(lo, hi)])], schema=SCHEMA)


async def produce_one(admin, path, batch):
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        rtype, resp = produce_log(rc, info.table_id, {0: batch})
    finally:
        rc.close()
    assert rtype == RESPONSE_SUCCESS, resp
    return resp[0]


async def test_indexed_rows_to_an_arrow_table(conn, admin, db):
    path = await create_log_table(admin, db, "arrow_t", SCHEMA, bucket_count=1)
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    rows = [(i, f"s{i}") for i in range(3)]
    batch = build_raw_batch(indexed_records(rows), len(rows), info.schema_id)
    r = await produce_one(admin, path, batch)
    if IS_REFERENCE:
        # stored as it is: the bucket now holds a batch no reader can parse
        assert r["error_code"] == 0, r
        with pytest.raises(Exception) as e:
            await read_all(conn, admin, path)
        assert "continuation" in str(e.value).lower() or "arrow" in str(e.value).lower(), e.value
        return
    assert r["error_code"] == CORRUPT_RECORD, r
    assert ("records are not Arrow IPC; this table's log format is ARROW "
            "(they are INDEXED rows)") in r["error_message"], r["error_message"]
    # nothing was stored: the bucket stays readable and writable
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(pa.Table.from_batches([arrow_rows(0, 5)]))
    await w.flush()
    got = await read_all(conn, admin, path)
    assert got.column("id").to_pylist() == list(range(5))


async def test_arrow_to_an_indexed_table(our_server, admin, db):
    path = await create_log_table(admin, db, "indexed_t", SCHEMA, bucket_count=1,
                                  properties={"table.log.format": "INDEXED"})
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    r = await produce_one(admin, path, build_batch(arrow_rows(0, 4), info.schema_id))
    assert r["error_code"] == CORRUPT_RECORD, r
    assert ("records are not INDEXED rows; this table's log format is INDEXED "
            "(they are an Arrow IPC message)") in r["error_message"], r["error_message"]
    rows = [(7, "seven"), (8, "")]
    r = await produce_one(admin, path, build_raw_batch(indexed_records(rows), 2,
                                                       info.schema_id))
    assert r["error_code"] == 0, r


async def test_rows_to_a_compacted_table(our_server, admin, db):
    path = await create_log_table(admin, db, "compacted_t", SCHEMA, bucket_count=1,
                                  properties={"table.log.format": "COMPACTED"})
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    rows = [(1, "x" * 300), (2, "y")]
    r = await produce_one(admin, path, build_raw_batch(indexed_records(rows), 2,
                                                       info.schema_id))
    assert r["error_code"] == CORRUPT_RECORD, r
    assert ("records are not COMPACTED rows; this table's log format is COMPACTED "
            "(they are INDEXED rows)") in r["error_message"], r["error_message"]
    r = await produce_one(admin, path, build_batch(arrow_rows(0, 2), info.schema_id))
    assert "(they are an Arrow IPC message)" in r["error_message"], r
