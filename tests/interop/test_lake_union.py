"""Union read (issue 21, item 7): `fluss scan` of a lake table from the
earliest offsets reads the table's lake snapshot straight from its Iceberg
files (libfluss's lake scanner), then each bucket's log from its lake
offset on. Every (bucket, offset) comes back exactly once, with the values
the log had — also once the log below the lake offset has expired, when
the log alone has lost those rows.

* Every type a lake table takes (decimals past 18 digits too), written
  through the CLI: the union equals
  the log alone, value for value (TIMESTAMP(7..9) aside: Iceberg keeps
  microseconds, KNOWN_DIFFERENCES), and `--lake-only` is exactly the rows
  below each bucket's lake offset.
* Rows written by pyfluss into a table with `table.log.ttl` 1 s: after a
  round and the TTL, the log alone starts late, the union still has every
  id once; projection and filter apply to lake rows as to log rows.
* A partitioned table across ADD COLUMN: lake rows written before the
  column existed read it as NULL, as the log does; `--partition` keeps to
  one partition. A table with a bucket key (bucket[N] partitions).
* Scans while rounds commit under continuous writes: every scan has each
  (bucket, offset) once, from 0 on, whichever snapshot it caught.
* `scan --follow` (libfluss's union scanner): the lake rows of a partition
  whose log expired below its lake offset, then its log, then a partition
  created while it runs — every row once, each bucket's offsets rising; a
  PK table's lake rows come as +I, then its changelog.
"""

import asyncio
import hashlib
import json
import subprocess
import threading
import time

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect, unique
from logutil import wait_ready
from test_cli_pk import CLI, cli, ok
from lakeutil import lake_args
from test_lake_tiering import SCHEMA, rows, write

pytestmark = pytest.mark.skipif(not IS_OURS, reason="the CLI and its server are fluss-c's")

SLOW = ["--property", "table.datalake.enabled=true", "--property",
        "table.datalake.freshness=1h"]
TYPES = ("id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, f FLOAT, d DOUBLE, "
         "dec DECIMAL(10,2), dec2 DECIMAL(18,4), dec3 DECIMAL(38,6), dec4 DECIMAL(20,0), "
         "dt DATE, tm TIME(3), ts TIMESTAMP(3), "
         "ts6 TIMESTAMP(6), ltz TIMESTAMP_LTZ(3), ltz6 TIMESTAMP_LTZ(6), s STRING, c CHAR(3), "
         "by BYTES, bin BINARY(4)")


def csv_row(i):
    if i % 5 == 4:  # every nullable column NULL
        return f"{i}" + "," * 20
    neg = "-" if i % 2 else ""
    return ",".join([
        str(i), "true" if i % 3 else "false", str(i % 256 - 128), str(i * 7 - 30000),
        f"{neg}{i * 1_000_003_007}", f"{i}.5", f"{neg}{i}.25", f"{neg}{i % 1000}.{i % 100:02d}",
        f"{neg}{i}.{i % 10000:04d}", f"{neg}{i}{'7' * 29}.{i % 1000000:06d}",
        f"{neg}{i % 9 + 1}{i:019d}", f"19{60 + i % 40}-0{1 + i % 9}-1{i % 10}",
        f"0{i % 10}:{i % 60:02d}:0{i % 10}.{i % 1000:03d}",
        f"1969-12-31 23:59:{i % 60:02d}.{i % 1000:03d}",
        f"2024-01-02 03:04:05.{i:06d}", f"2024-01-02T03:04:05.{i % 1000:03d}Z",
        f"1970-01-01T00:00:00.{i:06d}Z", f"s{i}é", f"c{i % 10}", f"{i:04x}ff", f"{i:08x}"])


def lake_table(srv, prefix, name, schema, *args):
    """A new database's table, created by the CLI with schema and args
    (`table create` options); -> its DB.TABLE path."""
    db = unique(prefix)
    ok(cli(srv, "db", "create", db))
    path = f"{db}.{name}"
    ok(cli(srv, "table", "create", path, "--schema", schema, *args))
    return path


def scan(srv, path, *args):
    """[(bucket, offset, rest-of-line)] of a table-format scan, with the
    partition column when the table is partitioned."""
    return scan_text(ok(cli(srv, "scan", path, *args)))


def scan_text(out):
    got = []
    for ln in out.splitlines()[1:]:
        parts = [p.strip() for p in ln.split(" | ")]
        if parts[0].isdigit():
            got.append((int(parts[0]), int(parts[1]), tuple(parts[2:])))
        else:  # partition | bucket | offset | ...
            got.append(((parts[0], int(parts[1])), int(parts[2]), tuple(parts[3:])))
    return got


def lake_offsets(srv, path):
    """{(partition, bucket): lake offset} of `fluss lake status`."""
    out = ok(cli(srv, "lake", "status", path))
    res = {}
    for ln in out.splitlines()[2:]:
        p, b, lake, _latest, _lag, _lag_ms = [x.strip() for x in ln.split("|")]
        res[(p, int(b))] = int(lake)
    return res


def once(got):
    keys = [(b, o) for b, o, _ in got]
    assert len(keys) == len(set(keys)), "a (bucket, offset) came back twice"
    return sorted(got)


def test_union_every_type(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "wh"))
    path = lake_table(srv, "union", "t", TYPES, "--buckets", "3", *SLOW)
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(csv_row(i) + "\n" for i in range(300))))
    assert "tiered 300 rows" in ok(cli(srv, "lake", "tier", path, "--now"))
    # a second round, then rows that stay in the log only
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(csv_row(i) + "\n" for i in range(300, 450))))
    assert "tiered 150 rows" in ok(cli(srv, "lake", "tier", path, "--now"))
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(csv_row(i) + "\n" for i in range(450, 500))))

    log = once(scan(srv, path, "--log-only"))
    union = once(scan(srv, path))
    assert len(log) == 500
    assert union == log  # value for value, every type
    lake = once(scan(srv, path, "--lake-only"))
    offs = lake_offsets(srv, path)
    assert sum(offs.values()) == 450
    assert lake == [r for r in log if r[1] < offs[("-", r[0])]]

    r = cli(srv, "scan", path, "--stats")
    assert "lake: 450 rows from " in r.stderr, r.stderr
    # JSON carries the same values, NULLs as null
    js = [json.loads(ln) for ln in ok(cli(srv, "scan", path, "--format", "json")).splitlines()]
    assert sorted(j["id"] for j in js) == list(range(500))
    assert all(j["s"] is None for j in js if j["id"] % 5 == 4)
    # refusals
    assert cli(srv, "scan", path, "--lake-only", "--follow").returncode == 2
    assert cli(srv, "scan", path, "--lake-only", "--log-only").returncode == 2
    plain = path.split(".")[0] + ".plain"
    ok(cli(srv, "table", "create", plain, "--schema", "id INT", "--buckets", "1"))
    r = cli(srv, "scan", plain, "--lake-only")
    assert r.returncode == 2 and "not a lake table" in r.stderr, r.stderr


def test_union_nanosecond_timestamps(start_server, tmp_path):
    """Iceberg v2 keeps microseconds: TIMESTAMP(9) rows read from the lake
    lose the digits below (floor), the log's keep them."""
    srv = start_server(*lake_args(tmp_path / "wh"))
    path = lake_table(srv, "unions", "t", "id INT, ts TIMESTAMP(9)", "--buckets", "1", *SLOW)
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="1,2024-01-02 03:04:05.123456789\n2,1969-12-31 23:59:59.999999999\n"))
    ok(cli(srv, "lake", "tier", path, "--now"))
    assert [r[2] for r in scan(srv, path, "--log-only")] == [
        ("1", "2024-01-02T03:04:05.123456789"), ("2", "1969-12-31T23:59:59.999999999")]
    assert [r[2] for r in scan(srv, path)] == [
        ("1", "2024-01-02T03:04:05.123456000"), ("2", "1969-12-31T23:59:59.999999000")]


async def test_union_after_log_expired(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "wh"), "-D", "log.retention.check-interval=200 ms",
                       "-D", "log.segment.file-size=4kb",
                       "-D", "remote.log.task-interval-duration=0")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("uttl")
    await admin.create_database(db)
    tp = fluss.TablePath(db, "t")
    props = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h",
             "table.log.ttl": "1 s"}
    await admin.create_table(tp, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=2,
                                                       properties=props))
    await wait_ready(admin, tp, 2)
    for lo in range(0, 1000, 100):
        await write(conn, tp, rows(lo, lo + 100))
    path = f"{db}.t"
    assert "tiered 1000 rows" in ok(cli(srv, "lake", "tier", path, "--now"))
    await asyncio.sleep(1.5)  # the segments are older than the TTL now
    for lo in range(1000, 1200, 100):  # new segments; the timer deletes the old
        await write(conn, tp, rows(lo, lo + 100))
    deadline = time.monotonic() + 20
    earliest = {0: 0}
    while time.monotonic() < deadline and min(earliest.values()) == 0:
        earliest = await admin.list_offsets(tp, [0, 1], fluss.OffsetSpec.earliest())
        await asyncio.sleep(0.2)
    assert min(earliest.values()) > 0, earliest  # the log lost its first rows

    log = scan(srv, path, "--log-only")
    union = once(scan(srv, path))
    assert len(log) < 1200
    ids = sorted(int(r[2][0]) for r in union)
    assert ids == list(range(1200))
    # the lake's rows carry their log offsets: below each bucket's start
    assert {(r[0], r[1]) for r in log} <= {(r[0], r[1]) for r in union}
    # projection and filter on lake and log rows alike
    got = scan(srv, path, "--columns", "score,id", "--filter", "id >= 990 AND id < 1010")
    assert sorted((int(r[2][1]), float(r[2][0])) for r in got) == [
        (i, i / 4) for i in range(990, 1010)]
    await conn.close()


def test_union_partitioned_add_column(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "wh"))
    path = lake_table(srv, "upart", "p", "dt STRING, id BIGINT, v STRING",
                      "--partition-key", "dt", "--buckets", "2", *SLOW)
    for dt in ("a", "b"):
        ok(cli(srv, "partition", "add", path, f"dt={dt}"))
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(f"{'ab'[i % 2]},{i},v{i}\n" for i in range(40))))
    ok(cli(srv, "lake", "tier", path, "--now"))
    ok(cli(srv, "table", "alter", path, "--add-column", "extra INT"))
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(f"{'ab'[i % 2]},{i},v{i},{i * 10}\n" for i in range(40, 60))))
    ok(cli(srv, "lake", "tier", path, "--now"))
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(f"{'ab'[i % 2]},{i},v{i},{i * 10}\n" for i in range(60, 70))))

    log = once(scan(srv, path, "--log-only"))
    union = once(scan(srv, path))
    assert len(log) == 70 and union == log
    by_id = {int(r[2][1]): r[2] for r in union}
    assert by_id[3] == ("b", "3", "v3", "NULL") and by_id[50] == ("a", "50", "v50", "500")
    offs = lake_offsets(srv, path)
    assert sum(offs.values()) == 60
    only_a = once(scan(srv, path, "--partition", "dt=a"))
    assert only_a == [r for r in union if r[0][0] == "a"]
    lake_a = scan(srv, path, "--lake-only", "--partition", "dt=a")
    assert sorted(int(r[2][1]) for r in lake_a) == list(range(0, 60, 2))


def test_union_bucket_key(start_server, tmp_path):
    """A lake table with a bucket key is partitioned by Iceberg's
    bucket[N](key) (the Fluss bucket, as the clients bucket lake tables):
    its files say their bucket that way, and the union is the log."""
    srv = start_server(*lake_args(tmp_path / "wh"))
    path = lake_table(srv, "ubkey", "k", "id BIGINT, v STRING",
                      "--buckets", "3", "--bucket-key", "id", *SLOW)
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(f"{i},v{i}\n" for i in range(90))))
    ok(cli(srv, "lake", "tier", path, "--now"))
    ok(cli(srv, "produce", path, "--format", "csv",
           stdin="".join(f"{i},w{i}\n" for i in range(90, 120))))
    log = once(scan(srv, path, "--log-only"))
    assert len(log) == 120 and len({r[0] for r in log}) == 3
    assert once(scan(srv, path)) == log
    lake = once(scan(srv, path, "--lake-only"))
    assert sorted(int(r[2][0]) for r in lake) == list(range(90))


async def test_union_while_rounds_commit(start_server, tmp_path):
    """Rounds commit every 300 ms while pyfluss keeps writing: each union
    scan has every (bucket, offset) from 0 up to where it stopped exactly
    once, whichever snapshot it caught (an older one than the head by the
    time it reads the files is fine)."""
    srv = start_server(*lake_args(tmp_path / "wh"))
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("urace")
    await admin.create_database(db)
    tp = fluss.TablePath(db, "t")
    props = {"table.datalake.enabled": "true", "table.datalake.freshness": "300ms"}
    await admin.create_table(tp, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=2,
                                                       properties=props))
    await wait_ready(admin, tp, 2)
    stop = asyncio.Event()

    async def writer():
        lo = 0
        while not stop.is_set():
            await write(conn, tp, rows(lo, lo + 50))
            lo += 50
            await asyncio.sleep(0.05)

    task = asyncio.create_task(writer())
    try:
        snapshots = set()
        for _ in range(6):
            await asyncio.sleep(0.4)
            r = await asyncio.to_thread(cli, srv, "scan", f"{db}.t", "--stats")  # writes go on
            assert r.returncode == 0, r.stderr
            got = once(scan_text(r.stdout))
            for b in (0, 1):
                offs = [o for bb, o, _ in got if bb == b]
                assert offs == list(range(len(offs))), f"bucket {b}: a gap or a repeat"
            ids = sorted(int(x[2][0]) for x in got)
            assert len(ids) == len(set(ids))
            snapshots |= {ln.split()[-1] for ln in r.stderr.splitlines() if ln.startswith("lake:")}
        assert len(snapshots) >= 2, snapshots  # the scans met several snapshots
    finally:
        stop.set()
        await task
        await conn.close()


class Follower:
    """`fluss scan PATH --follow ARGS...` in the background; its stdout
    lines as they come."""

    def __init__(self, srv, path, *args):
        self.p = subprocess.Popen([str(CLI), "--bootstrap-server", srv.bootstrap, "scan", path,
                                   "--follow", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for ln in self.p.stdout:
            self.lines.append(ln.rstrip("\n"))

    def wait_for(self, n, timeout=40):
        deadline = time.monotonic() + timeout
        while len(self.lines) < n and time.monotonic() < deadline:
            assert self.p.poll() is None, self.p.stderr.read()
            time.sleep(0.1)
        return list(self.lines)

    def stop(self):
        """SIGTERM (the scan ends cleanly); -> its stderr."""
        self.p.terminate()
        err = self.p.stderr.read()
        assert self.p.wait(timeout=20) == 0, err
        self.t.join(timeout=10)
        return err


def test_follow_union_lake_then_log_then_new_partition(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "wh"), "-D", "log.retention.check-interval=200 ms",
                       "-D", "log.segment.file-size=4kb",
                       "-D", "remote.log.task-interval-duration=0")
    path = lake_table(srv, "ufol", "p", "dt STRING, id BIGINT, v STRING",
                      "--partition-key", "dt", "--buckets", "2", *SLOW,
                      "--property", "table.log.ttl=1 s")
    ok(cli(srv, "partition", "add", path, "dt=a"))

    def produce(dt, lo, hi):  # batches of 100 rows, values ZSTD cannot shrink much
        for at in range(lo, hi, 100):
            ok(cli(srv, "produce", path, "--format", "csv", stdin="".join(
                f"{dt},{i},{hashlib.sha256(str(i).encode()).hexdigest()}\n"
                for i in range(at, min(at + 100, hi)))))

    produce("a", 0, 600)
    assert "tiered 600 rows" in ok(cli(srv, "lake", "tier", path, "--now"))
    time.sleep(1.5)  # older than the TTL: new segments let the timer delete the old
    produce("a", 600, 700)
    deadline = time.monotonic() + 20
    while len(scan(srv, path, "--log-only")) == 700:
        assert time.monotonic() < deadline, "the log kept its first rows"
        time.sleep(0.2)

    f = Follower(srv, path, "--stats")
    try:
        f.wait_for(1 + 700)  # the header, the lake's rows of a, then its log
        produce("a", 700, 750)
        ok(cli(srv, "partition", "add", path, "dt=b"))
        produce("b", 750, 850)
        ok(cli(srv, "lake", "tier", path, "--now"))
        produce("b", 850, 900)
        got = scan_text("\n".join(f.wait_for(1 + 900)))
    finally:
        err = f.stop()
    assert sorted(int(r[2][1]) for r in got) == list(range(900)), "a row missing or twice"
    assert len({(r[0], r[1]) for r in got}) == 900
    last = {}
    for part_bucket, off, _ in got:  # each bucket's rows in offset order
        assert off > last.get(part_bucket, -1), (part_bucket, off)
        last[part_bucket] = off
    assert "lake: " in err and " rows from " in err, err


def test_follow_pk_lake_rows_then_changelog(start_server, tmp_path):
    srv = start_server(*lake_args(tmp_path / "wh"))
    path = lake_table(srv, "ufpk", "k", "id INT NOT NULL, v STRING",
                      "--primary-key", "id", "--buckets", "2", *SLOW)
    ok(cli(srv, "upsert", path, stdin="".join(f"{i},a{i}\n" for i in range(50))))
    ok(cli(srv, "upsert", path, stdin="".join(f"{i},b{i}\n" for i in range(10))))
    ok(cli(srv, "lake", "tier", path, "--now"))
    ok(cli(srv, "upsert", path, stdin="".join(f"{i},c{i}\n" for i in range(10, 20))))
    ok(cli(srv, "delete", path, "0"))
    f = Follower(srv, path, "--changelog", "--format", "json")
    try:
        lines = f.wait_for(50 + 21)
    finally:
        f.stop()
    rows = [json.loads(ln) for ln in lines]
    lake = {(r["_change"], r["id"], r["v"]) for r in rows[:50]}
    assert lake == {("+I", i, ("b" if i < 10 else "a") + str(i)) for i in range(50)}
    assert sorted((r["_change"], r["id"], r["v"]) for r in rows[50:]) == sorted(
        [("-U", i, f"a{i}") for i in range(10, 20)] + [("+U", i, f"c{i}") for i in range(10, 20)]
        + [("-D", 0, "b0")])
