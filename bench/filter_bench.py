"""Filtered vs unfiltered log scans through pyfluss (bench/run_filter.sh).

  filter_bench.py BOOTSTRAP TABLET_PORT SERVER_PIDS MODE

MODE stats: the table has table.statistics.columns = 'id' (fluss-c; pyfluss
then writes batches with statistics) and a filtered scan is measured too;
MODE plain: no statistics (the reference refuses the property). Writes
BATCHES batches of ROWS rows (ids ascending, a 200-byte payload), then
scans everything from the earliest offset, and (stats) scans with
`id >= <first id of the last 1 % of batches>`. For each scan: seconds until
the expected rows are in, rows/s, bytes the server sent on the tablet port
(TCP bytes_sent of its connections, from ss) and server CPU seconds
(/proc/PID/stat). Prints one JSON object."""

import asyncio
import json
import os
import re
import subprocess
import sys
import time

import pyarrow as pa

import fluss

BATCHES = int(os.environ.get("BATCHES", "2000"))
ROWS = int(os.environ.get("ROWS", "200"))
BUCKETS = 1
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.float64()),
                    pa.field("payload", pa.string())])


def sockets(port):
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True).stdout
    res, key = {}, None
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].isdigit() and f[1].isdigit():
            key = f[2] + " " + f[3]
            continue
        m = re.search(r"\bbytes_sent:(\d+)", line)
        if key and m:
            res[key] = int(m.group(1))
            key = None
    return res


def cpu_s(pids):
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        with open(f"/proc/{p}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


async def scan(conn, path, port, pids, want_rows, predicate=None):
    table = await conn.get_table(path)
    sc = table.new_scan()
    if predicate is not None:
        sc = sc.filter(predicate)
    scanner = await sc.create_record_batch_log_scanner()
    before, c0, t0 = sockets(port), cpu_s(pids), time.monotonic()
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(BUCKETS)})
    rows = 0
    while rows < want_rows and time.monotonic() - t0 < 300:
        for rb in await scanner.poll_record_batch(200):
            rows += rb.batch.num_rows
    secs = time.monotonic() - t0
    after, c1 = sockets(port), cpu_s(pids)
    sent = sum(v - before.get(k, 0) for k, v in after.items())
    return {"rows": rows, "seconds": round(secs, 3), "rows_per_s": round(rows / secs),
            "bytes_sent": sent, "server_cpu_s": round(c1 - c0, 2)}


async def main():
    bootstrap, port, pids, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    admin = conn.get_admin()
    db = f"filter_bench_{int(time.time())}"
    await admin.create_database(db)
    path = fluss.TablePath(db, "events")
    props = {"table.statistics.columns": "id"} if mode == "stats" else {}
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=BUCKETS,
                                                         properties=props))
    await asyncio.sleep(1)
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for i in range(BATCHES):
        ids = list(range(i * ROWS, (i + 1) * ROWS))
        pads = [os.urandom(100).hex() for _ in range(ROWS)]  # not compressible away
        w.write_arrow(pa.table({"id": ids, "v": [float(i)] * ROWS, "payload": pads},
                               schema=SCHEMA))
        await w.flush()
    total = BATCHES * ROWS
    res = {"mode": mode, "batches": BATCHES, "rows_per_batch": ROWS,
           "full": await scan(conn, path, port, pids, total)}
    if mode == "stats":
        first = (BATCHES - max(1, BATCHES // 100)) * ROWS
        res["filtered"] = await scan(conn, path, port, pids, total - first,
                                     fluss.col("id") >= first)
    await conn.close()
    print(json.dumps(res), flush=True)


asyncio.run(main())
os._exit(0)  # pyfluss 1.0.0's runtime may abort in interpreter teardown
