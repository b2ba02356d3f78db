"""What the fault suites of tests/cluster share (reliability.md §4
conventions): the JSON line of counters each prints, and an idempotent
raw-protocol writer that follows a bucket's leader."""

import asyncio
import json
import os
import socket
import threading
import time
from collections import Counter

import pyarrow as pa

from logutil import build_batch, produce_log
from rawwire import ConnectionClosed, handshake
from test_cluster import SCHEMA, bucket_leaders, segment_bytes

# a lost connection, not the leader, unknown bucket, a timeout, not enough
# replicas, no leader: what a client sends again
RETRIABLE = {1, 12, 21, 25, 29, 44}
NOT_ENOUGH_REPLICAS = 29


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


async def divergent_buckets(c, table_dir, buckets, timeout=60.0):
    """Waits until each of the table's buckets holds the same segment bytes
    on every tablet server, or the timeout passes: -> how many buckets
    still differ."""
    deadline = time.monotonic() + timeout
    while True:
        differ = [b for b in range(buckets)
                  if len({segment_bytes(c, i, table_dir, b) for i in range(c.tablets)}) != 1]
        if not differ or time.monotonic() > deadline:
            for b in differ:
                print(f"bucket {b} differs: " + describe_replicas(c, table_dir, b))
            return len(differ)
        await asyncio.sleep(0.5)


def describe_replicas(c, table_dir, bucket):
    """Each replica's segment sizes and where its bytes first differ from
    the longest replica's: what a divergence report needs to be read."""
    replicas = [segment_bytes(c, i, table_dir, bucket) for i in range(c.tablets)]
    longest = max(replicas, key=len)
    parts = []
    for i, r in enumerate(replicas):
        d = next((c.dir / f"tablet-{i}-data").rglob(f"{table_dir}/log-{bucket}"))
        sizes = [(p.name, p.stat().st_size) for p in sorted(d.glob("*.log"))]
        first = next((k for k in range(min(len(r), len(longest))) if r[k] != longest[k]),
                     min(len(r), len(longest)))
        parts.append(f"tablet {i}: {len(r)} bytes, first difference at {first}, segments {sizes}")
        # what the server said of the bucket's replica that was not routine
        said = [ln for ln in c.log(f"tablet-{i}").splitlines()
                if (" WARN " in ln or " ERROR " in ln or " cut at " in ln or " from leader " in ln
                    or " starts again " in ln) and "zookeeper:" not in ln]
        parts.extend(f"  tablet {i} log: {ln}" for ln in said[-15:])
    # what the coordinator decided for the bucket, and the messages it
    # could not deliver (a follower never told it follows does not fetch)
    table_id = table_dir.rsplit("-", 1)[-1]
    said = [ln for ln in c.log("coordinator").splitlines()
            if f"bucket {bucket} of table {table_id}" in ln or " failed: " in ln
            or " refused " in ln or "not every message" in ln]
    parts.extend(f"  coordinator log: {ln}" for ln in said[-25:])
    return "\n".join(parts)


async def unavailable_after(w, t_kill, timeout=60.0):
    """Seconds from t_kill to w's first acknowledgement of a batch sent
    after it (one sent before may still be answered after)."""
    deadline = time.monotonic() + timeout
    while not (w.acks and w.acks[-1][0] > t_kill):
        assert time.monotonic() < deadline, f"no write acknowledged {timeout:.0f} s after a kill"
        await asyncio.sleep(0.05)
    return min(a[1] for a in w.acks if a[0] > t_kill) - t_kill


def percentile(values, p):
    """The p-th percentile (nearest rank) of values; the largest when there
    are fewer than 100."""
    v = sorted(values)
    if not v:
        return None
    return v[min(len(v) - 1, max(0, int(round(p / 100 * len(v))) - 1))]


class LeaderWriter(threading.Thread):
    """One bucket's idempotent writer over the raw protocol: one PRODUCE_LOG
    (acks=all) at a time to the bucket's leader, as GET_METADATA names it.
    A batch that fails in a way a client retries (a lost connection, not
    the leader, a timeout, …) is sent again, same writer id and sequence,
    to whichever server leads then: the server must deduplicate it.

    Each acknowledgement is kept as (time sent, time answered, base offset,
    what the batch carried); each error code answered is counted. Another
    kind of batch (PUT_KV) comes from overriding make_batch and send."""

    def __init__(self, c, db, table, table_id, schema_id, bucket, writer_id, batch=20,
                 timeout_ms=10000):
        super().__init__(daemon=True)
        self.c, self.db, self.table = c, db, table
        self.table_id, self.schema_id = table_id, schema_id
        self.bucket, self.writer_id, self.batch = bucket, writer_id, batch
        self.timeout_ms = timeout_ms
        self.next_id = bucket * 10_000_000
        self.acks, self.other_errors = [], []
        self.codes = Counter()
        self.retries = 0
        self.pending = None  # what the batch not (yet) acknowledged carries
        self.stop_event = threading.Event()

    @property
    def acked(self):
        return [i for a in self.acks for i in a[3]]

    @property
    def ack_times(self):
        return [a[1] for a in self.acks]

    def _leader_conn(self):
        while not self.stop_event.is_set():
            try:
                leader = bucket_leaders(self.c, self.db, self.table).get(self.bucket, -1)
                if leader >= 0:
                    return handshake(self.c.host, self.c.tablet_port + leader, timeout=15.0)
            except (OSError, ConnectionClosed, socket.timeout, AssertionError):
                pass
            time.sleep(0.1)
        return None

    def make_batch(self, seq):
        """(the batch's bytes, what it carries: its ids)."""
        ids = list(range(self.next_id, self.next_id + self.batch))
        self.next_id += self.batch
        return build_batch(pa.RecordBatch.from_pylist(
            [{"id": i, "name": f"d{i}"} for i in ids], schema=SCHEMA), self.schema_id,
            writer_id=self.writer_id, seq=seq), ids

    def send(self, rc, data):
        """-> (error code, message, base offset or None)."""
        rtype, resp = produce_log(rc, self.table_id, {self.bucket: data}, acks=-1,
                                  timeout_ms=self.timeout_ms)
        if rtype != 0:
            return resp[0], resp[1], None
        return resp[0]["error_code"], resp[0]["error_message"], resp[0]["base_offset"]

    def run(self):
        seq, rc = 0, None
        while not self.stop_event.is_set():
            data, carried = self.make_batch(seq)
            self.pending = carried
            while not self.stop_event.is_set():
                rc = rc or self._leader_conn()
                if rc is None:
                    break
                sent = time.monotonic()
                try:
                    code, msg, offset = self.send(rc, data)
                except (OSError, ConnectionClosed, socket.timeout, AssertionError):
                    code, msg = 1, "transport"
                self.codes[code] += 1
                if code == 0:
                    self.acks.append((sent, time.monotonic(), offset, carried))
                    self.pending = None
                    break
                if code not in RETRIABLE:
                    self.other_errors.append((code, msg))
                    self.stop_event.set()
                    break
                self.retries += 1
                rc.close()
                rc = None
                time.sleep(0.05)
            seq += 1
        if rc:
            rc.close()
