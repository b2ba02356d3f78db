"""Auto-partitioned tables through pyfluss (`table.auto-partition.*`).

Against either server: CREATE TABLE pre-creates exactly the partitions the
reference would for every time unit (values computed here from the clock
and the table's time zone; the reference creates them just after the call,
fluss-c before it answers).

Ours only (flussd's test clock, `auto-partition.test.clock-file`, and a
100 ms `auto-partition.check.interval`): moving the clock creates new
partitions and drops expired ones with their data directories; rows written
to auto-created partitions read back; a restart goes on without duplicates;
`max.partition.num` / `max.bucket.num` stop auto-creation (and refuse manual
partitions with the reference's errors); DAY tables in a DST zone; several
partition keys expire by their time key only.
"""

import asyncio
import calendar
import datetime
import os
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, OurServer, connect, expect_error, unique

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.string()),
                    pa.field("dt", pa.string())])
CHECK_INTERVAL = "100ms"
# the clocked tests start flussd themselves: nothing to run against the reference
clocked = pytest.mark.skipif(not IS_OURS, reason="needs flussd's auto-partition test clock")


def props(unit, precreate=None, retention=None, zone=None, key=None):
    p = {"table.auto-partition.enabled": "true", "table.auto-partition.time-unit": unit}
    if precreate is not None:
        p["table.auto-partition.num-precreate"] = str(precreate)
    if retention is not None:
        p["table.auto-partition.num-retention"] = str(retention)
    if zone is not None:
        p["table.auto-partition.time-zone"] = zone
    if key is not None:
        p["table.auto-partition.key"] = key
    return p


async def create(admin, db, name, properties, buckets=1, schema=SCHEMA, keys=("dt",)):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema), partition_keys=list(keys), bucket_count=buckets,
        properties=properties))
    return path


async def partitions(admin, path):
    return {i.partition_name: i.partition_id for i in await admin.list_partition_infos(path)}


async def wait_partitions(admin, path, want, timeout=15.0):
    """Polls until the table has exactly `want` (a set of names, or a
    callable telling whether a set is right); returns name -> id."""
    ok = want if callable(want) else (lambda got: got == set(want))
    deadline = time.monotonic() + timeout
    while True:
        got = await partitions(admin, path)
        if ok(set(got)):
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"partitions of {path}: {sorted(got)}, want {want if not callable(want) else '(predicate)'}")
        await asyncio.sleep(0.05)


def add_months(d, n):
    m = d.month - 1 + n
    y = d.year + m // 12
    m = m % 12 + 1
    day = min(d.day, calendar.monthrange(y, m)[1])
    return d.replace(year=y, month=m, day=day)


def value(now, zone, unit, offset):
    """PartitionUtils#generateAutoPartitionTime for zones without DST."""
    t = datetime.datetime.fromtimestamp(now, ZoneInfo(zone))
    if unit == "HOUR":
        return (t + datetime.timedelta(hours=offset)).strftime("%Y%m%d%H")
    if unit == "DAY":
        return (t + datetime.timedelta(days=offset)).strftime("%Y%m%d")
    if unit == "MONTH":
        return add_months(t, offset).strftime("%Y%m")
    if unit == "QUARTER":
        q = add_months(t, 3 * offset)
        return f"{q.year:04d}{(q.month - 1) // 3 + 1}"
    return f"{add_months(t, 12 * offset).year:04d}"


def expected(now, zone, unit, n):
    return {value(now, zone, unit, i) for i in range(n)}


# ---------------------------------------------------------------------------
# both servers: pre-creation at CREATE TABLE, real clock
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("unit", ["HOUR", "DAY", "MONTH", "QUARTER", "YEAR"])
async def test_precreated_at_create_table(admin, db, unit):
    zone = "Asia/Shanghai"  # no DST: expected values follow from the offset alone
    before = time.time()
    path = await create(admin, db, f"ap_{unit.lower()}", props(unit, precreate=3, zone=zone))
    # the unit may tick over while we look: either side of it is right
    got = await wait_partitions(
        admin, path, lambda s: s in (expected(before, zone, unit, 3),
                                     expected(time.time(), zone, unit, 3)))
    assert len(got) == 3 and len(set(got.values())) == 3
    info = await admin.get_table_info(path)
    assert info.get_properties()["table.auto-partition.num-precreate"] == "3"


async def test_several_keys_precreate_nothing(admin, db):
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("dt", pa.string()),
                        pa.field("region", pa.string())])
    path = await create(admin, db, "multi", props("HOUR", key="dt"), schema=schema,
                        keys=("dt", "region"))
    await asyncio.sleep(0.5)
    assert await partitions(admin, path) == {}
    info = await admin.get_table_info(path)
    assert info.get_properties()["table.auto-partition.num-precreate"] == "0"


async def test_primary_key_table_in_auto_created_partitions(conn, admin, db):
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("dt", pa.string()),
                        pa.field("v", pa.string())])
    path = fluss.TablePath(db, "pk")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["id", "dt"]), partition_keys=["dt"], bucket_count=2,
        properties=props("YEAR", precreate=2, zone="UTC")))
    got = await wait_partitions(admin, path, lambda s: len(s) == 2)
    years = sorted(got)
    assert int(years[1]) == int(years[0]) + 1
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    for i in range(20):
        w.upsert({"id": i, "dt": years[i % 2], "v": f"v{i}"})
    await w.flush()
    lookuper = table.new_lookup().create_lookuper()
    for i in (0, 1, 19):
        assert await lookuper.lookup({"id": i, "dt": years[i % 2]}) == {
            "id": i, "dt": years[i % 2], "v": f"v{i}"}


@pytest.mark.parametrize("key,bad", [("table.auto-partition.time-unit", "WEEK"),
                                     ("table.auto-partition.num-precreate", "x"),
                                     ("table.auto-partition.num-retention", "9999999999"),
                                     ("table.auto-partition.enabled", "yes")])
async def test_option_values_refused(admin, db, key, bad):
    p = props("HOUR")
    p[key] = bad
    err = await expect_error(39, create(admin, db, "bad", p))
    assert err.message == (f"Invalid value for config '{key}'. Reason: Could not parse value "
                           f"'{bad}' for key '{key}'.")


async def test_unknown_zone_is_gmt_and_negative_precreate_is_none(admin, db):
    # Java's TimeZone.getTimeZone: "UTC+8" is no zone id, so GMT
    before = time.time()
    path = await create(admin, db, "gmt", props("HOUR", precreate=1, zone="UTC+8"))
    await wait_partitions(admin, path, lambda s: s in ({value(before, "UTC", "HOUR", 0)},
                                                       {value(time.time(), "UTC", "HOUR", 0)}))
    none = await create(admin, db, "none", props("HOUR", precreate=-3, zone="UTC"))
    await asyncio.sleep(0.5)
    assert await partitions(admin, none) == {}


# ---------------------------------------------------------------------------
# ours: a clock the test moves
# ---------------------------------------------------------------------------

def binary():
    return Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))


class ClockedServer:
    def __init__(self, tmp_path, now, *extra):
        self.clock = tmp_path / "clock"
        self.set(now)
        (tmp_path / "data").mkdir(exist_ok=True)
        self.srv = OurServer(binary(), tmp_path / "data", tmp_path,
                             [f"-Dauto-partition.check.interval={CHECK_INTERVAL}",
                              f"-Dauto-partition.test.clock-file={self.clock}", *extra])
        self.srv.start()

    def set(self, when: datetime.datetime):
        tmp = self.clock.with_suffix(".tmp")
        tmp.write_text(f"{int(when.timestamp() * 1000)}\n")
        os.replace(tmp, self.clock)  # the server never reads half a number


def at(text):
    return datetime.datetime.fromisoformat(text)


def partition_dir(srv, db, table_id, table, name, pid):
    return srv.data_dir / "tablet-server-0" / db / f"{table}-{table_id}" / f"{name}-p{pid}"


async def write(conn, path, rows):
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for r in rows:
        w.append(r)
    await w.flush()


async def read(conn, path, pid, buckets):
    table = await conn.get_table(path)
    sc = await table.new_scan().create_record_batch_log_scanner()
    sc.subscribe_partition_buckets({(pid, b): fluss.EARLIEST_OFFSET for b in range(buckets)})
    rows = []
    for _ in range(40):
        t = await sc.poll_arrow(250)
        rows.extend(t.to_pylist())
        if not t.num_rows and rows:
            break
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.ours_only
@clocked
@pytest.mark.timeout(120)
async def test_clock_moves_partitions_and_data(tmp_path):
    cs = ClockedServer(tmp_path, at("2024-09-10T05:30:00+00:00"))
    srv = cs.srv
    try:
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        db = unique("autop")
        await admin.create_database(db)
        path = await create(admin, db, "hourly", props("HOUR", precreate=2, retention=1,
                                                        zone="UTC"), buckets=2)
        table_id = (await admin.get_table_info(path)).table_id
        # exactly the pre-created ones, right after the call
        first = await partitions(admin, path)
        assert set(first) == {"2024091005", "2024091006"}
        rows05 = [{"id": i, "v": f"a{i}", "dt": "2024091005"} for i in range(10)]
        rows06 = [{"id": i, "v": f"b{i}", "dt": "2024091006"} for i in range(10, 30)]
        await write(conn, path, rows05 + rows06)
        assert await read(conn, path, first["2024091006"], 2) == rows06
        old_dir = partition_dir(srv, db, table_id, "hourly", "2024091005", first["2024091005"])
        assert old_dir.is_dir() and any(old_dir.iterdir())

        # two hours on: 07 and 08 appear, 05 is older than one retained hour
        cs.set(at("2024-09-10T07:30:00+00:00"))
        now = await wait_partitions(admin, path, {"2024091006", "2024091007", "2024091008"})
        assert now["2024091006"] == first["2024091006"]
        deadline = time.monotonic() + 10
        while old_dir.exists():
            assert time.monotonic() < deadline, f"{old_dir} still there"
            await asyncio.sleep(0.05)
        assert await read(conn, path, now["2024091006"], 2) == rows06
        rows08 = [{"id": i, "v": f"c{i}", "dt": "2024091008"} for i in range(30, 45)]
        await write(conn, path, rows08)
        assert await read(conn, path, now["2024091008"], 2) == rows08
        # a clock that stands still changes nothing
        await asyncio.sleep(0.5)
        assert await partitions(admin, path) == now
        await conn.close()

        # a restart goes on from the metadata: same ids, no duplicates,
        # and the first pass runs at once
        srv.stop()
        cs.set(at("2024-09-10T08:10:00+00:00"))
        srv.start()
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        after = await wait_partitions(admin, path, {"2024091007", "2024091008", "2024091009"})
        assert after["2024091007"] == now["2024091007"]
        assert after["2024091008"] == now["2024091008"]
        assert await read(conn, path, after["2024091008"], 2) == rows08
        # a clock file that cannot be read skips passes; the table stays as it is
        cs.clock.write_text("not a number\n")
        await asyncio.sleep(0.5)
        assert await partitions(admin, path) == after
        await conn.close()
    finally:
        srv.stop()
    assert "pass skipped" in srv.stderr_tail()


@pytest.mark.ours_only
@clocked
@pytest.mark.timeout(120)
async def test_limits_stop_auto_creation(tmp_path):
    cs = ClockedServer(tmp_path, at("2024-09-10T05:30:00+00:00"),
                       "-Dmax.partition.num=3", "-Dmax.bucket.num=7")
    srv = cs.srv
    try:
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        db = unique("aplim")
        await admin.create_database(db)
        # max.partition.num: three of five
        few = await create(admin, db, "few", props("HOUR", precreate=5, zone="UTC"))
        assert set(await partitions(admin, few)) == {"2024091005", "2024091006", "2024091007"}
        err = await expect_error(45, admin.create_partition(few, {"dt": "x"}))
        assert err.message == (f"Exceed the maximum number of partitions for table {db}.few, "
                               f"only allow 3 partitions.")
        # max.bucket.num: 3 buckets a partition, 7 in all: two partitions
        wide = await create(admin, db, "wide", props("HOUR", precreate=5, zone="UTC"), buckets=3)
        assert set(await partitions(admin, wide)) == {"2024091005", "2024091006"}
        err = await expect_error(49, admin.create_partition(wide, {"dt": "x"}))
        assert err.message == (f"Adding partition 'x' would result in 9 total buckets for table "
                               f"{db}.wide, exceeding the maximum of 7 buckets.")
        await expect_error(42, admin.create_partition(wide, {"dt": "2024091005"}))
        # an hour on the limit still holds: 08 is refused again, nothing changes
        cs.set(at("2024-09-10T06:30:00+00:00"))
        await asyncio.sleep(0.5)
        assert set(await partitions(admin, few)) == {"2024091005", "2024091006", "2024091007"}
        await conn.close()
    finally:
        srv.stop()
    assert "skipping partition dt=2024091008 of table" in srv.stderr_tail()


@pytest.mark.ours_only
@clocked
@pytest.mark.timeout(120)
async def test_day_unit_in_a_dst_zone_and_several_keys(tmp_path):
    # 23:30 in New York (EST) the day before clocks go forward: late enough
    # that the periodic checks, which look a table-dependent delay (< 23h)
    # into the past, see the same day as the check at CREATE TABLE
    cs = ClockedServer(tmp_path, at("2024-03-09T23:30:00-05:00"))
    srv = cs.srv
    try:
        conn = await connect(srv.bootstrap)
        admin = conn.get_admin()
        db = unique("apday")
        await admin.create_database(db)
        daily = await create(admin, db, "daily", props("DAY", precreate=2, retention=1,
                                                       zone="America/New_York"))
        assert set(await partitions(admin, daily)) == {"20240309", "20240310"}
        # several partition keys: nothing pre-created, expiry by the time key
        schema = pa.schema([pa.field("id", pa.int32()), pa.field("dt", pa.string()),
                            pa.field("region", pa.string())])
        multi = await create(admin, db, "multi", props("HOUR", retention=1, zone="UTC",
                                                       key="dt"),
                             schema=schema, keys=("region", "dt"))
        for dt in ("2024031003", "2024031004", "2024031005"):  # now is 04:30 UTC
            for region in ("eu", "us"):
                await admin.create_partition(multi, {"region": region, "dt": dt})
        await asyncio.sleep(0.3)
        assert len(await partitions(admin, multi)) == 6
        # an hour on, dt 03 is older than the one retained hour, in every region
        cs.set(at("2024-03-10T05:30:00+00:00"))
        await wait_partitions(admin, multi, {"eu$2024031004", "us$2024031004",
                                             "eu$2024031005", "us$2024031005"})
        # 23:30 EDT two days later: the 11th and 12th, the 10th retained
        cs.set(at("2024-03-11T23:30:00-04:00"))
        await wait_partitions(admin, daily, {"20240310", "20240311", "20240312"})
        await conn.close()
    finally:
        srv.stop()
