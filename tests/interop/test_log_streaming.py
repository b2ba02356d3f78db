"""Streaming reads: a log scanner polling in the same event loop as a writer
sees each appended row within a few seconds (FETCH_LOG long poll).  The
append->poll latency is printed (run with -s to see it); the only timing
assertion is a generous 10 s bound."""

import asyncio
import time

import pyarrow as pa

import fluss
from logutil import create_log_table, latest_offsets

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("payload", pa.string())])
BOUND_S = 10.0


async def stream(table, scanner, poll, rounds: int):
    """Append one row per round (flushing), while a background task polls;
    -> list of (id, latency_s, extra) with extra from `poll`."""
    seen = {}
    stop = asyncio.Event()

    async def poller():
        while not stop.is_set():
            for row_id, extra in await poll(scanner):
                assert row_id not in seen, f"row {row_id} delivered twice"
                seen[row_id] = (time.monotonic(), extra)

    task = asyncio.create_task(poller())
    writer = table.new_append().create_writer()
    out = []
    try:
        for i in range(rounds):
            sent = time.monotonic()
            await writer.append({"id": i, "payload": f"p{i}"}).wait()
            acked = time.monotonic()
            while i not in seen:
                assert time.monotonic() - sent < BOUND_S, \
                    f"row {i} not polled within {BOUND_S}s"
                assert not task.done(), task.exception()
                await asyncio.sleep(0.002)
            out.append((i, seen[i][0] - sent, seen[i][1], acked - sent))
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
    return out


async def poll_arrow(scanner):
    t = await scanner.poll_arrow(1000)
    assert t.schema.names == ["id", "payload"]
    return [(r["id"], r["payload"]) for r in t.to_pylist()]


async def poll_batches(scanner):
    out = []
    for rb in await scanner.poll_record_batch(1000):
        ids = rb.batch.column("id").to_pylist()
        for k, row_id in enumerate(ids):
            out.append((row_id, rb.base_offset + k))
    return out


def report(name, results):
    def stats(xs):
        xs = sorted(x * 1000 for x in xs)
        return f"min {xs[0]:.1f} median {xs[len(xs) // 2]:.1f} max {xs[-1]:.1f}"
    print(f"\n{name} ({len(results)} rows): append->poll ms: "
          f"{stats([r[1] for r in results])}; of which append->ack ms: "
          f"{stats([r[3] for r in results])}")


async def test_poll_arrow_sees_new_rows(conn, admin, db):
    path = await create_log_table(admin, db, "stream_arrow", SCHEMA)
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_record_batch_log_scanner()
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    empty = await scanner.poll_arrow(200)
    assert empty.num_rows == 0 and empty.schema.names == ["id", "payload"]

    results = await stream(table, scanner, poll_arrow, 8)
    assert [(i, extra) for i, _, extra, _ in results] == [(i, f"p{i}") for i in range(8)]
    report("poll_arrow", results)


async def test_poll_record_batch_offsets(conn, admin, db):
    path = await create_log_table(admin, db, "stream_batches", SCHEMA)
    table = await conn.get_table(path)
    # some history first; a scanner starting at the latest offset skips it
    w = table.new_append().create_writer()
    for i in range(100, 105):
        w.append({"id": i, "payload": "old"})
    await w.flush()
    start = (await latest_offsets(admin, path))[0]
    assert start == 5

    scanner = await table.new_scan().create_record_batch_log_scanner()
    scanner.subscribe(0, start)
    results = await stream(table, scanner, poll_batches, 8)
    # row i is the (start + i)-th record of the log
    assert [(i, off) for i, _, off, _ in results] == [(i, start + i) for i in range(8)]
    report("poll_record_batch", results)


async def test_record_scanner_poll(conn, admin, db):
    """The record-based scanner (poll()) sees offsets, +A change types and
    commit timestamps close to now."""
    path = await create_log_table(admin, db, "stream_records", SCHEMA)
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    before = int(time.time() * 1000)
    w = table.new_append().create_writer()
    for i in range(3):
        w.append({"id": i, "payload": f"r{i}"})
    await w.flush()
    after = int(time.time() * 1000)
    got = []
    deadline = time.monotonic() + BOUND_S
    while len(got) < 3 and time.monotonic() < deadline:
        got += list(await scanner.poll(500))
    assert [r.offset for r in got] == [0, 1, 2]
    assert [r.row for r in got] == [{"id": i, "payload": f"r{i}"} for i in range(3)]
    assert all(r.change_type == fluss.ChangeType.AppendOnly for r in got)
    for r in got:
        assert before - 1000 <= r.timestamp <= after + 1000, (before, r.timestamp, after)
