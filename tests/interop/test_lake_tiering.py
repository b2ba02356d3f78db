"""Lake tiering (issue 21, item 5, log tables): flussd tiers every lake
table into its Iceberg table itself, one round per `table.datalake.freshness`
(no Flink job). Rows written through pyfluss appear in the Iceberg table as
pyiceberg reads it: every row once, with `__bucket` its Fluss bucket,
`__offset` its log offset and `__timestamp` its batch's commit time; each
snapshot's `fluss-offsets` file holds every bucket's lake offset (Fluss's
TableBucketOffsets JSON) and its summary Fluss's commit user and counts.

* Rounds keep up with a table that is written to between them (three
  snapshots, no duplicate, no gap), also of a partitioned table (its spec
  identity(dt) + identity(__bucket)) and across ADD COLUMN (old files read
  the new column as null).
* kill -9 and a restart: the next round continues from the lake head,
  nothing twice, nothing lost.
* GET_LAKE_SNAPSHOT (pyfluss's get_latest_lake_snapshot) answers the lake
  head's snapshot id and every tiered bucket's offset, partitions too.
* The commit point is the lake alone: a round never tiers a range the head
  already has.
* `iceberg.write.parquet.compression-codec` snappy and gzip: the data and
  delete files have those pages and every reader reads them; lz4 is
  refused at CREATE.
* Decimals past 18 digits (FIXED_LEN_BYTE_ARRAY, as Iceberg's writers
  store them): pyiceberg and duckdb read every value back, and pyiceberg's
  filters, which skip files by our bounds, find exactly the matching rows.
"""

import asyncio
import json
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect, unique
from lakeutil import duckdb_scan, lake_args, lake_session
from logutil import wait_ready
from test_alter_table import alter

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

FAST = {"table.datalake.enabled": "true", "table.datalake.freshness": "500ms"}
SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string()),
                    ("ts", pa.timestamp("ms", tz="UTC")), ("score", pa.float64())])


def rows(lo, hi):
    return pa.Table.from_pydict({
        "id": list(range(lo, hi)),
        "name": [f"n{i}" if i % 7 else None for i in range(lo, hi)],
        "ts": [1_700_000_000_000 + i for i in range(lo, hi)],
        "score": [i / 4 for i in range(lo, hi)]}, schema=SCHEMA)


def lake_table(wh, db, name):
    return pyiceberg_table.StaticTable.from_metadata(str(wh / db / name))


async def wait_lake_rows(wh, db, name, n, timeout=30.0):
    """The Iceberg table once its current snapshot holds n rows."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            tbl = lake_table(wh, db, name)
            snap = tbl.current_snapshot()
            if snap and int(snap.summary["total-records"]) >= n:
                return tbl
            last = snap
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"the lake has not {n} rows after {timeout}s: {last}")


def offsets_of(snap):
    path = snap.summary["fluss-offsets"]
    assert path.startswith("file://")
    return json.loads(Path(path[len("file://"):]).read_text())


def check_exactly_once(got: pa.Table, ids):
    pairs = list(zip(got.column("__bucket").to_pylist(), got.column("__offset").to_pylist()))
    assert len(pairs) == len(set(pairs)), "a (bucket, offset) tiered twice"
    assert sorted(got.column("id").to_pylist()) == sorted(ids)
    # per bucket the offsets are contiguous from 0
    by_bucket = {}
    for b, o in pairs:
        by_bucket.setdefault(b, []).append(o)
    for b, offs in by_bucket.items():
        assert sorted(offs) == list(range(len(offs))), f"bucket {b} has a gap"


@pytest.fixture
async def lake(start_server, tmp_path):
    async with lake_session(start_server, tmp_path, "tierdb") as (srv, state, admin, db, wh):
        yield srv, admin, db, wh, state


async def write(conn, path, table):
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(table)
    await w.flush()


async def test_log_table_rounds(lake):
    srv, admin, db, wh, state = lake
    path = fluss.TablePath(db, "events")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=3,
                                                         properties=FAST))
    await wait_ready(admin, path, 3)
    conn = state["conn"]
    t0 = int(time.time() * 1000)
    for lo, hi in [(0, 100), (100, 250), (250, 400)]:
        await write(conn, path, rows(lo, hi))
        tbl = await wait_lake_rows(wh, db, "events", hi)
    got = tbl.scan().to_arrow()
    assert got.num_rows == 400
    check_exactly_once(got, range(400))
    # duckdb's iceberg extension reads the same table
    check_exactly_once(duckdb_scan(str(wh / db / "events"), "id, __bucket, __offset"), range(400))
    want = rows(0, 400).to_pylist()
    by_id = {r["id"]: r for r in got.select(["id", "name", "ts", "score"]).to_pylist()}
    for r in want:
        g = by_id[r["id"]]
        assert g["name"] == r["name"] and g["score"] == r["score"]
        assert g["ts"] == r["ts"]  # TIMESTAMP_LTZ(3) -> timestamptz in µs, same instant
    stamps = got.column("__timestamp").to_pylist()
    assert all(t0 - 60_000 <= s.timestamp() * 1000 <= time.time() * 1000 + 1000 for s in stamps)

    snaps = tbl.snapshots()
    assert len(snaps) >= 2
    assert [s.sequence_number for s in snaps] == list(range(1, len(snaps) + 1))
    ids = [s.snapshot_id for s in snaps]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # monotonic
    head = tbl.current_snapshot()
    assert head.summary.operation.value == "append"
    assert head.summary["commit-user"] == "__fluss_lake_tiering"
    assert head.summary["total-records"] == "400"
    offs = offsets_of(head)
    assert offs["version"] == 1
    assert offs["table_id"] == (await admin.get_table_info(path)).table_id
    latest = await admin.list_offsets(path, [0, 1, 2], fluss.OffsetSpec.latest())
    assert offs["bucket_offsets"] == [latest[b] for b in range(3)]
    # GET_LAKE_SNAPSHOT (pyfluss) answers the lake head: its snapshot id
    # and every bucket's lake offset
    snap = await admin.get_latest_lake_snapshot(path)
    assert snap.snapshot_id == head.snapshot_id
    got_offsets = {tb.bucket_id: o for tb, o in snap.table_buckets_offset.items()}
    assert got_offsets == {b: latest[b] for b in range(3)}
    assert all(tb.table_id == offs["table_id"] and tb.partition_id is None
               for tb in snap.get_table_buckets())
    # the bucket is the partition value: pyiceberg prunes by it
    busy = max(range(3), key=lambda b: latest[b])  # pyfluss picks a bucket per batch
    one = tbl.scan(row_filter=f"__bucket == {busy}").to_arrow()
    assert set(one.column("__bucket").to_pylist()) == {busy}
    assert one.num_rows == latest[busy]


@pytest.mark.parametrize("codec", ["snappy", "gzip"])
async def test_parquet_codecs(lake, codec):
    import pyarrow.parquet as pq
    srv, admin, db, wh, state = lake
    path = fluss.TablePath(db, f"c_{codec}")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), bucket_count=2, properties=FAST,
        custom_properties={"iceberg.write.parquet.compression-codec": codec}))
    await wait_ready(admin, path, 2)
    await write(state["conn"], path, rows(0, 200))
    tbl = await wait_lake_rows(wh, db, path.table_name, 200)
    assert tbl.properties["write.parquet.compression-codec"] == codec
    got = tbl.scan().to_arrow()
    check_exactly_once(got, range(200))
    assert sorted(got.select(["id", "name", "ts", "score"]).to_pylist(),
                  key=lambda r: r["id"]) == rows(0, 200).to_pylist()
    files = [t.file.file_path for t in tbl.scan().plan_files()]
    assert files
    for f in files:
        md = pq.ParquetFile(f[len("file://"):] if f.startswith("file://") else f).metadata
        assert {md.row_group(g).column(c).compression for g in range(md.num_row_groups)
                for c in range(md.num_columns)} == {codec.upper()}
    check_exactly_once(duckdb_scan(str(wh / db / path.table_name), "id, __bucket, __offset"),
                       range(200))
    # a codec our writer does not make is refused before anything exists
    with pytest.raises(fluss.FlussError) as ei:
        await admin.create_table(fluss.TablePath(db, f"lz4_{codec}"), fluss.TableDescriptor(
            fluss.Schema(SCHEMA), bucket_count=1, properties=FAST,
            custom_properties={"iceberg.write.parquet.compression-codec": "lz4"}))
    assert "compression-codec" in str(ei.value)


WIDE = pa.schema([pa.field("id", pa.int32(), nullable=False), ("d38", pa.decimal128(38, 6)),
                  ("d20", pa.decimal128(20, 0)), ("d9", pa.decimal128(9, 2))])


def wide_rows(lo, hi):
    def d38(i):
        if i % 11 == 0:
            return None
        if i % 50 == 1:  # the extremes of 38 digits
            return Decimal(("-" if i % 100 == 1 else "") + "9" * 32 + "." + "9" * 6)
        return Decimal(f"{'-' if i % 2 else ''}{i}{'7' * 25}.{i % 1000000:06d}")
    return pa.Table.from_pydict({
        "id": list(range(lo, hi)),
        "d38": [d38(i) for i in range(lo, hi)],
        "d20": [Decimal(f"{'-' if i % 3 == 0 else ''}{i % 9 + 1}{i:019d}") for i in range(lo, hi)],
        "d9": [Decimal(f"{i}.{i % 100:02d}") for i in range(lo, hi)]}, schema=WIDE)


async def test_wide_decimals(lake):
    srv, admin, db, wh, state = lake
    path = fluss.TablePath(db, "wide")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(WIDE), bucket_count=2,
                                                         properties=FAST))
    await wait_ready(admin, path, 2)
    want = {}
    for lo, hi in [(0, 150), (150, 300)]:
        t = wide_rows(lo, hi)
        want.update({r["id"]: r for r in t.to_pylist()})
        await write(state["conn"], path, t)
        tbl = await wait_lake_rows(wh, db, "wide", hi)
    assert [(f.name, str(f.field_type)) for f in tbl.schema().fields][:4] == [
        ("id", "int"), ("d38", "decimal(38, 6)"), ("d20", "decimal(20, 0)"),
        ("d9", "decimal(9, 2)")]
    got = tbl.scan().to_arrow()
    check_exactly_once(got, range(300))
    for r in got.select(["id", "d38", "d20", "d9"]).to_pylist():
        assert r == want[r["id"]], r
    duck = duckdb_scan(str(wh / db / "wide"), "id, d38, d20").to_pylist()
    assert len(duck) == 300
    for r in duck:
        assert r["d38"] == want[r["id"]]["d38"] and r["d20"] == want[r["id"]]["d20"], r
    # filters prune files by the manifests' bounds: wrong bounds lose rows
    from pyiceberg import expressions as ex
    import operator
    for op, name, bound in [
            (operator.gt, "GreaterThan", Decimal("2" + "7" * 25 + ".000000")),
            (operator.lt, "LessThan", Decimal("-2" + "7" * 25 + ".000000")),
            (operator.ge, "GreaterThanOrEqual", Decimal("9" * 32 + "." + "9" * 6)),
            (operator.le, "LessThanOrEqual", Decimal("-" + "9" * 32 + "." + "9" * 6))]:
        expect = sorted(i for i, r in want.items() if r["d38"] is not None and op(r["d38"], bound))
        assert expect, name
        hit = tbl.scan(row_filter=getattr(ex, name)("d38", bound)).to_arrow()
        assert sorted(hit.column("id").to_pylist()) == expect, name
    big = Decimal("5" + "0" * 19)
    hit = tbl.scan(row_filter=ex.GreaterThan("d20", big)).to_arrow()
    assert sorted(hit.column("id").to_pylist()) == sorted(
        i for i, r in want.items() if r["d20"] > big)


async def test_partitioned_and_add_column(lake):
    srv, admin, db, wh, state = lake
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
    path = fluss.TablePath(db, "parts")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema), partition_keys=["dt"], bucket_count=2, properties=FAST))
    for dt in ("a", "b"):
        await admin.create_partition(path, {"dt": dt})
    conn = state["conn"]
    await write(conn, path, pa.Table.from_pydict(
        {"dt": ["a", "b"] * 30, "id": list(range(60)), "v": [str(i) for i in range(60)]},
        schema=schema))
    tbl = await wait_lake_rows(wh, db, "parts", 60)
    got = tbl.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(60))
    assert all((dt == "a") == (i % 2 == 0) for dt, i in
               zip(got.column("dt").to_pylist(), got.column("id").to_pylist()))
    offs = offsets_of(tbl.current_snapshot())
    assert sorted(p["partition_id"] for p in offs["partition_offsets"]) == \
        sorted(p.partition_id for p in await admin.list_partition_infos(path))
    snap = await admin.get_latest_lake_snapshot(path)
    assert snap.snapshot_id == tbl.current_snapshot().snapshot_id
    want = {(p["partition_id"], b): o for p in offs["partition_offsets"]
             for b, o in enumerate(p["bucket_offsets"]) if o >= 0}
    assert {(tb.partition_id, tb.bucket_id): o
            for tb, o in snap.table_buckets_offset.items()} == want
    a_only = tbl.scan(row_filter="dt == 'a'").to_arrow()
    assert sorted(a_only.column("id").to_pylist()) == list(range(0, 60, 2))

    # ADD COLUMN: the lake table takes it; older files read it as null
    assert alter(srv, db, "parts", adds=[("extra", {"type": "INTEGER"}, 0)]) == (0, None)
    schema2 = schema.append(pa.field("extra", pa.int32()))
    await write(await connect(srv.bootstrap), path, pa.Table.from_pydict(
        {"dt": ["a"] * 5, "id": list(range(60, 65)), "v": ["x"] * 5, "extra": [7] * 5},
        schema=schema2))
    tbl = await wait_lake_rows(wh, db, "parts", 65)
    got = tbl.scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in got) == list(range(65))
    assert all(r["extra"] == (7 if r["id"] >= 60 else None) for r in got)


async def test_kill9_continues_without_duplicates(lake):
    srv, admin, db, wh, state = lake
    path = fluss.TablePath(db, "crash")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=2,
                                                         properties=FAST))
    await wait_ready(admin, path, 2)
    await write(state["conn"], path, rows(0, 120))
    await wait_lake_rows(wh, db, "crash", 120)
    await state["conn"].close()
    srv.kill9()
    srv.start()
    state["conn"] = await connect(srv.bootstrap)
    admin = state["conn"].get_admin()
    await wait_ready(admin, path, 2)
    await write(state["conn"], path, rows(120, 200))
    tbl = await wait_lake_rows(wh, db, "crash", 200)
    got = tbl.scan().to_arrow()
    check_exactly_once(got, range(200))


def local_logs(srv, db, table, table_id):
    d = srv.data_dir / "tablet-server-0" / db / f"{table}-{table_id}" / "log-0"
    return sorted(p.name for p in d.glob("*.log"))


async def test_segments_stay_until_tiered(start_server, tmp_path):
    """Remote log tiering deletes local segments it uploaded, keeping two;
    a lake table's replica keeps every segment the lake lacks (the
    coordinator tells each bucket's lake offset with
    NOTIFY_LAKE_TABLE_OFFSET after a round), so a round that comes late
    still finds its range in the local log, and after it the segments
    go."""
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "log.segment.file-size=4kb",
                       "-D", "log.index.interval-size=1kb",
                       "-D", "remote.log.task-interval-duration=200 ms",
                       "-D", f"remote.data.dir={tmp_path / 'remote'}")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("guard")
    await admin.create_database(db)
    slow = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
    lake = fluss.TablePath(db, "lake")
    plain = fluss.TablePath(db, "plain")
    await admin.create_table(lake, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=1,
                                                         properties=slow))
    await admin.create_table(plain, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=1))
    for p in (lake, plain):
        await wait_ready(admin, p, 1)
        for lo in range(0, 1200, 200):
            await write(conn, p, rows(lo, lo + 200))
    lake_id = (await admin.get_table_info(lake)).table_id
    plain_id = (await admin.get_table_info(plain)).table_id
    deadline = time.monotonic() + 20
    while len(local_logs(srv, db, "plain", plain_id)) > 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert len(local_logs(srv, db, "plain", plain_id)) == 2  # tiering deleted the rest
    kept = local_logs(srv, db, "lake", lake_id)
    assert len(kept) > 4 and kept[0] == f"{0:020d}.log", kept  # the lake has none of it

    # the lake's round comes: it reads all of it locally, then they go
    assert alter(srv, db, "lake", configs=[("table.datalake.freshness", "300ms", 0)]) == (0, None)
    got = (await wait_lake_rows(wh, db, "lake", 1200)).scan().to_arrow()
    check_exactly_once(got, range(1200))
    deadline = time.monotonic() + 20
    while len(local_logs(srv, db, "lake", lake_id)) > 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert len(local_logs(srv, db, "lake", lake_id)) == 2
    await conn.close()


def lake_files(wh, db, name):
    d = wh / db / name
    return (sorted(str(p) for p in (d / "data").rglob("*.parquet")),
            sorted(p.name for p in (d / "metadata").iterdir()))


@pytest.mark.parametrize("step", ["offsets", "manifest", "list", "linked"])
async def test_killed_mid_commit(start_server, tmp_path, step):
    """kill -9 at each step of a round's commit (test hook
    FLUSS_TEST_LAKE_KILL): readers see the version before the round or
    the one after it, whole; after a restart the next round goes on from
    the lake head without a duplicate or a gap, and the files of the
    killed round that no version names are removed
    (lake.orphan-file.min-age 0 s here)."""
    wh = tmp_path / "warehouse"
    args = (*lake_args(wh), "-D", "lake.orphan-file.min-age=0s")
    srv = start_server(*args, env={"FLUSS_TEST_LAKE_KILL": step})
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("kill")
    await admin.create_database(db)
    path = fluss.TablePath(db, "t")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=2,
                                                         properties=FAST))
    await wait_ready(admin, path, 2)
    await write(conn, path, rows(0, 200))
    await conn.close()
    assert srv.proc.wait(timeout=30) == -9  # the hook fired
    tbl = lake_table(wh, db, "t")
    snap = tbl.current_snapshot()
    if step == "linked":
        assert snap is not None and tbl.scan().to_arrow().num_rows == 200
    else:
        assert snap is None and tbl.scan().to_arrow().num_rows == 0
        parquet, _ = lake_files(wh, db, "t")
        assert parquet, "the leaders wrote the round's files before the commit"

    srv.env = None
    srv.start()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    await wait_ready(admin, path, 2)
    await write(conn, path, rows(200, 300))
    tbl = await wait_lake_rows(wh, db, "t", 300)
    check_exactly_once(tbl.scan().to_arrow(), range(300))
    # no orphan left: every data file is in the table, and metadata/ holds
    # only versions, the hint, and what the snapshots name
    parquet, meta = lake_files(wh, db, "t")
    live = sorted(t.file.file_path[len("file://"):] for t in tbl.scan().plan_files())
    assert parquet == live
    named = set()
    for s in tbl.snapshots():
        named.add(Path(s.manifest_list).name)
        named.add(Path(s.summary["fluss-offsets"]).name)
        named.update(Path(m.manifest_path).name for m in s.manifests(tbl.io))
    extra = [m for m in meta if not (m.endswith(".metadata.json") or m == "version-hint.text"
                                     or m in named)]
    assert not extra, extra
    await conn.close()


async def test_partition_tiered_before_drop(lake):
    """DROP_PARTITION of a lake table waits for a tiering round (the table's
    freshness is an hour: only the drop asks for one), so the partition's
    rows up to its high watermark are in the lake table once it is gone
    from Fluss; a table without a lake drops at once, and a drop of a
    missing partition is refused as before."""
    srv, admin, db, wh, state = lake
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    path = fluss.TablePath(db, "dropped")
    slow = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema), partition_keys=["dt"], bucket_count=2, properties=slow))
    for dt in ("a", "b"):
        await admin.create_partition(path, {"dt": dt})
    await write(state["conn"], path, pa.Table.from_pydict(
        {"dt": ["a", "b"] * 20, "id": list(range(40))}, schema=schema))
    assert lake_table(wh, db, "dropped").current_snapshot() is None  # nothing tiered yet
    await admin.drop_partition(path, {"dt": "a"})
    assert [p.partition_name for p in await admin.list_partition_infos(path)] == ["b"]
    got = lake_table(wh, db, "dropped").scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(40))  # a's rows, and b's
    assert set(got.column("dt").to_pylist()) == {"a", "b"}
    with pytest.raises(Exception, match="(?i)partition"):
        await admin.drop_partition(path, {"dt": "zz"})
    plain = fluss.TablePath(db, "plainparts")
    await admin.create_table(plain, fluss.TableDescriptor(
        fluss.Schema(schema), partition_keys=["dt"], bucket_count=1))
    await admin.create_partition(plain, {"dt": "a"})
    await admin.drop_partition(plain, {"dt": "a"})
    assert await admin.list_partition_infos(plain) == []


@pytest.mark.timeout(120)
async def test_expired_partitions_tiered_first(tmp_path):
    """Auto-partitioning's retention drops a lake table's expired
    partitions only after a tiering round it asked for (freshness an hour:
    no other round comes), so their rows are in the lake table when they
    leave Fluss."""
    from test_auto_partition import ClockedServer, at, create, props, wait_partitions
    from test_auto_partition import write as write_rows
    wh = tmp_path / "warehouse"
    cs = ClockedServer(tmp_path, at("2024-09-10T05:30:00+00:00"), *lake_args(wh))
    conn = await connect(cs.srv.bootstrap)
    try:
        admin = conn.get_admin()
        db = unique("aplake")
        await admin.create_database(db)
        p = props("HOUR", precreate=2, retention=1, zone="UTC")
        p.update({"table.datalake.enabled": "true", "table.datalake.freshness": "1h"})
        path = await create(admin, db, "hourly", p, buckets=2)
        await wait_partitions(admin, path, {"2024091005", "2024091006"})
        await write_rows(conn, path, [{"id": i, "v": f"a{i}", "dt": "2024091005"} for i in range(10)]
                         + [{"id": i, "v": f"b{i}", "dt": "2024091006"} for i in range(10, 20)])
        assert lake_table(wh, db, "hourly").current_snapshot() is None
        cs.set(at("2024-09-10T07:30:00+00:00"))  # 05 expires
        await wait_partitions(admin, path, {"2024091006", "2024091007", "2024091008"})
        got = lake_table(wh, db, "hourly").scan().to_arrow()
        assert sorted(got.column("id").to_pylist()) == list(range(20))  # 05's rows, and 06's
    finally:
        await conn.close()
        cs.srv.stop()
