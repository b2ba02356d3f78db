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
* unavailability per kill: from the kill to the next acknowledged batch,
  p50 and p99.

One JSON line of these counters is printed (and appended to the ledger
FLUSS_FAULT_LEDGER names). FLUSS_D1_KILLS sets the number of kills (10
in `make test`; `make test-cluster-faults` runs the gate size).
"""

import asyncio
import json
import os
import socket
import statistics
import threading
import time

import pyarrow as pa
import pytest

from logutil import build_batch, create_log_table, init_writer, produce_log, read_all, wait_ready
from rawwire import ConnectionClosed, handshake
from test_cluster import SCHEMA, bucket_leaders, connect, segment_bytes, wait_log

KILLS = int(os.environ.get("FLUSS_D1_KILLS", "10"))
BATCH = 20


RETRIABLE = {1, 12, 21, 25, 29, 44}  # network, not leader, unknown bucket, timeout,
                                      # not enough replicas, no leader


def report(figures):
    """The JSON line, printed and appended to FLUSS_FAULT_LEDGER's file
    (with the date) when that is set."""
    line = json.dumps(figures)
    print("\n" + line)
    ledger = os.environ.get("FLUSS_FAULT_LEDGER")
    if ledger:
        with open(ledger, "a") as f:
            f.write(json.dumps({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                **figures}) + "\n")


class LeaderWriter(threading.Thread):
    """One bucket's idempotent writer over the raw protocol: one PRODUCE_LOG
    (acks=all) at a time to the bucket's leader, as GET_METADATA names it.
    A batch that fails in a way a client retries (a lost connection, not
    the leader, a timeout, …) is sent again, same writer id and sequence,
    to whichever server leads then: the server must deduplicate it."""

    def __init__(self, c, table_id, schema_id, bucket, writer_id):
        super().__init__(daemon=True)
        self.c, self.table_id, self.schema_id = c, table_id, schema_id
        self.bucket, self.writer_id = bucket, writer_id
        self.next_id = bucket * 10_000_000
        self.acked, self.ack_times, self.other_errors = [], [], []
        self.retries = 0
        self.stop_event = threading.Event()

    def _leader_conn(self):
        while not self.stop_event.is_set():
            try:
                leader = bucket_leaders(self.c, "fluss", "d1").get(self.bucket, -1)
                if leader >= 0:
                    return handshake(self.c.host, self.c.tablet_port + leader, timeout=15.0)
            except (OSError, ConnectionClosed, socket.timeout, AssertionError):
                pass
            time.sleep(0.1)
        return None

    def run(self):
        seq, rc = 0, None
        while not self.stop_event.is_set():
            ids = list(range(self.next_id, self.next_id + BATCH))
            data = build_batch(pa.RecordBatch.from_pylist(
                [{"id": i, "name": f"d{i}"} for i in ids], schema=SCHEMA), self.schema_id,
                writer_id=self.writer_id, seq=seq)
            while not self.stop_event.is_set():
                rc = rc or self._leader_conn()
                if rc is None:
                    break
                try:
                    rtype, resp = produce_log(rc, self.table_id, {self.bucket: data}, acks=-1,
                                              timeout_ms=10000)
                    code, msg = resp if rtype != 0 else (resp[0]["error_code"],
                                                         resp[0]["error_message"])
                except (OSError, ConnectionClosed, socket.timeout, AssertionError):
                    code, msg = 1, "transport"
                if code == 0:
                    self.acked.extend(ids)
                    self.ack_times.append(time.monotonic())
                    break
                if code not in RETRIABLE:
                    self.other_errors.append((code, msg))
                    self.stop_event.set()
                    break
                self.retries += 1
                rc.close()
                rc = None
                time.sleep(0.05)
            self.next_id += BATCH
            seq += 1
        if rc:
            rc.close()


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
    writers = [LeaderWriter(c, info.table_id, info.schema_id, b, ids[b]) for b in range(3)]
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
            # bucket 0's next acknowledged batch after the kill
            w0 = writers[0]
            deadline = time.monotonic() + 60
            while not (w0.ack_times and w0.ack_times[-1] > t_kill):
                assert time.monotonic() < deadline, "no write was acknowledged after a kill"
                await asyncio.sleep(0.05)
            unavailable.append(min(t for t in w0.ack_times if t > t_kill) - t_kill)
    finally:
        for w in writers:
            w.stop_event.set()
        for w in writers:
            w.join(60)
    # every replica back in sync, then the whole table read
    deadline = time.monotonic() + 60
    divergent = 3
    while divergent and time.monotonic() < deadline:
        divergent = sum(1 for b in range(3)
                        if len({segment_bytes(c, i, f"d1-{info.table_id}", b) for i in range(3)}) != 1)
        if divergent:
            await asyncio.sleep(0.5)
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
        "unavailability_p50_s": round(statistics.median(unavailable), 3),
        "unavailability_p99_s": round(max(unavailable) if len(unavailable) < 100 else
                                      statistics.quantiles(unavailable, n=100)[98], 3),
    }
    report(figures)
    assert figures["lost_acked"] == 0, figures
    assert figures["duplicates"] == 0, figures
    assert figures["replica_divergence_buckets"] == 0, figures
    assert figures["acked"] > 0 and figures["other_errors"] == 0, figures
    await conn.close()
