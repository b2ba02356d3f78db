"""The tablet-server core seen from the official client and the raw wire
(FLUSS_SERVER=ours only: each test starts a flussd of its own).

* a coordinator and three tablet servers in one process: pyfluss creates
  tables whose buckets are led by all three, writes through each leader and
  reads every row back;
* acks=all waits on the delayed-operation path: in the durable mode with a
  group-commit window (log.flush.mode=sync, log.flush.interval-ms) an
  acks=all produce is answered only after the window's fsync, an acks=1
  produce at once, and readers see nothing before the fsync (high
  watermark);
* a long-poll fetch parked on one bucket is answered by an append to that
  bucket, and not by appends to another table;
* writes and reads spread over 4 network loops and several connections.
"""

import threading
import time

import pyarrow as pa
import pytest

from conftest import connect, unique
from logutil import (build_batch, create_log_table, fetch_log, list_offsets_raw,
                     OFFSET_LATEST, parse_batches, produce_log, raw_tablet, read_all,
                     wait_ready)

pytestmark = pytest.mark.ours_only

OFFSET_LEO = 3
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def rows(lo, hi):
    return pa.RecordBatch.from_pylist([{"id": i, "name": f"n{i}"} for i in range(lo, hi)],
                                      schema=SCHEMA)




async def test_three_tablet_servers_in_one_process(start_server):
    srv = start_server(tablet_servers=3)
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    nodes = await admin.get_server_nodes()
    tablets = sorted((n.id, n.port) for n in nodes if n.server_type == "TabletServer")
    assert [t[0] for t in tablets] == [0, 1, 2], nodes
    assert len({t[1] for t in tablets}) == 3, nodes
    db = unique("cluster")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=6, bucket_keys=["id"])
    await wait_ready(admin, path, buckets=6)
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    w.write_arrow(pa.Table.from_batches([rows(0, 600)]))
    await w.flush()
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == list(range(600))
    # every tablet server leads some of the buckets and stores their logs
    for i in range(3):
        logs = list((srv.data_dir / f"tablet-server-{i}").rglob("log-*"))
        assert logs, f"tablet server {i} stores no bucket"
    # a second table: metadata and data still line up after DDL pushes
    path2 = await create_log_table(admin, db, "t2", SCHEMA, bucket_count=3)
    await wait_ready(admin, path2, buckets=3)
    w2 = (await conn.get_table(path2)).new_append().create_writer()
    w2.write_arrow(pa.Table.from_batches([rows(0, 90)]))
    await w2.flush()
    assert (await read_all(conn, admin, path2)).num_rows == 90
    await conn.close()


async def test_acks_all_waits_for_the_group_commit(start_server):
    window_ms = 1500
    srv = start_server("-D", "log.flush.mode=sync", "-D", f"log.flush.interval-ms={window_ms}")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("durable")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=1)
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    try:
        t0 = time.monotonic()
        _, resp = produce_log(rc, info.table_id, {0: build_batch(rows(0, 10), info.schema_id)},
                              acks=1)
        acks1_s = time.monotonic() - t0
        assert resp[0]["error_code"] == 0, resp
        assert acks1_s < window_ms / 1000 * 0.6, f"acks=1 waited {acks1_s:.2f}s"
        # appended but not yet durable: readers do not see it
        _, hw = list_offsets_raw(rc, info.table_id, [0], OFFSET_LATEST)
        _, leo = list_offsets_raw(rc, info.table_id, [0], OFFSET_LEO)
        assert (hw[0]["offset"], leo[0]["offset"]) == (0, 10), (hw, leo)
        _, f = fetch_log(rc, info.table_id, {0: 0})
        assert f[0]["high_watermark"] == 0 and not f[0]["records"], f

        t0 = time.monotonic()
        _, resp = produce_log(rc, info.table_id, {0: build_batch(rows(10, 20), info.schema_id)},
                              acks=-1)
        all_s = time.monotonic() - t0
        assert resp[0]["error_code"] == 0 and resp[0]["base_offset"] == 10, resp
        assert all_s >= window_ms / 1000 * 0.5, f"acks=all answered after {all_s:.2f}s"
        _, hw = list_offsets_raw(rc, info.table_id, [0], OFFSET_LATEST)
        assert hw[0]["offset"] == 20, hw
    finally:
        rc.close()
    # the official client (acks=all by default) reads back what it wrote
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    w.write_arrow(pa.Table.from_batches([rows(20, 50)]))
    t0 = time.monotonic()
    await w.flush()
    assert time.monotonic() - t0 >= window_ms / 1000 * 0.5
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == list(range(50))
    await conn.close()


async def test_parked_fetch_wakes_only_for_its_bucket(start_server):
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("park")
    await admin.create_database(db)
    pa_ = await create_log_table(admin, db, "a", SCHEMA, bucket_count=1)
    pb = await create_log_table(admin, db, "b", SCHEMA, bucket_count=1)
    await wait_ready(admin, pa_)
    await wait_ready(admin, pb)
    ia, ib = await admin.get_table_info(pa_), await admin.get_table_info(pb)
    fetcher, writer = await raw_tablet(admin), await raw_tablet(admin)
    result = {}

    def park(wait_ms):
        t0 = time.monotonic()
        _, f = fetch_log(fetcher, ia.table_id, {0: 0}, max_wait_ms=wait_ms)
        result["s"], result["f"] = time.monotonic() - t0, f

    try:
        # appends to table b only: the fetch on a waits out its deadline
        th = threading.Thread(target=park, args=(1500,))
        th.start()
        time.sleep(0.2)
        for i in range(20):
            _, r = produce_log(writer, ib.table_id, {0: build_batch(rows(i, i + 1), ib.schema_id)})
            assert r[0]["error_code"] == 0, r
        th.join(10)
        assert result["s"] >= 1.3, result
        assert not result["f"][0]["records"], result
        # an append to a: the parked fetch answers with it, long before its deadline
        th = threading.Thread(target=park, args=(10000,))
        th.start()
        time.sleep(0.3)
        _, r = produce_log(writer, ia.table_id, {0: build_batch(rows(0, 5), ia.schema_id)})
        assert r[0]["error_code"] == 0, r
        th.join(10)
        assert result["s"] < 5, result
        batches = parse_batches(result["f"][0]["records"])
        assert [(b["base_offset"], b["last_offset_delta"]) for b in batches] == [(0, 4)]
    finally:
        fetcher.close()
        writer.close()
    await conn.close()


async def test_shutdown_answers_parked_fetches(start_server):
    """SIGTERM while a fetch is parked (20 s max wait): the client gets its
    (empty) answer before the connection closes, and flussd exits 0."""
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("stop")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=1)
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    rc = await raw_tablet(admin)
    result = {}

    def park():
        t0 = time.monotonic()
        try:
            result["f"] = fetch_log(rc, info.table_id, {0: 0}, max_wait_ms=20000)
        except Exception as e:  # the connection closed without an answer
            result["error"] = repr(e)
        result["s"] = time.monotonic() - t0

    th = threading.Thread(target=park)
    th.start()
    time.sleep(0.5)
    await conn.close()
    assert srv.stop() == 0, srv.stderr_tail()
    th.join(15)
    rc.close()
    assert "error" not in result, result
    rtype, f = result["f"]
    assert f[0]["error_code"] == 0 and not f[0]["records"], result
    assert result["s"] < 10, result


async def test_many_connections_over_four_loops(start_server):
    srv = start_server("-D", "netty.server.num-network-threads=4",
                       "-D", "netty.server.num-worker-threads=3")
    conns = [await connect(srv.bootstrap) for _ in range(6)]
    admin = conns[0].get_admin()
    db = unique("loops")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=8, bucket_keys=["id"])
    await wait_ready(admin, path, buckets=8)
    writers = [(await c.get_table(path)).new_append().create_writer() for c in conns]
    for k, w in enumerate(writers):
        w.write_arrow(pa.Table.from_batches([rows(k * 1000, k * 1000 + 500)]))
    for w in writers:
        await w.flush()
    want = sorted(i for k in range(6) for i in range(k * 1000, k * 1000 + 500))
    for c in conns[:3]:
        got = await read_all(c, c.get_admin(), path)
        assert sorted(got.column("id").to_pylist()) == want
    for c in conns:
        await c.close()


async def test_put_kv_acks_all_waits_for_the_group_commit(start_server):
    """PUT_KV shares the produce path's wait: in the durable mode acks=1 is
    answered at once with the changelog not yet visible, acks=all only after
    the group commit; lookups see both writes (the pre-write buffer, then
    RocksDB)."""
    import fluss
    from test_pk_raw import compacted_row, key, kv_batch, lookup, put_kv, SCHEMA as KV_SCHEMA
    window_ms = 1500
    srv = start_server("-D", "log.flush.mode=sync", "-D", f"log.flush.interval-ms={window_ms}")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("durable_kv")
    await admin.create_database(db)
    path = fluss.TablePath(db, "pk")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(KV_SCHEMA, primary_keys=["id"]), bucket_count=1))
    await wait_ready(admin, path)
    tid = (await admin.get_table_info(path)).table_id
    rc = await raw_tablet(admin)
    try:
        t0 = time.monotonic()
        got = put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, "a", 1))])}, acks=1)
        assert got[0]["error_code"] == 0 and got[0]["log_end_offset"] == 1, got
        assert time.monotonic() - t0 < window_ms / 1000 * 0.6
        _, hw = list_offsets_raw(rc, tid, [0], OFFSET_LATEST)
        assert hw[0]["offset"] == 0, hw  # the changelog is not durable yet
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "a", 1)]
        t0 = time.monotonic()
        got = put_kv(rc, tid, {0: kv_batch([(key(2), compacted_row(2, "b", 2))])}, acks=-1)
        waited = time.monotonic() - t0
        assert got[0]["error_code"] == 0 and got[0]["log_end_offset"] == 2, got
        assert waited >= window_ms / 1000 * 0.5, f"acks=all answered after {waited:.2f}s"
        _, hw = list_offsets_raw(rc, tid, [0], OFFSET_LATEST)
        assert hw[0]["offset"] == 2, hw
        assert lookup(rc, tid, 0, [key(1), key(2)]) == [
            b"\x01\x00" + compacted_row(1, "a", 1), b"\x01\x00" + compacted_row(2, "b", 2)]
    finally:
        rc.close()
        await conn.close()
