"""D1: a bucket leader killed with SIGKILL, again and again, under
acks=all writes from an idempotent writer (reliability.md §4.1).

Three tablet servers, a three-bucket log table with replication factor 3.
One idempotent writer per bucket (raw PRODUCE_LOG, acks=all, one request
at a time to the leader GET_METADATA names; a failed batch sent again
with the same sequence wherever the bucket is led then) writes batches of
unique ids and records each batch it saw acknowledged. (pyfluss is not
the load here: a request in flight to a killed leader stalls its writer
until the client's own timeout.) Each
round kills the tablet server that leads bucket 0 (GET_METADATA from the
coordinator), waits until the coordinator has seen it go (its ZooKeeper
session expires) and starts it again. At the end every replica is back in
sync and the table is read whole:

* lost_acked: acknowledged ids that are not in the table (must be 0);
* duplicates: ids in the table more than once (must be 0: a retry after a
  failover is deduplicated by the new leader, whose writer state came
  from the replicated log);
* replica_divergence_buckets: buckets whose three replicas' segment bytes
  differ after the heal (must be 0);
* unavailability per kill: from the kill to the first acknowledgement of
  a request sent after it, p50 and p99.

One JSON line of these counters is printed (and appended to the ledger
FLUSS_FAULT_LEDGER names). FLUSS_D1_KILLS sets the number of kills (10
in `make test`; `make test-cluster-faults` runs the gate size).
"""

import asyncio
import os
import time

import pytest

from faultutil import LeaderWriter, divergent_buckets, percentile, report, unavailable_after
from logutil import create_log_table, init_writer, read_all, wait_ready
from rawwire import handshake
from test_cluster import SCHEMA, bucket_leaders, connect, wait_log

KILLS = int(os.environ.get("FLUSS_D1_KILLS", "10"))


@pytest.mark.timeout(900)
async def test_d1_leader_kill_under_acks_all(cluster):
    c = cluster(tablets=3, rf=3, extra=tuple(os.environ.get("FLUSS_D1_ARGS", "").split()))
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    log = await create_log_table(admin, "fluss", "d1", SCHEMA, bucket_count=3,
                                 bucket_keys=["id"])
    await wait_ready(admin, log, 3)
    info = await admin.get_table_info(log)
    rc = handshake(c.host, c.tablet_port)
    try:
        ids = [init_writer(rc, "fluss", "d1") for _ in range(3)]
    finally:
        rc.close()
    writers = [LeaderWriter(c, "fluss", "d1", info.table_id, info.schema_id, b, ids[b]) for b in range(3)]
    for w in writers:
        w.start()
    unavailable = []
    try:
        for k in range(KILLS):
            await asyncio.sleep(1.0)
            assert not any(w.other_errors for w in writers), [w.other_errors for w in writers]
            leader = bucket_leaders(c, "fluss", "d1").get(0, -1)
            assert leader >= 0, "bucket 0 has no leader"
            gone = c.log("coordinator").count(f"tablet server {leader} is gone")
            t_kill = time.monotonic()
            c.kill9(f"tablet-{leader}")
            await wait_log(c, "coordinator", f"tablet server {leader} is gone", gone + 1)
            c.start_tablet(leader)
            unavailable.append(await unavailable_after(writers[0], t_kill))
    finally:
        for w in writers:
            w.stop_event.set()
        for w in writers:
            w.join(60)
    # every replica back in sync, then the whole table read
    divergent = await divergent_buckets(c, f"d1-{info.table_id}", 3)
    got = await read_all(conn, admin, log)
    ids = got.column("id").to_pylist()
    present = set(ids)
    acked = {i for w in writers for i in w.acked}
    figures = {
        "suite": "D1", "kills": KILLS, "acked": len(acked),
        "retries": sum(w.retries for w in writers),
        "other_errors": sum(len(w.other_errors) for w in writers),
        "lost_acked": len(acked - present),
        "duplicates": len(ids) - len(present),
        "replica_divergence_buckets": divergent,
        "unavailability_p50_s": round(percentile(unavailable, 50), 3),
        "unavailability_p99_s": round(percentile(unavailable, 99), 3),
    }
    report(figures)
    assert figures["lost_acked"] == 0, figures
    assert figures["duplicates"] == 0, figures
    assert figures["replica_divergence_buckets"] == 0, figures
    assert figures["acked"] > 0 and figures["other_errors"] == 0, figures
    await conn.close()
