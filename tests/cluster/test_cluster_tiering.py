"""Tiered log storage in a cluster: three replicas of a bucket see one
remote.data.dir. Only the bucket's leader uploads and commits; the
followers read its commits and delete the local segments they cover; a new
leader (the old one killed) tiers on top of the last commit without
removing what it names; a reader from the first offset gets every row,
the older ones from remote storage. The commit is the coordinator's
(COMMIT_REMOTE_LOG_MANIFEST, on its internal listener only): one made in
a leader epoch that is no longer the bucket's changes nothing."""

import asyncio
import json
import time

from logutil import create_log_table, read_all, wait_ready
from rawwire import f_bytes, f_varint
from test_cluster import (SCHEMA, bucket_leaders, connect, leader_epoch, raw_call, retry, wait_log,
                          write_log)

COMMIT_REMOTE_LOG_MANIFEST = 1027
FENCED_LEADER_EPOCH = 24

TIERED = ("-D", "log.segment.file-size=4kb", "-D", "log.index.interval-size=1kb",
          "-D", "remote.log.task-interval-duration=200ms")
UPLOADED = "segment(s) to remote storage"


def local_segments(c, tablet, table_dir):
    d = next((c.dir / f"tablet-{tablet}-data").rglob(f"{table_dir}/log-0"))
    return len(list(d.glob("*.log")))


def uploads(c, tablet, table_id):
    """Tiering rounds of bucket 0 that uploaded, as the server logged them."""
    return sum(1 for ln in c.log(f"tablet-{tablet}").splitlines()
               if UPLOADED in ln and f"bucket 0 of table {table_id}:" in ln
               and " 0 segment(s) to remote" not in ln)


async def wait_until(what, timeout=30.0, why=""):
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, why
        await asyncio.sleep(0.2)


def commit_remote_log(c, port, table_id, epoch, manifest_path, end_offset):
    """A raw COMMIT_REMOTE_LOG_MANIFEST for bucket 0: (type, fields or
    error)."""
    body = (f_varint(1, table_id) + f_varint(3, 0) + f_bytes(4, manifest_path.encode())
            + f_varint(5, 0) + f_varint(6, end_offset) + f_varint(7, 0) + f_varint(8, epoch))
    return raw_call(c, port, COMMIT_REMOTE_LOG_MANIFEST, body)


def handle_of(c, table_dir):
    path = next((c.dir / "remote" / "log" / "fluss").glob(f"{table_dir}/0/metadata/manifest-handle"))
    return path.read_bytes()


async def test_tiered_log_in_a_cluster(cluster):
    c = cluster(tablets=3, rf=3, extra=TIERED)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "tiered", SCHEMA, bucket_count=1)
    await wait_ready(admin, log, 1)
    info = await admin.get_table_info(log)
    table_dir = f"tiered-{info.table_id}"
    for lo in range(0, 3000, 500):
        await write_log(conn, log, lo, lo + 500)
    leader = bucket_leaders(c, "fluss", "tiered")[0]
    followers = [i for i in range(3) if i != leader]
    # the leader tiers; the followers delete what its commits cover
    await wait_until(lambda: uploads(c, leader, info.table_id) > 0, why="the leader never tiered")
    await wait_until(lambda: all(local_segments(c, f, table_dir) <= 4 for f in followers),
                     why=f"followers kept {[local_segments(c, f, table_dir) for f in followers]}")
    assert [uploads(c, f, info.table_id) for f in followers] == [0, 0]
    # the leader dies; the next one tiers on top of the last commit
    old_epoch = leader_epoch(c, "fluss", "tiered")
    c.kill9(f"tablet-{leader}")
    await wait_log(c, "coordinator", f"tablet server {leader} is gone")
    for lo in range(3000, 6000, 500):
        await retry(lambda lo=lo: write_log(conn, log, lo, lo + 500))
    new = bucket_leaders(c, "fluss", "tiered")[0]
    assert new in followers
    await wait_until(lambda: uploads(c, new, info.table_id) > 0, why="the new leader never tiered")
    # a commit of the deposed leader's epoch is refused and changes nothing,
    # though it names a manifest that is there; so is one naming no
    # manifest; and a client listener does not take the API at all
    handle = handle_of(c, table_dir)
    committed = json.loads(handle)
    assert leader_epoch(c, "fluss", "tiered") > old_epoch
    rtype, e = commit_remote_log(c, c.cs_internal, info.table_id, old_epoch,
                                 committed["remote_log_manifest_path"],
                                 committed["remote_log_end_offset"])
    assert (rtype, e[0]) == (1, FENCED_LEADER_EPOCH), e
    rtype, e = commit_remote_log(c, c.cs_internal, info.table_id,
                                 leader_epoch(c, "fluss", "tiered"), "../../../etc/passwd", 1)
    assert rtype == 1 and "not a manifest" in e[1], e
    rtype, e = commit_remote_log(c, c.coordinator_port, info.table_id, old_epoch,
                                 committed["remote_log_manifest_path"],
                                 committed["remote_log_end_offset"])
    assert rtype != 0, e
    assert handle_of(c, table_dir) == handle or json.loads(handle_of(c, table_dir))[
        "remote_log_end_offset"] >= committed["remote_log_end_offset"]
    other = next(f for f in followers if f != new)
    await wait_until(lambda: local_segments(c, other, table_dir) <= 4,
                     why="the follower kept the new leader's tiered segments")
    # the old leader comes back as a follower: it catches up (back in the
    # ISR, although the leader's local log may now start past its end) and
    # deletes what is tiered
    isr3 = c.log("coordinator").count("ISR of 3 replica(s)")
    c.start_tablet(leader)
    await wait_log(c, "coordinator", "ISR of 3 replica(s)", isr3 + 1, timeout=60)
    await wait_until(lambda: local_segments(c, leader, table_dir) <= 4, timeout=60,
                     why="the old leader kept what the new one tiered")
    # every row, from the first offset (remote) to the last (local)
    conn2 = await connect(c.bootstrap)
    got = await retry(lambda: read_all(conn2, conn2.get_admin(), log))
    assert got.column("id").to_pylist() == list(range(6000))
    assert uploads(c, other, info.table_id) == 0
    await conn2.close()
    await conn.close()
