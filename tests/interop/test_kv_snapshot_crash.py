"""KV snapshots under kill -9 (FLUSS_SERVER=ours only: the tests own the
process). Snapshots every 100 ms while a writer streams upserts; the server
is killed at arbitrary moments, snapshot uploads included. After each
restart: every snapshot the server reports reads whole (its files are all
there with their sizes), directories a crash left half-written are never
reported, and the newest snapshot plus the changelog after it rebuilds the
acknowledged state (the kv directories deleted before the last restart)."""

import asyncio
import json
import random
import shutil
from pathlib import Path

import fluss
import pyarrow as pa
import pytest

from conftest import REPO, OurServer, connect, unique
from logutil import wait_ready
from rawwire import RESPONSE_SUCCESS, as_int64, decode, f_bytes, f_varint, handshake, table_path_msg

pytestmark = [pytest.mark.ours_only, pytest.mark.restarts]

GET_LATEST_KV_SNAPSHOTS, GET_KV_SNAPSHOT_METADATA = 1023, 1024
SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.int64()),
                    pa.field("s", pa.string())])
BUCKETS, KEYS = 2, 300


def reported_snapshots(srv, db, table_id):
    """{bucket: (snapshot id, log offset, [(path, local name)])} as the server answers."""
    host, port = srv.bootstrap.split(":")
    out = {}
    with handshake(host, int(port)) as rc:
        rtype, resp = rc.call(GET_LATEST_KV_SNAPSHOTS, f_bytes(1, table_path_msg(db, "pk")))
        assert rtype == RESPONSE_SUCCESS
        for raw in decode(resp).get(3, []):
            b = decode(raw)
            if 2 not in b:
                continue
            bucket, sid = b[1][0], b[2][0]
            body = f_varint(1, table_id) + f_varint(3, bucket) + f_varint(4, sid)
            rtype, md = rc.call(GET_KV_SNAPSHOT_METADATA, body)
            assert rtype == RESPONSE_SUCCESS, md
            m = decode(md)
            files = [(decode(x)[1][0].decode(), decode(x)[2][0].decode()) for x in m.get(2, [])]
            out[bucket] = (sid, as_int64(m[1][0]), files)
    return out


@pytest.mark.timeout(300)
async def test_kill9_during_snapshots(tmp_path):
    binary = Path(__import__("os").environ.get("FLUSSD", REPO / "build" / "flussd"))
    (tmp_path / "data").mkdir()
    srv = OurServer(binary, tmp_path / "data", tmp_path,
                    ["-Dkv.snapshot.interval=100ms", "-Dkv.snapshot.num-retained=2"])
    srv.start()
    rnd = random.Random(7)
    expect = {}
    db = unique("kvsnapcrash")
    try:
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        await admin.create_database(db)
        path = fluss.TablePath(db, "pk")
        await admin.create_table(path, fluss.TableDescriptor(
            fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=BUCKETS))
        await wait_ready(admin, path, BUCKETS)
        table_id = (await admin.get_table_info(path)).table_id
        await conn.close()
        for cycle in range(5):
            conn = await connect(srv.bootstrap)
            table = await conn.get_table(path)
            w = table.new_upsert().create_writer()
            for i in range(400):
                k = rnd.randrange(KEYS)
                if rnd.random() < 0.1 and expect.get(k) is not None:
                    w.delete({"id": k})
                    expect[k] = None
                else:
                    val = (cycle * 1000 + i, "x" * rnd.randrange(1, 200))
                    w.upsert({"id": k, "v": val[0], "s": val[1]})
                    expect[k] = val
            await w.flush()  # acknowledged from here on
            # more writes in flight, snapshots being taken, then the crash
            for i in range(200):
                w.upsert({"id": KEYS + i, "v": -1, "s": "unacked"})
            await asyncio.sleep(rnd.uniform(0.05, 0.4))
            assert srv.kill9() == -9
            await conn.close()
            srv.start()
            await asyncio.sleep(0.3)
            # what the server reports is whole
            for bucket, (sid, offset, files) in reported_snapshots(srv, db, table_id).items():
                assert files, (bucket, sid)
                for p, local in files:
                    assert Path(p).is_file(), (bucket, sid, p)
                meta = json.loads(next(Path(p) for p, l in files if l == "CURRENT").parent
                                  .joinpath("_METADATA").read_text())
                for f in meta["files"]:
                    full = Path(p).parent.parent / f["path"]
                    assert full.stat().st_size == f["size"], (full, f)
        # the newest snapshots + the changelog rebuild the acknowledged state
        srv.stop()
        for d in (srv.data_dir / "tablet-server-0" / db).glob("pk-*/kv-*"):
            shutil.rmtree(d)
        srv.start()
        conn = await connect(srv.bootstrap)
        table = await conn.get_table(path)
        got = {}
        for b in range(BUCKETS):
            sc = table.new_scan().limit(100000).create_bucket_batch_scanner(
                fluss.TableBucket(table_id, b))
            for r in (await sc.to_arrow()).to_pylist():
                got[r["id"]] = (r["v"], r["s"])
        for k, v in expect.items():
            assert got.get(k) == v, (k, got.get(k), v)
        # keys written after the last acknowledgement may or may not be there
        assert set(got) - set(expect) <= set(range(KEYS, KEYS + 200))
        err = Path(srv.err_path).read_text()
        assert "restored from snapshot" in err, err[-3000:]
        await conn.close()
    finally:
        srv.stop()
