"""SIGTERM while every role is busy ends flussd cleanly (exit 0, no
sanitizer report): a local flussd with lake tiering (1 s freshness),
tiered log segments and writes to a PK and a log table is stopped at a
random moment, several times. The coordinator's clients of the tablet
servers used to outlive those servers at teardown: its reconnect timer
then opened a local connection on a freed server (a heap-use-after-free
under ASan; a hang or crash without it)."""

import asyncio
import random
import time

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect
from lakeutil import lake_args
from logutil import wait_ready

pytestmark = [pytest.mark.skipif(not IS_OURS, reason="starts its own flussd"),
              pytest.mark.timeout(300)]

SCHEMA = pa.schema([("id", pa.int32()), ("v", pa.string())])
CYCLES = 6


async def busy_until(conn, tables, until):
    n = 0
    while time.monotonic() < until:
        for path, pk in tables:
            t = await conn.get_table(path)
            ids = list(range(n, n + 300))
            if pk:
                w = t.new_upsert().create_writer()
                for i in ids:
                    w.upsert({"id": i, "v": "x" * 40})
            else:
                w = t.new_append().create_writer()
                w.write_arrow_batch(pa.record_batch(
                    [pa.array(ids, pa.int32()), pa.array(["x" * 40] * len(ids))], schema=SCHEMA))
            await w.flush()
        n = (n + 300) % 3000


async def test_sigterm_under_load_exits_cleanly(start_server, tmp_path):
    rng = random.Random(20261207)
    for cycle in range(CYCLES):
        srv = start_server(*lake_args(tmp_path / f"wh{cycle}"),
                           "-D", f"remote.data.dir={tmp_path / f'remote{cycle}'}",
                           "-D", "log.segment.file-size=64kb")
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        await admin.create_database("db", ignore_if_exists=True)
        tables = []
        for name, pk in (("pk", ["id"]), ("lg", None)):
            path = fluss.TablePath("db", name)
            schema = fluss.Schema(SCHEMA, primary_keys=pk) if pk else fluss.Schema(SCHEMA)
            await admin.create_table(path, fluss.TableDescriptor(
                schema, bucket_count=3,
                properties={"table.datalake.enabled": "true",
                            "table.datalake.freshness": "1s"}))
            await wait_ready(admin, path, 3)
            tables.append((path, pk))
        await busy_until(conn, tables, time.monotonic() + rng.uniform(1.0, 4.0))
        t0 = time.monotonic()
        rc = srv.stop()
        took = time.monotonic() - t0
        await conn.close()
        assert rc == 0, f"cycle {cycle}: exit {rc}; stderr:\n{srv.stderr_tail()}"
        assert took < 10, f"cycle {cycle}: SIGTERM took {took:.1f} s"
