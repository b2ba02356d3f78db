"""D9: the traces that made Kafka truncate by leader epoch (KIP-101,
KIP-279) and Fluss's #674, as deterministic scripts over the processes
(reliability.md §4.1). Each ends with the three replicas byte for byte
equal and every acknowledged record present, and prints one JSON line.

A follower learns the high watermark from its leader's fetch answers, so
it always trails: a batch every replica holds and the leader acknowledged
may still lie past a follower's own high watermark. The rule before
KIP-101 (and 0.9.1's, #674) cut a follower at its high watermark when its
leader changed; if that follower is elected before it fetched the batch
again, an acknowledged batch is gone. The scripts make that moment happen
every time: `make test-cluster-mutants` builds the server with that rule
(FL_MUTATION_TRUNCATE_TO_HW) and the scripts must catch it.

The third trace, the diverged tail (a leader's unreplicated tail, a new
leader writing other records at the same offsets, the old one back), is
`test_diverged_tail_is_cut_by_leader_epoch` in test_cluster.py.
"""

import asyncio
import os
import signal
import time

import pyarrow as pa

from faultutil import divergent_buckets, report
from logutil import build_batch, create_log_table, init_writer, produce_log, read_all, wait_ready
from rawwire import handshake
from test_cluster import SCHEMA, bucket_leaders, bucket_replicas, connect, wait_log

BATCH = 20


def new_writer(c, server, table):
    """A writer id from INIT_WRITER on tablet server `server`."""
    rc = handshake(c.host, c.tablet_port + server)
    try:
        return init_writer(rc, "fluss", table)
    finally:
        rc.close()


def write_acked(c, leader, info, writer_id, first, count):
    """count batches of BATCH ids from batch number first on, acks=all,
    straight to the leader (a new writer: sequences from 0): the ids,
    every batch acknowledged."""
    ids = []
    rc = handshake(c.host, c.tablet_port + leader)
    try:
        for seq in range(count):
            batch = list(range((first + seq) * BATCH, (first + seq + 1) * BATCH))
            rtype, resp = produce_log(rc, info.table_id, {0: build_batch(
                pa.RecordBatch.from_pylist([{"id": i, "name": f"d{i}"} for i in batch],
                                           schema=SCHEMA), info.schema_id,
                writer_id=writer_id, seq=seq)}, acks=-1)
            assert rtype == 0 and resp[0]["error_code"] == 0, resp
            ids += batch
    finally:
        rc.close()
    return ids


def elected(c, table_id, server, why="went"):
    """The leader the coordinator's log names for bucket 0 after server
    went (or came back), the latest, or None."""
    mark = f"bucket 0 of table {table_id}: leader "
    for line in reversed(c.log("coordinator").splitlines()):
        if mark in line and f"after server {server} {why}" in line:
            return int(line.split(mark)[1].split()[0])
    return None

async def test_d9_committed_batch_past_a_follower_high_watermark(cluster):
    """#674 and KIP-101's first trace, with the leader changing twice.

    Replicas [L, F1, F2] (F1 first after L in assignment order). Batches
    written with acks=all; L is killed right after the last one is
    acknowledged: F1 and F2 hold it, but its high watermark never reached
    them (their fetches parked at L would have brought it 0.5 s later).
    F1 is stopped (SIGSTOP) 1.5 s after the kill, inside its session, so
    when L's session expires the coordinator elects F1, which F2 cannot
    reach. F2 follows F1: by epoch it may cut nothing until F1 answers; by
    the old rule it cuts at its high watermark at once. Then F1's session
    expires and F2, the last replica in sync, leads. Every acknowledged id
    must be in the table it serves."""
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "d9a", SCHEMA, bucket_count=1)
    await wait_ready(admin, log, 1)
    info = await admin.get_table_info(log)
    replicas = bucket_replicas(c, "fluss", "d9a")[0]
    leader = bucket_leaders(c, "fluss", "d9a")[0]
    assert replicas[0] == leader, (replicas, leader)
    f1, f2 = replicas[1], replicas[2]
    wid = new_writer(c, leader, "d9a")

    acked = write_acked(c, leader, info, wid, 0, 10)
    c.kill9(f"tablet-{leader}")
    t_kill = time.monotonic()
    await asyncio.sleep(1.5)
    os.kill(c.pid(f"tablet-{f1}"), signal.SIGSTOP)
    try:
        await wait_log(c, "coordinator", f"tablet server {leader} is gone", timeout=15)
        first = elected(c, info.table_id, leader)
        assert first == f1, f"the script needs F1 ({f1}) elected first, got {first}"
        await wait_log(c, "coordinator", f"tablet server {f1} is gone", timeout=15)
        second = elected(c, info.table_id, f1)
        assert second == f2, f"the script needs F2 ({f2}) elected next, got {second}"
        stopped_s = time.monotonic() - t_kill
    finally:
        c.kill9(f"tablet-{f1}")  # stopped: it never saw its election
    c.start_tablet(f1)
    c.start_tablet(leader)
    await wait_log(c, "coordinator", "ISR of 3 replica(s)", timeout=60)

    # the table is served again: more writes, then everything read back
    wid2 = new_writer(c, f2, "d9a")
    acked += write_acked(c, f2, info, wid2, 10, 5)
    got = await read_all(conn, admin, log)
    ids = got.column("id").to_pylist()
    table_dir = f"d9a-{info.table_id}"
    equal = await divergent_buckets(c, table_dir, 1, timeout=30) == 0
    figures = {
        "suite": "D9", "script": "committed_batch_past_follower_hw",
        "acked": len(acked), "lost_acked": len(set(acked) - set(ids)),
        "duplicates": len(ids) - len(set(ids)),
        "replicas_equal": equal, "leader_changes": 2, "seconds": round(stopped_s, 2),
    }
    report(figures)
    assert figures["lost_acked"] == 0, figures
    assert figures["duplicates"] == 0, figures
    assert equal, figures
    await conn.close()


def write_acks1(c, leader, info, first, count):
    """count batches of BATCH ids, acks=1, straight to the leader."""
    ids = list(range(first * BATCH, (first + count) * BATCH))
    rc = handshake(c.host, c.tablet_port + leader)
    try:
        rtype, resp = produce_log(rc, info.table_id, {0: build_batch(
            pa.RecordBatch.from_pylist([{"id": i, "name": f"u{i}"} for i in ids],
                                       schema=SCHEMA), info.schema_id)}, acks=1)
    finally:
        rc.close()
    assert rtype == 0 and resp[0]["error_code"] == 0, resp
    return ids


async def test_d9_old_replica_back_first_after_two_leader_changes(cluster):
    """KIP-279's trace: two leader changes in quick succession, and the
    replica with the older history back first.

    Replicas [A, B], min ISR 1. Batches acknowledged with acks=all by
    both; then, B stopped, A takes a tail only it holds (acks=1) and is
    killed. B leads in a new epoch and takes other batches at the same
    offsets (acks=all, alone in the ISR), and is killed too. A comes back
    first: it is not in the ISR, so it is not elected (no unclean
    election: the bucket waits offline rather than serve A's history
    over B's acknowledged batches). B comes back and leads; A, following
    it, finds where its log and B's part by leader epoch, cuts its tail
    there and fetches B's. Before KIP-279 a follower asked only for its
    own latest epoch's end, which the leader does not know, and kept its
    tail: two replicas with different records at one offset."""
    c = cluster(tablets=2, rf=2, extra=("-D", "log.replica.max-lag-time=60s"))
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "d9b", SCHEMA, bucket_count=1)
    await wait_ready(admin, log, 1)
    info = await admin.get_table_info(log)
    a, b = bucket_replicas(c, "fluss", "d9b")[0]
    assert bucket_leaders(c, "fluss", "d9b")[0] == a
    wid = new_writer(c, a, "d9b")
    acked = write_acked(c, a, info, wid, 0, 5)

    os.kill(c.pid(f"tablet-{b}"), signal.SIGSTOP)
    try:
        # B's fetch parked at A expires (0.5 s) into its socket buffer: the
        # tail below never reaches it
        await asyncio.sleep(1.0)
        tail = write_acks1(c, a, info, 100, 3)
        c.kill9(f"tablet-{a}")
    finally:
        os.kill(c.pid(f"tablet-{b}"), signal.SIGCONT)
    await wait_log(c, "coordinator", f"tablet server {a} is gone", timeout=20)
    assert elected(c, info.table_id, a) == b
    wid_b = new_writer(c, b, "d9b")
    acked += write_acked(c, b, info, wid_b, 5, 5)
    c.kill9(f"tablet-{b}")
    await wait_log(c, "coordinator", f"tablet server {b} is gone", timeout=20)

    c.start_tablet(a)
    await wait_log(c, "coordinator", f"tablet server {a} is up", 2)
    await asyncio.sleep(2.0)  # time enough for a wrong election to show
    offline = bucket_leaders(c, "fluss", "d9b")[0] == -1
    assert offline and elected(c, info.table_id, a, "came back") is None, \
        c.log("coordinator")[-2000:]
    c.start_tablet(b)
    await wait_log(c, "coordinator", f"tablet server {b} is up", 2)
    await wait_log(c, "coordinator", "ISR of 2 replica(s)", timeout=30)
    assert elected(c, info.table_id, b, "came back") == b
    cut = f"log cut at {len(acked) // 2} (was {len(acked) // 2 + len(tail)})"
    await wait_log(c, f"tablet-{a}", cut)

    got = await read_all(conn, admin, log)
    ids = got.column("id").to_pylist()
    table_dir = f"d9b-{info.table_id}"
    equal = await divergent_buckets(c, table_dir, 1, timeout=30) == 0
    figures = {
        "suite": "D9", "script": "old_replica_back_first", "acked": len(acked),
        "lost_acked": len(set(acked) - set(ids)), "duplicates": len(ids) - len(set(ids)),
        "unacked_tail_served": len(set(tail) & set(ids)), "offline_until_isr_back": offline,
        "replicas_equal": equal, "leader_changes": 3,
    }
    report(figures)
    assert figures["lost_acked"] == 0, figures
    assert figures["duplicates"] == 0, figures
    assert figures["unacked_tail_served"] == 0, figures
    assert equal, figures
    await conn.close()
