"""PRODUCE_LOG batches that must never be stored (fluss-c is stricter than
the 0.9.1 reference, which checks only the CRC and stores them all; every
test here is therefore ours-only, see KNOWN_DIFFERENCES.md §3).

Each bad batch below has a correct CRC, so only the produce-time check of
record_validate.h can catch it:
* unknown schema id -> 9 SCHEMA_NOT_EXIST;
* records that do not match their header or the schema of their schema id
  (record count, garbage / cut / trailing Arrow bytes, the Arrow body of
  another schema, broken LZ4 / ZSTD frames, bytes in an empty batch, bad
  change-type bytes, INDEXED / COMPACTED length prefixes that do not add
  up) -> 14 CORRUPT_RECORD_EXCEPTION;
* PRODUCE_LOG to a primary-key table -> 15 INVALID_TABLE_EXCEPTION.
A refusal is all or nothing for the request bucket (a good batch before a
bad one in the same records is not stored either).  After every refusal
the bucket is still fully readable, unprojected and projected, raw and
through pyfluss, and the next good batch is accepted at the next offset.
"""

import struct

import pyarrow as pa
import pytest

import fluss
from logutil import (CORRUPT_RECORD, V0_HEADER, arrow_message, build_batch, compacted_row,
                     crc32c, create_log_table, fetch_log, indexed_row, latest_offsets,
                     parse_batches, produce_log, raw_tablet, read_all, row_record)

pytestmark = pytest.mark.ours_only

SCHEMA_NOT_EXIST = 9
INVALID_TABLE = 15

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("s", pa.string())])
OTHER = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.float64()),
                   pa.field("c", pa.string())])

LZ4_MAGIC = b"\x04\x22\x4d\x18"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def rows(*ids) -> pa.RecordBatch:
    return pa.record_batch([pa.array(list(ids), pa.int32()),
                            pa.array([f"s{i}" * 8 for i in ids])], schema=SCHEMA)


def batch_of(records: bytes, count: int, schema_id: int, attributes: int = 1) -> bytes:
    """A V0 batch with these records bytes and header count, correct CRC."""
    tail = struct.pack("<hbiqii", schema_id, attributes, max(count - 1, 0), -1, -1,
                       count) + records
    total = V0_HEADER + len(records)
    return struct.pack("<qibqI", 0, total - 12, 0, 0, crc32c(tail)) + tail


def flip_first(data: bytes, magic: bytes) -> bytes:
    at = data.find(magic)
    assert at > 0, "codec magic not found"
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


def bad_arrow_batches(sid):
    """(name, records, code, words of the message) for an ARROW table of SCHEMA."""
    msg = arrow_message(rows(1, 2, 3))
    return [
        ("unknown schema id", build_batch(rows(1, 2), sid + 7), SCHEMA_NOT_EXIST, "schema id"),
        ("empty batch, unknown schema id", build_batch(None, sid + 7), SCHEMA_NOT_EXIST,
         "schema id"),
        ("count above the rows", batch_of(msg, 4, sid), CORRUPT_RECORD, "4 records"),
        ("count below the rows", batch_of(msg, 2, sid), CORRUPT_RECORD, "2 records"),
        ("garbage body", batch_of(bytes(range(7, 250)), 3, sid), CORRUPT_RECORD, "arrow"),
        ("cut body", batch_of(msg[:-12], 3, sid), CORRUPT_RECORD, "arrow"),
        ("trailing bytes", batch_of(msg + b"\xff\xff\xff\xff\0\0\0\0", 3, sid),
         CORRUPT_RECORD, "follow"),
        ("body of another schema",
         batch_of(arrow_message(pa.record_batch(
             [pa.array([1, 2, 3], pa.int64()), pa.array([0.5, 1.5, 2.5]),
              pa.array(["x", "y", "z"])], schema=OTHER)), 3, sid),
         CORRUPT_RECORD, "column"),
        ("broken LZ4 frame",
         batch_of(flip_first(arrow_message(rows(1, 2, 3), "lz4"), LZ4_MAGIC), 3, sid),
         CORRUPT_RECORD, "LZ4"),
        ("broken ZSTD frame",
         batch_of(flip_first(arrow_message(rows(1, 2, 3), "zstd"), ZSTD_MAGIC), 3, sid),
         CORRUPT_RECORD, "ZSTD"),
        ("bytes in an empty batch", batch_of(msg, 0, sid), CORRUPT_RECORD, "empty batch"),
        ("bad change-type byte", batch_of(b"\x00\x01\x07" + msg, 3, sid, attributes=0),
         CORRUPT_RECORD, "change type"),
        ("good batch then a bad one",
         build_batch(rows(5, 6), sid) + batch_of(msg, 4, sid), CORRUPT_RECORD, "4 records"),
    ]


@pytest.fixture
async def log_table(our_server, conn, admin, db):
    path = await create_log_table(admin, db, "valid", SCHEMA, bucket_count=1)
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        yield path, info.table_id, info.schema_id, rc
    finally:
        rc.close()


def refused(rc, tid, records, code, words):
    _, resp = produce_log(rc, tid, {0: records})
    (r,) = resp
    assert r["error_code"] == code, r
    assert r["base_offset"] is None, r
    assert words.lower() in (r["error_message"] or "").lower(), r
    return r["error_message"]


def accepted(rc, tid, records) -> int:
    _, resp = produce_log(rc, tid, {0: records})
    (r,) = resp
    assert r["error_code"] == 0, r
    return r["base_offset"]


async def assert_readable(conn, admin, path, tid, rc, want_ids):
    """Unprojected and projected, raw and through pyfluss: every stored
    batch comes back and decodes to want_ids."""
    _, resp = fetch_log(rc, tid, {0: 0})
    (r,) = resp
    assert r["error_code"] == 0 and r["high_watermark"] == len(want_ids), r
    assert sum(h["record_count"] for h in parse_batches(r["records"])) == len(want_ids)
    for fields in ([0], [1], [0, 1]):
        _, resp = fetch_log(rc, tid, {0: 0}, projection=fields)
        (r,) = resp
        assert r["error_code"] == 0, (fields, r)
        batches = parse_batches(r["records"])
        assert sum(h["record_count"] for h in batches) == len(want_ids)
        schema = pa.schema([SCHEMA.field(i) for i in fields])
        for h in batches:
            if h["record_count"]:
                pa.ipc.read_record_batch(pa.ipc.read_message(
                    pa.py_buffer(h["raw"][V0_HEADER:])), schema)
    got = await read_all(conn, admin, path)
    assert got.column("id").to_pylist() == want_ids
    table = await conn.get_table(path)
    got = await read_all(conn, admin, path, table.new_scan().project([1]))
    assert got.column("s").to_pylist() == [f"s{i}" * 8 for i in want_ids]


async def test_bad_arrow_batches_refused(conn, admin, log_table):
    path, tid, sid, rc = log_table
    ids = [100]
    assert accepted(rc, tid, build_batch(rows(100), sid)) == 0
    for k, (name, records, code, words) in enumerate(bad_arrow_batches(sid)):
        message = refused(rc, tid, records, code, words)
        assert message, name
        assert await latest_offsets(admin, path) == {0: len(ids)}, name
        await assert_readable(conn, admin, path, tid, rc, ids)
        # the next good batch goes in at the next offset
        codec = (None, "lz4", "zstd")[k % 3]
        assert accepted(rc, tid, build_batch(rows(k, k + 1000), sid, codec=codec)) == len(ids)
        ids += [k, k + 1000]
    await assert_readable(conn, admin, path, tid, rc, ids)


async def test_bad_batch_refused_in_its_bucket_only(conn, admin, db, our_server):
    path = await create_log_table(admin, db, "valid2", SCHEMA, bucket_count=2)
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        msg = arrow_message(rows(1, 2, 3))
        _, resp = produce_log(rc, info.table_id, {0: batch_of(msg, 5, info.schema_id),
                                                  1: build_batch(rows(1, 2, 3), info.schema_id)})
        by_bucket = {r["bucket"]: r for r in resp}
        assert by_bucket[0]["error_code"] == CORRUPT_RECORD, resp
        assert by_bucket[1]["error_code"] == 0 and by_bucket[1]["base_offset"] == 0, resp
        assert await latest_offsets(admin, path, 2) == {0: 0, 1: 3}
    finally:
        rc.close()


@pytest.mark.parametrize("fmt,make_row,other", [("indexed", indexed_row, compacted_row),
                                                ("compacted", compacted_row, indexed_row)])
async def test_row_format_batches(conn, admin, db, our_server, fmt, make_row, other):
    path = fluss.TablePath(db, f"rows_{fmt}")
    # pyfluss' log_format knows no COMPACTED: set the property itself
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), bucket_count=1, properties={"table.log.format": fmt.upper()}))
    info = await admin.get_table_info(path)
    assert info.get_properties().get("table.log.format") == fmt.upper()
    sid = info.schema_id
    rc = await raw_tablet(admin)
    try:
        good = [row_record(make_row(i, b"v%d" % i)) for i in range(3)]
        records = b"".join(good)
        stored = []
        assert accepted(rc, info.table_id, batch_of(records, 3, sid)) == 0
        stored.append(batch_of(records, 3, sid))
        bad = [
            ("count above the records", batch_of(records, 4, sid), CORRUPT_RECORD, "end after"),
            ("count below the records", batch_of(records, 2, sid), CORRUPT_RECORD, "follow"),
            ("length past the end", batch_of(b"\x00\x01\x00\x00" + records[4:], 3, sid),
             CORRUPT_RECORD, "length"),
            ("zero length", batch_of(b"\x00\x00\x00\x00" + records[4:], 3, sid),
             CORRUPT_RECORD, "length 0"),
            ("bad change type", batch_of(row_record(make_row(1, b"x"), 9), 1, sid),
             CORRUPT_RECORD, "change type"),
            ("row shorter than its header", batch_of(row_record(b""), 1, sid), CORRUPT_RECORD,
             "shorter than its"),
            ("an arrow body", batch_of(arrow_message(rows(1, 2, 3)), 3, sid), CORRUPT_RECORD,
             f"records are not {fmt.upper()} rows; this table's log format is {fmt.upper()} "
             "(they are an Arrow IPC message)"),
            ("rows of the other format", batch_of(b"".join(
                row_record(other(i, b"w%d" % i)) for i in range(2)), 2, sid), CORRUPT_RECORD,
             f"(they are {'COMPACTED' if fmt == 'indexed' else 'INDEXED'} rows)"),
            ("unknown schema id", batch_of(records, 3, sid + 3), SCHEMA_NOT_EXIST, "schema id"),
        ]
        for k, (name, recs, code, words) in enumerate(bad):
            refused(rc, info.table_id, recs, code, words)
            _, resp = fetch_log(rc, info.table_id, {0: 0})
            (r,) = resp
            assert r["error_code"] == 0, (name, r)
            got = parse_batches(r["records"])
            assert [h["raw"][V0_HEADER:] for h in got] == [b[V0_HEADER:] for b in stored], name
            nxt = batch_of(row_record(make_row(k, b"n%d" % k)), 1, sid)
            assert accepted(rc, info.table_id, nxt) == 3 + k, name
            stored.append(nxt)
        assert await latest_offsets(admin, path) == {0: 3 + len(bad)}
    finally:
        rc.close()


async def test_produce_to_primary_key_table_refused(admin, db, our_server):
    path = fluss.TablePath(db, "pk")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(pa.schema([pa.field("id", pa.int32(), nullable=False),
                                pa.field("s", pa.string())]), primary_keys=["id"]),
        bucket_count=1))
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        pk_rows = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["a", "b"])],
                                  schema=pa.schema([pa.field("id", pa.int32(), nullable=False),
                                                    pa.field("s", pa.string())]))
        message = refused(rc, info.table_id, build_batch(pk_rows, info.schema_id),
                          INVALID_TABLE, "primary key")
        assert "PUT_KV" in message, message
        _, resp = fetch_log(rc, info.table_id, {0: 0})
        (r,) = resp
        assert r["error_code"] == 0 and r["high_watermark"] == 0 and r["records"] == b"", r
    finally:
        rc.close()
