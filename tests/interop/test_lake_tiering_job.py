"""Fluss 0.9.1's own Flink tiering job against flussd (`lake.tiering.mode:
external`, ours): the official job (fluss-flink 1.20's LakeTieringJobBuilder
with the fluss-lake-iceberg plugin, tests/flink/tiering-job) takes flussd's
lake tables through LAKE_TIERING_HEARTBEAT, reads their logs, commits
Iceberg snapshots itself and reports them with PREPARE_ and
COMMIT_LAKE_TABLE_SNAPSHOT — and flussd's lake reads the same as when it
tiers by itself:

* pyiceberg sees every row once per round, each (bucket, offset) once and
  contiguous from 0, over two rounds (the second starts at the offsets the
  first committed, which the job learns from GET_LAKE_SNAPSHOT);
* the snapshot is the job's (commit user __fluss_lake_tiering, its
  `fluss-offsets` the file PREPARE wrote), and GET_LAKE_SNAPSHOT
  (pyfluss) answers its id and every bucket's offset;
* libfluss's lake scanner (`fluss scan --lake-only`) reads the Parquet
  files Iceberg's Java writer made: the same rows (a differential check of
  our reader against another writer), and the union read equals the log.
* A primary-key table: the job's first round (inserts) is read by
  pyiceberg; its next round writes Iceberg *equality* deletes (as 0.9.1's
  job does), which duckdb applies and libfluss's lake scanner applies too
  (as position deletes of the rows they name): `scan --lake-only` is the
  table as duckdb reads it, and the union read equals the lookups after
  more changes. (pyiceberg cannot read equality deletes.)
"""

import asyncio
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import fluss
from conftest import IS_OURS, REPO, connect, unique
from lakeutil import lake_args
from logutil import wait_ready
from test_cli_pk import cli, ok
from test_lake_tiering import SCHEMA, check_exactly_once, rows, write

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = [pytest.mark.skipif(not IS_OURS, reason="starts its own flussd"),
              pytest.mark.skipif(not shutil.which("java") or not shutil.which("mvn"),
                                 reason="needs Java and Maven"),
              pytest.mark.timeout(600)]

async def wait_lake(wh, db, name, n, proc, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the tiering job exited"
        try:
            tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / name))
            snap = tbl.current_snapshot()
            if snap and int(snap.summary["total-records"]) >= n:
                return tbl
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.5)
    raise AssertionError(f"the lake has not {n} rows after {timeout} s")


def cli_ids(srv, db, name, *args):
    out = ok(cli(srv, "scan", f"{db}.{name}", "--format", "json", *args))
    return sorted(json.loads(ln)["id"] for ln in out.splitlines() if ln.startswith("{"))


async def external_lake_table(start_server, tmp_path, prefix, name, schema, buckets, **kw):
    """A flussd with lake.tiering.mode external and a new lake table
    db.name (freshness 1 s); -> (srv, conn, db, path, warehouse)."""
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "lake.tiering.mode=external")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique(prefix)
    await admin.create_database(db)
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, **kw), bucket_count=buckets,
        properties={"table.datalake.enabled": "true", "table.datalake.freshness": "1s"}))
    await wait_ready(admin, path, buckets)
    return srv, conn, db, path, wh


def start_job(srv, wh, tmp_path):
    """The official tiering job against srv; -> (process, its log file)."""
    log = open(tmp_path / "tiering-job.log", "w")
    proc = subprocess.Popen([str(REPO / "tests" / "flink" / "tiering-job"), srv.bootstrap,
                             str(wh), "400"], stdin=subprocess.PIPE, stdout=log,
                            stderr=subprocess.STDOUT, env=dict(os.environ))
    return proc, log


def stop_job(proc, log):
    proc.stdin.close()
    try:
        proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


async def test_official_tiering_job(start_server, tmp_path):
    srv, conn, db, path, wh = await external_lake_table(start_server, tmp_path, "job", "events",
                                                        SCHEMA, 3)
    admin = conn.get_admin()
    await write(conn, path, rows(0, 200))
    proc, log = start_job(srv, wh, tmp_path)
    try:
        tbl = await wait_lake(wh, db, "events", 200, proc)
        check_exactly_once(tbl.scan().to_arrow(), range(200))
        head = tbl.current_snapshot()
        assert head.summary["commit-user"] == "__fluss_lake_tiering"
        offsets_file = head.summary["fluss-offsets"]
        assert offsets_file.startswith(f"file://{wh / db / 'events' / 'metadata'}/prepared-")
        doc = json.loads(Path(offsets_file[len("file://"):]).read_text())
        table_id = (await admin.get_table_info(path)).table_id
        assert doc["table_id"] == table_id
        assert sum(o for o in doc["bucket_offsets"] if o > 0) == 200
        # a second round starts where the first committed
        await write(conn, path, rows(200, 320))
        tbl = await wait_lake(wh, db, "events", 320, proc)
        got = tbl.scan().to_arrow()
        check_exactly_once(got, range(320))
        head = tbl.current_snapshot()
        snap = await admin.get_latest_lake_snapshot(path)
        assert snap.snapshot_id == head.snapshot_id
        latest = await admin.list_offsets(path, [0, 1, 2], fluss.OffsetSpec.latest())
        # every bucket with rows (one the writer never chose has no lake offset)
        assert {tb.bucket_id: o for tb, o in snap.table_buckets_offset.items()} == \
            {b: latest[b] for b in range(3) if latest[b] > 0}
        # libfluss reads the Parquet files Iceberg's Java writer made
        assert cli_ids(srv, db, "events", "--lake-only") == list(range(320))
        await write(conn, path, rows(320, 350))
        assert cli_ids(srv, db, "events") == list(range(350))
    finally:
        stop_job(proc, log)
    await conn.close()
    assert "[tiering] running" in (tmp_path / "tiering-job.log").read_text()


async def test_official_tiering_job_pk_table(start_server, tmp_path):
    import pyarrow as pa

    from lakeutil import duckdb_scan
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string())])
    srv, conn, db, path, wh = await external_lake_table(start_server, tmp_path, "jobpk", "kv",
                                                        schema, 2, primary_keys=["id"])

    write_kv = upserter(path)

    async def upsert(items, deletes=()):
        await write_kv(conn, items, deletes)

    await upsert([(i, f"n{i}") for i in range(100)])
    proc, log = start_job(srv, wh, tmp_path)
    try:
        tbl = await wait_lake(wh, db, "kv", 100, proc)
        assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(100))
        first = tbl.current_snapshot().snapshot_id
        await upsert([(i, f"u{i}") for i in range(0, 100, 3)], deletes=range(1, 100, 10))
        want = {i: (f"u{i}" if i % 3 == 0 else f"n{i}") for i in range(100) if i % 10 != 1}
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the tiering job exited"
            tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "kv"))
            if tbl.current_snapshot().snapshot_id != first:
                got = {r["id"]: r["name"]
                       for r in duckdb_scan(str(wh / db / "kv"), "id, name").to_pylist()}
                if got == want:
                    break
            assert time.monotonic() < deadline, "the job's second round is not in the lake"
            await asyncio.sleep(0.5)
        assert cli_rows(srv, db, "kv", "--lake-only") == want
        # changes after the lake: the union read merges them by key
        await upsert([(i, f"w{i}") for i in range(0, 120, 7)], deletes=range(2, 100, 13))
        want.update({i: f"w{i}" for i in range(0, 120, 7)})
        for i in range(2, 100, 13):
            want.pop(i, None)
        assert cli_rows(srv, db, "kv") == want
        lookuper = (await conn.get_table(path)).new_lookup().create_lookuper()
        found = {}
        for i in range(120):
            r = await lookuper.lookup({"id": i})
            if r is not None:
                found[i] = r["name"]
        assert found == want
    finally:
        stop_job(proc, log)
    await conn.close()
    # flussd takes the lake over: its own tiering rebuilds each bucket's
    # key index from the job's files, their equality deletes applied
    await flussd_takes_over(srv, db, wh, path, upserter(path), want)


def upserter(path):
    """upsert(conn, items, deletes) on the table at path."""
    async def upsert(conn, items, deletes=()):
        w = (await conn.get_table(path)).new_upsert().create_writer()
        for i, name in items:
            w.upsert({"id": i, "name": name})
        for i in deletes:
            w.delete({"id": i})
        await w.flush()
    return upsert


async def flussd_takes_over(srv, db, wh, path, upsert, want):
    """Restarts srv with its own tiering (no lake.tiering.mode external)
    and checks two of its rounds on the lake the job left (equality
    deletes in it): duckdb, the lake-only scan and the union read equal
    the lookups, each key once."""
    from lakeutil import duckdb_scan
    args = srv.extra_args
    i = args.index("lake.tiering.mode=external")
    srv.extra_args = args[:i - 1] + args[i + 1:]
    srv.restart()
    conn = await connect(srv.bootstrap)
    try:
        # keys the job deleted come back, keys it updated change again
        await upsert(conn, [(i, f"t{i}") for i in range(1, 130, 5)], deletes=range(0, 100, 9))
        want = dict(want)
        want.update({i: f"t{i}" for i in range(1, 130, 5)})
        for i in range(0, 100, 9):
            want.pop(i, None)
        tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "kv"))
        last = tbl.current_snapshot().snapshot_id  # the job's (it is stopped)
        for round_ in range(2):
            ok(cli(srv, "lake", "tier", f"{db}.kv", "--now"))
            tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "kv"))
            assert tbl.current_snapshot().snapshot_id != last, "flussd committed no round"
            last = tbl.current_snapshot().snapshot_id
            got = duckdb_scan(str(wh / db / "kv"), "id, name").to_pylist()
            assert len(got) == len(want), "a key is in the lake twice"
            assert {r["id"]: r["name"] for r in got} == want
            assert cli_rows(srv, db, "kv", "--lake-only") == want
            await upsert(conn, [(i, f"r{round_}-{i}") for i in range(0, 140, 11)],
                         deletes=range(3, 100, 17))
            want.update({i: f"r{round_}-{i}" for i in range(0, 140, 11)})
            for i in range(3, 100, 17):
                want.pop(i, None)
        assert cli_rows(srv, db, "kv") == want
        lookuper = (await conn.get_table(path)).new_lookup().create_lookuper()
        for i in range(140):
            r = await lookuper.lookup({"id": i})
            assert (r["name"] if r is not None else None) == want.get(i), i
    finally:
        await conn.close()


def cli_rows(srv, db, name, *args):
    """{id: name} of `fluss scan` (JSON lines), each id once."""
    out = ok(cli(srv, "scan", f"{db}.{name}", "--format", "json", *args))
    rows = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    got = {r["id"]: r["name"] for r in rows}
    assert len(got) == len(rows), "a key printed twice"
    return got


async def test_official_tiering_job_nested_columns(start_server, tmp_path):
    """Iceberg's Java writer, driven by the official job, writes the list,
    map and struct columns of the lake table flussd created (its nested
    ids): pyiceberg reads them as written, and libfluss's lake scanner
    assembles the Java writer's levels into the same rows the log has."""
    from test_lake_nested import SCHEMA as NESTED, norm, table_of, value
    srv, conn, db, path, wh = await external_lake_table(start_server, tmp_path, "jobnest",
                                                        "nested", NESTED, 2)
    await write(conn, path, table_of(0, 160))
    proc, log = start_job(srv, wh, tmp_path)
    try:
        tbl = await wait_lake(wh, db, "nested", 160, proc)
        assert norm(tbl.scan().to_arrow().to_pylist()) == norm(value(i) for i in range(160))
        out = ok(cli(srv, "scan", f"{db}.nested", "--format", "json", "--lake-only"))
        lake = sorted(ln for ln in out.splitlines() if ln.startswith("{"))
        out = ok(cli(srv, "scan", f"{db}.nested", "--format", "json", "--log-only"))
        assert lake == sorted(ln for ln in out.splitlines() if ln.startswith("{"))
        assert len(lake) == 160
    finally:
        stop_job(proc, log)
    await conn.close()
