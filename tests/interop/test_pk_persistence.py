"""Primary-key state survives restarts of our server (FLUSS_SERVER=ours only:
the suite must own the process).

* SIGTERM and kill -9 after acknowledged upserts and deletes: every key
  looks up as it was acknowledged, and folding the changelog read from the
  earliest offset (+I/+U put, -D remove) gives the same state.
* kill -9 in the middle of a stream of upserts and deletes: after the
  restart each key holds the result of its last acknowledged operation or
  of a later one (not acknowledged, but applied before the kill); the
  changelog folds to exactly what the lookups return.
"""

import asyncio
import shutil
import time

import fluss
import pyarrow as pa
import pytest

from conftest import connect, unique
from logutil import wait_ready

pytestmark = pytest.mark.ours_only

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.int64()),
                    pa.field("s", pa.string())])
BUCKETS = 3
KEYS = 200



async def create_table(admin, db, properties=None):
    path = fluss.TablePath(db, "pk")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=BUCKETS,
        properties=properties or {}))
    await wait_ready(admin, path, BUCKETS)
    return path


async def lookup_all(conn, path):
    table = await conn.get_table(path)
    # pyfluss answers one lookup per lookuper every ~100 ms (its batching
    # timer), so many lookupers run side by side
    lks = [table.new_lookup().create_lookuper() for _ in range(50)]
    rows = await asyncio.gather(*(lks[k % len(lks)].lookup({"id": k}) for k in range(KEYS)))
    return {k: None if r is None else (r["v"], r["s"]) for k, r in enumerate(rows)}


async def fold_changelog(conn, path, timeout=30):
    """The state the changelog describes, read until every bucket's latest
    offset."""
    table = await conn.get_table(path)
    admin = conn.get_admin()
    ends = await admin.list_offsets(path, list(range(BUCKETS)), fluss.OffsetSpec.latest())
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(BUCKETS)})
    state, seen = {}, {b: 0 for b in range(BUCKETS)}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while any(seen[b] < ends[b] - 1 for b in range(BUCKETS) if ends[b] > 0):
        assert loop.time() < deadline, (seen, ends)
        recs = await scanner.poll(500)
        for bucket, rs in recs.items():
            for r in rs:
                seen[bucket.bucket_id] = max(seen[bucket.bucket_id], r.offset)
                ct, row = r.change_type.short_string(), r.row
                if ct in ("+I", "+U"):
                    state[row["id"]] = (row["v"], row["s"])
                elif ct == "-D":
                    state.pop(row["id"], None)
        # empty changelog batches take offsets too: stop at the end offsets
        if not len(recs):
            got = await admin.list_offsets(path, list(range(BUCKETS)), fluss.OffsetSpec.latest())
            if got == ends and all(seen[b] >= ends[b] - 3 for b in range(BUCKETS)):
                break
    return {k: state.get(k) for k in range(KEYS)}


def op(i):
    """Operation i: a delete every 5th, else an upsert of key i % KEYS."""
    k = (i * 7) % KEYS
    if i % 5 == 4:
        return k, None
    return k, (i, f"s{i}-" + "x" * (i % 13))


async def write_ops(table):
    """The 1500 upserts and deletes of op(), flushed; -> the state they leave."""
    w = table.new_upsert().create_writer()
    expect = {k: None for k in range(KEYS)}
    for i in range(1500):
        k, val = op(i)
        if val is None:
            w.delete({"id": k})
        else:
            w.upsert({"id": k, "v": val[0], "s": val[1]})
        expect[k] = val
    await w.flush()
    return expect


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill-9"])
async def test_restart_keeps_state(our_server, hard):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("pkpersist")
    await admin.create_database(db)
    path = await create_table(admin, db)
    table = await conn.get_table(path)
    expect = await write_ops(table)
    before = await lookup_all(conn, path)
    assert before == expect
    await conn.close()
    if hard:
        assert our_server.kill9() == -9
    else:
        our_server.stop()
    our_server.start()
    conn = await connect(our_server.bootstrap)
    try:
        await wait_ready(conn.get_admin(), path, BUCKETS)
        assert await lookup_all(conn, path) == expect
        assert await fold_changelog(conn, path) == expect
        # writes go on after the restart
        table = await conn.get_table(path)
        w = table.new_upsert().create_writer()
        w.upsert({"id": 0, "v": -1, "s": "after"})
        await w.flush()
        lk = table.new_lookup().create_lookuper()
        r = await lk.lookup({"id": 0})
        assert (r["v"], r["s"]) == (-1, "after")
    finally:
        await conn.close()


async def test_kill9_during_upserts_and_deletes(our_server):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("pkkill")
    await admin.create_database(db)
    path = await create_table(admin, db)
    await conn.close()

    wconn = await fluss.FlussConnection.create(fluss.Config({
        "bootstrap.servers": our_server.bootstrap, "writer.batch-timeout-ms": "1"}))
    table = await wconn.get_table(path)
    writer = table.new_upsert().create_writer()
    acked, issued = set(), []
    stop = asyncio.Event()

    async def produce():
        i = 0
        while not stop.is_set():
            handles = []
            for n in range(i, i + 16):
                k, val = op(n)
                h = (writer.delete({"id": k}) if val is None
                     else writer.upsert({"id": k, "v": val[0], "s": val[1]}))
                issued.append(n)
                handles.append((n, h))
            i += 16
            for n, h in handles:
                try:
                    await h.wait()
                    acked.add(n)
                except Exception:
                    pass

    task = asyncio.create_task(produce())
    try:
        deadline = time.monotonic() + 20
        while len(acked) < 600:
            assert time.monotonic() < deadline, f"only {len(acked)} acks"
            assert not task.done(), task.exception()
            await asyncio.sleep(0.001)
        assert our_server.kill9() == -9
        stop.set()
        our_server.start()
        try:
            await asyncio.wait_for(asyncio.shield(task), 20)
        except asyncio.TimeoutError:
            task.cancel()
    finally:
        stop.set()
        if not task.done():
            task.cancel()
        try:
            await wconn.close()
        except Exception:
            pass

    conn = await connect(our_server.bootstrap)
    try:
        await wait_ready(conn.get_admin(), path, BUCKETS)
        state = await lookup_all(conn, path)
        # per key: the operations issued on it, in order
        by_key = {}
        for n in issued:
            by_key.setdefault(op(n)[0], []).append(n)
        for k in range(KEYS):
            ops = by_key.get(k, [])
            last_acked = max((j for j, n in enumerate(ops) if n in acked), default=-1)
            allowed = {op(n)[1] for n in ops[max(last_acked, 0):]}
            if last_acked < 0:
                allowed.add(None)
            assert state[k] in allowed, (k, state[k], last_acked, ops[-3:])
        assert await fold_changelog(conn, path) == state
    finally:
        await conn.close()


async def test_compacted_changelog_replayed(our_server):
    """A table whose changelog is COMPACTED (table.log.format): after kill -9
    with its RocksDB directories gone, the buckets rebuild from that
    changelog alone, and every row reads back (LIMIT_SCAN reads the store)."""
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("pkcompact")
    await admin.create_database(db)
    path = await create_table(admin, db, {"table.log.format": "COMPACTED"})
    info = await admin.get_table_info(path)
    table = await conn.get_table(path)
    expect = await write_ops(table)
    await conn.close()
    assert our_server.kill9() == -9
    kv_dirs = list((our_server.data_dir / "tablet-server-0" / db).glob("pk-*/kv-*"))
    assert len(kv_dirs) == BUCKETS, kv_dirs
    for d in kv_dirs:
        shutil.rmtree(d)
    our_server.start()
    conn = await connect(our_server.bootstrap)
    try:
        await wait_ready(conn.get_admin(), path, BUCKETS)
        table = await conn.get_table(path)
        got = {}
        for b in range(BUCKETS):
            sc = table.new_scan().limit(10000).create_bucket_batch_scanner(
                fluss.TableBucket(info.table_id, b))
            for r in (await sc.to_arrow()).to_pylist():
                got[r["id"]] = (r["v"], r["s"])
        assert got == {k: v for k, v in expect.items() if v is not None}
    finally:
        await conn.close()
