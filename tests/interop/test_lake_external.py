"""`lake.tiering.mode: external` (ours): flussd does not tier, and serves
the coordinator RPCs of Fluss 0.9.1's own Flink tiering job, byte for byte
as the job sends them (raw protocol here; the job itself runs in
tests/flink/tiering-job):

* LAKE_TIERING_HEARTBEAT hands out a lake table once its freshness has
  passed, with tiering epoch 1; reports with another epoch are fenced
  (50), of an unknown table refused (7), with another coordinator epoch
  refused (23); a failed table comes back with epoch 2; a finished one
  waits a freshness again.
* PREPARE_LAKE_TABLE_SNAPSHOT writes Fluss's TableBucketOffsets JSON of
  the round's buckets and answers its path.
* COMMIT_LAKE_TABLE_SNAPSHOT of a snapshot the Iceberg table lacks: 53.
* flussd's own rounds are off: `fluss lake tier --now` says why.
* In the internal (default) mode the heartbeat hands out nothing and
  PREPARE refuses; API_VERSIONS lists the three keys in both modes.
"""

import asyncio
import json
import time
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect, unique
from lakeutil import lake_args
from logutil import wait_ready
from rawwire import (RESPONSE_SUCCESS, RawConnection, as_int32, as_int64, decode,
                     f_bytes, f_varint, table_path_msg)
from test_cli_pk import cli

pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

HEARTBEAT, PREPARE, COMMIT = 1042, 1052, 1030
SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.string())])


def raw(srv):
    host, _, port = srv.bootstrap.rpartition(":")
    return RawConnection(host, int(port))


def heartbeat(rc, tiering=(), finished=(), failed=(), request=False, force=()):
    def entries(field, items):
        return b"".join(f_bytes(field, f_varint(1, t) + f_varint(2, ce) + f_varint(3, ep))
                        for t, ce, ep in items)
    body = entries(1, tiering) + entries(2, finished) + entries(3, failed)
    if request:
        body += f_varint(4, 1)
    body += b"".join(f_varint(5, t) for t in force)
    rtype, resp = rc.call(HEARTBEAT, body)
    assert rtype == RESPONSE_SUCCESS, resp
    f = decode(resp)
    out = {"coordinator_epoch": as_int32(f[1][0]), "table": None}
    if 2 in f:
        t = decode(f[2][0])
        p = decode(t[2][0])
        out["table"] = (as_int64(t[1][0]), p[1][0].decode(), p[2][0].decode(), as_int64(t[3][0]))
    for field, name in ((3, "tiering"), (4, "finished"), (5, "failed")):
        codes = []
        for raw_e in f.get(field, []):
            e = decode(raw_e)
            codes.append(as_int32(decode(e[2][0])[1][0]) if 2 in e else 0)
        out[name] = codes
    return out


def prepare(rc, table_id, db, name, offsets):
    bucket_msgs = b"".join(f_bytes(3, f_varint(2, b) + f_varint(4, o)) for b, o in offsets.items())
    body = f_bytes(1, f_varint(1, table_id) + f_bytes(2, table_path_msg(db, name)) + bucket_msgs)
    rtype, resp = rc.call(PREPARE, body)
    assert rtype == RESPONSE_SUCCESS, resp
    e = decode(decode(resp)[1][0])
    if 1 in e:
        return as_int32(e[1][0]), e[2][0].decode()
    return 0, e[4][0].decode()


def commit(rc, table_id, snapshot_id, path):
    md = f_varint(1, table_id) + f_varint(2, snapshot_id) + f_bytes(3, path) + f_bytes(4, path)
    rtype, resp = rc.call(COMMIT, f_bytes(2, md))
    assert rtype == RESPONSE_SUCCESS, resp
    e = decode(decode(resp)[1][0])
    assert as_int64(e[3][0]) == table_id
    return (as_int32(e[1][0]), e[2][0].decode()) if 1 in e else (0, "")


async def make_table(srv, freshness):
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("ext")
    await admin.create_database(db)
    path = fluss.TablePath(db, "t")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), bucket_count=2,
        properties={"table.datalake.enabled": "true", "table.datalake.freshness": freshness}))
    await wait_ready(admin, path, 2)
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(pa.Table.from_pydict({"id": list(range(40)), "v": ["x"] * 40}, schema=SCHEMA))
    await w.flush()
    table_id = (await admin.get_table_info(path)).table_id
    return conn, db, table_id


async def test_external_mode_rpcs(start_server, tmp_path):
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "lake.tiering.mode=external")
    conn, db, tid = await make_table(srv, "400ms")
    with raw(srv) as rc:
        _, apis = rc.api_versions()
        assert {HEARTBEAT, PREPARE, COMMIT} <= set(apis)
        ce = heartbeat(rc)["coordinator_epoch"]
        got = None
        deadline = time.monotonic() + 10
        while got is None and time.monotonic() < deadline:
            got = heartbeat(rc, request=True)["table"]
            await asyncio.sleep(0.1)
        assert got == (tid, db, "t", 1)
        assert heartbeat(rc, request=True)["table"] is None  # one job per table
        # renewals: fenced, unknown, another coordinator epoch
        r = heartbeat(rc, tiering=[(tid, ce, 1), (tid, ce, 7), (tid + 1000, ce, 1),
                                   (tid, ce + 5, 1)])
        assert r["tiering"] == [0, 50, 7, 23]
        # the round's offsets: a file of Fluss's TableBucketOffsets JSON
        code, path = prepare(rc, tid, db, "t", {0: 17, 1: 23})
        assert code == 0 and path.startswith("file://"), path
        doc = json.loads(Path(path[len("file://"):]).read_text())
        assert doc == {"version": 1, "table_id": tid, "bucket_offsets": [17, 23]}
        assert Path(path[len("file://"):]).parent == wh / db / "t" / "metadata"
        # a commit of a snapshot the Iceberg table does not have
        code, msg = commit(rc, tid, 12345, path)
        assert code == 53, msg
        # failed: back with epoch 2; finished: a freshness later again
        assert heartbeat(rc, failed=[(tid, ce, 1)])["failed"] == [0]
        got = heartbeat(rc, request=True)["table"]
        assert got == (tid, db, "t", 2)
        assert heartbeat(rc, finished=[(tid, ce, 2)])["finished"] == [0]
        assert heartbeat(rc, request=True)["table"] is None
        await asyncio.sleep(0.5)
        assert heartbeat(rc, request=True)["table"] == (tid, db, "t", 3)
        assert heartbeat(rc, failed=[(tid, ce, 2)])["failed"] == [50]
    # flussd's own rounds are off
    r = cli(srv, "lake", "tier", f"{db}.t", "--now")
    assert r.returncode != 0 and "external" in r.stderr, r.stderr
    # and nothing was tiered by flussd meanwhile
    assert not list((wh / db / "t").glob("data/**/*.parquet"))
    await conn.close()


async def test_internal_mode_refuses(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "warehouse"))
    conn, db, tid = await make_table(srv, "200ms")
    with raw(srv) as rc:
        _, apis = rc.api_versions()
        assert {HEARTBEAT, PREPARE, COMMIT} <= set(apis)
        ce = heartbeat(rc)["coordinator_epoch"]
        await asyncio.sleep(0.4)
        r = heartbeat(rc, tiering=[(tid, ce, 1)], request=True)
        assert r["table"] is None and r["tiering"] == [-1]
        code, msg = prepare(rc, tid, db, "t", {0: 1})
        assert code == -1 and "internal" in msg
    await conn.close()
