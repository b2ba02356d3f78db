"""D3: followers stopped with SIGSTOP, one and then both, under acks=all
writes (reliability.md §4.1).

Three tablet servers, a one-bucket log table with replication factor 3,
log.replica.min-in-sync-replicas-number 2, log.replica.max-lag-time 2 s,
and ZooKeeper sessions long enough that no stopped server is declared
gone. One idempotent raw writer (faultutil.LeaderWriter) writes the bucket
throughout.

* One follower stopped: its leader proposes it out of the ISR within
  max-lag + 1 s (the coordinator commits ADJUST_ISR) and acks=all goes on
  with an ISR of 2.
* The other follower stopped too: it leaves the ISR within max-lag + 1 s;
  the ISR (1) is then below the minimum and acks=all is refused with
  NOT_ENOUGH_REPLICAS. No write the stopped replicas do not hold may be
  acknowledged while they are stopped: acks_granted_with_isr_below_min
  counts acknowledgements, answered after the second stop, of batches
  that end past the second follower's log end as it was frozen.
* Both resumed: they catch up and the ISR is whole again within 5 s
  (reexpansion_s); writes are acknowledged again.

At the end the table is read whole: lost_acked and duplicates must be 0.
One JSON line of these counters is printed (and appended to the ledger
FLUSS_FAULT_LEDGER names).
"""

import asyncio
import os
import signal
import time

import pytest

from faultutil import NOT_ENOUGH_REPLICAS, LeaderWriter, report
from logutil import create_log_table, init_writer, parse_batches, read_all, wait_ready
from rawwire import handshake
from test_cluster import SCHEMA, bucket_leaders, connect, segment_bytes

MAX_LAG_S = 2.0


async def wait_for(what, timeout):
    """Poll what() every 50 ms; the monotonic time it first held, or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return time.monotonic()
        await asyncio.sleep(0.05)
    return None


@pytest.mark.timeout(300)
async def test_d3_followers_stopped_under_acks_all(cluster):
    c = cluster(tablets=3, rf=3, session="30s",
                extra=("-D", f"log.replica.max-lag-time={int(MAX_LAG_S * 1000)}ms",
                       "-D", "log.replica.min-in-sync-replicas-number=2"))
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "d3", SCHEMA, bucket_count=1)
    await wait_ready(admin, log, 1)
    info = await admin.get_table_info(log)
    leader = bucket_leaders(c, "fluss", "d3")[0]
    first, second = [i for i in range(3) if i != leader]
    rc = handshake(c.host, c.tablet_port + leader)
    try:
        writer_id = init_writer(rc, "fluss", "d3")
    finally:
        rc.close()
    w = LeaderWriter(c, "fluss", "d3", info.table_id, info.schema_id, 0, writer_id,
                     timeout_ms=2000)
    isr_line = f"bucket 0 of table {info.table_id}: ISR of %d replica(s)"

    def isr_logged(n, count=1):
        return lambda: c.log("coordinator").count(isr_line % n) >= count

    stopped = []
    try:
        w.start()
        assert await wait_for(lambda: len(w.acks) >= 20, 30), "no write acknowledged"
        # one follower stopped
        t1 = time.monotonic()
        os.kill(c.pid(f"tablet-{first}"), signal.SIGSTOP)
        stopped.append(first)
        t_shrink1 = await wait_for(isr_logged(2), 15)
        assert t_shrink1, "the ISR did not shrink to 2"
        n = len(w.acks)
        assert await wait_for(lambda: len(w.acks) > n + 5, 10), "acks=all stopped with an ISR of 2"
        # the other follower stopped too: its log end frozen with it
        t2 = time.monotonic()
        os.kill(c.pid(f"tablet-{second}"), signal.SIGSTOP)
        stopped.append(second)
        await asyncio.sleep(0.2)
        frozen = parse_batches(segment_bytes(c, second, f"d3-{info.table_id}", 0))
        frozen_end = frozen[-1]["base_offset"] + frozen[-1]["last_offset_delta"] + 1
        t_shrink2 = await wait_for(isr_logged(1), 15)
        assert t_shrink2, "the ISR did not shrink to 1"
        refused = await wait_for(lambda: w.codes[NOT_ENOUGH_REPLICAS] >= 3, 15)
        # both resumed
        t3 = time.monotonic()
        for i in stopped:
            os.kill(c.pid(f"tablet-{i}"), signal.SIGCONT)
        stopped = []
        t_whole = await wait_for(isr_logged(3), 15)
        n = len(w.acks)
        resumed = await wait_for(lambda: len(w.acks) > n + 5, 15)
    finally:
        for i in stopped:
            os.kill(c.pid(f"tablet-{i}"), signal.SIGCONT)
        w.stop_event.set()
        w.join(60)
    below_min = [a for a in w.acks
                 if t2 < a[1] < t3 and a[2] + len(a[3]) > frozen_end]
    got = await read_all(conn, admin, log)
    ids = got.column("id").to_pylist()
    present, acked = set(ids), set(w.acked)
    figures = {
        "suite": "D3", "acked": len(acked), "retries": w.retries,
        "other_errors": len(w.other_errors),
        "shrink_one_s": round(t_shrink1 - t1, 3),
        "shrink_two_s": round(t_shrink2 - t2, 3),
        "not_enough_replicas": w.codes[NOT_ENOUGH_REPLICAS],
        "acks_granted_with_isr_below_min": len(below_min),
        "reexpansion_s": round(t_whole - t3, 3) if t_whole else None,
        "lost_acked": len(acked - present),
        "duplicates": len(ids) - len(present),
    }
    report(figures)
    assert figures["shrink_one_s"] <= MAX_LAG_S + 1.0, figures
    assert figures["shrink_two_s"] <= MAX_LAG_S + 1.0, figures
    assert refused, figures
    assert figures["acks_granted_with_isr_below_min"] == 0, figures
    assert t_whole and figures["reexpansion_s"] <= 5.0, figures
    assert resumed, "no write was acknowledged after the followers resumed"
    assert figures["lost_acked"] == 0 and figures["duplicates"] == 0, figures
    assert figures["other_errors"] == 0, w.other_errors
    await conn.close()
