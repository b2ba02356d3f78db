"""Primary-key failover of a running cluster (bench/run_cluster.sh): the
time from killing the leader of a primary-key bucket to the first lookup
the new leader answers with the right values.

A three-bucket primary-key table (id INT, name STRING, score BIGINT) is
created with pyfluss; bucket 0 is loaded with --mb MB of 1 KiB rows by
raw PUT_KV batches (acks=all) to its leader. Then that leader is killed
with SIGKILL (not restarted) and a raw LOOKUP of a handful of ids spread
over the load is sent to whichever server GET_METADATA names as the
bucket's leader, every 50 ms, until one answers every id with the value
written; the first time GET_METADATA names another leader is noted too
(the part before it is the server's session timeout running out). Neither
server is told to snapshot first: the new leader builds
the bucket's state from its newest snapshot (if any) and the changelog
after it, as each does by default. Prints one JSON line.

  cluster_pk_failover.py --bootstrap HOST:PORT --tablet-port P --pid-file PATTERN
      [--mb MB] [--timeout S] [--first-id-empty]

Tablet server i serves clients on P + i; its PID is in PATTERN with {id}
replaced by i (--first-id-empty: by nothing for server 0, the
reference's naming)."""

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "cluster"), str(ROOT / "tests" / "interop")]

import pyarrow as pa  # noqa: E402

import fluss  # noqa: E402

from logutil import kv_batch, raw_lookup, wait_ready  # noqa: E402
from rawwire import (ConnectionClosed, as_int32, dec_varint, decode, enc_varint,  # noqa: E402
                     f_bytes, f_varint, handshake)
from test_cluster import bucket_leaders  # noqa: E402

from cluster_failover import Servers  # noqa: E402

ROW_BYTES = 1024
BATCH_ROWS = 500
SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                    pa.field("score", pa.int64(), nullable=False)])


def row(id_, score):
    """CompactedRow of (id, a name padding the row to ~1 KiB, score)."""
    name = (b"r%d-" % score).ljust(ROW_BYTES - 24, b"x")
    return b"\x00" + enc_varint(id_) + enc_varint(len(name)) + name + enc_varint(score)


def score_of(value):
    """A LOOKUP value (2-byte schema id + CompactedRow) -> score."""
    pos = 3
    _, pos = dec_varint(value, pos)
    n, pos = dec_varint(value, pos)
    score, _ = dec_varint(value, pos + n)
    return score


def put(rc, table_id, schema_id, bucket, records):
    """One PUT_KV (acks=all, no writer id) -> error code."""
    data = kv_batch(records, schema_id, -1, -1)
    body = (f_varint(1, -1) + f_varint(2, table_id) + f_varint(3, 30000)
            + f_bytes(5, f_varint(2, bucket) + f_bytes(3, data)))
    rtype, resp = rc.call(1016, body, api_version=1)
    if rtype != 0:
        return 1
    f = decode(decode(resp)[1][0])
    return as_int32(f[3][0]) if 3 in f else 0


def lookup(c, db, name, table_id, ids):
    """-> scores of ids at bucket 0's leader now, or None."""
    leader = bucket_leaders(c, db, name).get(0, -1)
    if leader < 0:
        return None
    try:
        rc = handshake(c.host, c.tablet_port + leader, timeout=5.0)
    except (OSError, ConnectionClosed, socket.timeout):
        return None
    try:
        code, vals = raw_lookup(rc, table_id, 0, [enc_varint(i) for i in ids], score_of)
        return vals if code == 0 else None
    except (OSError, ConnectionClosed, socket.timeout):
        return None
    finally:
        rc.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--tablet-port", type=int, required=True)
    ap.add_argument("--pid-file", required=True)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--first-id-empty", action="store_true")
    a = ap.parse_args()
    c = Servers(a.bootstrap, a.tablet_port, a.pid_file, a.first_id_empty)


    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": a.bootstrap}))
    admin = conn.get_admin()
    await admin.create_database("bench", ignore_if_exists=True)
    name = f"pk_failover_{int(time.time())}"
    path = fluss.TablePath("bench", name)
    schema = fluss.Schema(SCHEMA, primary_keys=["id"])
    await admin.create_table(path, fluss.TableDescriptor(schema, bucket_count=3),
                             ignore_if_exists=False)
    await wait_ready(admin, path, 3, timeout=60)
    info = await admin.get_table_info(path)
    await conn.close()

    # the load: ids 0.., score = id + 1, acks=all at bucket 0's leader
    rows = a.mb * 1_000_000 // ROW_BYTES
    leader = bucket_leaders(c, "bench", name)[0]
    rc = handshake(c.host, c.tablet_port + leader)
    t0 = time.monotonic()
    try:
        for base in range(0, rows, BATCH_ROWS):
            ids = range(base, min(rows, base + BATCH_ROWS))
            code = put(rc, info.table_id, info.schema_id, 0,
                       [(enc_varint(i), row(i, i + 1)) for i in ids])
            assert code == 0, f"PUT_KV answered {code}"
    finally:
        rc.close()
    load_s = time.monotonic() - t0
    probe = sorted({0, rows // 3, rows // 2, 2 * rows // 3, rows - 1})
    want = [i + 1 for i in probe]
    assert lookup(c, "bench", name, info.table_id, probe) == want, "lookups before the kill"

    leader = bucket_leaders(c, "bench", name)[0]
    os.kill(c.pid_of(leader), signal.SIGKILL)
    t_kill = time.monotonic()
    recovered, elected, wrong = None, None, 0
    while time.monotonic() - t_kill < a.timeout:
        if elected is None and bucket_leaders(c, "bench", name).get(0, -1) not in (-1, leader):
            elected = time.monotonic() - t_kill
        got = await asyncio.to_thread(lookup, c, "bench", name, info.table_id, probe)
        if got == want:
            recovered = time.monotonic() - t_kill
            break
        if got is not None:
            wrong += 1  # answered, but not with what was written
        await asyncio.sleep(0.05)
    print(json.dumps({
        "mb": a.mb, "rows": rows, "load_s": round(load_s, 1),
        "killed": leader, "recovered": recovered is not None,
        "leader_elected_s": round(elected, 3) if elected is not None else None,
        "first_lookup_s": round(recovered, 3) if recovered is not None else None,
        "timeout_s": a.timeout, "wrong_answers": wrong,
    }))


if __name__ == "__main__":
    asyncio.run(main())
