"""Log-table RPCs on the raw wire (PRODUCE_LOG, FETCH_LOG, LIST_OFFSETS):
offsets out of range, corrupt batches, unknown buckets and tables, invalid
acks.  Batches are built by hand (logutil.build_batch: V0 header + one
uncompressed Arrow IPC RecordBatch message, CRC-32C over [25, end)) and the
data is read back with pyfluss where it matters.

Reference behaviours these tests pin down (Fluss 0.9.1):
* FETCH_LOG at offset == high watermark: success, empty records; any offset
  above it, and negative offsets other than -2, -> per-bucket error 19;
  -2 means "earliest".
* An empty (RecordCount 0, header-only) batch with a correct CRC is
  accepted and takes one offset; with a wrong CRC -> 14.
* BaseOffset / CommitTimestamp in a produced header are overwritten (they
  are outside the CRC).
* acks outside {-1, 0, 1} -> whole-request ERROR_RESPONSE 18
  ("Invalid required acks: 5"), not a per-bucket error.
* records that end inside a batch (truncated, garbage): the reference
  answers success with base_offset -1 and appends nothing; ours answers
  per-bucket 14 (ours-only test).
"""

import struct
import time

import pyarrow as pa
import pytest

from conftest import IS_OURS, now_ms
from logutil import (CORRUPT_RECORD, INVALID_REQUIRED_ACKS, LOG_OFFSET_OUT_OF_RANGE,
                     OFFSET_EARLIEST, OFFSET_LATEST, OFFSET_TIMESTAMP, RESPONSE_ERROR,
                     RESPONSE_SUCCESS, UNKNOWN_TABLE_OR_BUCKET, build_batch,
                     create_log_table, fetch_log, latest_offsets, list_offsets_raw,
                     parse_batches, produce_log, raw_tablet, read_all)

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("s", pa.string())])


def rows(*ids) -> pa.RecordBatch:
    return pa.record_batch([pa.array(list(ids), pa.int32()),
                            pa.array([f"s{i}" for i in ids])], schema=SCHEMA)


@pytest.fixture
async def log_table(conn, admin, db):
    """(path, table_id, schema_id, raw tablet connection) of a fresh
    2-bucket log table."""
    path = await create_log_table(admin, db, "raw", SCHEMA, bucket_count=2)
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        yield path, info.table_id, info.schema_id, rc
    finally:
        rc.close()


def ok_produce(rc, table_id, bucket_records, **kw):
    rtype, resp = produce_log(rc, table_id, bucket_records, **kw)
    assert rtype == RESPONSE_SUCCESS, resp
    for r in resp:
        assert r["error_code"] == 0, resp
    return {r["bucket"]: r["base_offset"] for r in resp}


def one(resp, bucket=0):
    (r,) = [r for r in resp if r["bucket"] == bucket]
    return r


async def test_fetch_offsets_out_of_range(conn, admin, log_table):
    path, tid, sid, rc = log_table
    assert ok_produce(rc, tid, {0: build_batch(rows(1, 2, 3), sid)}) == {0: 0}
    assert ok_produce(rc, tid, {0: build_batch(rows(4, 5), sid)}) == {0: 3}

    # at the high watermark: nothing yet, no error
    _, resp = fetch_log(rc, tid, {0: 5})
    r = one(resp)
    assert r["error_code"] == 0 and r["high_watermark"] == 5, r
    assert r["records"] == b"", r
    assert r["log_start_offset"] == 0

    for off in (6, 1000, 1 << 40, -1, -3):
        _, resp = fetch_log(rc, tid, {0: off})
        r = one(resp)
        assert r["error_code"] == LOG_OFFSET_OUT_OF_RANGE, (off, r)
        assert r["error_message"], r
        assert r["records"] is None and r["high_watermark"] is None, r

    # a bad bucket does not spoil the good one in the same request
    _, resp = fetch_log(rc, tid, {0: 99, 1: 0})
    assert one(resp, 0)["error_code"] == LOG_OFFSET_OUT_OF_RANGE
    assert one(resp, 1)["error_code"] == 0 and one(resp, 1)["records"] == b""

    # -2 = earliest: whole batches from offset 0; offset 4 -> the batch containing it
    _, resp = fetch_log(rc, tid, {0: -2})
    hdrs = parse_batches(one(resp)["records"])
    assert [(h["base_offset"], h["record_count"]) for h in hdrs] == [(0, 3), (3, 2)]
    _, resp = fetch_log(rc, tid, {0: 4})
    hdrs = parse_batches(one(resp)["records"])
    assert [(h["base_offset"], h["record_count"]) for h in hdrs] == [(3, 2)]

    got = await read_all(conn, admin, path)
    assert got.to_pylist() == [{"id": i, "s": f"s{i}"} for i in range(1, 6)]


async def test_fetch_long_poll_waits_then_answers_empty(log_table):
    path, tid, sid, rc = log_table
    start = time.monotonic()
    _, resp = fetch_log(rc, tid, {0: 0}, max_wait_ms=300, min_bytes=1)
    waited = time.monotonic() - start
    r = one(resp)
    assert r["error_code"] == 0 and r["records"] == b"" and r["high_watermark"] == 0, r
    assert 0.2 <= waited < 3.0, waited


async def test_produce_corrupt_crc(conn, admin, log_table):
    path, tid, sid, rc = log_table
    good = build_batch(rows(1, 2), sid)

    # wrong CRC in the header
    _, resp = produce_log(rc, tid, {0: build_batch(rows(66), sid, bad_crc=True)})
    assert one(resp)["error_code"] == CORRUPT_RECORD, resp
    assert one(resp)["error_message"], resp
    # right CRC, one flipped byte in the covered part (the Arrow body)
    flipped = bytearray(good)
    flipped[-9] ^= 0xFF
    _, resp = produce_log(rc, tid, {0: bytes(flipped)})
    assert one(resp)["error_code"] == CORRUPT_RECORD, resp
    # ... or in the header's covered fields (record count)
    flipped = bytearray(good)
    flipped[44] ^= 0x01
    _, resp = produce_log(rc, tid, {0: bytes(flipped)})
    assert one(resp)["error_code"] == CORRUPT_RECORD, resp
    assert await latest_offsets(admin, path, 2) == {0: 0, 1: 0}

    # corrupt bucket 0, good bucket 1 in one request: independent answers
    _, resp = produce_log(rc, tid, {0: build_batch(rows(67), sid, bad_crc=True), 1: good})
    assert one(resp, 0)["error_code"] == CORRUPT_RECORD
    assert one(resp, 1)["error_code"] == 0 and one(resp, 1)["base_offset"] == 0

    # a good batch afterwards still starts at offset 0 in bucket 0
    assert ok_produce(rc, tid, {0: good}) == {0: 0}
    assert await latest_offsets(admin, path, 2) == {0: 2, 1: 2}
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == [1, 1, 2, 2]


async def test_header_fields_outside_crc_are_rewritten(log_table):
    """BaseOffset and CommitTimestamp are not covered by the CRC: the server
    overwrites whatever the client sent (and the stored CRC stays valid)."""
    path, tid, sid, rc = log_table
    ok_produce(rc, tid, {0: build_batch(rows(1), sid)})
    batch = bytearray(build_batch(rows(2, 3), sid))
    struct.pack_into("<q", batch, 0, 123456789)   # BaseOffset
    struct.pack_into("<q", batch, 13, 42)         # CommitTimestamp
    before = now_ms()
    assert ok_produce(rc, tid, {0: bytes(batch)}) == {0: 1}
    after = now_ms()
    _, resp = fetch_log(rc, tid, {0: 1})
    (h,) = parse_batches(one(resp)["records"])
    assert h["base_offset"] == 1 and h["record_count"] == 2 and h["last_offset_delta"] == 1
    assert before - 1000 <= h["commit_ts"] <= after + 1000, (before, h["commit_ts"], after)
    assert h["crc_ok"]
    assert h["writer_id"] == -1 and h["seq"] == -1 and h["schema_id"] == sid


async def test_empty_batch(conn, admin, log_table):
    """A header-only batch (RecordCount 0, LastOffsetDelta 0): accepted with
    a correct CRC and it takes one offset (like the reference); rejected
    with 14 when the CRC is wrong.  pyfluss reads across it."""
    path, tid, sid, rc = log_table
    _, resp = produce_log(rc, tid, {0: build_batch(None, sid, bad_crc=True)})
    assert one(resp)["error_code"] == CORRUPT_RECORD, resp
    assert ok_produce(rc, tid, {0: build_batch(rows(1, 2), sid)}) == {0: 0}
    assert ok_produce(rc, tid, {0: build_batch(None, sid)}) == {0: 2}
    assert ok_produce(rc, tid, {0: build_batch(rows(3), sid)}) == {0: 3}
    assert await latest_offsets(admin, path, 2) == {0: 4, 1: 0}
    _, resp = fetch_log(rc, tid, {0: 0})
    hdrs = parse_batches(one(resp)["records"])
    assert [(h["base_offset"], h["record_count"], h["last_offset_delta"]) for h in hdrs] == \
        [(0, 2, 1), (2, 0, 0), (3, 1, 0)]
    assert len(hdrs[1]["raw"]) == 48 and hdrs[1]["crc_ok"]
    got = await read_all(conn, admin, path)
    assert got.column("id").to_pylist() == [1, 2, 3]


async def test_unknown_bucket_and_table(log_table):
    path, tid, sid, rc = log_table
    batch = build_batch(rows(1), sid)
    for table_id, bucket in ((tid, 2), (tid, 7), (tid, -1), (987654321, 0)):
        rtype, resp = produce_log(rc, table_id, {bucket: batch})
        assert rtype == RESPONSE_SUCCESS, resp
        assert one(resp, bucket)["error_code"] == UNKNOWN_TABLE_OR_BUCKET, resp
        assert one(resp, bucket)["error_message"], resp

        # an error is answered at once, not after the long-poll wait
        t0 = time.monotonic()
        rtype, resp = fetch_log(rc, table_id, {bucket: 0}, max_wait_ms=3000)
        assert time.monotonic() - t0 < 2.0, "a failed fetch waited for max_wait_ms"
        assert rtype == RESPONSE_SUCCESS, resp
        assert one(resp, bucket)["error_code"] == UNKNOWN_TABLE_OR_BUCKET, resp

        rtype, resp = list_offsets_raw(rc, table_id, [bucket], OFFSET_LATEST)
        assert rtype == RESPONSE_SUCCESS, resp
        assert one(resp, bucket)["error_code"] == UNKNOWN_TABLE_OR_BUCKET, resp
        assert one(resp, bucket)["offset"] is None

    # mixed: the known bucket is answered normally
    rtype, resp = produce_log(rc, tid, {1: batch, 5: batch})
    assert one(resp, 1)["error_code"] == 0 and one(resp, 1)["base_offset"] == 0
    assert one(resp, 5)["error_code"] == UNKNOWN_TABLE_OR_BUCKET
    _, resp = list_offsets_raw(rc, tid, [0, 1, 5], OFFSET_LATEST)
    assert [(r["bucket"], r["error_code"], r["offset"]) for r in
            sorted(resp, key=lambda r: r["bucket"])] == \
        [(0, 0, 0), (1, 0, 1), (5, UNKNOWN_TABLE_OR_BUCKET, None)]


async def test_list_offsets_raw(log_table):
    path, tid, sid, rc = log_table
    ok_produce(rc, tid, {0: build_batch(rows(1, 2, 3), sid)})
    t_mid = now_ms() + 1
    time.sleep(0.05)
    ok_produce(rc, tid, {0: build_batch(rows(4), sid)})
    _, resp = list_offsets_raw(rc, tid, [0, 1], OFFSET_EARLIEST)
    assert {r["bucket"]: r["offset"] for r in resp} == {0: 0, 1: 0}
    _, resp = list_offsets_raw(rc, tid, [0, 1], OFFSET_LATEST)
    assert {r["bucket"]: r["offset"] for r in resp} == {0: 4, 1: 0}
    _, resp = list_offsets_raw(rc, tid, [0], OFFSET_TIMESTAMP, timestamp=t_mid)
    assert one(resp)["offset"] == 3, resp
    _, resp = list_offsets_raw(rc, tid, [0], OFFSET_TIMESTAMP, timestamp=now_ms() + 3_600_000)
    assert one(resp)["error_code"] == 38 and one(resp)["offset"] is None, resp


async def test_invalid_acks(admin, log_table):
    path, tid, sid, rc = log_table
    for acks in (5, -2, 2):
        rtype, resp = produce_log(rc, tid, {0: build_batch(rows(1), sid)}, acks=acks)
        assert rtype == RESPONSE_ERROR, (acks, resp)
        code, msg = resp
        assert code == INVALID_REQUIRED_ACKS and msg, resp
    assert await latest_offsets(admin, path, 2) == {0: 0, 1: 0}


async def test_invalid_acks_nothing_appended(admin, log_table):
    """Whatever the shape of the answer, acks = 5 is error 18 and appends
    nothing; acks 0, 1 and -1 all append."""
    path, tid, sid, rc = log_table
    rtype, resp = produce_log(rc, tid, {0: build_batch(rows(1), sid)}, acks=5)
    code = resp[0] if rtype == RESPONSE_ERROR else one(resp)["error_code"]
    assert code == INVALID_REQUIRED_ACKS, resp
    assert await latest_offsets(admin, path, 2) == {0: 0, 1: 0}
    for k, acks in enumerate((0, 1, -1)):
        assert ok_produce(rc, tid, {0: build_batch(rows(k), sid)}, acks=acks) == {0: k}
    assert await latest_offsets(admin, path, 2) == {0: 3, 1: 0}


@pytest.mark.ours_only
async def test_truncated_records_rejected(our_server, admin, log_table):
    """records that end inside a batch -> 14, nothing appended.  (The
    reference answers success with base_offset -1 and appends nothing.)"""
    path, tid, sid, rc = log_table
    good = build_batch(rows(1, 2), sid)
    for records in (good[:-5], b"\x01\x02\x03", good + good[:30]):
        _, resp = produce_log(rc, tid, {0: records})
        assert one(resp)["error_code"] == CORRUPT_RECORD, (records[:16], resp)
    assert await latest_offsets(admin, path, 2) == {0: 0, 1: 0}


async def test_fetch_byte_limits(log_table):
    """At least one whole batch even when the limits are smaller than it;
    otherwise whole batches up to the limit.  The reference fills the
    limit with a truncated trailing batch (clients drop it); ours returns
    only whole batches."""
    path, tid, sid, rc = log_table
    for k in range(4):
        ok_produce(rc, tid, {0: build_batch(rows(*range(k * 10, k * 10 + 10)), sid)})
    _, resp = fetch_log(rc, tid, {0: 0})
    sizes = [len(h["raw"]) for h in parse_batches(one(resp)["records"])]
    assert len(sizes) == 4 and len(one(resp)["records"]) == sum(sizes)

    for max_bytes, bucket_max in ((16 << 20, 1), (1, 1 << 20), (0, 0),
                                  (16 << 20, sizes[0] + sizes[1] // 2),
                                  (sizes[0] + sizes[1] + 10, 1 << 20)):
        _, resp = fetch_log(rc, tid, {0: 0}, max_bytes=max_bytes, bucket_max_bytes=bucket_max)
        r = one(resp)
        assert r["error_code"] == 0 and r["high_watermark"] == 40, r
        records = r["records"]
        whole = parse_batches(records)
        limit = max(min(max_bytes, bucket_max), sizes[0])
        expect_batches = max(1, max(n for n in range(5) if sum(sizes[:n]) <= limit))
        assert [h["base_offset"] for h in whole] == [0, 10, 20, 30][:expect_batches], \
            (max_bytes, bucket_max, len(records))
        assert len(records) <= limit
        if IS_OURS:
            assert len(records) == sum(sizes[:expect_batches]), "partial trailing batch"
