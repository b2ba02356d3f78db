"""Simulated power loss (fluss-c issue 7): a durable mode keeps every
acknowledged record when the machine loses power, not only when the
process dies. FLUSS_SERVER=ours only: each test starts its own flussd.

dm-flakey is not available here, so the "disk" is modelled by the
LD_PRELOAD shim tests/fault/fault_powerloss.c (libfl_powerloss.so, built
next to flussd): it mirrors every fsync'ed file of the data dir into a
shadow dir and keeps only what was synced (DESIGN.md "Fault tests").
A power loss is: SIGKILL flussd in the middle of a stream of acknowledged
writes, replace the data dir by the shadow, start flussd again without the
shim and read back. Then, per case:

* a durable config (`log.flush.interval-messages=1`, with the shim's eager
  and strict directory models; `log.flush.mode=sync`, fluss-c's group-commit
  mode, also with 4 network loops) keeps every acknowledged row exactly once, and each
  bucket's log is a prefix of what was sent to that bucket (offsets from 0
  without holes, rows intact, in order);
* the negative control, the default config (page cache only), must lose the
  acknowledged rows: nothing fsyncs a segment before the kill (small data,
  no roll, no clean close), so the shadow holds no log bytes at all. If it
  kept them the shim would not be doing its job.

With an ASan flussd (make test uses build-asan/flussd) libasan is put first
in LD_PRELOAD (found with ldd), as ASan requires; the shim itself is built
without sanitizers. The shim's self-test (fault_powerloss_selftest) runs
here too, so this file alone proves the shim and then uses it.
"""

import asyncio
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, OurServer, unique
from logutil import create_log_table, latest_offsets, read_batches, wait_ready

pytestmark = [pytest.mark.ours_only,
              pytest.mark.skipif(not IS_OURS, reason="needs FLUSS_SERVER=ours "
                                 "(the test starts flussd with a preloaded shim)")]

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string())])
BUCKETS = 3
KILL_AFTER_ACKS = 150  # the kill comes while later writes are in flight
IN_FLIGHT = 12         # rows appended before their handles are awaited

BINARY = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd")).resolve()
SHIM = BINARY.parent / "libfl_powerloss.so"
SELFTEST = BINARY.parent / "fault_powerloss_selftest"


def row(i):
    return {"id": i, "payload": f"row-{i}-" + "x" * (i % 13)}


def need(path: Path, what: str):
    if not path.is_file():
        pytest.fail(f"{what} {path} not found: build it (cmake target "
                    f"{path.name.removeprefix('lib').removesuffix('.so')}) next to {BINARY}",
                    pytrace=False)


def preload_list(shim: Path) -> str:
    """LD_PRELOAD for `shim` into BINARY: libasan first when BINARY links it
    dynamically (ASan aborts if its runtime is not the first library)."""
    out = subprocess.run(["ldd", str(BINARY)], capture_output=True, text=True).stdout
    m = re.search(r"^\s*libasan\.so[.\d]*\s*=>\s*(\S+)", out, re.M)
    return " ".join(([m.group(1)] if m else []) + [str(shim)])


def start_flussd(data_dir: Path, log_dir: Path, name: str, args=(), env=None) -> OurServer:
    """One flussd run on `data_dir`, on fresh ports, stopped by PID (the
    suite's OurServer: a clean stop exits 0, sanitizer reports fail the
    session)."""
    srv = OurServer(BINARY, data_dir, log_dir, args, env=env, name=name)
    srv.start()
    return srv


def read_stats(path: Path) -> dict:
    text = path.read_text() if path.exists() else ""
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def log_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.log"))


async def write_until_killed(srv: OurServer, path):
    """Appends numbered rows, IN_FLIGHT at a time (each handle awaited on its
    own), and once KILL_AFTER_ACKS rows are acknowledged SIGKILLs the server
    a random 0-5 ms after appending the next rows, i.e. with writes in
    flight. Returns (acked ids, attempted ids in append order). Acks read
    after the kill count too: the server sent them before it died."""
    # one retry (the idempotent writer needs > 0): writes in flight at the
    # kill fail soon and close() does not wait for them for long
    wconn = await fluss.FlussConnection.create(fluss.Config({
        "bootstrap.servers": srv.bootstrap, "writer.batch-timeout-ms": "1",
        "writer.retries": "1"}))
    writer = (await wconn.get_table(path)).new_append().create_writer()
    acked, attempted = [], []
    killed = asyncio.Event()

    async def track(k, handle):
        try:
            await handle.wait()
            acked.append(k)
        except Exception:  # the server died under this write
            pass

    async def produce():
        i = 0
        while not killed.is_set():
            batch = []
            for k in range(i, i + IN_FLIGHT):
                batch.append(asyncio.ensure_future(track(k, writer.append(row(k)))))
                attempted.append(k)
            i += IN_FLIGHT
            if len(acked) >= KILL_AFTER_ACKS:
                delay = random.uniform(0, 0.005)
                await asyncio.sleep(delay)
                before = len(acked)
                assert srv.kill9() == -signal.SIGKILL
                print(f"\nkilled {delay * 1000:.1f} ms after appending rows {i - IN_FLIGHT}.."
                      f"{i - 1}, {len(attempted) - before} rows not yet acknowledged")
                killed.set()
            await asyncio.gather(*batch)

    task = asyncio.create_task(produce())
    try:
        deadline = time.monotonic() + 30
        while not killed.is_set():
            assert time.monotonic() < deadline, f"only {len(acked)} acks in 30s"
            assert not task.done(), task.exception()
            await asyncio.sleep(0.01)
        try:  # let the acks already on the wire arrive, then give up
            await asyncio.wait_for(asyncio.shield(task), 1)
        except asyncio.TimeoutError:
            pass
    finally:
        task.cancel()
        try:
            await task
        except BaseException:
            pass
        try:
            await asyncio.wait_for(wconn.close(), 5)
        except BaseException:
            pass
    return sorted(acked), attempted


def power_loss(data_dir: Path, shadow_dir: Path):
    """The disk as the shim modelled it becomes the data dir."""
    shutil.rmtree(data_dir)
    shutil.copytree(shadow_dir, data_dir, symlinks=True)


async def recovered_buckets(srv: OurServer, path) -> dict:
    """bucket -> ids in offset order, after checking each bucket's batches
    start at 0 and follow each other without holes, rows intact."""
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": srv.bootstrap}))
    try:
        admin = conn.get_admin()
        await wait_ready(admin, path, BUCKETS)
        latest = await latest_offsets(admin, path, BUCKETS)
        rbs = await read_batches(conn, admin, path, sum(latest.values()))
        per_bucket = {b: [] for b in range(BUCKETS)}
        for rb in sorted(rbs, key=lambda r: (r.bucket.bucket_id, r.base_offset)):
            per_bucket[rb.bucket.bucket_id].append(rb)
        out = {}
        for b, batches in per_bucket.items():
            expect, ids = 0, []
            for rb in batches:
                assert rb.base_offset == expect, (
                    f"bucket {b}: hole or overlap at offset {expect}: "
                    f"{[(r.base_offset, r.last_offset) for r in batches]}")
                assert rb.last_offset - rb.base_offset + 1 == rb.batch.num_rows
                expect = rb.last_offset + 1
                for r in rb.batch.to_pylist():
                    assert r == row(r["id"]), f"bucket {b}: garbage row {r!r}"
                    ids.append(r["id"])
            assert expect == latest[b], f"bucket {b}: read {expect} rows, latest {latest[b]}"
            out[b] = ids
        return out
    finally:
        await conn.close()


async def bucket_of(srv: OurServer, db: str, ids) -> dict:
    """id -> bucket, learned from a fresh table with the same bucketing
    (the bucket is a hash of the key modulo the bucket count)."""
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": srv.bootstrap}))
    try:
        admin = conn.get_admin()
        path = await create_log_table(admin, db, "oracle", SCHEMA, bucket_count=BUCKETS,
                                      bucket_keys=["id"])
        writer = (await conn.get_table(path)).new_append().create_writer()
        writer.write_arrow(pa.Table.from_pylist([row(i) for i in ids], schema=SCHEMA))
        await writer.flush()
        out = {}
        for rb in await read_batches(conn, admin, path, len(ids)):
            for i in rb.batch.column("id").to_pylist():
                out[i] = rb.bucket.bucket_id
        assert len(out) == len(ids)
        return out
    finally:
        await conn.close()


async def run_power_loss(tmp_path: Path, args, strict=False):
    """One full experiment; returns (acked, attempted, recovered per bucket,
    shim stats, .log bytes in the data dir and in the shadow at the kill,
    and the restarted server, still running)."""
    need(SHIM, "power-loss shim")
    data, shadow = tmp_path / "data", tmp_path / "shadow"
    data.mkdir()
    shadow.mkdir()
    stats_path = tmp_path / "shim.stats"
    env = {"LD_PRELOAD": preload_list(SHIM), "FL_POWERLOSS_ROOT": str(data),
           "FL_POWERLOSS_SHADOW": str(shadow), "FL_POWERLOSS_STATS": str(stats_path),
           "FL_POWERLOSS_STRICT": "1" if strict else "0"}
    srv = start_flussd(data, tmp_path, "shimmed", args, env)
    try:
        conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": srv.bootstrap}))
        try:
            admin = conn.get_admin()
            db = unique("powerloss")
            await admin.create_database(db)
            path = await create_log_table(admin, db, "log", SCHEMA, bucket_count=BUCKETS,
                                          bucket_keys=["id"])
        finally:
            await conn.close()
        acked, attempted = await write_until_killed(srv, path)
    finally:
        if srv.proc.poll() is None:
            srv.kill9()
    stats = read_stats(stats_path)
    assert stats.get("file_syncs", 0) > 0, (
        f"the shim saw no fsync at all (not preloaded?): {stats_path}, LD_PRELOAD={env['LD_PRELOAD']}")
    sizes = (log_bytes(data), log_bytes(shadow))
    power_loss(data, shadow)
    after = start_flussd(data, tmp_path, "after", args)
    try:
        recovered = await recovered_buckets(after, path)
    except BaseException:
        after.stop()
        raise
    print(f"\nacked {len(acked)} of {len(attempted)} attempted; recovered "
          f"{sum(map(len, recovered.values()))}; .log bytes data/shadow {sizes}; shim {stats}")
    return acked, attempted, recovered, stats, sizes, after, db


# (server args, strict shim: renames and removals durable only after an
# fsync of their directory)
DURABLE = [
    pytest.param(["-D", "log.flush.interval-messages=1"], False, id="flush-every-message"),
    pytest.param(["-D", "log.flush.interval-messages=1"], True, id="flush-every-message-strict"),
    pytest.param(["-D", "log.flush.mode=sync"], False, id="flush-mode-sync"),
    pytest.param(["-D", "log.flush.mode=sync"], True, id="flush-mode-sync-strict"),
    pytest.param(["-D", "log.flush.mode=sync", "-D", "netty.server.num-network-threads=4",
                  "-D", "netty.server.num-worker-threads=3"], False, id="flush-mode-sync-4-loops"),
]


@pytest.mark.parametrize("args,strict", DURABLE)
async def test_powerloss_keeps_acknowledged_rows(tmp_path, args, strict):
    acked, attempted, recovered, stats, sizes, after, db = await run_power_loss(tmp_path, args,
                                                                                strict)
    try:
        ids = [i for b in range(BUCKETS) for i in recovered[b]]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        assert not dupes, f"rows stored twice: {dupes[:20]}"
        missing = sorted(set(acked) - set(ids))
        assert not missing, (f"acknowledged rows lost in the power loss: {missing[:20]} "
                             f"({len(missing)} of {len(acked)})")
        assert set(ids) <= set(attempted), sorted(set(ids) - set(attempted))[:20]
        # each bucket's log is a prefix of the rows sent to that bucket
        where = await bucket_of(after, db, attempted)
        for b in range(BUCKETS):
            sent = [i for i in attempted if where[i] == b]
            got = recovered[b]
            assert got == sent[:len(got)], (
                f"bucket {b} is not a prefix of what was sent: got {got[:30]}..., "
                f"sent {sent[:30]}...")
    finally:
        after.stop()


async def test_powerloss_time_based_flush(tmp_path):
    """log.flush.interval-ms in the default (async) mode: rows acknowledged
    from the page cache are fsynced by the periodic flush, so after waiting
    past the interval a power loss keeps every one of them (without the key
    the same writes are lost: that fails this test)."""
    need(SHIM, "power-loss shim")
    data, shadow = tmp_path / "data", tmp_path / "shadow"
    data.mkdir()
    shadow.mkdir()
    env = {"LD_PRELOAD": preload_list(SHIM), "FL_POWERLOSS_ROOT": str(data),
           "FL_POWERLOSS_SHADOW": str(shadow)}
    args = ["-D", "log.flush.interval-ms=200"]
    srv = start_flussd(data, tmp_path, "shimmed", args, env)
    n = 300
    try:
        conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": srv.bootstrap}))
        try:
            admin = conn.get_admin()
            db = unique("timeflush")
            await admin.create_database(db)
            path = await create_log_table(admin, db, "log", SCHEMA, bucket_count=BUCKETS,
                                          bucket_keys=["id"])
            writer = (await conn.get_table(path)).new_append().create_writer()
            writer.write_arrow(pa.Table.from_pylist([row(i) for i in range(n)], schema=SCHEMA))
            await writer.flush()
        finally:
            await conn.close()
        time.sleep(1.0)  # five flush intervals
    finally:
        srv.kill9()
    power_loss(data, shadow)
    after = start_flussd(data, tmp_path, "after", args)
    try:
        recovered = await recovered_buckets(after, path)
        ids = sorted(i for b in range(BUCKETS) for i in recovered[b])
        assert ids == list(range(n)), f"{n - len(set(ids))} acknowledged rows lost"
    finally:
        after.stop()


async def test_powerloss_without_fsync_loses_acknowledged_rows(tmp_path):
    """Negative control: the default config acknowledges from the page cache,
    so the simulated power loss must lose those rows."""
    acked, attempted, recovered, stats, sizes, after, db = await run_power_loss(tmp_path, [])
    try:
        data_log, shadow_log = sizes
        assert data_log > 0, "nothing reached the segment files"
        assert shadow_log == 0, (
            f"the shadow holds {shadow_log} segment bytes although nothing fsyncs a segment "
            f"in the default config: the shim kept unsynced data")
        ids = [i for b in range(BUCKETS) for i in recovered[b]]
        assert len(acked) >= KILL_AFTER_ACKS
        assert not ids, f"rows survived without any fsync: {ids[:20]}"
    finally:
        after.stop()


@pytest.mark.parametrize("mode", ["eager", "strict"])
def test_shim_selftest(mode, tmp_path):
    """The shim's own model check (also a ctest), against this build."""
    need(SELFTEST, "shim self-test")
    r = subprocess.run([str(SELFTEST), mode], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{mode}: ok" in r.stdout
