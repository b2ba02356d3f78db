"""Cluster mode through the official client: every server its own process
on ZooKeeper (`flussd coordinator`, `flussd tablet`).

* tables whose buckets are led by three tablet server processes: pyfluss
  writes a log table and a primary-key table and reads every row back;
* a tablet server killed with SIGKILL and started again: the coordinator
  sees the new registration, tells it every table, and its buckets are
  read back whole (replication factor 1: its data is its disk);
* the active coordinator killed with SIGKILL: a standby is elected, the
  tablet servers follow it, and clients bootstrapping to it create tables,
  write and read; the old coordinator's tables are all there;
* SIGTERM stops each process cleanly (exit 0) and its registration goes.
"""

import asyncio
import os
import signal
import time

import pyarrow as pa
import pytest

import fluss
from conftest import free_ports
from logutil import build_batch, create_log_table, produce_log, read_all, wait_ready
from rawwire import (GET_METADATA, as_int32, decode, decode_error, decode_packed_or_plain_ints,
                     f_bytes, handshake)

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def rows(lo, hi):
    return pa.Table.from_batches([pa.RecordBatch.from_pylist(
        [{"id": i, "name": f"n{i}"} for i in range(lo, hi)], schema=SCHEMA)])


async def connect(bootstrap):
    return await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))


async def write_log(conn, path, lo, hi):
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(rows(lo, hi))
    await w.flush()


async def upsert(conn, path, lo, hi):
    w = (await conn.get_table(path)).new_upsert().create_writer()
    for i in range(lo, hi):
        w.upsert({"id": i, "name": f"v{i}"})
    await w.flush()


async def lookup_all(conn, path, lo, hi):
    """Every key's name (None: absent). A lookuper answers one lookup at a
    time, each after the client's batch timeout (~0.1 s): the keys are
    split over lookupers that go together."""
    table = await conn.get_table(path)
    keys = list(range(lo, hi))
    parts = [keys[j:j + 10] for j in range(0, len(keys), 10)]

    async def part(ks):
        lk = table.new_lookup().create_lookuper()
        return [await lk.lookup({"id": i}) for i in ks]

    got = [r for rs in await asyncio.gather(*(part(p) for p in parts)) for r in rs]
    return {i: None if r is None else r["name"] for i, r in zip(keys, got)}


async def retry(what, timeout=30.0):
    """what() until it stops raising (a client refreshing its metadata)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await what()
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def make_tables(conn, db, buckets=6):
    admin = conn.get_admin()
    await admin.create_database(db, ignore_if_exists=True)
    log = await create_log_table(admin, db, "log", SCHEMA, bucket_count=buckets,
                                 bucket_keys=["id"])
    await wait_ready(admin, log, buckets)
    pk = fluss.TablePath(db, "pk")
    await admin.create_table(pk, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=buckets))
    await wait_ready(admin, pk, buckets)
    return log, pk


async def test_three_tablet_server_processes(cluster):
    c = cluster(tablets=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    nodes = await admin.get_server_nodes()
    tablets = sorted((n.id, n.port) for n in nodes if n.server_type == "TabletServer")
    assert tablets == [(i, c.tablet_port + i) for i in range(3)], nodes
    log, pk = await make_tables(conn, "fluss")
    await write_log(conn, log, 0, 600)
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == list(range(600))
    await upsert(conn, pk, 0, 300)
    assert await lookup_all(conn, pk, 0, 300) == {i: f"v{i}" for i in range(300)}
    # every tablet server process stores some of the buckets
    for i in range(3):
        assert list((c.dir / f"tablet-{i}-data").rglob("log-*")), f"tablet {i} stores nothing"
    await conn.close()
    # a clean stop of each process: exit 0 (checked by the fixture's stop)
    c.terminate("tablet-2")
    assert "shutting down" in c.log("tablet-2")


async def test_tablet_server_restart_keeps_its_data(cluster):
    c = cluster(tablets=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    log, pk = await make_tables(conn, "fluss")
    await write_log(conn, log, 0, 600)
    await upsert(conn, pk, 0, 300)
    await conn.close()
    c.kill9("tablet-1")
    c.start_tablet(1)
    # the coordinator sees the new incarnation and tells it every table
    deadline = time.monotonic() + 30
    while c.log("coordinator").count("tablet server 1 is up") < 2:
        assert time.monotonic() < deadline, c.log("coordinator")[-3000:]
        await asyncio.sleep(0.1)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    got = await retry(lambda: read_all(conn, admin, log))
    assert sorted(got.column("id").to_pylist()) == list(range(600))
    assert await retry(lambda: lookup_all(conn, pk, 0, 300)) == {i: f"v{i}" for i in range(300)}
    # and it takes writes again
    await retry(lambda: write_log(conn, log, 600, 900))
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == list(range(900))
    await conn.close()


async def test_coordinator_failover_to_a_standby(cluster):
    c = cluster(tablets=2)
    port, internal = free_ports(2)
    c.start_coordinator("standby", port, internal, wait=False)
    conn = await connect(c.bootstrap)
    log, pk = await make_tables(conn, "before", buckets=4)
    await write_log(conn, log, 0, 100)
    await conn.close()
    time.sleep(0.5)
    assert "waiting to be elected" in c.log("standby")
    assert "active with epoch" not in c.log("standby")
    c.kill9("coordinator")
    # the standby is elected once ZooKeeper expires the old session
    deadline = time.monotonic() + 30
    while "serving on" not in c.log("standby"):
        assert time.monotonic() < deadline, c.log("standby")[-3000:]
        await asyncio.sleep(0.1)
    conn = await retry(lambda: connect(f"127.0.0.1:{port}"))
    admin = conn.get_admin()
    # what the old coordinator made is there, and served by the tablets
    got = await retry(lambda: read_all(conn, admin, log))
    assert sorted(got.column("id").to_pylist()) == list(range(100))
    # new DDL reaches the tablet servers from the new coordinator
    log2, pk2 = await retry(lambda: make_tables(conn, "after", buckets=4))
    await retry(lambda: write_log(conn, log2, 0, 200))
    got = await read_all(conn, admin, log2)
    assert sorted(got.column("id").to_pylist()) == list(range(200))
    await retry(lambda: upsert(conn, pk2, 0, 50))
    assert await lookup_all(conn, pk2, 0, 50) == {i: f"v{i}" for i in range(50)}
    # a tablet server passes INIT_WRITER and catalog reads on to the new one
    assert sorted(await admin.list_tables("after")) == ["log", "pk"]
    await conn.close()
    for i in range(2):
        assert "the active coordinator is" in c.log(f"tablet-{i}")
        assert c.log(f"tablet-{i}").count("the active coordinator is") >= 2


async def test_leader_failover_with_three_replicas(cluster):
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log, pk = await make_tables(conn, "fluss", buckets=3)
    await write_log(conn, log, 0, 600)
    await upsert(conn, pk, 0, 300)
    # every replica holds every bucket: acks=all waited for the followers
    for i in range(3):
        buckets = {d.name for d in (c.dir / f"tablet-{i}-data").rglob("log-*") if d.is_dir()
                   and d.parent.name.startswith("log-")}
        assert buckets == {"log-0", "log-1", "log-2"}, (i, buckets)
    await conn.close()
    # tablet server 0 leads a bucket: it dies, and the coordinator elects
    # an in-sync follower once its ZooKeeper session expires
    c.kill9("tablet-0")
    deadline = time.monotonic() + 30
    while "tablet server 0 is gone" not in c.log("coordinator"):
        assert time.monotonic() < deadline, c.log("coordinator")[-3000:]
        await asyncio.sleep(0.1)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    # the new leader's high watermark is the one it last heard from the old
    # leader: readers see the rest once its follower has fetched again
    assert await read_ids_until(conn, admin, log, list(range(600))) == list(range(600))
    # the new leaders built their primary-key state from the replicated
    # changelog
    assert await retry(lambda: lookup_all(conn, pk, 0, 300)) == {i: f"v{i}" for i in range(300)}
    # writes go on with two replicas in sync
    await retry(lambda: write_log(conn, log, 600, 900))
    await retry(lambda: upsert(conn, pk, 300, 400))
    # the old leader comes back as a follower, fetches again and is a
    # replica like the others
    c.start_tablet(0)
    deadline = time.monotonic() + 30
    while c.log("coordinator").count("tablet server 0 is up") < 2:
        assert time.monotonic() < deadline, c.log("coordinator")[-3000:]
        await asyncio.sleep(0.1)
    await retry(lambda: write_log(conn, log, 900, 1000))
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == list(range(1000))
    assert await lookup_all(conn, pk, 0, 400) == {i: f"v{i}" for i in range(400)}
    # once caught up, the leaders take it back into the ISR through the
    # coordinator (ADJUST_ISR): all six buckets have three in sync again
    await wait_log(c, "coordinator", "ISR of 3 replica(s)", 6)
    # now server 1 dies: server 0, restarted and refetched, is in sync and
    # first in assignment order for one bucket of each table, so it leads
    # there, its primary-key state built from its log
    c.kill9("tablet-1")
    await wait_log(c, "coordinator", "tablet server 1 is gone")
    assert "leader 0 (epoch" in c.log("coordinator").split("tablet server 0 is up")[-1]
    assert await read_ids_until(conn, admin, log, list(range(1000))) == list(range(1000))
    assert await retry(lambda: lookup_all(conn, pk, 0, 400)) == {i: f"v{i}" for i in range(400)}
    await retry(lambda: upsert(conn, pk, 400, 450))
    assert await lookup_all(conn, pk, 0, 450) == {i: f"v{i}" for i in range(450)}
    await conn.close()


def raw_call(c, port, api_key, body):
    """One request to the server on port: (response type, decoded fields,
    or the error as (code, message))."""
    rc = handshake(c.host, port)
    try:
        rtype, resp = rc.call(api_key, body)
    finally:
        rc.close()
    return rtype, decode(resp) if rtype == 0 else decode_error(resp)


def bucket_metadata(c, db, table):
    """{bucket: (leader id or -1, [replica ids], leader epoch or -1)} from
    the coordinator's GET_METADATA (PbBucketMetadata fields 2, 3 packed,
    and 4)."""
    path = f_bytes(1, db.encode()) + f_bytes(2, table.encode())
    rtype, resp = raw_call(c, c.coordinator_port, GET_METADATA, f_bytes(1, path))
    assert rtype == 0, resp
    out = {}
    for tm in resp.get(3, []):
        for bm in decode(tm).get(5, []):
            f = decode(bm)
            out[as_int32(f[1][0])] = (
                as_int32(f[2][0]) if 2 in f else -1,
                [as_int32(v) for v in decode_packed_or_plain_ints(f.get(3, []))],
                as_int32(f[4][0]) if 4 in f else -1)
    return out


def leader_epoch(c, db, table, bucket=0):
    """The bucket's leader epoch as the coordinator answers it."""
    return bucket_metadata(c, db, table)[bucket][2]


def bucket_leaders(c, db, table):
    """{bucket: leader id} from the coordinator's GET_METADATA."""
    return {b: m[0] for b, m in bucket_metadata(c, db, table).items()}


def bucket_replicas(c, db, table):
    """{bucket: [replica ids], leader first}."""
    return {b: m[1] for b, m in bucket_metadata(c, db, table).items()}


async def test_rack_aware_assignment(cluster):
    """Tablet servers 0..3 on racks r0, r0, r1, r2 and replication factor
    3: every bucket gets one replica on each rack (round robin over 0..3
    would put 0 and 1, both on r0, in the same bucket), leaders spread over
    the servers, and the table takes writes and reads them back."""
    racks = ["r0", "r0", "r1", "r2"]
    c = cluster(tablets=4, rf=3, racks=racks)
    for i, r in enumerate(racks):
        assert f"tablet server {i} is up" in c.log("coordinator")
        assert f"rack {r})" in c.log("coordinator")
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log, pk = await make_tables(conn, "fluss", buckets=8)
    for table in ("log", "pk"):
        replicas = bucket_replicas(c, "fluss", table)
        assert sorted(replicas) == list(range(8)), replicas
        for b, ids in replicas.items():
            assert len(set(ids)) == 3, (table, b, ids)
            assert sorted(racks[i] for i in ids) == ["r0", "r1", "r2"], (table, b, ids)
        assert {ids[0] for ids in replicas.values()} == {0, 1, 2, 3}, (table, replicas)
        assert bucket_leaders(c, "fluss", table) == {b: ids[0] for b, ids in replicas.items()}
    await write_log(conn, log, 0, 400)
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == list(range(400))
    await upsert(conn, pk, 0, 100)
    assert await lookup_all(conn, pk, 0, 100) == {i: f"v{i}" for i in range(100)}
    await conn.close()


async def test_rack_on_some_servers_fails_create_table(cluster):
    """A rack on two of three tablet servers: CREATE TABLE fails with
    INVALID_SERVER_RACK_INFO (52) and Fluss 0.9.1's message, and no table
    is left behind."""
    c = cluster(tablets=3, rf=1, racks=["r0", None, "r1"])
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    path = fluss.TablePath("fluss", "mixed")
    with pytest.raises(fluss.FlussError) as ei:
        await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA),
                                                             bucket_count=3))
    assert ei.value.error_code == 52, ei.value
    assert ("Not all tabletServers have rack information for replica rack aware assignment."
            in ei.value.message), ei.value.message
    assert not await admin.table_exists(path)
    await conn.close()


async def read_ids_until(conn, admin, path, want, timeout=30.0):
    """The table's ids, sorted, read again until they are want or the
    timeout passes (a new leader's high watermark catches up once its
    followers fetched)."""
    deadline = time.monotonic() + timeout
    while True:
        got = await retry(lambda: read_all(conn, admin, path))
        ids = sorted(got.column("id").to_pylist())
        if ids == want or time.monotonic() > deadline:
            return ids
        await asyncio.sleep(0.2)


async def wait_log(c, name, text, count=1, timeout=30.0):
    deadline = time.monotonic() + timeout
    while c.log(name).count(text) < count:
        assert time.monotonic() < deadline, c.log(name)[-4000:]
        await asyncio.sleep(0.1)


async def test_isr_shrinks_and_grows_with_a_stopped_follower(cluster):
    """A follower that stops fetching (SIGSTOP, well inside its ZooKeeper
    session) leaves the ISR once log.replica.max-lag-time passes: its
    leaders propose it and the coordinator commits it (ADJUST_ISR).
    Resumed (SIGCONT), it catches up and its leaders take it back the same
    way; the data is whole throughout."""
    c = cluster(tablets=3, rf=3, extra=("-D", "log.replica.max-lag-time=1s"), session="10s")
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "log", SCHEMA, bucket_count=3,
                                 bucket_keys=["id"])
    await write_log(conn, log, 0, 300)
    info = await admin.get_table_info(log)
    led_by_others = {b: leader for b, leader in bucket_leaders(c, "fluss", "log").items()
                     if leader != 2}
    assert len(led_by_others) == 2, led_by_others
    tail = []
    os.kill(c.pid("tablet-2"), signal.SIGSTOP)
    try:
        # a follower is out of sync once the leader's log has grown past
        # it for max-lag. The tail goes straight to the leaders of the two
        # buckets server 2 follows (acks=1: answered at once; a client
        # could ask the stopped server for metadata and wait on it)
        for b, leader in led_by_others.items():
            ids = list(range(300 + 100 * b, 400 + 100 * b))
            rc = handshake(c.host, c.tablet_port + leader)
            try:
                rtype, resp = produce_log(rc, info.table_id, {b: build_batch(
                    pa.RecordBatch.from_pylist([{"id": i, "name": f"n{i}"} for i in ids],
                                               schema=SCHEMA), info.schema_id)}, acks=1)
            finally:
                rc.close()
            assert rtype == 0 and resp[0]["error_code"] == 0, resp
            tail += ids
        await wait_log(c, "coordinator", "ISR of 2 replica(s)", 2, timeout=6)
    finally:
        os.kill(c.pid("tablet-2"), signal.SIGCONT)
    await wait_log(c, "coordinator", "ISR of 3 replica(s)", 2)
    await write_log(conn, log, 600, 900)
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == sorted(list(range(300)) + tail +
                                                         list(range(600, 900)))
    assert "is gone" not in c.log("coordinator")  # no session expired on the way
    await conn.close()


def segment_bytes(c, tablet: int, table_dir: str, bucket: int) -> bytes:
    """A replica's log segments, in offset order, as one byte string."""
    d = next((c.dir / f"tablet-{tablet}-data").rglob(f"{table_dir}/log-{bucket}"))
    return b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))


async def test_diverged_tail_is_cut_by_leader_epoch(cluster):
    """KIP-101/279 through the processes: a leader appends a tail its
    followers never fetch (acks=1 while both are stopped) and is killed;
    a follower leads in a new epoch and takes other writes at the same
    offsets. The old leader, restarted, asks the new one for its leader
    epochs (LIST_LEADER_EPOCHS), cuts exactly its own tail and fetches
    the new leader's: the three replicas end byte for byte the same."""
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "log", SCHEMA, bucket_count=1)
    info = await admin.get_table_info(log)
    await write_log(conn, log, 0, 100)
    leader = bucket_leaders(c, "fluss", "log")[0]
    followers = [i for i in range(3) if i != leader]
    await conn.close()
    for f in followers:
        os.kill(c.pid(f"tablet-{f}"), signal.SIGSTOP)
    try:
        # the fetches they had parked at the leader expire (0.5 s) into
        # socket buffers: nothing of the tail below reaches them
        await asyncio.sleep(1.0)
        # acks=1 straight to the leader (a client would also ask the
        # stopped servers for metadata)
        rc = handshake(c.host, c.tablet_port + leader)
        try:
            rtype, resp = produce_log(rc, info.table_id, {0: build_batch(
                rows(100, 150).to_batches()[0], info.schema_id)}, acks=1)
        finally:
            rc.close()
        assert rtype == 0 and resp[0]["error_code"] == 0, resp
        c.kill9(f"tablet-{leader}")
    finally:
        for f in followers:
            os.kill(c.pid(f"tablet-{f}"), signal.SIGCONT)
    await wait_log(c, "coordinator", f"tablet server {leader} is gone")
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await retry(lambda: write_log(conn, log, 1000, 1030))
    c.start_tablet(leader)
    name = f"tablet-{leader}"
    await wait_log(c, name, "log cut at 100 (was 150)")
    await wait_log(c, "coordinator", "ISR of 3 replica(s)")
    got = await read_all(conn, admin, log)
    assert sorted(got.column("id").to_pylist()) == list(range(100)) + list(range(1000, 1030))
    table_dir = next(p.name for p in (c.dir / f"tablet-{leader}-data" / "fluss").iterdir()
                     if p.name.startswith("log-"))
    want = segment_bytes(c, followers[0], table_dir, 0)
    deadline = time.monotonic() + 10
    while any(segment_bytes(c, i, table_dir, 0) != want for i in range(3)):
        assert time.monotonic() < deadline, "replicas differ after the heal"
        await asyncio.sleep(0.2)
    await conn.close()


async def test_controlled_shutdown_moves_leaderships(cluster):
    """SIGTERM to a tablet server: before it stops it asks the coordinator
    to move its leaderships to in-sync followers (CONTROLLED_SHUTDOWN),
    so every bucket has a live leader before its registration goes, and
    writes and reads carry on whole."""
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log, pk = await make_tables(conn, "fluss", buckets=3)
    await write_log(conn, log, 0, 300)
    await upsert(conn, pk, 0, 100)
    c.terminate("tablet-0")
    text = c.log("coordinator")
    assert "controlled shutdown of tablet server 0: 0 bucket(s) still led by it" in text, text
    before_gone = text.split("tablet server 0 is gone")[0]
    # server 0 led one bucket of each table: both moved while it ran
    assert before_gone.count("after server 0 asked to stop") >= 2, before_gone[-3000:]
    assert "controlled shutdown: 0 bucket(s) still led here" in c.log("tablet-0")
    await retry(lambda: write_log(conn, log, 300, 400))
    await retry(lambda: upsert(conn, pk, 100, 150))
    assert await read_ids_until(conn, admin, log, list(range(400))) == list(range(400))
    assert await retry(lambda: lookup_all(conn, pk, 0, 150)) == {i: f"v{i}" for i in range(150)}
    await conn.close()


def metadata_at(c, port, db, table):
    """GET_METADATA for db.table sent to the server on port: (response
    type, decoded fields or the error)."""
    path = f_bytes(1, db.encode()) + f_bytes(2, table.encode())
    return raw_call(c, port, GET_METADATA, f_bytes(1, path))


async def test_tablet_servers_answer_metadata_from_their_cache(cluster):
    """Each tablet server answers GET_METADATA from what UPDATE_METADATA
    told it (server_metadata_cache.h): the same servers and table entry the
    coordinator gives, after a leader change too, and while the
    coordinator is stopped (SIGSTOP: a forward to it would hang). A table
    the cache does not hold is passed on to the coordinator, whose
    catalog answers (here: the table does not exist)."""
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "md", SCHEMA, bucket_count=3,
                                 bucket_keys=["id"])
    await write_log(conn, log, 0, 100)
    await conn.close()

    def same_everywhere(ids):
        rtype, want = metadata_at(c, c.coordinator_port, "fluss", "md")
        assert rtype == 0, want
        for i in ids:
            rtype, got = metadata_at(c, c.tablet_port + i, "fluss", "md")
            assert rtype == 0, got
            if (got.get(1), sorted(got.get(2, [])), got.get(3)) != \
                    (want.get(1), sorted(want.get(2, [])), want.get(3)):
                return False
        return True

    assert same_everywhere(range(3))
    # a leader change reaches every cache
    gone = bucket_leaders(c, "fluss", "md")[0]
    c.kill9(f"tablet-{gone}")
    await wait_log(c, "coordinator", f"tablet server {gone} is gone")
    others = [i for i in range(3) if i != gone]
    deadline = time.monotonic() + 10
    while not same_everywhere(others):
        assert time.monotonic() < deadline, "a tablet server's metadata stays stale"
        await asyncio.sleep(0.2)
    leaders = bucket_leaders(c, "fluss", "md")
    assert gone not in leaders.values(), leaders

    os.kill(c.pid("coordinator"), signal.SIGSTOP)
    try:
        rtype, got = metadata_at(c, c.tablet_port + others[0], "fluss", "md")
        assert rtype == 0, got
        cached = {}
        for tm in got.get(3, []):
            for bm in decode(tm).get(5, []):
                f = decode(bm)
                cached[as_int32(f[1][0])] = as_int32(f[2][0])
        assert cached == leaders
    finally:
        os.kill(c.pid("coordinator"), signal.SIGCONT)
    rtype, err = metadata_at(c, c.tablet_port + others[0], "fluss", "no_such_table")
    assert rtype != 0 and err[0] == 7, err  # TABLE_NOT_EXIST, from the coordinator
