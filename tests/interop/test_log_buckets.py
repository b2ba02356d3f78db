"""Log tables with several buckets: every row comes back exactly once, each
bucket's offsets are dense from 0, LIST_OFFSETS earliest is 0 and the
latest offsets add up to the number of rows written."""

import pyarrow as pa
import pytest

import fluss
from conftest import connect
from logutil import (create_log_table, earliest_offsets, latest_offsets, read_all,
                     read_batches)

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()),
                    pa.field("v", pa.float64())])
BUCKETS = 3


def rows(lo, hi):
    return [{"id": i, "name": f"row-{i}", "v": i / 4} for i in range(lo, hi)]


async def check_buckets(conn, admin, path, written_ids):
    n = len(written_ids)
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == sorted(written_ids)
    assert {r["id"]: (r["name"], r["v"]) for r in got.to_pylist()} == \
        {i: (f"row-{i}", i / 4) for i in written_ids}

    assert await earliest_offsets(admin, path, BUCKETS) == {b: 0 for b in range(BUCKETS)}
    latest = await latest_offsets(admin, path, BUCKETS)
    assert sorted(latest) == list(range(BUCKETS))
    assert sum(latest.values()) == n, latest

    # per bucket: batches cover offsets 0..latest-1 densely, ids ascend
    # (one writer appending in id order keeps that order inside a bucket)
    batches = await read_batches(conn, admin, path, n)
    per_bucket = {}
    for rb in batches:
        assert rb.last_offset - rb.base_offset + 1 == rb.batch.num_rows, rb
        per_bucket.setdefault(rb.bucket.bucket_id, []).append(rb)
    for b, rbs in per_bucket.items():
        rbs.sort(key=lambda r: r.base_offset)
        expect = 0
        ids = []
        for rb in rbs:
            assert rb.base_offset == expect, (b, [(r.base_offset, r.last_offset) for r in rbs])
            expect = rb.last_offset + 1
            ids += rb.batch.column("id").to_pylist()
        assert expect == latest[b], (b, expect, latest)
        assert ids == sorted(ids), f"bucket {b} out of order: {ids[:20]}"
    assert sum(len(r.batch) for r in batches) == n
    return latest


async def test_hash_bucketed_rows(conn, admin, db):
    path = await create_log_table(admin, db, "hashed", SCHEMA, bucket_count=BUCKETS,
                                  bucket_keys=["id"])
    table = await conn.get_table(path)
    writer = table.new_append().create_writer()
    for r in rows(0, 150):
        writer.append(r)
    await writer.flush()
    writer.write_arrow(pa.Table.from_pylist(rows(150, 300), schema=SCHEMA))
    await writer.flush()
    latest = await check_buckets(conn, admin, path, list(range(300)))
    assert all(v > 0 for v in latest.values()), f"some bucket got no rows: {latest}"


async def test_round_robin_no_bucket_key(server, admin, db):
    path = await create_log_table(admin, db, "rr", SCHEMA, bucket_count=BUCKETS)
    c = await fluss.FlussConnection.create(fluss.Config({
        "bootstrap.servers": server.bootstrap,
        "writer.bucket.no-key-assigner": "round_robin"}))
    try:
        table = await c.get_table(path)
        writer = table.new_append().create_writer()
        for i in range(0, 90, 10):
            for r in rows(i, i + 10):
                writer.append(r)
            await writer.flush()
        latest = await check_buckets(c, admin, path, list(range(90)))
        assert sum(1 for v in latest.values() if v > 0) >= 2, latest
    finally:
        await c.close()


async def test_subscribe_from_offset(conn, admin, db):
    """A scanner subscribed at offset k of a bucket sees exactly the rows
    at offsets >= k (the server returns whole batches; the client drops
    the records below its position)."""
    path = await create_log_table(admin, db, "from_offset", SCHEMA, bucket_count=1)
    table = await conn.get_table(path)
    writer = table.new_append().create_writer()
    for i in range(0, 40, 8):  # 5 batches of 8
        for r in rows(i, i + 8):
            writer.append(r)
        await writer.flush()
    assert await latest_offsets(admin, path) == {0: 40}
    for start in (0, 5, 8, 33, 39):
        scanner = await table.new_scan().create_record_batch_log_scanner()
        scanner.subscribe(0, start)
        got = await scanner.to_arrow()
        assert got.column("id").to_pylist() == list(range(start, 40)), start
