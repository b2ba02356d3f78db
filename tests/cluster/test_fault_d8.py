"""D8: rolling restart of every tablet server, again and again, under
acks=all writes (reliability.md §4.1).

Three tablet servers, a three-bucket log table with replication factor 3,
one idempotent raw writer per bucket (faultutil.LeaderWriter). A round
restarts each tablet server in turn as an operator would: SIGTERM (the
server hands its leaderships to in-sync followers and leaves the ISRs
before it exits: CONTROLLED_SHUTDOWN), start it again, wait until it is
back in every bucket's ISR, then the next one.

* unavailability: for each restart and bucket, the longest time between
  two acknowledged batches from the SIGTERM until the restarted server is
  back in sync; p50 and p99 over all of them (p99 must be ≤ 1 s);
* lost_acked, duplicates: the table read whole at the end (must be 0);
* replica_divergence_buckets: buckets whose replicas' segment bytes differ
  after the last round (must be 0).

One JSON line of these counters is printed (and appended to the ledger
FLUSS_FAULT_LEDGER names). FLUSS_D8_ROUNDS sets the number of rounds (5).
"""

import asyncio
import os
import time

import pytest

from faultutil import LeaderWriter, divergent_buckets, percentile, report
from logutil import create_log_table, init_writer, read_all, wait_ready
from rawwire import handshake
from test_cluster import SCHEMA, connect, wait_log

ROUNDS = int(os.environ.get("FLUSS_D8_ROUNDS", "5"))


def longest_gap(times, lo, hi):
    """The longest time in [lo, hi] with no acknowledgement among times."""
    inside = [t for t in times if lo < t < hi]
    edges = [lo] + inside + [hi]
    return max(b - a for a, b in zip(edges, edges[1:]))


@pytest.mark.timeout(900)
async def test_d8_rolling_restarts_under_acks_all(cluster):
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "d8", SCHEMA, bucket_count=3,
                                 bucket_keys=["id"])
    await wait_ready(admin, log, 3)
    info = await admin.get_table_info(log)
    rc = handshake(c.host, c.tablet_port)
    try:
        ids = [init_writer(rc, "fluss", "d8") for _ in range(3)]
    finally:
        rc.close()
    writers = [LeaderWriter(c, "fluss", "d8", info.table_id, info.schema_id, b, ids[b])
               for b in range(3)]
    isr_line = f"of table {info.table_id}: ISR of 3 replica(s)"
    windows = []  # (SIGTERM, back in sync) per restart
    try:
        for w in writers:
            w.start()
        await asyncio.sleep(1.0)
        for _ in range(ROUNDS):
            for i in range(3):
                assert not any(w.other_errors for w in writers), [w.other_errors for w in writers]
                whole = c.log("coordinator").count(isr_line)
                t_term = time.monotonic()
                c.terminate(f"tablet-{i}")
                c.start_tablet(i)
                # back in the ISR of all three buckets
                await wait_log(c, "coordinator", isr_line, whole + 3, timeout=60)
                windows.append((t_term, time.monotonic()))
                await asyncio.sleep(0.5)
    finally:
        for w in writers:
            w.stop_event.set()
        for w in writers:
            w.join(60)
    gaps = [longest_gap(w.ack_times, lo, hi) for lo, hi in windows for w in writers]
    divergent = await divergent_buckets(c, f"d8-{info.table_id}", 3)
    got = await read_all(conn, admin, log)
    ids = got.column("id").to_pylist()
    present = set(ids)
    acked = {i for w in writers for i in w.acked}
    figures = {
        "suite": "D8", "rounds": ROUNDS, "restarts": len(windows), "acked": len(acked),
        "retries": sum(w.retries for w in writers),
        "other_errors": sum(len(w.other_errors) for w in writers),
        "lost_acked": len(acked - present),
        "duplicates": len(ids) - len(present),
        "replica_divergence_buckets": divergent,
        "unavailability_p50_s": round(percentile(gaps, 50), 3),
        "unavailability_p99_s": round(percentile(gaps, 99), 3),
        "restart_s_p50": round(percentile([b - a for a, b in windows], 50), 3),
    }
    report(figures)
    assert figures["lost_acked"] == 0 and figures["duplicates"] == 0, figures
    assert figures["replica_divergence_buckets"] == 0, figures
    assert figures["acked"] > 0 and figures["other_errors"] == 0, figures
    assert figures["unavailability_p99_s"] <= 1.0, figures
    await conn.close()
