"""LIST_OFFSETS on log tables: earliest, latest and by timestamp (first
offset whose batch commit timestamp >= the given time; a time after the
last batch but not in the future -> the high watermark; a future time ->
error 38)."""

import asyncio
import time

import pyarrow as pa

import fluss
from conftest import expect_error, now_ms
from logutil import (INVALID_TIMESTAMP, create_log_table, earliest_offsets,
                     latest_offsets)

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("batch", pa.string())])


async def offset_at(admin, path, ts, buckets=(0,)):
    return await admin.list_offsets(path, list(buckets), fluss.OffsetSpec.timestamp(ts))


async def write(table, name, ids):
    w = table.new_append().create_writer()
    for i in ids:
        w.append({"id": i, "batch": name})
    await w.flush()


async def commit_timestamps(table, n):
    """offset -> record timestamp (the batch commit timestamp)."""
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    out = {}
    deadline = time.monotonic() + 10
    while len(out) < n and time.monotonic() < deadline:
        for r in await scanner.poll(500):
            out[r.offset] = r.timestamp
    assert len(out) == n
    return out


async def test_offsets_by_timestamp(conn, admin, db):
    path = await create_log_table(admin, db, "by_ts", SCHEMA)
    table = await conn.get_table(path)

    t_empty = now_ms()
    await asyncio.sleep(0.05)
    # empty log: any past time -> high watermark 0
    assert await offset_at(admin, path, t_empty) == {0: 0}

    a_rows, b_rows = 7, 5
    await write(table, "A", range(a_rows))
    await asyncio.sleep(0.05)
    t_between = now_ms()
    await asyncio.sleep(0.05)
    # after A, before B exists: past the last batch -> high watermark
    assert await offset_at(admin, path, t_between) == {0: a_rows}

    await write(table, "B", range(100, 100 + b_rows))
    await asyncio.sleep(0.05)
    t_after = now_ms()
    await asyncio.sleep(0.05)

    assert await offset_at(admin, path, t_between) == {0: a_rows}
    assert await offset_at(admin, path, 0) == {0: 0}
    assert await offset_at(admin, path, t_empty) == {0: 0}
    assert await offset_at(admin, path, t_after) == {0: a_rows + b_rows}
    assert await earliest_offsets(admin, path) == {0: 0}
    assert await latest_offsets(admin, path) == {0: a_rows + b_rows}

    # exact commit timestamps: each batch's own timestamp finds its first offset
    ts = await commit_timestamps(table, a_rows + b_rows)
    ts_a, ts_b = ts[0], ts[a_rows]
    assert all(ts[o] == ts_a for o in range(a_rows)), ts
    assert all(ts[o] == ts_b for o in range(a_rows, a_rows + b_rows)), ts
    assert t_empty <= ts_a < t_between < ts_b < t_after, (t_empty, ts_a, t_between, ts_b, t_after)
    assert await offset_at(admin, path, ts_a) == {0: 0}
    assert await offset_at(admin, path, ts_a + 1) == {0: a_rows}
    assert await offset_at(admin, path, ts_b) == {0: a_rows}
    assert await offset_at(admin, path, ts_b + 1) == {0: a_rows + b_rows}

    # a scanner started at the offset found for t_between reads exactly B
    scanner = await table.new_scan().create_record_batch_log_scanner()
    scanner.subscribe(0, (await offset_at(admin, path, t_between))[0])
    got = await scanner.to_arrow()
    assert got.to_pylist() == [{"id": i, "batch": "B"} for i in range(100, 100 + b_rows)]


async def test_future_timestamp_is_invalid(conn, admin, db):
    path = await create_log_table(admin, db, "future", SCHEMA)
    table = await conn.get_table(path)
    await write(table, "A", range(3))
    await expect_error(INVALID_TIMESTAMP, offset_at(admin, path, now_ms() + 3600_000))
    # still fine afterwards
    assert await latest_offsets(admin, path) == {0: 3}
    assert await offset_at(admin, path, 0) == {0: 0}


async def test_offsets_by_timestamp_several_buckets(conn, admin, db):
    path = await create_log_table(admin, db, "by_ts3", SCHEMA, bucket_count=3,
                                  bucket_keys=["id"])
    table = await conn.get_table(path)
    await write(table, "A", range(30))
    await asyncio.sleep(0.05)
    t_mid = now_ms()
    await asyncio.sleep(0.05)
    after_a = await latest_offsets(admin, path, 3)
    await write(table, "B", range(30, 60))
    latest = await latest_offsets(admin, path, 3)
    assert sum(latest.values()) == 60
    assert await offset_at(admin, path, t_mid, range(3)) == after_a
    assert await offset_at(admin, path, 0, range(3)) == {0: 0, 1: 0, 2: 0}
    await expect_error(INVALID_TIMESTAMP,
                       offset_at(admin, path, now_ms() + 3600_000, range(3)))
