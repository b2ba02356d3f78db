"""Lake freshness: how long after the server acknowledged a row pyiceberg
sees it in the lake table, at a given table.datalake.freshness.

    lake_freshness.py BOOTSTRAP WAREHOUSE SERVER_PID FRESHNESS SECONDS [JOB_PID]

A writer appends one row every 100 ms through pyfluss (acks=all) and
records when the server acknowledged it (flush returned); a reader opens the
Iceberg table from its directory every 50 ms and records when each row first
appears. Prints one JSON line: the latency p50/p90/p99/max in ms over the
rows acknowledged in the run, the rounds committed, and the server's CPU
seconds (/proc) over the run, and with JOB_PID the tiering job's (a JVM
running Fluss's own Flink tiering job against the server)."""

import asyncio
import json
import sys
import time

import pyarrow as pa
from pyiceberg.table import StaticTable

import fluss


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def main():
    bootstrap, wh, pid, freshness, seconds = sys.argv[1:6]
    job_pid = int(sys.argv[6]) if len(sys.argv) > 6 else None
    seconds = float(seconds)
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    admin = conn.get_admin()
    db = f"fresh{int(time.time())}"
    await admin.create_database(db, ignore_if_exists=True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("sent_ms", pa.int64())])
    path = fluss.TablePath(db, "t")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema), bucket_count=1,
        properties={"table.datalake.enabled": "true", "table.datalake.freshness": freshness}))
    table_dir = f"{wh}/{db}/t"
    writer = (await conn.get_table(path)).new_append().create_writer()
    acked = {}
    seen = {}
    cpu0 = cpu_seconds(int(pid))
    job0 = cpu_seconds(job_pid) if job_pid else 0.0
    t_end = time.monotonic() + seconds

    async def write():
        i = 0
        while time.monotonic() < t_end:
            writer.write_arrow(pa.Table.from_pydict({"id": [i], "sent_ms": [0]}, schema=schema))
            await writer.flush()
            acked[i] = time.monotonic()
            i += 1
            await asyncio.sleep(0.1)

    async def read():
        last_snap = None
        rounds = 0
        while time.monotonic() < t_end + 3 * float(freshness.rstrip("s")) + 5:
            try:
                tbl = StaticTable.from_metadata(table_dir)
                snap = tbl.current_snapshot()
                if snap and snap.snapshot_id != last_snap:
                    now = time.monotonic()
                    last_snap = snap.snapshot_id
                    rounds += 1
                    for i in tbl.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist():
                        seen.setdefault(i, now)
                if acked and len(seen) >= len(acked) and time.monotonic() > t_end:
                    break
            except FileNotFoundError:
                pass
            await asyncio.sleep(0.05)
        return rounds

    _, rounds = await asyncio.gather(write(), read())
    cpu = cpu_seconds(int(pid)) - cpu0
    job_cpu = cpu_seconds(job_pid) - job0 if job_pid else 0.0
    lat = [(seen[i] - acked[i]) * 1000 for i in acked if i in seen]
    missing = [i for i in acked if i not in seen]
    await conn.close()
    print(json.dumps({"freshness": freshness, "rows": len(acked), "missing": len(missing),
                      "rounds": rounds, "p50_ms": round(pct(lat, 50)), "p90_ms": round(pct(lat, 90)),
                      "p99_ms": round(pct(lat, 99)), "max_ms": round(max(lat)),
                      "server_cpu_s": round(cpu, 2), "job_cpu_s": round(job_cpu, 2),
                      "seconds": seconds}))


asyncio.run(main())
