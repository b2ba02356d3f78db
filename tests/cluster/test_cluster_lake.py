"""Lake tiering in a cluster: the coordinator's tiering service asks each
bucket's leader, a tablet server process of its own, over its internal
listener (TIER_LAKE_BUCKET), and commits the files they wrote into the one
warehouse they share. pyiceberg sees every row once; after a leader is
killed, its buckets' new leaders tier on from the lake offset (the lake
head, not the dead leader, says where), without a duplicate or a gap. A
client listener does not take TIER_LAKE_BUCKET."""

import asyncio
import time

import pyarrow as pa
import pytest

import fluss
from logutil import wait_ready
from rawwire import f_bytes, f_varint
from test_cluster import bucket_leaders, connect, raw_call, retry, wait_log

pyiceberg_table = pytest.importorskip("pyiceberg.table")

TIER_LAKE_BUCKET = 1903
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def lake_args(wh):
    return ("-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
            "-D", f"datalake.iceberg.warehouse={wh}")


async def lake_rows(wh, n, timeout=40.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / "fluss" / "lk"))
            snap = tbl.current_snapshot()
            if snap and int(snap.summary["total-records"]) >= n:
                return tbl.scan().to_arrow()
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.3)
    raise AssertionError(f"the lake does not hold {n} rows")


def exactly_once(got, n):
    pairs = list(zip(got.column("__bucket").to_pylist(), got.column("__offset").to_pylist()))
    assert len(pairs) == len(set(pairs)), "a (bucket, offset) tiered twice"
    assert sorted(got.column("id").to_pylist()) == list(range(n))
    per = {}
    for b, o in pairs:
        per.setdefault(b, []).append(o)
    for b, offs in per.items():
        assert sorted(offs) == list(range(len(offs))), f"bucket {b} has a gap"


async def write(conn, path, lo, hi):
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(pa.Table.from_pydict({"id": list(range(lo, hi)),
                                        "v": [str(i) for i in range(lo, hi)]}, schema=SCHEMA))
    await w.flush()


async def test_lake_tiering_in_a_cluster(cluster, tmp_path):
    wh = tmp_path / "warehouse"
    c = cluster(tablets=3, rf=3, extra=lake_args(wh))
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    path = fluss.TablePath("fluss", "lk")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), bucket_count=3, bucket_keys=["id"],
        properties={"table.datalake.enabled": "true", "table.datalake.freshness": "500ms"}))
    await wait_ready(admin, path, 3)
    leaders = bucket_leaders(c, "fluss", "lk")
    assert len(set(leaders.values())) > 1, leaders  # the buckets' leaders are several processes
    await write(conn, path, 0, 300)
    exactly_once(await lake_rows(wh, 300), 300)

    victim = leaders[0]
    c.kill9(f"tablet-{victim}")
    await wait_log(c, "coordinator", f"tablet server {victim} is gone")
    await retry(lambda: write(conn, path, 300, 600))
    exactly_once(await lake_rows(wh, 600), 600)
    assert victim not in bucket_leaders(c, "fluss", "lk").values()

    # the API is inter-server: a tablet server's client listener refuses it
    port = c.tablet_port + leaders[1]
    body = (f_varint(1, 0) + f_varint(2, 1) + f_varint(4, 0) + f_varint(5, 0)
            + f_bytes(6, b"/tmp") + f_bytes(7, b"x"))
    rtype, e = raw_call(c, port, TIER_LAKE_BUCKET, body)
    assert rtype == 1 and e[0] == 2, e  # UNSUPPORTED_VERSION, as for every internal API
    await conn.close()
