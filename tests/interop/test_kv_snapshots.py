"""KV snapshots of primary-key tables (FLUSS_SERVER=ours only: each test
starts a flussd of its own with a short kv.snapshot.interval).

* The Java client's snapshot path (tests/java JavaKvSnapshot): latest
  snapshots, their metadata, leases, the snapshot files opened with the
  client's own RocksDB (6.20; we write with 7.8) and the changelog after
  each snapshot's offset: together exactly the rows written. A leased
  snapshot outlives retention (num-retained 1); released, it goes.
* A bucket whose local RocksDB directory is lost starts again from its
  newest snapshot plus the changelog after it: every key looks up right.
* The refusals on the wire: a log table (20), a partition name for a
  table without partitions (37) and none for a partitioned one (36), an
  unknown snapshot (41), a lease on a log table (20); a PK table without
  snapshots answers each bucket with no snapshot id (the Flink source then
  reads the changelog from the start).
"""

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import fluss
import pyarrow as pa
import pytest

from conftest import REPO, OurServer, connect, unique
from logutil import new_pk_table, wait_ready
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, as_int64, decode, decode_error,
                     f_bytes, f_varint, handshake, table_path_msg)

pytestmark = pytest.mark.ours_only

GET_LATEST_KV_SNAPSHOTS, GET_KV_SNAPSHOT_METADATA = 1023, 1024
ACQUIRE_LEASE, RELEASE_LEASE, DROP_LEASE = 1056, 1057, 1058
SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.int64()),
                    pa.field("s", pa.string())])


def binary():
    return Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))


def start_server(tmp_path, *extra):
    (tmp_path / "data").mkdir(exist_ok=True)
    srv = OurServer(binary(), tmp_path / "data", tmp_path,
                    ["-Dkv.snapshot.interval=300ms", "-Dkv.snapshot.num-retained=1", *extra])
    srv.start()
    return srv


def snapshot_metas(data_dir: Path, db: str):
    return sorted((data_dir / "remote" / "kv" / db).glob("*/*/snap-*/_METADATA"))


@pytest.mark.timeout(600)
def test_java_client_reads_our_snapshots(tmp_path):
    srv = start_server(tmp_path)
    try:
        proc = subprocess.run([str(REPO / "tests" / "java" / "run"), srv.bootstrap,
                               "JavaKvSnapshot"], capture_output=True, text=True, timeout=580)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-6000:]
        assert "JAVA KV SNAPSHOT OK" in out, out[-3000:]
        # the leased snapshot was read: rows from it and changes after it
        assert "snapshot rows: 900" in out, out[-3000:]
    finally:
        srv.stop()


@pytest.mark.timeout(300)
async def test_lost_kv_dir_restored_from_snapshot(tmp_path):
    srv = start_server(tmp_path)
    try:
        conn = await connect(srv.bootstrap)
        admin, path, table = await new_pk_table(conn, "kvsnap", "pk", SCHEMA, 2)
        db = path.database_name
        w = table.new_upsert().create_writer()
        expect = {}
        for i in range(400):
            w.upsert({"id": i, "v": i * 3, "s": f"s{i}"})
            expect[i] = (i * 3, f"s{i}")
        await w.flush()
        deadline = time.monotonic() + 30
        while len(snapshot_metas(srv.data_dir, db)) < 2:
            assert time.monotonic() < deadline, "no snapshot of both buckets"
            await asyncio.sleep(0.1)
        # changes after the snapshots: they come from the changelog
        for i in range(0, 400, 4):
            w.upsert({"id": i, "v": -i, "s": "after"})
            expect[i] = (-i, "after")
        for i in range(1, 400, 9):
            w.delete({"id": i})
            expect[i] = None
        await w.flush()
        await conn.close()
        srv.stop()
        kv_dirs = list((srv.data_dir / "tablet-server-0" / db).glob("pk-*/kv-*"))
        assert len(kv_dirs) == 2, kv_dirs
        for d in kv_dirs:
            shutil.rmtree(d)
        srv.start()
        conn = await connect(srv.bootstrap)
        table = await conn.get_table(path)
        info = await conn.get_admin().get_table_info(path)
        # the whole state of each bucket (LIMIT_SCAN reads RocksDB), and
        # point lookups of keys the changelog after the snapshot touched
        got = {}
        for b in range(2):
            sc = table.new_scan().limit(10000).create_bucket_batch_scanner(
                fluss.TableBucket(info.table_id, b))
            for r in (await sc.to_arrow()).to_pylist():
                assert r["id"] not in got
                got[r["id"]] = (r["v"], r["s"])
        assert got == {k: v for k, v in expect.items() if v is not None}
        lk = table.new_lookup().create_lookuper()
        for i in (0, 1, 4, 10, 28, 397, 399):
            r = await lk.lookup({"id": i})
            assert (None if r is None else (r["v"], r["s"])) == expect[i], i
        err = Path(srv.err_path).read_text()
        assert err.count("restored from snapshot") == 2, err[-3000:]
        # and it goes on taking writes
        w = table.new_upsert().create_writer()
        w.upsert({"id": 7, "v": 7777, "s": "again"})
        await w.flush()
        r = await lk.lookup({"id": 7})
        assert (r["v"], r["s"]) == (7777, "again")
        await conn.close()
    finally:
        srv.stop()


def latest(rc, db, table, partition=None):
    body = f_bytes(1, table_path_msg(db, table))
    if partition is not None:
        body += f_bytes(2, partition)
    return rc.call(GET_LATEST_KV_SNAPSHOTS, body)


def expect_error(rtype_resp, code):
    rtype, resp = rtype_resp
    assert rtype == RESPONSE_ERROR, (rtype, resp)
    got, msg = decode_error(resp)
    assert got == code, (got, msg)
    return msg


@pytest.mark.timeout(120)
async def test_snapshot_apis_on_the_wire(tmp_path):
    srv = start_server(tmp_path)
    try:
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        db = unique("kvsnapw")
        await admin.create_database(db)
        await admin.create_table(fluss.TablePath(db, "log"), fluss.TableDescriptor(
            fluss.Schema(SCHEMA), bucket_count=1))
        pk = fluss.TablePath(db, "pk")
        await admin.create_table(pk, fluss.TableDescriptor(
            fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=3))
        part_schema = pa.schema([pa.field("id", pa.int32()), pa.field("day", pa.string())])
        await admin.create_table(fluss.TablePath(db, "parted"), fluss.TableDescriptor(
            fluss.Schema(part_schema, primary_keys=["id", "day"]), partition_keys=["day"],
            bucket_count=1))
        await wait_ready(admin, pk, 3)
        info = await admin.get_table_info(pk)
        host, port = srv.bootstrap.split(":")
        with handshake(host, int(port)) as rc:
            msg = expect_error(latest(rc, db, "log"), 20)
            assert "not a primary key table" in msg
            expect_error(latest(rc, db, "pk", "2024"), 37)
            expect_error(latest(rc, db, "parted"), 36)
            expect_error(latest(rc, db, "parted", "nope"), 36)
            expect_error(latest(rc, db, "missing"), 7)
            # no snapshot yet: every bucket, none with a snapshot id
            rtype, resp = latest(rc, db, "pk")
            assert rtype == RESPONSE_SUCCESS
            f = decode(resp)
            assert as_int64(f[1][0]) == info.table_id
            buckets = [decode(x) for x in f.get(3, [])]
            assert sorted(b[1][0] for b in buckets) == [0, 1, 2]
            assert all(2 not in b and 3 not in b for b in buckets), buckets
            # metadata of a snapshot that does not exist
            body = f_varint(1, info.table_id) + f_varint(3, 0) + f_varint(4, 5)
            expect_error(rc.call(GET_KV_SNAPSHOT_METADATA, body), 41)
            # a lease on a log table
            log_id = (await admin.get_table_info(fluss.TablePath(db, "log"))).table_id
            lease = (f_bytes(1, "l1") + f_varint(2, 60000)
                     + f_bytes(3, f_varint(1, log_id) + f_bytes(2, f_varint(2, 0) + f_varint(3, 0))))
            expect_error(rc.call(ACQUIRE_LEASE, lease), 20)
        # after writes, snapshots appear with the offset they cover
        table = await conn.get_table(pk)
        w = table.new_upsert().create_writer()
        for i in range(60):
            w.upsert({"id": i, "v": i, "s": "x"})
        await w.flush()
        ends = await admin.list_offsets(pk, [0, 1, 2], fluss.OffsetSpec.latest())
        deadline = time.monotonic() + 30
        with handshake(host, int(port)) as rc:
            while True:
                rtype, resp = latest(rc, db, "pk")
                buckets = {decode(x)[1][0]: decode(x) for x in decode(resp).get(3, [])}
                if all(2 in b for b in buckets.values()):
                    break
                assert time.monotonic() < deadline, buckets
                await asyncio.sleep(0.1)
            for b, m in buckets.items():
                assert as_int64(m[3][0]) == ends[b], (b, m, ends)
                body = f_varint(1, info.table_id) + f_varint(3, b) + f_varint(4, m[2][0])
                rtype, resp = rc.call(GET_KV_SNAPSHOT_METADATA, body)
                assert rtype == RESPONSE_SUCCESS, decode_error(resp)
                md = decode(resp)
                assert as_int64(md[1][0]) == ends[b]
                files = [decode(x) for x in md[2]]
                names = {x[2][0].decode() for x in files}
                assert "CURRENT" in names and any(n.startswith("MANIFEST-") for n in names), names
                for x in files:
                    assert Path(x[1][0].decode()).is_file(), x
        # a partition's buckets: the tablet server writes where the
        # coordinator's APIs look ({table}/{partition}-p{id}/{bucket})
        parted = fluss.TablePath(db, "parted")
        await admin.create_partition(parted, {"day": "2024"})
        ptable = await conn.get_table(parted)
        pw = ptable.new_upsert().create_writer()
        for i in range(20):
            pw.upsert({"id": i, "day": "2024"})
        await pw.flush()
        deadline = time.monotonic() + 30
        with handshake(host, int(port)) as rc:
            while True:
                rtype, resp = latest(rc, db, "parted", "2024")
                assert rtype == RESPONSE_SUCCESS, decode_error(resp)
                f = decode(resp)
                b0 = decode(f[3][0])
                if 2 in b0:
                    break
                assert time.monotonic() < deadline, f
                await asyncio.sleep(0.1)
            pid = as_int64(f[2][0])
            ptid = (await admin.get_table_info(parted)).table_id
            body = f_varint(1, ptid) + f_varint(2, pid) + f_varint(3, 0) + f_varint(4, b0[2][0])
            rtype, resp = rc.call(GET_KV_SNAPSHOT_METADATA, body)
            assert rtype == RESPONSE_SUCCESS, decode_error(resp)
            files = [decode(x) for x in decode(resp)[2]]
            assert files and all(f"/2024-p{pid}/0/" in x[1][0].decode() for x in files), files
        await conn.close()
    finally:
        srv.stop()
