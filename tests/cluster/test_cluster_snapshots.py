"""KV snapshots in a cluster: the leader of a primary-key bucket uploads
each snapshot to the shared remote.data.dir and the coordinator commits
it (COMMIT_KV_SNAPSHOT, on its internal listener only), writing its
_METADATA only while the leader epoch the snapshot was taken in is the
bucket's, and tells the followers the offset it covers
(NOTIFY_KV_SNAPSHOT_OFFSET): with tiered storage on, they delete their
copy of the changelog below it, as the leader does. After the leader is
killed, the new leader's snapshots are committed, a commit in the old
leader's epoch is refused and writes nothing, and every key is looked up
from the new leader."""

import json

import fluss

from logutil import wait_ready
from rawwire import f_bytes, f_varint
from test_cluster import (SCHEMA, bucket_leaders, connect, leader_epoch, lookup_all, raw_call,
                          retry, upsert, wait_log)
from test_cluster_tiering import FENCED_LEADER_EPOCH, TIERED, local_segments, wait_until

COMMIT_KV_SNAPSHOT = 1022


def commit_kv_snapshot(c, port, payload: dict, epoch: int):
    """A raw COMMIT_KV_SNAPSHOT: (type, fields or error)."""
    body = (f_bytes(1, json.dumps(payload).encode()) + f_varint(2, 0) + f_varint(3, epoch))
    return raw_call(c, port, COMMIT_KV_SNAPSHOT, body)


def committed(c, table_id):
    return c.log("coordinator").count(f"bucket 0 of table {table_id}: kv snapshot")


async def test_kv_snapshots_commit_through_the_coordinator(cluster):
    c = cluster(tablets=3, rf=3, extra=(*TIERED, "-D", "kv.snapshot.interval=300ms"))
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    path = fluss.TablePath("fluss", "snaps")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=1))
    await wait_ready(admin, path, 1)
    info = await admin.get_table_info(path)
    table_dir = f"snaps-{info.table_id}"
    for lo in range(0, 6000, 250):
        await upsert(conn, path, lo, lo + 250)
    await wait_log(c, "coordinator", f"bucket 0 of table {info.table_id}: kv snapshot")
    bucket_dir = c.dir / "remote" / "kv" / "fluss" / table_dir / "0"
    assert list(bucket_dir.glob("snap-*/_METADATA"))
    leader = bucket_leaders(c, "fluss", "snaps")[0]
    # the followers' changelog below the snapshot goes as the leader's does
    for f in (i for i in range(3) if i != leader):
        await wait_until(lambda f=f: local_segments(c, f, table_dir) <= 4,
                         why=f"follower {f} kept {local_segments(c, f, table_dir)} segments")

    old_epoch = leader_epoch(c, "fluss", "snaps")
    c.kill9(f"tablet-{leader}")
    await wait_log(c, "coordinator", f"tablet server {leader} is gone")
    before = committed(c, info.table_id)
    await retry(lambda: upsert(conn, path, 6000, 6100))
    await wait_log(c, "coordinator", f"bucket 0 of table {info.table_id}: kv snapshot",
                   before + 1)
    assert leader_epoch(c, "fluss", "snaps") > old_epoch

    # the old leader's epoch: refused, though every file it names is there
    newest = max(bucket_dir.glob("snap-*/_METADATA"),
                 key=lambda p: int(p.parent.name.split("-")[1]))
    meta = json.loads(newest.read_text())
    stale_id = meta["snapshot_id"] + 100
    meta["snapshot_id"] = stale_id
    payload = {"version": 1, "table_id": info.table_id, "bucket_id": 0,
               "snapshot_id": stale_id, "metadata": json.dumps(meta)}
    rtype, e = commit_kv_snapshot(c, c.cs_internal, payload, old_epoch)
    assert (rtype, e[0]) == (1, FENCED_LEADER_EPOCH), e
    assert not (bucket_dir / f"snap-{stale_id}" / "_METADATA").exists()
    # the current epoch, naming a file that is not there: refused too
    meta["files"].append({"path": "shared/none.sst", "local": "none.sst", "size": 1})
    payload["metadata"] = json.dumps(meta)
    rtype, e = commit_kv_snapshot(c, c.cs_internal, payload, leader_epoch(c, "fluss", "snaps"))
    assert rtype == 1 and "missing" in e[1], e
    assert not (bucket_dir / f"snap-{stale_id}" / "_METADATA").exists()
    # and a client listener does not take the API
    rtype, e = commit_kv_snapshot(c, c.coordinator_port, payload, old_epoch)
    assert rtype != 0, e

    got = await retry(lambda: lookup_all(conn, path, 0, 6100))
    assert got == {i: f"v{i}" for i in range(6100)}
    await conn.close()
