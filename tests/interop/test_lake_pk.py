"""Lake tiering of primary-key tables (issue 21, item 5, PK part): the lake
holds a PK table's current rows. Each round walks the changelog in offset
order; a key's new row is written and the row the lake held for it is
position-deleted (Iceberg position-delete files, not equality deletes,
which pyiceberg cannot read); a deleted key's row is position-deleted.
The leader finds a key's row through its lake index (key -> data file,
row), kept between rounds and rebuilt from the lake after a restart.

* Rounds of inserts, updates and deletes through pyfluss's upsert writer:
  after each, pyiceberg's scan of the lake (position deletes applied) is
  exactly the table's rows as pyfluss looks them up, every key once; the
  snapshot is an `overwrite` with position-delete counts in its summary.
* libfluss's lake scanner (`fluss scan --lake-only`) applies the same
  deletes: the CLI prints the same rows.
* kill -9 and a restart: the index is rebuilt from the lake, and the next
  rounds still delete the right rows (no key twice, none lost).
* A partitioned PK table: each partition's buckets are indexed apart.
* duckdb (1.4.4 with its iceberg extension from PyPI) reads the same rows.
* A DECIMAL(38) primary key (FIXED_LEN_BYTE_ARRAY in the lake): updates
  and deletes find their rows through the lake index, and a restart
  rebuilds the index from those files.
"""

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect
from lakeutil import duckdb_scan, lake_session
from logutil import wait_ready
from test_cli_pk import cli, ok

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

SLOW = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string()),
                    ("v", pa.int64())])


@pytest.fixture
async def lake(start_server, tmp_path):
    async with lake_session(start_server, tmp_path, "lakepk") as (srv, state, admin, db, wh):
        yield srv, admin, db, wh, state


def lake_rows(wh, db, name, cols=("id", "name", "v")):
    """{id: row} of the lake's current snapshot as pyiceberg reads it."""
    tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / name))
    got = tbl.scan().to_arrow()
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a key is live twice in the lake"
    return tbl, {r["id"]: tuple(r[c] for c in cols) for r in got.to_pylist()}


async def apply(conn, path, truth, upserts=(), deletes=(), extra=None):
    """Writes upserts ({id, name, v}) and deletes (ids) and mirrors them in truth."""
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    for r in upserts:
        row = dict(r, **(extra or {}))
        w.upsert(row)
        truth[r["id"]] = (r["id"], r["name"], r["v"])
    for i in deletes:
        w.delete(dict({"id": i}, **(extra or {})))
        truth.pop(i, None)
    await w.flush()


def cli_rows(srv, db, name, *args, cols=("id", "name", "v")):
    """{id: row} of `fluss scan` (JSON lines), each id once."""
    out = ok(cli(srv, "scan", f"{db}.{name}", "--format", "json", *args))
    seen = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    got = {r["id"]: tuple(r[c] for c in cols) for r in seen}
    assert len(got) == len(seen), "a key printed twice"
    return got


def tier_now(srv, db, name):
    out = ok(cli(srv, "lake", "tier", f"{db}.{name}", "--now"))
    assert out.startswith("tiered "), out
    return out


async def slow_pk_table(admin, db, name):
    """A new PK table db.name of SCHEMA, 2 buckets, tiered only when asked
    (freshness 1 h); -> its path."""
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=2, properties=SLOW))
    await wait_ready(admin, path, 2)
    return path


async def lookups(conn, path, ids):
    table = await conn.get_table(path)
    lks = [table.new_lookup().create_lookuper() for _ in range(20)]
    ids = list(ids)
    found = await asyncio.gather(*(lks[n % len(lks)].lookup({"id": i}) for n, i in enumerate(ids)))
    return {i: (r["id"], r["name"], r["v"]) for i, r in zip(ids, found) if r is not None}


def row(i, gen):
    return {"id": i, "name": f"n{i}g{gen}" if (i + gen) % 5 else None, "v": i * 1000 + gen}


async def check(srv, conn, path, db, name, wh, truth, ids):
    tbl, got = lake_rows(wh, db, name)
    assert got == truth
    # duckdb's iceberg extension applies the same position deletes
    dk = duckdb_scan(str(wh / db / name), "id, name, v").to_pylist()
    assert len(dk) == len(truth)
    assert {r["id"]: (r["id"], r["name"], r["v"]) for r in dk} == truth
    assert await lookups(conn, path, ids) == truth
    return tbl


async def test_rounds_of_upserts_and_deletes(lake):
    srv, admin, db, wh, state = lake
    conn = state["conn"]
    path = fluss.TablePath(db, "users")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=3, properties=SLOW))
    await wait_ready(admin, path, 3)
    truth = {}
    ids = range(300)
    # round 1: inserts only (an append); then updates and deletes mixed,
    # a key updated twice and a key deleted then re-inserted in one round
    await apply(conn, path, truth, [row(i, 0) for i in range(200)])
    tier_now(srv, db, "users")
    tbl = await check(srv, conn, path, db, "users", wh, truth, ids)
    assert tbl.current_snapshot().summary.operation.value == "append"

    await apply(conn, path, truth, [row(i, 1) for i in range(0, 200, 3)] + [row(i, 1) for i in range(200, 260)],
                deletes=range(1, 200, 10))
    await apply(conn, path, truth, [row(i, 2) for i in range(0, 60, 3)], deletes=[200, 201])
    await apply(conn, path, truth, [row(200, 3)])
    tier_now(srv, db, "users")
    tbl = await check(srv, conn, path, db, "users", wh, truth, ids)
    head = tbl.current_snapshot()
    assert head.summary.operation.value == "overwrite"
    assert int(head.summary["added-position-deletes"]) > 0
    assert int(head.summary["total-delete-files"]) >= 1

    # round 3: deletes only (a round whose only file is a delete file)
    await apply(conn, path, truth, deletes=range(2, 120, 7))
    tier_now(srv, db, "users")
    await check(srv, conn, path, db, "users", wh, truth, ids)

    # libfluss's lake scanner applies the same position deletes
    assert cli_rows(srv, db, "users", "--lake-only") == truth
    lake_truth = dict(truth)

    # changes the lake has not seen: the union read (the snapshot overlaid
    # by key with the changelog after it) is the table as lookups see it,
    # while the lake alone still shows the snapshot
    await apply(conn, path, truth, [row(i, 4) for i in range(0, 300, 11)],
                deletes=range(5, 200, 13))
    assert cli_rows(srv, db, "users") == truth
    assert await lookups(conn, path, ids) == truth
    assert cli_rows(srv, db, "users", "--lake-only") == lake_truth
    # --changelog: the snapshot's rows as +I, then the changes after it
    out = ok(cli(srv, "scan", f"{db}.users", "--changelog", "--format", "json"))
    changes = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    lake_part = changes[:len(lake_truth)]
    assert {r["id"] for r in lake_part} == set(lake_truth)
    assert {r["_change"] for r in lake_part} == {"+I"}
    assert {r["_change"] for r in changes[len(lake_truth):]} >= {"-D", "+U"}
    # --columns must keep the key of a merged read
    r = cli(srv, "scan", f"{db}.users", "--columns", "name")
    assert r.returncode == 2 and "primary key" in r.stderr
    assert cli_rows(srv, db, "users", "--columns", "v,id", cols=("id", "v")) == {
        i: (i, t[2]) for i, t in truth.items()}


@pytest.mark.restarts
async def test_decimal38_key(lake):
    srv, admin, db, wh, state = lake
    conn = state["conn"]
    schema = pa.schema([pa.field("k", pa.decimal128(38, 0), nullable=False), ("v", pa.int64())])
    path = fluss.TablePath(db, "wide_keys")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["k"]), bucket_count=2, properties=SLOW))
    await wait_ready(admin, path, 2)

    def key(i):  # 38 digits, both signs
        return Decimal(f"{'-' if i % 2 else ''}{i % 9 + 1}{i:037d}")

    truth = {}

    async def put(items, deletes=()):
        w = (await conn.get_table(path)).new_upsert().create_writer()
        for i, v in items:
            w.upsert({"k": key(i), "v": v})
            truth[key(i)] = v
        for i in deletes:
            w.delete({"k": key(i)})
            truth.pop(key(i), None)
        await w.flush()

    def lake_now():
        got = pyiceberg_table.StaticTable.from_metadata(
            str(wh / db / "wide_keys")).scan().to_arrow().to_pylist()
        assert len(got) == len({r["k"] for r in got}), "a key is live twice in the lake"
        return {r["k"]: r["v"] for r in got}

    await put([(i, i) for i in range(100)])
    tier_now(srv, db, "wide_keys")
    assert lake_now() == truth
    await put([(i, -i) for i in range(0, 100, 3)], deletes=range(1, 100, 7))
    tier_now(srv, db, "wide_keys")
    assert lake_now() == truth
    dk = duckdb_scan(str(wh / db / "wide_keys"), "k, v").to_pylist()
    assert {r["k"]: r["v"] for r in dk} == truth
    # the index rebuilt from the lake files after a restart
    await state["conn"].close()
    srv.kill9()
    srv.start()
    conn = state["conn"] = await connect(srv.bootstrap)
    await wait_ready(conn.get_admin(), path, 2)
    await put([(i, 1000 + i) for i in range(0, 100, 5)], deletes=range(2, 100, 11))
    tier_now(srv, db, "wide_keys")
    assert lake_now() == truth


async def test_index_rebuilt_after_kill9(lake):
    srv, admin, db, wh, state = lake
    path = await slow_pk_table(admin, db, "crash")
    truth = {}
    ids = range(150)
    await apply(state["conn"], path, truth, [row(i, 0) for i in range(100)])
    tier_now(srv, db, "crash")
    await apply(state["conn"], path, truth, [row(i, 1) for i in range(0, 100, 2)],
                deletes=range(1, 100, 9))
    tier_now(srv, db, "crash")
    await check(srv, state["conn"], path, db, "crash", wh, truth, ids)
    await state["conn"].close()
    srv.kill9()
    srv.start()
    state["conn"] = await connect(srv.bootstrap)
    admin = state["conn"].get_admin()
    await wait_ready(admin, path, 2)
    # the leader's index is gone: the round rebuilds it from the lake and
    # must delete exactly the rows the lake holds for these keys
    await apply(state["conn"], path, truth, [row(i, 2) for i in range(0, 150, 4)],
                deletes=range(3, 100, 11))
    tier_now(srv, db, "crash")
    await check(srv, state["conn"], path, db, "crash", wh, truth, ids)
    await apply(state["conn"], path, truth, [row(i, 3) for i in range(0, 150, 5)])
    tier_now(srv, db, "crash")
    await check(srv, state["conn"], path, db, "crash", wh, truth, ids)


async def test_tier_now_reports_a_bucket_it_could_not_tier(lake):
    """A bucket whose round fails (here: its lake index cannot be rebuilt,
    a data file of the lake was damaged while flussd was down) fails
    `lake tier --now` with the bucket and the reason; the other bucket is
    committed, and the server stays up."""
    srv, admin, db, wh, state = lake
    path = await slow_pk_table(admin, db, "damaged")
    truth = {}
    await apply(state["conn"], path, truth, [row(i, 0) for i in range(100)])
    tier_now(srv, db, "damaged")
    await state["conn"].close()
    srv.kill9()
    files = lake_parquet(wh, db, "damaged")
    assert len(files) == 2, files  # one data file per bucket
    damaged = files[0]
    Path(damaged).write_bytes(b"PAR1 not a parquet file")
    srv.start()
    state["conn"] = await connect(srv.bootstrap)
    await wait_ready(state["conn"].get_admin(), path, 2)
    before = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "damaged"))
    await apply(state["conn"], path, truth, [row(i, 1) for i in range(100)])
    r = cli(srv, "lake", "tier", f"{db}.damaged", "--now")
    assert r.returncode != 0
    assert "was not tiered" in r.stderr and f"{db}.damaged" in r.stderr, r.stderr
    after = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "damaged"))
    assert after.current_snapshot().snapshot_id != before.current_snapshot().snapshot_id
    assert await lookups(state["conn"], path, range(100)) == truth


async def test_partitioned_pk_table(lake):
    srv, admin, db, wh, state = lake
    conn = state["conn"]
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False),
                        pa.field("id", pa.int32(), nullable=False), ("name", pa.string()),
                        ("v", pa.int64())])
    path = fluss.TablePath(db, "daily")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["dt", "id"]), partition_keys=["dt"], bucket_count=2,
        bucket_keys=["id"], properties=SLOW))
    await admin.create_partition(path, {"dt": "2026-01-01"})
    await admin.create_partition(path, {"dt": "2026-01-02"})
    truth = {d: {} for d in ("2026-01-01", "2026-01-02")}
    for d in truth:
        await apply(conn, path, truth[d], [row(i, 0) for i in range(80)], extra={"dt": d})
    tier_now(srv, db, "daily")
    # the same ids in both partitions: a delete in one leaves the other
    await apply(conn, path, truth["2026-01-01"], [row(i, 1) for i in range(0, 80, 3)],
                deletes=range(1, 80, 4), extra={"dt": "2026-01-01"})
    await apply(conn, path, truth["2026-01-02"], deletes=range(0, 80, 5),
                extra={"dt": "2026-01-02"})
    tier_now(srv, db, "daily")
    tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "daily"))
    got = tbl.scan().to_arrow().to_pylist()
    pairs = [(r["dt"], r["id"]) for r in got]
    assert len(pairs) == len(set(pairs))
    for d in truth:
        mine = {r["id"]: (r["id"], r["name"], r["v"]) for r in got if r["dt"] == d}
        assert mine == truth[d], d


def lake_parquet(wh, db, name):
    return sorted(str(p) for p in (wh / db / name / "data").rglob("*.parquet"))


@pytest.mark.parametrize("step", ["offsets", "manifest", "list", "linked"])
async def test_killed_mid_pk_commit(start_server, tmp_path, step):
    """kill -9 at each step of the commit of a round with position deletes
    (test hook FLUSS_TEST_LAKE_KILL): readers see the lake before the
    round or after it, whole; after a restart the leader's index comes
    from the lake again, the next round deletes the right rows, and no
    file of the killed round is left that no snapshot names."""
    wh = tmp_path / "warehouse"
    args = ("-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
            "-D", f"datalake.iceberg.warehouse={wh}", "-D", "lake.orphan-file.min-age=0s")
    srv = start_server(*args)
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = "killpk"
    await admin.create_database(db, ignore_if_exists=True)
    path = await slow_pk_table(admin, db, "t")
    truth = {}
    await apply(conn, path, truth, [row(i, 0) for i in range(120)])
    tier_now(srv, db, "t")
    before = dict(truth)
    await apply(conn, path, truth, [row(i, 1) for i in range(0, 120, 3)],
                deletes=range(1, 120, 7))
    after = dict(truth)
    await conn.close()
    srv.kill9()
    srv.env = {"FLUSS_TEST_LAKE_KILL": step}
    srv.start()
    conn = await connect(srv.bootstrap)
    await wait_ready(conn.get_admin(), path, 2)  # leaders back: the round reaches the hook
    await conn.close()
    r = cli(srv, "lake", "tier", f"{db}.t", "--now")
    assert r.returncode != 0, r.stdout
    assert srv.proc.wait(timeout=30) == -9, r.stderr  # the hook fired
    _, got = lake_rows(wh, db, "t")
    assert got == (after if step == "linked" else before)

    srv.env = None
    srv.start()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    await wait_ready(admin, path, 2)
    await apply(conn, path, truth, [row(i, 2) for i in range(0, 150, 4)],
                deletes=range(2, 120, 9))
    tier_now(srv, db, "t")
    tbl = await check(srv, conn, path, db, "t", wh, truth, range(150))
    # the next round swept the killed one's files: every Parquet file on
    # disk is a data or delete file of the current snapshot
    named = set()
    for task in tbl.scan().plan_files():
        named.add(task.file.file_path[len("file://"):])
        named.update(d.file_path[len("file://"):] for d in task.delete_files)
    assert lake_parquet(wh, db, "t") == sorted(named)
    await conn.close()


async def test_rounds_under_continuous_writes(lake):
    """300 ms rounds while a writer keeps upserting and deleting: every
    snapshot pyiceberg reads meanwhile has each key at most once, and once
    the writer stops and a last round ran, the lake is the table."""
    srv, admin, db, wh, state = lake
    conn = state["conn"]
    path = fluss.TablePath(db, "busy")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=3,
        properties={"table.datalake.enabled": "true", "table.datalake.freshness": "300ms"}))
    await wait_ready(admin, path, 3)
    truth = {}
    stop = asyncio.Event()

    async def writer():
        gen = 0
        while not stop.is_set():
            gen += 1
            ups = [row((gen * 37 + i * 11) % 200, gen) for i in range(25)]
            dels = [(gen * 53 + i * 17) % 200 for i in range(5)]
            await apply(conn, path, truth, ups, deletes=dels)
            await asyncio.sleep(0.05)
        return gen

    task = asyncio.create_task(writer())
    snapshots = set()
    loop = asyncio.get_running_loop()
    for _ in range(10):
        await asyncio.sleep(0.5)
        try:
            tbl, got = await loop.run_in_executor(None, lake_rows, wh, db, "busy")
        except FileNotFoundError:
            continue
        if tbl.current_snapshot():
            snapshots.add(tbl.current_snapshot().snapshot_id)
    stop.set()
    gens = await task
    assert gens > 10
    assert len(snapshots) >= 3, snapshots  # rounds committed while it wrote
    tier_now(srv, db, "busy")
    await check(srv, conn, path, db, "busy", wh, truth, range(200))
    assert cli_rows(srv, db, "busy") == truth


async def test_lake_starts_from_the_kv_state_after_the_changelog_expired(start_server, tmp_path):
    """A PK table whose changelog expired (table.log.ttl, KV snapshots
    covering it) before its lake was turned on (ALTER): the changelog
    cannot rebuild its rows, so the first round writes the bucket's KV
    state as of one offset (+I rows) and later rounds follow the
    changelog from there, position-deleting through the index that round
    built: the lake is the table after each."""
    from test_alter_table import SET, alter

    db = "boot"
    srv, conn, path, wh = await expiring_pk_table(start_server, tmp_path, db)
    truth = {}
    for gen in range(4):  # several 4 KB segments per bucket
        await apply(conn, path, truth, [row(i, gen) for i in range(0, 120)],
                    deletes=range(gen * 10, gen * 10 + 5))
    await wait_log_starts_past(conn, path, truth, {0: 0, 1: 0}, key=200)
    assert alter(srv, db, "t", configs=[("table.datalake.enabled", "true", SET),
                                        ("table.datalake.freshness", "1h", SET)]) == (0, None)
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(220))
    assert "rows from the KV state as of offset" in srv.stderr_tail()
    # the next rounds follow the changelog: updates and deletes of keys
    # the image wrote are position-deleted through the index it built
    await apply(conn, path, truth, [row(i, 10) for i in range(50, 90)], deletes=range(100, 110))
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(220))
    assert cli_rows(srv, db, "t") == truth
    # after a restart the index is rebuilt from the lake, image rows too
    await conn.close()
    srv.restart()
    conn = await connect(srv.bootstrap)
    await wait_ready(conn.get_admin(), path, 2)
    await apply(conn, path, truth, [row(i, 11) for i in range(0, 40)], deletes=range(60, 70))
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(220))
    await conn.close()


@pytest.mark.restarts
async def test_image_replaces_the_lake_after_its_changelog_expired(start_server, tmp_path):
    """The lake holds a PK table's rows, then the lake is turned off; the
    table changes (updates, deletes, new keys) and its changelog expires
    (table.log.ttl) while nothing tiers it. Turned on again, the lake's
    offset lies below the log: the changes in between cannot be told one
    by one, so the round writes the bucket's KV state and position-deletes
    every row the lake held of it. The lake is then the table (deleted
    keys gone too), and later rounds follow the changelog."""
    from test_alter_table import SET, alter

    db = "reimage"
    srv, conn, path, wh = await expiring_pk_table(start_server, tmp_path, db, **SLOW)
    truth = {}
    await apply(conn, path, truth, [row(i, 0) for i in range(150)])
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(300))
    lake_before = offsets_now(srv, db, "t")

    assert alter(srv, db, "t", configs=[("table.datalake.enabled", "false", SET)]) == (0, None)
    for gen in range(1, 4):  # several 4 KB segments per bucket
        await apply(conn, path, truth, [row(i, gen) for i in range(0, 200, 2)],
                    deletes=range(gen, 150, 9))
    await wait_log_starts_past(conn, path, truth, lake_before, key=250)

    assert alter(srv, db, "t", configs=[("table.datalake.enabled", "true", SET)]) == (0, None)
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(300))
    assert "the image replaces the lake's" in srv.stderr_tail()
    assert cli_rows(srv, db, "t", "--lake-only") == truth
    # the changelog from the image on
    await apply(conn, path, truth, [row(i, 10) for i in range(0, 300, 7)], deletes=range(1, 60, 4))
    tier_now(srv, db, "t")
    await check(srv, conn, path, db, "t", wh, truth, range(300))
    await conn.close()


def offsets_now(srv, db, name):
    """{bucket: lake offset} of `fluss lake status`."""
    out = ok(cli(srv, "lake", "status", f"{db}.{name}"))
    res = {}
    for ln in out.splitlines()[2:]:
        _p, b, lake, _latest, _lag, _lag_ms = [x.strip() for x in ln.split("|")]
        res[int(b)] = int(lake)
    return res


async def expiring_pk_table(start_server, tmp_path, db, **props):
    """A flussd that expires logs fast (4 KB segments, 200 ms retention
    checks, no remote tiering, KV snapshots every 200 ms) and a new PK
    table db.t of 2 buckets with table.log.ttl 1 s and props;
    -> (srv, conn, path, warehouse)."""
    from lakeutil import lake_args

    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "log.retention.check-interval=200 ms",
                       "-D", "log.segment.file-size=4kb",
                       "-D", "remote.log.task-interval-duration=0",
                       "-D", "kv.snapshot.interval=200 ms")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    await admin.create_database(db)
    path = fluss.TablePath(db, "t")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=2,
        properties={"table.log.ttl": "1 s", **props}))
    await wait_ready(admin, path, 2)
    return srv, conn, path, wh


async def wait_log_starts_past(conn, path, truth, above, key):
    """Writes row `key` now and then (each write rolls a segment the TTL
    can then delete) until both buckets' logs start past above[bucket]."""
    admin = conn.get_admin()
    await asyncio.sleep(1.5)  # older than the TTL now
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        await apply(conn, path, truth, [row(key, 9)])
        earliest = await admin.list_offsets(path, [0, 1], fluss.OffsetSpec.earliest())
        if all(earliest[b] > above[b] for b in (0, 1)):
            return
        assert asyncio.get_running_loop().time() < deadline, (earliest, above)
        await asyncio.sleep(0.3)
