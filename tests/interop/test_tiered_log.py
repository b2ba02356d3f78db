"""Tiered log storage end to end: rolled segments copied to remote.data.dir
every remote.log.task-interval-duration, local segments beyond
table.log.tiered.local-segments deleted once their copy is committed, and
the official clients reading everything from the earliest offset — the
server answers offsets below the local log with PbRemoteLogFetchInfo and
the clients download those segments themselves.

With FLUSS_SERVER=ours each test starts a flussd of its own with 4 KB
segments, a 1 KB index interval and a 200 ms tiering interval. Against the
reference, the client-visible tests run on a reference cluster of this
module's own (tests/reference/start in a temporary state dir, free ports,
the jars the session cluster was started from) with 4 KB segments, a 1 KB
index interval and a 1 s tiering interval: 0.9.1 has no per-table segment
size, its defaults (1 GB segments, 1 min) never tier within a test, and
the session cluster cannot take 4 KB segments for the whole suite (libfluss
reads no remote segments, so its scans of larger tables would stall there).
"""

import asyncio
import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, IS_REFERENCE, REPO, ReferenceServer, connect, free_ports, unique
from logutil import (OFFSET_TIMESTAMP, create_log_table, fetch_log, list_offsets_raw,
                     parse_batches, raw_tablet, read_all, wait_ready)
from rawwire import as_int32, as_int64, decode

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
PAD = 40
TIERED_ARGS = ["-D", "log.segment.file-size=4kb", "-D", "log.index.interval-size=1kb",
               "-D", "remote.log.task-interval-duration=200 ms"]
WAIT_S = 30 if IS_REFERENCE else 20


@pytest.fixture
def start_server(start_server):
    """conftest's, with small segments and a 200 ms tiering interval."""
    return lambda *args: start_server(*TIERED_ARGS, *args)


REFERENCE_TIERED_CONFIG = ("log.segment.file-size: 4kb\nlog.index.interval-size: 1kb\n"
                           "remote.log.task-interval-duration: 1s")
REFERENCE_START_S = 90


@pytest.fixture(scope="module")
def tiered_reference(tmp_path_factory):
    """A reference cluster of this module's own with the tiering settings,
    stopped (by the PIDs its start recorded) after the module."""
    run = tmp_path_factory.mktemp("reference-tiered")
    coord, tablet, coord_int, tablet_int, zk = free_ports(5)
    env = {**os.environ, "REF_RUN_DIR": str(run), "REF_OFFLINE": "1",
           "REF_COORD_PORT": str(coord), "REF_TABLET_PORT": str(tablet),
           "REF_COORD_INTERNAL_PORT": str(coord_int), "REF_TABLET_INTERNAL_PORT": str(tablet_int),
           "REF_ZK_PORT": str(zk), "REF_START_TIMEOUT": str(REFERENCE_START_S - 10),
           "REF_EXTRA_CONFIG": REFERENCE_TIERED_CONFIG}
    ref = REPO / "tests" / "reference"
    try:
        started = subprocess.run([str(ref / "start")], env=env, capture_output=True, text=True,
                                 timeout=REFERENCE_START_S)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        yield ReferenceServer(f"127.0.0.1:{coord}")
    finally:
        subprocess.run([str(ref / "stop")], env=env, capture_output=True, timeout=120)


@pytest.fixture
def tiered_server(request):
    """Ours: a fresh flussd with small segments and a short interval. The
    reference: the module's own cluster (tiered_reference)."""
    if IS_REFERENCE:
        yield request.getfixturevalue("tiered_reference")
        return
    start = request.getfixturevalue("start_server")
    yield start()


def rows(lo, hi):
    return pa.RecordBatch.from_pylist(
        [{"id": i, "name": f"n{i}" + "x" * PAD} for i in range(lo, hi)], schema=SCHEMA)


async def write_rows(conn, path, lo, hi, per_batch=20):
    """One batch (one request) per `per_batch` rows, each acknowledged."""
    writer = (await conn.get_table(path)).new_append().create_writer()
    for i in range(lo, hi, per_batch):
        writer.write_arrow_batch(rows(i, min(hi, i + per_batch)))
        await writer.flush()


def remote_info(raw: bytes) -> dict:
    f = decode(raw)
    segs = []
    for s in f.get(3, []):
        g = decode(s)
        segs.append(dict(id=g[1][0].decode(), start=as_int64(g[2][0]), end=as_int64(g[3][0]),
                         size=as_int32(g[4][0]),
                         max_timestamp=as_int64(g[5][0]) if 5 in g else None))
    return dict(dir=f[1][0].decode(), partition=f[2][0].decode() if 2 in f else None,
                segments=segs, first_start_pos=as_int32(f[4][0]) if 4 in f else None)


def fetch_bucket(rc, table_id, offset, bucket=0):
    _, fetched = fetch_log(rc, table_id, {bucket: offset})
    (b,) = [x for x in fetched if x["bucket"] == bucket]
    assert b["error_code"] == 0, b
    return b


def local_logs(srv, db, table, table_id, bucket=0):
    d = srv.data_dir / "tablet-server-0" / db / f"{table}-{table_id}" / f"log-{bucket}"
    return sorted(p.name for p in d.glob("*.log"))


def remote_tablet_dir(srv, db, table, table_id, bucket=0) -> Path:
    return (srv.data_dir / "remote" / "log" / db / f"{table}-{table_id}" / str(bucket)).resolve()


async def wait_tiered(admin, rc, srv, path, info, keep=2, min_remote_end=1):
    """Until offset 0 is answered from remote storage with at least
    min_remote_end offsets there, and (ours) `keep` local segments are left."""
    deadline = time.monotonic() + WAIT_S
    while True:
        b = fetch_bucket(rc, info.table_id, 0)
        done = b["remote"] is not None and \
            remote_info(b["remote"])["segments"][-1]["end"] >= min_remote_end
        if done and IS_OURS:
            done = len(local_logs(srv, path.database_name, path.table_name, info.table_id)) == keep
        if done:
            return remote_info(b["remote"])
        assert time.monotonic() < deadline, f"not tiered within {WAIT_S}s: {b}"
        await asyncio.sleep(0.1)


async def read_exact(conn, admin, path, lo, hi):
    got = await read_all(conn, admin, path)
    ids = got.column("id").to_pylist()
    assert sorted(ids) == list(range(lo, hi)), (len(ids), lo, hi)
    names = dict(zip(ids, got.column("name").to_pylist()))
    assert all(names[i] == f"n{i}" + "x" * PAD for i in range(lo, hi))


@pytest.mark.timeout(60 + REFERENCE_START_S)
async def test_tiered_segments_read_back(tiered_server):
    srv = tiered_server
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tier")
    await admin.create_database(db)
    rc = None
    try:
        p2 = await create_log_table(admin, db, "t2", SCHEMA, bucket_count=1)
        p3 = await create_log_table(admin, db, "t3", SCHEMA, bucket_count=1,
                                    properties={"table.log.tiered.local-segments": "3"})
        for p in (p2, p3):
            await wait_ready(admin, p)
            await write_rows(conn, p, 0, 600)
        rc = await raw_tablet(admin)
        for p, keep in ((p2, 2), (p3, 3)):
            info = await admin.get_table_info(p)
            ri = await wait_tiered(admin, rc, srv, p, info, keep=keep)
            segs = ri["segments"]
            # the remote log starts at 0 and has no holes; its end is where
            # the local log begins (ours: exactly keep segments left)
            assert segs[0]["start"] == 0 and ri["first_start_pos"] == 0
            assert all(a["end"] == b["start"] for a, b in zip(segs, segs[1:]))
            assert all(s["size"] > 0 and s["max_timestamp"] > 0 for s in segs)
            assert len({s["id"] for s in segs}) == len(segs)
            assert ri["partition"] is None
            assert (await admin.list_offsets(p, [0], fluss.OffsetSpec.earliest()))[0] == 0
            assert (await admin.list_offsets(p, [0], fluss.OffsetSpec.latest()))[0] == 600
            b0 = fetch_bucket(rc, info.table_id, 0)
            assert b0["records"] is None and b0["high_watermark"] == 600
            # a fetch inside a remote segment starts at a batch boundary at
            # or before the batch holding its offset (index interval 1 KB)
            seg = segs[1] if len(segs) > 1 else segs[0]
            target = seg["end"] - 1
            mid = remote_info(fetch_bucket(rc, info.table_id, target)["remote"])
            assert mid["segments"][0] == seg
            pos = mid["first_start_pos"]
            assert pos > 0
            if IS_OURS:
                tdir = remote_tablet_dir(srv, db, p.table_name, info.table_id)
                assert ri["dir"] == str(tdir)
                logs = local_logs(srv, db, p.table_name, info.table_id)
                # the active segment starts where the remote log ends; the
                # rolled ones kept locally are the newest remote ones
                assert int(logs[-1][:20]) == segs[-1]["end"], (logs, segs[-1])
                assert [int(x[:20]) for x in logs[:-1]] == [s["start"] for s in segs[1 - keep:]]
                check_layout(tdir, db, p.table_name, info.table_id, segs)
                data = (tdir / seg["id"] / f"{seg['start']:020d}.log").read_bytes()
                batches = parse_batches(data[pos:])
                assert batches[0]["base_offset"] <= target
                assert any(b["base_offset"] <= target <= b["base_offset"] + b["last_offset_delta"]
                           for b in batches)
            # LIST_OFFSETS by timestamp: the oldest records are remote
            _, lo = list_offsets_raw(rc, info.table_id, [0], OFFSET_TIMESTAMP, timestamp=0)
            assert lo[0]["offset"] == 0, lo
            await read_exact(conn, admin, p, 0, 600)
            # a projection: the server cannot prune remote segments, the
            # client projects them itself
            table = await conn.get_table(p)
            got = await read_all(conn, admin, p, table.new_scan().project([1]))
            assert got.column_names == ["name"]
            assert sorted(got.column("name").to_pylist()) == \
                sorted(f"n{i}" + "x" * PAD for i in range(600))
    finally:
        if rc:
            rc.close()
        await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
        await conn.close()


def check_layout(tdir: Path, db, table, table_id, segs):
    """The reference's remote layout: {uuid}/{base}.log|.index|.timeindex per
    segment, metadata/{uuid}.manifest naming them, the handle last."""
    meta = tdir / "metadata"
    manifests = list(meta.glob("*.manifest"))
    assert len(manifests) == 1 and uuid.UUID(manifests[0].stem)
    handle = json.loads((meta / "manifest-handle").read_text())
    assert handle["version"] == 1 and handle["remote_log_manifest_path"] == str(manifests[0])
    m = json.loads(manifests[0].read_text())
    assert list(m)[:4] == ["version", "database", "table", "table_id"]
    assert (m["database"], m["table"], m["table_id"], m["bucket_id"]) == (db, table, table_id, 0)
    assert handle["remote_log_end_offset"] == m["remote_log_segments"][-1]["end_offset"]
    assert [(s["segment_id"], s["start_offset"], s["end_offset"], s["size_in_bytes"])
            for s in m["remote_log_segments"]] == \
        [(s["id"], s["start"], s["end"], s["size"]) for s in segs]
    for s in segs:
        d = tdir / s["id"]
        base = f"{s['start']:020d}"
        assert (d / f"{base}.log").stat().st_size == s["size"]
        assert (d / f"{base}.index").stat().st_size % 8 == 0
        assert (d / f"{base}.timeindex").stat().st_size % 12 == 0
    # nothing else: no segment directory a manifest does not name
    assert sorted(p.name for p in tdir.iterdir() if p.name != "metadata") == \
        sorted(s["id"] for s in segs)


async def test_tiered_across_restart_and_kill(start_server):
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierrs")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=1)
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    await write_rows(conn, path, 0, 400)
    rc = await raw_tablet(admin)
    first = await wait_tiered(admin, rc, srv, path, info)
    rc.close()
    await conn.close()

    srv.restart()  # SIGTERM: the remote manifest is reloaded before any read
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    rc = await raw_tablet(admin)
    assert remote_info(fetch_bucket(rc, info.table_id, 0)["remote"]) == first
    assert (await admin.list_offsets(path, [0], fluss.OffsetSpec.earliest()))[0] == 0
    await read_exact(conn, admin, path, 0, 400)
    await write_rows(conn, path, 400, 800)
    second = await wait_tiered(admin, rc, srv, path, info,
                               min_remote_end=first["segments"][-1]["end"] + 1)
    assert second["segments"][:len(first["segments"])] == first["segments"]
    rc.close()
    await conn.close()

    srv.kill9()
    # what a crash between copy and commit leaves: a segment directory and a
    # manifest nobody committed; the leader's first tiering round after the
    # restart removes them
    tdir = remote_tablet_dir(srv, db, "t", info.table_id)
    orphan = tdir / str(uuid.uuid4())
    orphan.mkdir()
    (orphan / "00000000000000000000.log").write_bytes(b"half a copy")
    stray = tdir / "metadata" / f"{uuid.uuid4()}.manifest"
    stray.write_text("{}")
    srv.start()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    await read_exact(conn, admin, path, 0, 800)
    deadline = time.monotonic() + 10
    while (orphan.exists() or stray.exists()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not orphan.exists() and not stray.exists()
    # recovery after kill -9 may roll the active segment, so the leader can
    # tier one more segment after the restart: the layout is checked once
    # tiering is at rest again, and it keeps every segment tiered before
    rc = await raw_tablet(admin)
    third = await wait_tiered(admin, rc, srv, path, info,
                              min_remote_end=second["segments"][-1]["end"])
    rc.close()
    assert third["segments"][:len(second["segments"])] == second["segments"]
    check_layout(tdir, db, "t", info.table_id, third["segments"])
    await admin.drop_table(path, ignore_if_not_exists=False)
    deadline = time.monotonic() + 10
    while tdir.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not tdir.exists(), "the dropped table's remote log is still there"
    await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    await conn.close()


async def test_tiered_ttl_expires_remote_segments(start_server):
    """With tiering, table.log.ttl applies to remote segments: once expired
    there, the earliest offset moves; the local segments stay."""
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierttl")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=1,
                                  properties={"table.log.ttl": "2 s"})
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    await write_rows(conn, path, 0, 400)
    rc = await raw_tablet(admin)
    await wait_tiered(admin, rc, srv, path, info)
    # each remote segment expires on the timer pass after its own last
    # write is 2 s old (one pass may take the first and not the second)
    deadline = time.monotonic() + WAIT_S
    while True:
        earliest = (await admin.list_offsets(path, [0], fluss.OffsetSpec.earliest()))[0]
        logs = local_logs(srv, db, "t", info.table_id)
        if 0 < earliest == int(logs[0][:20]) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert 0 < earliest == int(logs[0][:20]), (earliest, logs)  # the remote ones before it expired
    assert len(logs) == 2
    assert fetch_bucket(rc, info.table_id, earliest)["records"]  # local again
    await read_exact(conn, admin, path, earliest, 400)
    rc.close()
    await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    await conn.close()


async def test_tiered_partition(start_server):
    """A partition's remote log lives under {partition}-p{id} and its
    manifest names the partition; pyfluss reads it whole."""
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierpart")
    await admin.create_database(db)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()),
                        pa.field("dt", pa.string())])
    path = fluss.TablePath(db, "p")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(schema),
                                                         partition_keys=["dt"], bucket_count=1))
    await admin.create_partition(path, {"dt": "2026-01-01"})
    (part,) = await admin.list_partition_infos(path)
    info = await admin.get_table_info(path)
    writer = (await conn.get_table(path)).new_append().create_writer()
    for i in range(0, 600, 20):
        writer.write_arrow_batch(pa.RecordBatch.from_pylist(
            [{"id": k, "name": f"n{k}" + "x" * PAD, "dt": "2026-01-01"} for k in range(i, i + 20)],
            schema=schema))
        await writer.flush()
    tdir = (srv.data_dir / "remote" / "log" / db / f"p-{info.table_id}" /
            f"2026-01-01-p{part.partition_id}" / "0")
    ldir = (srv.data_dir / "tablet-server-0" / db / f"p-{info.table_id}" /
            f"2026-01-01-p{part.partition_id}" / "log-0")
    deadline = time.monotonic() + WAIT_S
    while not ((tdir / "metadata" / "manifest-handle").exists() and
               len(list(ldir.glob("*.log"))) == 2):
        assert time.monotonic() < deadline, "the partition was not tiered"
        await asyncio.sleep(0.1)
    (manifest,) = (tdir / "metadata").glob("*.manifest")
    m = json.loads(manifest.read_text())
    assert (m["partition_name"], m["partition_id"]) == ("2026-01-01", part.partition_id)
    table = await conn.get_table(path)
    sc = await table.new_scan().create_record_batch_log_scanner()
    sc.subscribe_partition_buckets({(part.partition_id, 0): fluss.EARLIEST_OFFSET})
    ids = []
    deadline = time.monotonic() + 30
    while len(ids) < 600 and time.monotonic() < deadline:
        ids.extend((await sc.poll_arrow(250)).column("id").to_pylist())
    assert sorted(ids) == list(range(600))
    await admin.drop_partition(path, {"dt": "2026-01-01"})
    deadline = time.monotonic() + 10
    while tdir.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not tdir.exists(), "the dropped partition's remote log is still there"
    await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    await conn.close()


async def test_tiered_primary_key_changelog_stays_until_snapshot(start_server):
    """A primary-key table's changelog is copied too, but its local segments
    stay until a KV snapshot covers them (recovery replays them)."""
    srv = start_server()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierpk")
    await admin.create_database(db)
    path = fluss.TablePath(db, "pk")
    schema = fluss.Schema(SCHEMA, primary_keys=["id"])
    await admin.create_table(path, fluss.TableDescriptor(schema, bucket_count=1))
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    writer = (await conn.get_table(path)).new_upsert().create_writer()
    for i in range(0, 400, 20):
        for k in range(i, i + 20):
            writer.upsert({"id": k, "name": f"n{k}" + "x" * PAD})
        await writer.flush()
    tdir = remote_tablet_dir(srv, db, "pk", info.table_id)
    deadline = time.monotonic() + WAIT_S
    while not (tdir / "metadata" / "manifest-handle").exists():
        assert time.monotonic() < deadline, "the changelog was not tiered"
        await asyncio.sleep(0.1)
    time.sleep(0.5)
    logs = local_logs(srv, db, "pk", info.table_id)
    assert logs[0] == f"{0:020d}.log" and len(logs) > 2, logs
    await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    await conn.close()


@pytest.mark.timeout(120 + REFERENCE_START_S)
async def test_tiered_java_client_reads_remote_segments(tiered_server):
    srv = tiered_server
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierjava")
    await admin.create_database(db)
    rc = None
    try:
        path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=1)
        await wait_ready(admin, path)
        info = await admin.get_table_info(path)
        await write_rows(conn, path, 0, 600)
        rc = await raw_tablet(admin)
        await wait_tiered(admin, rc, srv, path, info)
        proc = subprocess.run([str(REPO / "tests" / "java" / "run"), srv.bootstrap,
                               "JavaTieredLog", db, "t", "600", "1", str(PAD)],
                              capture_output=True, text=True, timeout=600)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-6000:]
        assert "JAVA TIERED LOG OK: 600 rows" in out, out[-3000:]
    finally:
        if rc:
            rc.close()
        await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
        await conn.close()


@pytest.mark.skipif(not IS_OURS, reason="flussd's own lake tiering (the reference needs a Flink job)")
async def test_lake_turned_on_after_tiering_reads_remote_segments(start_server, tmp_path):
    """A table whose log went to remote storage before its lake was turned
    on (ALTER): the first lake rounds read the remote segments the local
    log no longer has, so the lake holds every row from offset 0 (it used
    to refuse the range as remote-only, for ever)."""
    from lakeutil import lake_args
    from test_alter_table import SET, alter
    from test_lake_tiering import check_exactly_once
    from pyiceberg.table import StaticTable

    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh))
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("tierlake")
    await admin.create_database(db)
    path = fluss.TablePath(db, "t")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=1))
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    await write_rows(conn, path, 0, 400)
    rc = await raw_tablet(admin)
    tiered = await wait_tiered(admin, rc, srv, path, info)
    rc.close()
    assert tiered["segments"][0]["start"] == 0 and len(tiered["segments"]) >= 2
    assert alter(srv, db, "t", configs=[("table.datalake.enabled", "true", SET),
                                        ("table.datalake.freshness", "1s", SET)]) == (0, None)
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            tbl = StaticTable.from_metadata(str(wh / db / "t"))
            snap = tbl.current_snapshot()
            if snap and int(snap.summary["total-records"]) >= 400:
                break
        except FileNotFoundError:
            pass
        assert time.monotonic() < deadline, f"the lake has no 400 rows; stderr:\n{srv.stderr_tail()}"
        await asyncio.sleep(0.2)
    got = tbl.scan().to_arrow()
    check_exactly_once(got, range(400))
    names = dict(zip(got.column("id").to_pylist(), got.column("name").to_pylist()))
    assert all(names[i] == f"n{i}" + "x" * PAD for i in range(400))
    await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    await conn.close()
