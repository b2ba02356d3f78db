"""Memory under control with many primary-key buckets (FLUSS_SERVER=ours
only: the test starts a flussd of its own and reads its RSS from /proc).

200 PK buckets are opened and written (1 KiB values) on one tablet server
with a small shared block cache and write-buffer budget; the server's
resident size stays under a bound made of those two plus a fixed
allowance, and every row still looks up. Without the budget each of the
200 RocksDB instances would hold its own memtables (4 MiB each by default)
and block cache.
"""

import os
from pathlib import Path

import pyarrow as pa
import pytest

from conftest import REPO, OurServer, connect
from logutil import new_pk_table

pytestmark = pytest.mark.ours_only

BUCKETS = 200
ROWS = 12000
BUDGET_MB, CACHE_MB = 32, 16
# the process without any kv tablet, RocksDB's per-instance tables and
# file handles, pyarrow-free C server: measured 63 MiB in all with the budget below
ALLOWANCE_MB = 80


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.timeout(300)
async def test_rss_bounded_with_200_pk_buckets(tmp_path):
    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    if "asan" in str(binary) or "tsan" in str(binary):
        pytest.skip("sanitizer builds carry shadow memory: RSS says nothing")
    (tmp_path / "data").mkdir()
    srv = OurServer(binary, tmp_path / "data", tmp_path, [
        f"-Dkv.rocksdb.write-buffer-budget={BUDGET_MB}mb",
        f"-Dkv.rocksdb.shared-block-cache.size={CACHE_MB}mb"])
    srv.start()
    try:
        conn = await connect(srv.bootstrap)
        schema = pa.schema([pa.field("id", pa.int32()), pa.field("payload", pa.string())])
        _, _, table = await new_pk_table(conn, "pkmem", "wide", schema, BUCKETS)
        w = table.new_upsert().create_writer()
        for i in range(ROWS):
            w.upsert({"id": i, "payload": f"{i:08d}" + "x" * 1016})
        await w.flush()
        lk = table.new_lookup().create_lookuper()
        for i in range(0, ROWS, 97):
            r = await lk.lookup({"id": i})
            assert r is not None and r["payload"].startswith(f"{i:08d}"), i
        rss = rss_mb(srv.proc.pid)
        bound = BUDGET_MB + CACHE_MB + ALLOWANCE_MB
        print(f"\nRSS with {BUCKETS} PK buckets, {ROWS} x 1 KiB rows: {rss:.1f} MiB "
              f"(bound {bound} MiB)")
        assert rss < bound, f"RSS {rss:.1f} MiB over {bound} MiB"
        await conn.close()
    finally:
        assert srv.stop() == 0, srv.stderr_tail()
