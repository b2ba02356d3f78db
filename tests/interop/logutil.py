"""Shared helpers for the log-table interop tests (tests/interop/test_log_*.py).

* pyfluss side: create a log table and wait until its buckets answer,
  read a whole table back with a record-batch log scanner, compare tables.
* raw side (protocol.md §3.6-3.9, §4): CRC-32C, V0 log record batches built
  by hand (header + one Arrow IPC RecordBatch message from pyarrow's
  RecordBatch.serialize()), and PRODUCE_LOG / FETCH_LOG / LIST_OFFSETS /
  INIT_WRITER on a RawConnection to the tablet server.
"""

import asyncio
import struct
import time

import pyarrow as pa

import fluss
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, as_int32, as_int64, decode,
                     decode_error, enc_varint, f_bytes, f_varint, handshake, table_path_msg)

PRODUCE_LOG = 1014
FETCH_LOG = 1015
LIST_OFFSETS = 1021
INIT_WRITER = 1026

OFFSET_EARLIEST = 0
OFFSET_LATEST = 1
OFFSET_TIMESTAMP = 2

V0_HEADER = 48
CRC_OFFSET = 21
SCHEMA_ID_OFFSET = 25

# error codes (protocol.md §7)
CORRUPT_RECORD = 14
INVALID_REQUIRED_ACKS = 18
LOG_OFFSET_OUT_OF_RANGE = 19
UNKNOWN_TABLE_OR_BUCKET = 21
OUT_OF_ORDER_SEQUENCE = 31
INVALID_COLUMN_PROJECTION = 34
INVALID_TIMESTAMP = 38


# --------------------------------------------------------------------------
# pyfluss helpers
# --------------------------------------------------------------------------

async def wait_ready(admin, path, buckets: int = 1, timeout: float = 20.0):
    """Wait until every bucket of `path` answers LIST_OFFSETS (the reference
    needs a moment after CREATE_TABLE before the buckets have a leader)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            await admin.list_offsets(path, list(range(buckets)), fluss.OffsetSpec.earliest())
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def new_pk_table(conn, prefix: str, name: str, arrow_schema: pa.Schema,
                       buckets: int = 1):
    """A table with primary key `id` in a fresh database named from prefix,
    every bucket ready; returns (admin, path, table)."""
    from conftest import unique  # conftest does not import this module
    admin = conn.get_admin()
    db = unique(prefix)
    await admin.create_database(db)
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(arrow_schema, primary_keys=["id"]), bucket_count=buckets))
    await wait_ready(admin, path, buckets)
    return admin, path, await conn.get_table(path)


async def create_log_table(admin, db, name, arrow_schema: pa.Schema, **descriptor):
    """Create a log table from a pyarrow schema; return its TablePath once
    all its buckets are ready."""
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(arrow_schema),
                                                         **descriptor))
    await wait_ready(admin, path, descriptor.get("bucket_count") or 1)
    return path


async def num_buckets(admin, path) -> int:
    return (await admin.get_table_info(path)).num_buckets


async def read_all(conn, admin, path, scan=None) -> pa.Table:
    """Everything in the table (all buckets from the earliest offset) via a
    record-batch log scanner's to_arrow(). `scan` may be a configured
    TableScan (e.g. with a projection)."""
    table = await conn.get_table(path)
    if scan is None:
        scan = table.new_scan()
    scanner = await scan.create_record_batch_log_scanner()
    n = await num_buckets(admin, path)
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(n)})
    return await asyncio.wait_for(scanner.to_arrow(), 30)


async def read_batches(conn, admin, path, expected_rows: int, timeout: float = 15.0):
    """All RecordBatch objects (with bucket / base_offset / last_offset) until
    `expected_rows` rows have been seen."""
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_record_batch_log_scanner()
    n = await num_buckets(admin, path)
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(n)})
    out, rows = [], 0
    deadline = time.monotonic() + timeout
    while rows < expected_rows and time.monotonic() < deadline:
        for rb in await scanner.poll_record_batch(500):
            out.append(rb)
            rows += rb.batch.num_rows
    return out


async def latest_offsets(admin, path, buckets: int = 1) -> dict:
    return await admin.list_offsets(path, list(range(buckets)), fluss.OffsetSpec.latest())


async def earliest_offsets(admin, path, buckets: int = 1) -> dict:
    return await admin.list_offsets(path, list(range(buckets)), fluss.OffsetSpec.earliest())


def sort_by(table: pa.Table, column: str = "id") -> pa.Table:
    return table.sort_by([(column, "ascending")])


def assert_tables_equal(got: pa.Table, want: pa.Table):
    """Same column names, types and values (row order as given)."""
    assert got.schema.names == want.schema.names, (got.schema, want.schema)
    for name in want.schema.names:
        g, w = got.column(name), want.column(name)
        assert g.type == w.type, f"column {name}: type {g.type} != {w.type}"
        gl, wl = g.to_pylist(), w.to_pylist()
        if gl != wl:
            diffs = [(i, a, b) for i, (a, b) in enumerate(zip(gl, wl)) if a != b][:5]
            raise AssertionError(f"column {name} differs (row, got, want): {diffs}; "
                                 f"lengths {len(gl)} vs {len(wl)}")
    assert got.num_rows == want.num_rows


async def tablet_address(admin):
    """(host, port) of the (single) tablet server. In a cluster
    (FLUSS_SERVER=cluster) the test is skipped: raw requests go to one
    tablet server whatever leads the bucket (the decoders they test are
    the same code in every mode)."""
    from conftest import IS_CLUSTER
    if IS_CLUSTER:
        import pytest
        pytest.skip("raw requests address a single tablet server, not a bucket's leader")
    nodes = await admin.get_server_nodes()
    tablets = [n for n in nodes if n.server_type == "TabletServer"]
    assert tablets, f"no tablet server in {nodes!r}"
    return tablets[0].host, tablets[0].port


# --------------------------------------------------------------------------
# CRC-32C and record batches
# --------------------------------------------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # standard CRC-32C check value


def arrow_message(rows: pa.RecordBatch, codec=None, level=None) -> bytes:
    """One encapsulated Arrow IPC RecordBatch message (no schema, no EOS),
    optionally with buffer compression ("lz4" = LZ4_FRAME, "zstd")."""
    if codec is None:
        return rows.serialize().to_pybytes()
    sink = pa.BufferOutputStream()
    opts = pa.ipc.IpcWriteOptions(compression=pa.Codec(codec, compression_level=level))
    with pa.ipc.new_stream(sink, rows.schema, options=opts) as w:
        w.write_batch(rows)
    reader = pa.ipc.MessageReader.open_stream(sink.getvalue())
    assert reader.read_next_message().type == "schema"
    msg = reader.read_next_message()
    assert msg.type == "record batch"
    return msg.serialize().to_pybytes()


def build_batch(rows: "pa.RecordBatch | None", schema_id: int, writer_id: int = -1,
                seq: int = -1, attributes: int = 1, bad_crc: bool = False,
                codec=None, level=None) -> bytes:
    """A V0 log record batch (protocol.md §4.1): 48-byte header, then (unless
    `rows` is None, i.e. an empty header-only batch) one Arrow IPC
    RecordBatch message (uncompressed unless `codec`). CRC-32C over [25, end)."""
    body = b"" if rows is None else arrow_message(rows, codec, level)
    count = 0 if rows is None else rows.num_rows
    return build_raw_batch(body, count, schema_id, writer_id, seq, attributes, bad_crc)


def build_raw_batch(body: bytes, count: int, schema_id: int, writer_id: int = -1,
                    seq: int = -1, attributes: int = 1, bad_crc: bool = False) -> bytes:
    """A V0 log record batch around records `body` of `count` records."""
    tail = struct.pack("<hbiqii", schema_id, attributes, max(count - 1, 0),
                       writer_id, seq, count) + body
    total = V0_HEADER + len(body)
    crc = crc32c(tail)
    if bad_crc:
        crc ^= 0x5A5A5A5A
    head = struct.pack("<qibqI", 0, total - 12, 0, 0, crc)
    assert len(head) + len(tail) == total
    return head + tail


def indexed_row(i: int, s: bytes) -> bytes:
    """IndexedRow of (INT id, STRING s): null bitmap, one var-length slot,
    the INT, the string bytes (protocol.md §5.5)."""
    return b"\x00" + struct.pack("<i", len(s)) + struct.pack("<i", i) + s


def compacted_row(i: int, s: bytes) -> bytes:
    """CompactedRow of (INT id, STRING s): null bitmap, uvarint INT (small
    non-negative i), uvarint length + bytes (protocol.md §5.4)."""
    assert 0 <= i < 128 and len(s) < 128
    return b"\x00" + bytes([i]) + bytes([len(s)]) + s


def row_record(row: bytes, change: int = 0) -> bytes:
    """One INDEXED / COMPACTED log record: int32 LE length, ChangeType, row."""
    return struct.pack("<ib", len(row) + 1, change) + row


def parse_batches(records: bytes, new_layout: bool = False) -> list:
    """Headers of the concatenated batches in a FETCH_LOG `records` field
    (magic 0; with new_layout also Fluss main's magic 1, whose first 48
    header bytes are the same)."""
    out, pos = [], 0
    while pos + 12 <= len(records):
        base, length = struct.unpack_from("<qi", records, pos)
        end = pos + 12 + length
        if end > len(records):
            break  # incomplete trailing batch
        magic = records[pos + 12]
        assert magic == 0 or (new_layout and magic == 1), f"unexpected magic {magic}"
        (commit_ts, crc, schema_id, attrs, lod, wid, seq, count) = struct.unpack_from(
            "<qIhbiqii", records, pos + 13)
        out.append(dict(base_offset=base, length=length, commit_ts=commit_ts, crc=crc,
                        schema_id=schema_id, attributes=attrs, last_offset_delta=lod,
                        writer_id=wid, seq=seq, record_count=count,
                        crc_ok=crc32c(records[pos + 25:end]) == crc,
                        magic=magic, raw=records[pos:end]))
        pos = end
    return out


# --------------------------------------------------------------------------
# raw RPCs on the tablet server
# --------------------------------------------------------------------------

async def raw_tablet(admin, software=("fluss-c-interop", "0.0.1")):
    host, port = await tablet_address(admin)
    return handshake(host, port, software=software)


def produce_log(rc, table_id: int, bucket_records: dict, acks: int = -1,
                timeout_ms: int = 30000):
    """PRODUCE_LOG; -> (response_type, [ {bucket, error_code, error_message,
    base_offset} ]) or (RESPONSE_ERROR, (code, message))."""
    body = f_varint(1, acks) + f_varint(2, table_id) + f_varint(3, timeout_ms)
    for bucket, records in bucket_records.items():
        body += f_bytes(4, f_varint(2, bucket) + f_bytes(3, records))
    rtype, resp = rc.call(PRODUCE_LOG, body)
    if rtype != RESPONSE_SUCCESS:
        return rtype, decode_error(resp)
    out = []
    for raw in decode(resp).get(1, []):
        f = decode(raw)
        out.append(dict(bucket=as_int32(f[2][0]),
                        error_code=as_int32(f[3][0]) if 3 in f else 0,
                        error_message=f[4][0].decode() if 4 in f else None,
                        base_offset=as_int64(f[5][0]) if 5 in f else None))
    return rtype, out


def fetch_log(rc, table_id: int, bucket_offsets: dict, max_wait_ms: int = 0,
              min_bytes: int = 1, max_bytes: int = 16 << 20,
              bucket_max_bytes: int = 1 << 20, projection=None, predicate: bytes = None,
              filter_schema_id: int = None):
    """FETCH_LOG as a client (follower id -1); -> (response_type, [ {bucket,
    error_code, error_message, high_watermark, log_start_offset, remote (the
    PbRemoteLogFetchInfo bytes, tiered storage), records} ])."""
    tbl = f_varint(1, table_id) + f_varint(2, 1 if projection is not None else 0)
    for p in projection or []:
        tbl += f_varint(3, p)
    for bucket, offset in bucket_offsets.items():
        tbl += f_bytes(4, f_varint(2, bucket) + f_varint(3, offset)
                       + f_varint(4, bucket_max_bytes))
    if predicate is not None:
        tbl += f_bytes(5, predicate)
    if filter_schema_id is not None:
        tbl += f_varint(6, filter_schema_id)
    body = (f_varint(1, -1) + f_varint(2, max_bytes) + f_bytes(3, tbl)
            + f_varint(4, max_wait_ms) + f_varint(5, min_bytes))
    rtype, resp = rc.call(FETCH_LOG, body)
    if rtype != RESPONSE_SUCCESS:
        return rtype, decode_error(resp)
    out = []
    for traw in decode(resp).get(1, []):
        t = decode(traw)
        for braw in t.get(2, []):
            f = decode(braw)
            out.append(dict(table_id=as_int64(t[1][0]), bucket=as_int32(f[2][0]),
                            error_code=as_int32(f[3][0]) if 3 in f else 0,
                            error_message=f[4][0].decode() if 4 in f else None,
                            high_watermark=as_int64(f[5][0]) if 5 in f else None,
                            log_start_offset=as_int64(f[6][0]) if 6 in f else None,
                            remote=f[7][0] if 7 in f else None,
                            filtered_end_offset=as_int64(f[9][0]) if 9 in f else None,
                            records=f[8][0] if 8 in f else None))
    return rtype, out


def list_offsets_raw(rc, table_id: int, buckets, offset_type: int, timestamp=None):
    body = f_varint(1, -1) + f_varint(2, offset_type) + f_varint(3, table_id)
    for b in buckets:
        body += f_varint(5, b)
    if timestamp is not None:
        body += f_varint(6, timestamp)
    rtype, resp = rc.call(LIST_OFFSETS, body)
    if rtype != RESPONSE_SUCCESS:
        return rtype, decode_error(resp)
    out = []
    for raw in decode(resp).get(1, []):
        f = decode(raw)
        out.append(dict(bucket=as_int32(f[1][0]),
                        error_code=as_int32(f[2][0]) if 2 in f else 0,
                        error_message=f[3][0].decode() if 3 in f else None,
                        offset=as_int64(f[4][0]) if 4 in f else None))
    return rtype, out


def init_writer(rc, database: str, table: str) -> int:
    rtype, resp = rc.call(INIT_WRITER, f_bytes(1, table_path_msg(database, table)))
    assert rtype == RESPONSE_SUCCESS, (rtype, decode_error(resp))
    return as_int64(decode(resp)[1][0])


def records_of(fetched: list, bucket: int = 0) -> bytes:
    for b in fetched:
        if b["bucket"] == bucket:
            assert b["error_code"] == 0, b
            return b["records"] or b""
    raise AssertionError(f"bucket {bucket} missing in {fetched}")



def kv_batch(records, schema_id=1, writer_id=-1, seq=-1):
    """KvRecordBatch (protocol.md §5.1): records = [(key, row or None)]."""
    body = b""
    for k, row in records:
        rest = enc_varint(len(k)) + k + (row or b"")
        body += struct.pack("<i", len(rest)) + rest
    tail = struct.pack("<hbqii", schema_id, 0, writer_id, seq, len(records)) + body
    return struct.pack("<ibI", 1 + 4 + len(tail), 0, crc32c(tail)) + tail


def raw_lookup(rc, table_id, bucket, keys, value_of=lambda v: v):
    """One LOOKUP (v1) of keys (encoded key bytes) in a bucket -> (error
    code, [value_of(value), or None when absent]); code 1: the whole
    request was refused."""
    req = f_varint(2, bucket) + b"".join(f_bytes(3, k) for k in keys)
    rtype, resp = rc.call(1017, f_varint(1, table_id) + f_bytes(2, req), api_version=1)
    if rtype != 0:
        return 1, None
    (braw,) = decode(resp)[1]
    f = decode(braw)
    if 3 in f:
        return as_int32(f[3][0]), None
    vals = [decode(v).get(1, [None])[0] for v in f.get(5, [])]
    return 0, [None if v is None else value_of(v) for v in vals]
