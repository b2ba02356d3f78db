"""Failover unavailability of a running cluster (bench/run_cluster.sh):
a three-bucket table (the cluster's default replication factor), one
idempotent acks=all raw writer per bucket that follows its leader
(tests/cluster/faultutil.py), and the leader of bucket 0 killed with
SIGKILL --kills times, never restarted. Unavailability of a kill = from the
kill to the first acknowledgement of a batch sent after it. At the end the
table is read back whole (pyfluss): acknowledged ids missing and ids read
twice are counted. Prints one JSON line.

  cluster_failover.py --bootstrap HOST:PORT --tablet-port P --pid-file PATTERN
      [--kills N] [--first-id-empty]

Tablet server i serves clients on P + i; its PID is in PATTERN with {id}
replaced by i (--first-id-empty: by nothing for server 0, the reference's
naming)."""

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "cluster"), str(ROOT / "tests" / "interop")]

import fluss  # noqa: E402

from faultutil import LeaderWriter, percentile, unavailable_after  # noqa: E402
from logutil import create_log_table, init_writer, read_all, wait_ready  # noqa: E402
from rawwire import handshake  # noqa: E402
from test_cluster import SCHEMA, bucket_leaders  # noqa: E402


class Servers:
    """What LeaderWriter and bucket_leaders need of a running cluster, and
    its tablet servers' PIDs: PATTERN with {id} replaced by the server id
    (first_id_empty: by nothing for server 0, the reference's naming)."""

    def __init__(self, bootstrap, tablet_port, pid_file, first_id_empty=False):
        self.host, port = bootstrap.rsplit(":", 1)
        self.coordinator_port = int(port)
        self.tablet_port = tablet_port
        self.pid_file, self.first_id_empty = pid_file, first_id_empty

    def pid_of(self, i):
        name = "" if (i == 0 and self.first_id_empty) else str(i)
        return int(Path(self.pid_file.replace("{id}", name)).read_text())


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--tablet-port", type=int, required=True)
    ap.add_argument("--pid-file", required=True)
    ap.add_argument("--kills", type=int, default=2)
    ap.add_argument("--first-id-empty", action="store_true")
    a = ap.parse_args()
    c = Servers(a.bootstrap, a.tablet_port, a.pid_file, a.first_id_empty)


    cfg = fluss.Config({"bootstrap.servers": a.bootstrap})
    conn = await fluss.FlussConnection.create(cfg)
    admin = conn.get_admin()
    await admin.create_database("bench", ignore_if_exists=True)
    name = f"failover_{int(time.time())}"
    path = await create_log_table(admin, "bench", name, SCHEMA, bucket_count=3, bucket_keys=["id"])
    await wait_ready(admin, path, 3, timeout=60)
    info = await admin.get_table_info(path)
    leaders = bucket_leaders(c, "bench", name)
    writers = []
    for b in range(3):
        rc = handshake(c.host, c.tablet_port + leaders[b])
        try:
            wid = init_writer(rc, "bench", name)
        finally:
            rc.close()
        writers.append(LeaderWriter(c, "bench", name, info.table_id, info.schema_id, b, wid))
    for w in writers:
        w.start()
    unavailable = []
    try:
        for _ in range(a.kills):
            await asyncio.sleep(3.0)
            leader = bucket_leaders(c, "bench", name).get(0, -1)
            assert leader >= 0, "bucket 0 has no leader"
            os.kill(c.pid_of(leader), signal.SIGKILL)
            t_kill = time.monotonic()
            unavailable.append(await unavailable_after(writers[0], t_kill, timeout=300))
    finally:
        for w in writers:
            w.stop_event.set()
        for w in writers:
            w.join(60)
    # a new connection (the old one's metadata names the killed servers),
    # again until the new leaders answer
    await conn.close()
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = await fluss.FlussConnection.create(cfg)
            got = await read_all(conn, conn.get_admin(), path)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            await conn.close()
            await asyncio.sleep(1.0)
    ids = got.column("id").to_pylist()
    acked = {i for w in writers for i in w.acked}
    print(json.dumps({
        "kills": a.kills, "acked": len(acked),
        "p50_s": round(percentile(unavailable, 50), 3),
        "max_s": round(max(unavailable), 3),
        "lost_acked": len(acked - set(ids)), "duplicates": len(ids) - len(set(ids)),
        "other_errors": sum(len(w.other_errors) for w in writers),
    }))
    await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
