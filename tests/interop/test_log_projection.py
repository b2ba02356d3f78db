"""Projection pushdown on log tables (FETCH_LOG projection_pushdown_enabled):
the scanner returns exactly the requested columns, in the requested order,
with the written values.  pyfluss sends the projected positions ascending
and reorders locally; the server must cut the Arrow batches down to those
columns (protocol.md §3.7)."""

import time
from decimal import Decimal

import pyarrow as pa
import pytest

import fluss

from logutil import (INVALID_COLUMN_PROJECTION, V0_HEADER, build_batch,
                     create_log_table, fetch_log, parse_batches, produce_log,
                     raw_tablet, read_all)


SCHEMA = pa.schema([
    pa.field("id", pa.int32()),
    pa.field("name", pa.string()),
    pa.field("score", pa.float64()),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("attrs", pa.map_(pa.string(), pa.int32())),
    pa.field("pos", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
    pa.field("raw", pa.binary()),
    pa.field("amount", pa.decimal128(12, 3)),
])
ROWS = 200


def rows():
    out = []
    for i in range(ROWS):
        out.append({
            "id": i,
            "name": None if i % 7 == 0 else f"name-{i}-é",
            "score": i * 1.5,
            "tags": None if i % 5 == 0 else [f"t{j}" for j in range(i % 4)],
            "attrs": [(f"k{j}", j * i) for j in range(i % 3)],
            "pos": None if i % 9 == 0 else {"x": i, "y": str(-i)},
            "raw": bytes([i % 256]) * (i % 6),
            "amount": None if i % 4 == 0 else Decimal(i * 1000 + 123).scaleb(-3),
        })
    return out


async def require_projection(admin, path):
    """Fail fast when the server rejects projection pushdown: pyfluss does
    not give up on a per-bucket error 34, its scanners keep retrying (a
    to_arrow() would only end by our 30 s timeout)."""
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        _, resp = fetch_log(rc, info.table_id, {0: 0}, projection=[0])
    finally:
        rc.close()
    assert resp[0]["error_code"] == 0, f"FETCH_LOG with projection [0]: {resp}"


async def filled(conn, admin, db, name, **descriptor):
    path = await create_log_table(admin, db, name, SCHEMA, **descriptor)
    table = await conn.get_table(path)
    want = pa.Table.from_pylist(rows(), schema=table.arrow_schema)
    w = table.new_append().create_writer()
    w.write_arrow(want.slice(0, ROWS // 2))
    await w.flush()
    for r in want.slice(ROWS // 2).to_pylist():
        w.append(r)
    await w.flush()
    await require_projection(admin, path)
    return path, table, want


def expect(want: pa.Table, names):
    return want.select(names)


@pytest.mark.parametrize("indices", [[2, 0], [0], [7], [5, 3, 1], [4, 6], [7, 6, 5, 4, 3, 2, 1, 0]],
                         ids=["2_0", "0", "7", "5_3_1", "4_6", "reversed"])
async def test_project_by_index(conn, admin, db, indices):
    path, table, want = await filled(conn, admin, db, "proj_idx")
    got = await read_all(conn, admin, path, table.new_scan().project(indices))
    names = [SCHEMA.names[i] for i in indices]
    assert got.schema.names == names
    assert got.equals(expect(want, names)), (got.slice(0, 3), expect(want, names).slice(0, 3))


async def test_project_by_name_three_buckets(conn, admin, db):
    path, table, want = await filled(conn, admin, db, "proj_name", bucket_count=3,
                                     bucket_keys=["id"])
    names = ["amount", "id", "tags"]
    got = await read_all(conn, admin, path, table.new_scan().project_by_name(names))
    assert got.schema.names == names
    got = got.sort_by("id")
    assert got.equals(expect(want, names)), got.slice(0, 3)


@pytest.mark.parametrize("compression", ["NONE", "LZ4_FRAME", "ZSTD"])
async def test_project_compressed(conn, admin, db, compression):
    path, table, want = await filled(
        conn, admin, db, "proj_" + compression.lower(),
        properties={"table.log.arrow.compression.type": compression})
    got = await read_all(conn, admin, path, table.new_scan().project([6, 1]))
    assert got.equals(expect(want, ["raw", "name"]))


async def test_project_record_scanner(conn, admin, db):
    """The record-based scanner with a projection: rows hold only the
    projected columns."""
    path, table, want = await filled(conn, admin, db, "proj_rec")
    scanner = await table.new_scan().project_by_name(["score", "id"]).create_log_scanner()
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    got = []
    deadline = time.monotonic() + 10
    while len(got) < ROWS and time.monotonic() < deadline:
        got += [(r.offset, r.row) for r in await scanner.poll(500)]
    assert [o for o, _ in got] == list(range(ROWS))
    assert [r for _, r in got] == [{"score": i * 1.5, "id": i} for i in range(ROWS)]


async def test_raw_projection_not_ascending_is_rejected(conn, admin, db):
    """Projected fields must be strictly ascending (the client reorders
    locally): [2, 0] on the wire -> per-bucket error 34 on both servers,
    likewise duplicates and positions past the last column.  (An empty
    list is left out: the reference answers -1 with an
    IllegalStateException "Invalid metadata length" stack trace.)"""
    path = await create_log_table(admin, db, "proj_raw", SCHEMA)
    info = await admin.get_table_info(path)
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    w.write_arrow(pa.Table.from_pylist(rows()[:10], schema=table.arrow_schema))
    await w.flush()
    rc = await raw_tablet(admin)
    try:
        for fields in ([2, 0], [1, 1], [8]):
            _, resp = fetch_log(rc, info.table_id, {0: 0}, projection=fields)
            assert resp[0]["error_code"] == INVALID_COLUMN_PROJECTION, (fields, resp)
            assert resp[0]["error_message"], resp
    finally:
        rc.close()


@pytest.mark.parametrize("compression,codec", [("NONE", None), ("ZSTD", "zstd"),
                                               ("LZ4_FRAME", "lz4")])
async def test_raw_projection_returns_projected_batches(conn, admin, db, compression, codec):
    """A raw FETCH_LOG with projection [0, 2, 5] returns batches whose Arrow
    message decodes with the 3-column schema.  The batch is compressed as
    the table says: the reference's projection writes the table's
    configured codec into the new message whatever the stored batch used
    (an uncompressed batch in a ZSTD table comes back marked ZSTD and
    undecodable)."""
    path = await create_log_table(admin, db, "proj_raw_ok", SCHEMA, properties={
        "table.log.arrow.compression.type": compression})
    info = await admin.get_table_info(path)
    table = await conn.get_table(path)
    want = pa.Table.from_pylist(rows()[:20], schema=table.arrow_schema)
    fields = [0, 2, 5]
    rc = await raw_tablet(admin)
    try:
        rb = want.to_batches()[0]
        _, resp = produce_log(rc, info.table_id,
                              {0: build_batch(rb, info.schema_id, codec=codec)})
        assert resp[0]["error_code"] == 0, resp
        _, resp = fetch_log(rc, info.table_id, {0: 0}, projection=fields)
        assert resp[0]["error_code"] == 0, resp
        (b,) = parse_batches(resp[0]["records"])
        assert b["record_count"] == 20 and b["base_offset"] == 0
        schema = pa.schema([table.arrow_schema.field(i) for i in fields])
        got = pa.ipc.read_record_batch(
            pa.ipc.read_message(pa.py_buffer(b["raw"][V0_HEADER:])), schema)
        assert pa.Table.from_batches([got]).equals(want.select(fields))
    finally:
        rc.close()
