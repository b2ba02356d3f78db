import asyncio, time, pytest
import fluss
from test_cluster import connect, upsert, lookup_all, retry, SCHEMA
from logutil import wait_ready
async def test_dbg(cluster):
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    pk = fluss.TablePath("fluss", "pk")
    await admin.create_table(pk, fluss.TableDescriptor(fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=3))
    await wait_ready(admin, pk, 3)
    await upsert(conn, pk, 0, 300)
    await conn.close()
    c.kill9("tablet-0")
    deadline = time.monotonic() + 30
    while "after server 0 went" not in c.log("coordinator"):
        await asyncio.sleep(0.1)
    conn = await connect(c.bootstrap)
    got = await retry(lambda: lookup_all(conn, pk, 0, 300))
    missing = [k for k, v in got.items() if v is None]
    print("DIR", c.dir, "missing", len(missing), missing[:10])
