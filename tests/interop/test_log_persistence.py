"""Log data survives restarts of our server on the same data dir
(FLUSS_SERVER=ours only: the suite must own the process).

* SIGTERM and kill -9 after acknowledged writes: the stored batches are
  byte-identical afterwards, offsets (earliest / latest / by timestamp) are
  unchanged, new appends continue the offsets, an idempotent writer's
  retained sequences still deduplicate.
* kill -9 in the middle of a stream of acknowledged writes: after the
  restart every acknowledged row is there exactly once; rows whose write
  was not acknowledged may or may not be there, but at most once.
"""

import asyncio
import time

import pyarrow as pa
import pytest

import fluss
from conftest import connect, now_ms, unique
from logutil import (build_batch, create_log_table, fetch_log, init_writer,
                     list_offsets_raw, OFFSET_TIMESTAMP, parse_batches, produce_log,
                     raw_tablet, read_all, wait_ready)

pytestmark = pytest.mark.ours_only

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string()),
                    pa.field("tags", pa.list_(pa.int32()))])
BUCKETS = 3


def row(i):
    return {"id": i, "payload": f"payload-{i}-" + "x" * (i % 17), "tags": [i, -i][: i % 3]}


async def fetch_all_raw(admin, tid, buckets=BUCKETS):
    """bucket -> the raw bytes of all stored batches."""
    rc = await raw_tablet(admin)
    out = {}
    try:
        for b in range(buckets):
            data, offset = b"", 0
            while True:
                _, resp = fetch_log(rc, tid, {b: offset})
                assert resp[0]["error_code"] == 0, resp
                hdrs = [h for h in parse_batches(resp[0]["records"])
                        if h["base_offset"] + h["last_offset_delta"] >= offset]
                if not hdrs:
                    break
                data += b"".join(h["raw"] for h in hdrs)
                offset = hdrs[-1]["base_offset"] + hdrs[-1]["last_offset_delta"] + 1
            out[b] = data
    finally:
        rc.close()
    return out


async def offsets(admin, path, spec, buckets=BUCKETS):
    return await admin.list_offsets(path, list(range(buckets)), spec)


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill-9"])
async def test_restart_keeps_log(our_server, hard):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("logpersist")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "log", SCHEMA, bucket_count=BUCKETS,
                                  bucket_keys=["id"])
    info = await admin.get_table_info(path)
    tid, sid = info.table_id, info.schema_id
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for i in range(200):
        w.append(row(i))
    await w.flush()
    time.sleep(0.05)
    t_mid = now_ms()
    time.sleep(0.05)
    w.write_arrow(pa.Table.from_pylist([row(i) for i in range(200, 260)], schema=SCHEMA))
    await w.flush()
    # raw extras in bucket 0: an empty batch and an idempotent writer's batch
    rc = await raw_tablet(admin)
    try:
        _, resp = produce_log(rc, tid, {0: build_batch(None, sid)})
        assert resp[0]["error_code"] == 0
        writer_id = init_writer(rc, db, "log")
        dedup_batch = build_batch(pa.RecordBatch.from_pylist([row(1000)], schema=SCHEMA),
                                  sid, writer_id=writer_id, seq=0)
        _, resp = produce_log(rc, tid, {0: dedup_batch})
        assert resp[0]["error_code"] == 0
        dedup_offset = resp[0]["base_offset"]
    finally:
        rc.close()

    want = sorted([row(i) for i in range(260)] + [row(1000)], key=lambda r: r["id"])
    before_raw = await fetch_all_raw(admin, tid)
    before_latest = await offsets(admin, path, fluss.OffsetSpec.latest())
    before_mid = await offsets(admin, path, fluss.OffsetSpec.timestamp(t_mid))
    assert sum(before_latest.values()) == 262  # 261 rows + the empty batch
    await conn.close()

    if hard:
        assert our_server.kill9() == -9
    else:
        rc_exit = our_server.stop()
        assert rc_exit == 0, our_server.stderr_tail()
    our_server.start()

    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    try:
        await wait_ready(admin, path, BUCKETS)
        assert await fetch_all_raw(admin, tid) == before_raw
        assert await offsets(admin, path, fluss.OffsetSpec.latest()) == before_latest
        assert await offsets(admin, path, fluss.OffsetSpec.earliest()) == \
            {b: 0 for b in range(BUCKETS)}
        assert await offsets(admin, path, fluss.OffsetSpec.timestamp(t_mid)) == before_mid
        got = await read_all(conn, admin, path)
        assert sorted(got.to_pylist(), key=lambda r: r["id"]) == want

        rc = await raw_tablet(admin)
        try:
            # the idempotent writer's batch is still recognised as a duplicate
            _, resp = produce_log(rc, tid, {0: dedup_batch})
            assert resp[0]["error_code"] == 0 and resp[0]["base_offset"] == dedup_offset, resp
            # plain appends continue each bucket's offsets
            for b in range(BUCKETS):
                _, resp = produce_log(rc, tid, {b: build_batch(
                    pa.RecordBatch.from_pylist([row(2000 + b)], schema=SCHEMA), sid)})
                assert resp[0]["error_code"] == 0
                assert resp[0]["base_offset"] == before_latest[b], (b, resp, before_latest)
        finally:
            rc.close()
        table = await conn.get_table(path)
        w = table.new_append().create_writer()
        for i in range(3000, 3030):
            w.append(row(i))
        await w.flush()
        latest = await offsets(admin, path, fluss.OffsetSpec.latest())
        assert sum(latest.values()) == 262 + 3 + 30
        got = await read_all(conn, admin, path)
        ids = sorted(got.column("id").to_pylist())
        assert ids == sorted(list(range(260)) + [1000, 2000, 2001, 2002] + list(range(3000, 3030)))
    finally:
        await admin.drop_database(db, cascade=True)
        await conn.close()


async def test_kill9_during_acknowledged_writes(our_server):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("logkill")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "log", SCHEMA, bucket_count=BUCKETS,
                                  bucket_keys=["id"])
    await conn.close()

    wconn = await fluss.FlussConnection.create(fluss.Config({
        "bootstrap.servers": our_server.bootstrap,
        "writer.batch-timeout-ms": "1"}))
    table = await wconn.get_table(path)
    writer = table.new_append().create_writer()
    acked, failed, attempted = [], [], []
    stop = asyncio.Event()

    async def produce():
        i = 0
        while not stop.is_set():
            handles = []
            for k in range(i, i + 16):
                handles.append((k, writer.append(row(k))))
                attempted.append(k)
            i += 16
            for k, h in handles:
                try:
                    await h.wait()
                    acked.append(k)
                except Exception as e:  # the server died under this write
                    failed.append((k, repr(e)))

    task = asyncio.create_task(produce())
    try:
        deadline = time.monotonic() + 20
        while len(acked) < 300:
            assert time.monotonic() < deadline, f"only {len(acked)} acks; failed {failed[:3]}"
            assert not task.done(), task.exception()
            await asyncio.sleep(0.001)
        assert our_server.kill9() == -9
        acked_at_kill = len(acked)
        stop.set()
        our_server.start()
        # the writer retries in-flight batches against the restarted server;
        # give it a while, then give up on what is left
        try:
            await asyncio.wait_for(asyncio.shield(task), 20)
        except asyncio.TimeoutError:
            task.cancel()
        print(f"\nacked at kill: {acked_at_kill}, acked in total: {len(acked)}, "
              f"attempted: {len(attempted)}, failed: {len(failed)}")
    finally:
        stop.set()
        if not task.done():
            task.cancel()
        try:
            await wconn.close()
        except Exception:
            pass

    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    try:
        await wait_ready(admin, path, BUCKETS)
        got = await read_all(conn, admin, path)
        ids = got.column("id").to_pylist()
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        assert not dupes, f"rows stored twice: {dupes[:20]}"
        missing = sorted(set(acked) - set(ids))
        assert not missing, f"acknowledged rows lost: {missing[:20]} (of {len(acked)})"
        assert set(ids) <= set(attempted)
        # the rows are intact, not just the ids
        assert all(r == row(r["id"]) for r in got.to_pylist())
        latest = await offsets(admin, path, fluss.OffsetSpec.latest())
        assert sum(latest.values()) == len(ids)
    finally:
        await admin.drop_database(db, cascade=True)
        await conn.close()
