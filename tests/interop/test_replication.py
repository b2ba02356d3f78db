"""Replication seen from the official client (FLUSS_SERVER=ours only: each
test starts a flussd of its own): three tablet servers in one process, a
table with replication factor 3. The followers fetch from their leader
over in-process connections to its internal side (a cluster's fetches go
over TCP with the same code), an acks=all write is answered once every
in-sync replica holds it, and each follower's log is the leader's byte for
byte.
"""

import time

import pyarrow as pa
import pytest

from conftest import connect, unique
from logutil import create_log_table, read_all

pytestmark = pytest.mark.ours_only

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def rows(lo, hi):
    return pa.Table.from_pylist([{"id": i, "name": f"n{i}"} for i in range(lo, hi)],
                                schema=SCHEMA)


def segment_logs(data_dir, tablet, table_dir_prefix):
    """{bucket dir name: bytes of its .log segments} on one tablet server."""
    out = {}
    for d in sorted((data_dir / f"tablet-server-{tablet}").rglob("log-*")):
        if not d.is_dir() or d.parent.name != table_dir_prefix:
            continue
        out[d.name] = b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))
    return out


async def test_three_replicas_hold_the_same_log(start_server):
    srv = start_server(tablet_servers=3)
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("repl")
    await admin.create_database(db)
    path = await create_log_table(admin, db, "t", SCHEMA, bucket_count=3, bucket_keys=["id"],
                                  properties={"table.replication.factor": "3"})
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for lo in range(0, 900, 100):
        w.write_arrow(rows(lo, lo + 100))
    await w.flush()  # acks=all: every in-sync replica holds all of it
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == list(range(900))
    table_id = (await admin.get_table_info(path)).table_id
    prefix = f"t-{table_id}"
    logs = [segment_logs(srv.data_dir, i, prefix) for i in range(3)]
    assert set(logs[0]) == {"log-0", "log-1", "log-2"}, logs[0].keys()
    for b in ("log-0", "log-1", "log-2"):
        assert logs[0][b], f"bucket {b} is empty"
        assert logs[0][b] == logs[1][b] == logs[2][b], f"replicas of {b} differ"
    await conn.close()
