"""libfluss and the `fluss` CLI on partitioned tables, row filters and
ALTER_TABLE, cross-checked with pyfluss:

* `fluss partition add|drop|list` and what pyfluss lists;
* `fluss produce` routes rows to partitions by their values (creating the
  missing ones, as the Java writer does), `--partition` fills and checks
  the partition columns; pyfluss reads every partition back exactly, and
  `fluss scan` prints pyfluss's rows of every partition (or those
  `--partition` names) exactly;
* primary-key tables with partitions: upsert, lookup (a key of a missing
  partition is not found) and delete through libfluss;
* `fluss scan --filter` prints exactly the matching rows, and on a table
  pyfluss wrote with table.statistics.columns the server sends fewer
  batches (ours: Fluss main's filter pushdown);
* `fluss table alter` (--set, --reset, --add-column) against the
  reference; against ours only once flussd serves ALTER_TABLE.

Everything but the statistics test runs against the reference as well.
"""

import os
import subprocess

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, unique
from logutil import create_log_table, read_all

# FLUSS_CLI=build-asan/fluss runs libfluss itself under ASan+UBSan
CLI = REPO / os.environ.get("FLUSS_CLI", "build/fluss")

ours_only = pytest.mark.skipif(not IS_OURS, reason="filter pushdown is Fluss main's; 0.9.1 "
                               "refuses table.statistics.columns")


def cli(server, *args, stdin=None, timeout=60):
    return subprocess.run([str(CLI), "--bootstrap-server", server.bootstrap, *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def ok(r):
    assert r.returncode == 0, r.stderr
    return r


def csv_rows(text):
    """CSV lines of a --format csv scan without the header, sorted."""
    return sorted(text.strip().splitlines()[1:])


async def partition_ids(admin, path):
    return {i.partition_name: i.partition_id for i in await admin.list_partition_infos(path)}


async def read_partitions(conn, path, ids, buckets):
    table = await conn.get_table(path)
    sc = await table.new_scan().create_record_batch_log_scanner()
    sc.subscribe_partition_buckets({(pid, b): fluss.EARLIEST_OFFSET
                                    for pid in ids for b in range(buckets)})
    rows, empty = [], 0
    while empty < 4:
        t = await sc.poll_arrow(250)
        rows.extend(t.to_pylist())
        empty = empty + 1 if not t.num_rows else 0
    return rows


async def test_partition_commands(server, admin, db):
    path = f"{db}.p"
    ok(cli(server, "table", "create", path, "--schema", "id INT, region STRING, day STRING",
           "--partition-key", "region,day", "--buckets", "2"))
    ok(cli(server, "partition", "add", path, "region=eu,day=2026-01-01"))
    ok(cli(server, "partition", "add", path, "day=2026-01-02,region=us"))
    r = cli(server, "partition", "add", path, "region=eu,day=2026-01-01")
    assert r.returncode == 1 and "PARTITION_ALREADY_EXISTS" in r.stderr
    ok(cli(server, "partition", "add", path, "region=eu,day=2026-01-01", "--if-not-exists"))
    r = cli(server, "partition", "add", path, "region=eu")
    assert r.returncode == 1 and "code 43" in r.stderr
    ids = await partition_ids(admin, fluss.TablePath(db, "p"))
    assert sorted(ids) == ["eu$2026-01-01", "us$2026-01-02"]
    out = ok(cli(server, "partition", "list", path)).stdout.splitlines()
    assert out[0] == "id | name | spec"
    assert sorted(out[1:]) == sorted(f"{i} | {n} | region={n.split('$')[0]},day={n.split('$')[1]}"
                                     for n, i in ids.items())
    out = ok(cli(server, "partition", "list", path, "region=us")).stdout.splitlines()
    assert out[1:] == [f"{ids['us$2026-01-02']} | us$2026-01-02 | region=us,day=2026-01-02"]
    ok(cli(server, "partition", "drop", path, "region=us,day=2026-01-02"))
    r = cli(server, "partition", "drop", path, "region=us,day=2026-01-02")
    assert r.returncode == 1 and "code 36" in r.stderr
    ok(cli(server, "partition", "drop", path, "region=us,day=2026-01-02", "--if-exists"))
    assert sorted(await partition_ids(admin, fluss.TablePath(db, "p"))) == ["eu$2026-01-01"]
    r = cli(server, "partition", "add", f"{db}.nope", "a=1")
    assert r.returncode == 1 and "TABLE_NOT_EXIST" in r.stderr
    r = cli(server, "partition", "frob", path)
    assert r.returncode == 2


async def test_produce_into_partitions_read_by_pyfluss(server, conn, admin, db):
    """libfluss's writer names partitions like Fluss (several keys, an INT
    and a DATE among them), creates the missing ones, and pyfluss reads
    each partition's rows back exactly."""
    path = f"{db}.ev"
    ok(cli(server, "table", "create", path, "--schema",
           "id INT, v STRING, region STRING, day DATE, hour INT",
           "--partition-key", "region,day,hour", "--buckets", "3"))
    lines = [f"{i},v{i},{'eu' if i % 2 else 'us'},2026-01-0{1 + i % 3},{i % 2}" for i in range(60)]
    ok(cli(server, "produce", path, stdin="\n".join(lines) + "\n"))
    ids = await partition_ids(admin, fluss.TablePath(db, "ev"))
    want = {}
    for i in range(60):
        name = f"{'eu' if i % 2 else 'us'}$2026-01-0{1 + i % 3}${i % 2}"
        want.setdefault(name, []).append(i)
    assert sorted(ids) == sorted(want)
    for name, pid in ids.items():
        rows = await read_partitions(conn, fluss.TablePath(db, "ev"), [pid], 3)
        assert sorted(r["id"] for r in rows) == want[name], name
        for r in rows:
            i = r["id"]
            assert (r["v"], r["region"], str(r["day"]), r["hour"]) == \
                (f"v{i}", name.split("$")[0], name.split("$")[1], i % 2)
    # --partition: the rows leave the partition columns out; another partition is refused
    ok(cli(server, "produce", path, "--partition", "region=ap,day=2026-02-01,hour=7", "--header",
           stdin="id,v\n100,x\n101,y\n"))
    r = cli(server, "produce", path, "--partition", "region=ap,day=2026-02-01,hour=7",
            stdin="102,z,ap,2026-02-01,8\n")
    assert r.returncode == 1 and "not to 'ap$2026-02-01$7'" in r.stderr
    r = cli(server, "produce", path, "--partition", "region=ap", stdin="")
    assert r.returncode == 2 and "'day'" in r.stderr
    ids = await partition_ids(admin, fluss.TablePath(db, "ev"))
    rows = await read_partitions(conn, fluss.TablePath(db, "ev"), [ids["ap$2026-02-01$7"]], 3)
    assert sorted((r["id"], r["v"], r["hour"]) for r in rows) == [(100, "x", 7), (101, "y", 7)]


async def test_scan_partitions_written_by_pyfluss(server, conn, admin, db):
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.string()),
                        pa.field("dt", pa.string())])
    tpath = fluss.TablePath(db, "pw")
    await admin.create_table(tpath, fluss.TableDescriptor(fluss.Schema(schema),
                                                         partition_keys=["dt"], bucket_count=2))
    days = ["2026-03-01", "2026-03-02", "2026-03-03"]
    for d in days:
        await admin.create_partition(tpath, {"dt": d})
    table = await conn.get_table(tpath)
    w = table.new_append().create_writer()
    for i in range(45):
        w.append({"id": i, "v": f"v{i}", "dt": days[i % 3]})
    await w.flush()
    out = ok(cli(server, "scan", f"{db}.pw", "--format", "csv")).stdout
    assert csv_rows(out) == sorted(f"{i},v{i},{days[i % 3]}" for i in range(45))
    out = ok(cli(server, "scan", f"{db}.pw", "--partition", "dt=2026-03-02", "--format", "csv")).stdout
    assert csv_rows(out) == sorted(f"{i},v{i},2026-03-02" for i in range(1, 45, 3))
    # the table format names each row's partition and bucket
    out = ok(cli(server, "scan", f"{db}.pw", "--partition", "dt=2026-03-03", "--limit", "1")).stdout
    lines = out.splitlines()
    assert lines[0] == "partition | bucket | offset | id | v | dt"
    assert lines[1].startswith("2026-03-03 | ")
    r = cli(server, "scan", f"{db}.pw", "--partition", "dt=2026-09-09")
    assert r.returncode == 0 and r.stdout.splitlines()[1:] == []
    r = cli(server, "scan", f"{db}.pw", "--partition", "nope=1")
    assert r.returncode == 2 and "'nope' is not a partition key" in r.stderr


async def test_partitioned_primary_key_table(server, db):
    path = f"{db}.pk"
    ok(cli(server, "table", "create", path, "--schema",
           "id INT NOT NULL, dt STRING NOT NULL, v STRING",
           "--primary-key", "id,dt", "--partition-key", "dt", "--buckets", "2"))
    ok(cli(server, "upsert", path, stdin="1,d1,a\n2,d1,b\n1,d2,c\n"))
    ok(cli(server, "upsert", path, stdin="2,d1,B\n"))
    ok(cli(server, "delete", path, "--key", "id=1,dt=d2"))
    out = ok(cli(server, "lookup", path, "--format", "json", "--key", "id=2,dt=d1",
                 "--key", "id=1,dt=d1", "--key", "id=1,dt=d2", "--key", "id=1,dt=nowhere")).stdout
    assert out.splitlines() == ['{"id": 2, "dt": "d1", "v": "B"}', '{"id": 1, "dt": "d1", "v": "a"}',
                                "null", "null"]
    out = ok(cli(server, "scan", path, "--changelog", "--format", "csv")).stdout
    assert csv_rows(out) == sorted(["+I,1,d1,a", "+I,2,d1,b", "-U,2,d1,b", "+U,2,d1,B",
                                    "+I,1,d2,c", "-D,1,d2,c"])


async def test_scan_filter_rows(server, db):
    path = f"{db}.f"
    ok(cli(server, "table", "create", path, "--schema",
           "id INT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<INT>",
           "--buckets", "2"))
    lines = [f"{i},{'' if i % 7 == 0 else f'n{i:02d}'},{i}.50,2026-01-01 00:00:{i % 60:02d},"
             f"\"[{i}]\"" for i in range(80)]
    ok(cli(server, "produce", path, stdin="\n".join(lines) + "\n"))

    def ids(expr, *extra):
        out = ok(cli(server, "scan", path, "--filter", expr, "--columns", "id", "--format", "csv",
                     *extra)).stdout
        return sorted(int(x) for x in out.split()[1:])

    assert ids("id >= 75") == [75, 76, 77, 78, 79]
    assert ids("name IS NULL") == list(range(0, 80, 7))
    assert ids("name IS NOT NULL AND id < 8") == [1, 2, 3, 4, 5, 6]
    assert ids("name = 'n43'") == [43]
    assert ids("name <> 'n02' AND id <= 3") == [1, 3]
    assert ids("amount > 77.5") == [78, 79]
    assert ids("ts = '2026-01-01 00:00:05' AND id > 60") == [65]
    assert ids("id > 10 AND id < 5") == []
    # the filtered column need not be shown; a batch's gaps keep their offsets
    out = ok(cli(server, "scan", path, "--filter", "id = 33", "--columns", "name")).stdout
    line = out.splitlines()[1]
    assert line.endswith("| n33")
    r = cli(server, "scan", path, "--filter", "tags = 1")
    assert r.returncode == 2 and "cannot be filtered" in r.stderr
    r = cli(server, "scan", path, "--filter", "id >> 1")
    assert r.returncode == 2 and "filter:" in r.stderr


@ours_only
async def test_scan_filter_skips_batches_with_statistics(server, conn, admin, db):
    """pyfluss writes 40 batches with statistics; the filter reaches the
    server, which sends only the batches that can match."""
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    path = await create_log_table(admin, db, "stats", schema, bucket_count=1,
                                  properties={"table.statistics.columns": "*"})
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for i in range(40):
        w.write_arrow(pa.table({"id": list(range(i * 50, i * 50 + 50)),
                                "name": [f"n{i}"] * 50}, schema=schema))
        await w.flush()
    r = ok(cli(server, "scan", f"{db}.stats", "--stats", "--format", "csv"))
    assert len(r.stdout.split()) == 1 + 2000
    assert "40 batches" in r.stderr, r.stderr
    r = ok(cli(server, "scan", f"{db}.stats", "--filter", "id >= 1020 AND id < 1080", "--stats",
               "--format", "csv"))
    assert [int(x.split(",")[0]) for x in r.stdout.split()[1:]] == list(range(1020, 1080))
    assert "2 batches" in r.stderr, r.stderr
    r = ok(cli(server, "scan", f"{db}.stats", "--filter", "name = 'n7'", "--stats", "--format", "csv"))
    assert sorted(int(x.split(",")[0]) for x in r.stdout.split()[1:]) == list(range(350, 400))
    assert "1 batches" in r.stderr, r.stderr
    # nothing matches: no batch, and the scan still ends
    r = ok(cli(server, "scan", f"{db}.stats", "--filter", "id > 999999", "--stats"))
    assert r.stdout.splitlines()[1:] == [] and "0 batches" in r.stderr, r.stderr


async def test_table_alter(server, admin, db):
    """ALTER_TABLE from the CLI: options set and reset, a column added; on
    the reference always, on ours once it serves the API."""
    path = f"{db}.alt"
    tpath = fluss.TablePath(db, "alt")
    await admin.create_table(tpath, fluss.TableDescriptor(fluss.Schema(pa.schema(
        [pa.field("id", pa.int32()), pa.field("v", pa.string())])), bucket_count=1))
    r = cli(server, "table", "alter", path, "--set", "table.datalake.freshness=5min")
    if IS_OURS and r.returncode == 1 and "UNSUPPORTED_VERSION" in r.stderr:
        pytest.skip("flussd does not serve ALTER_TABLE yet (built on another branch); "
                    "the request is checked against the reference")
    ok(r)
    info = await admin.get_table_info(tpath)
    assert info.get_properties()["table.datalake.freshness"] == "5min"
    ok(cli(server, "table", "alter", path, "--add-column", "extra BIGINT COMMENT 'added'",
           "--add-column", "tags ARRAY<STRING>"))
    info = await admin.get_table_info(tpath)
    assert info.get_column_names() == ["id", "v", "extra", "tags"]
    assert info.schema_id == 2
    ok(cli(server, "table", "alter", path, "--reset", "table.datalake.freshness"))
    info = await admin.get_table_info(tpath)
    assert "table.datalake.freshness" not in info.get_properties()
    r = cli(server, "table", "alter", path, "--set", "table.replication.factor=3")
    assert r.returncode == 1 and "INVALID_ALTER_TABLE_EXCEPTION" in r.stderr
    r = cli(server, "table", "alter", f"{db}.missing", "--set", "table.datalake.freshness=1min")
    assert r.returncode == 1 and "TABLE_NOT_EXIST" in r.stderr
    ok(cli(server, "table", "alter", f"{db}.missing", "--set", "table.datalake.freshness=1min",
           "--if-exists"))
    r = cli(server, "table", "alter", path)
    assert r.returncode == 2


async def test_scan_and_lookup_across_alter(server, db):
    """Rows written before ADD COLUMN read through a table handle opened
    after it: the new columns are NULL (libfluss fetches the old schema
    with GET_TABLE_SCHEMA and places columns by id)."""
    log, pk = f"{db}.evo", f"{db}.evok"
    ok(cli(server, "table", "create", log, "--schema", "id INT, v STRING", "--buckets", "1"))
    ok(cli(server, "produce", log, stdin="1,a\n2,\n"))
    r = cli(server, "table", "alter", log, "--add-column", "x BIGINT",
            "--add-column", "t ARRAY<STRING>")
    if IS_OURS and r.returncode == 1 and "UNSUPPORTED_VERSION" in r.stderr:
        pytest.skip("flussd does not serve ALTER_TABLE yet")
    ok(r)
    ok(cli(server, "produce", log, stdin='3,c,7,"[""q""]"\n'))
    out = ok(cli(server, "scan", log, "--format", "csv")).stdout
    assert out.splitlines() == ["id,v,x,t", "1,a,,", "2,,,", '3,c,7,"[""q""]"']
    # a projection with the new column: the server refuses it for old batches,
    # the CLI projects on the client instead
    r = ok(cli(server, "scan", log, "--columns", "x,id", "--format", "csv"))
    assert r.stdout.splitlines() == ["x,id", ",1", ",2", "7,3"]
    out = ok(cli(server, "scan", log, "--filter", "x IS NULL AND v IS NOT NULL", "--format",
                 "csv")).stdout
    assert out.splitlines()[1:] == ["1,a,,"]
    ok(cli(server, "table", "create", pk, "--schema", "id INT NOT NULL, v STRING",
           "--primary-key", "id", "--buckets", "1"))
    ok(cli(server, "upsert", pk, stdin="1,a\n"))
    ok(cli(server, "table", "alter", pk, "--add-column", "x BIGINT"))
    ok(cli(server, "upsert", pk, stdin="2,b,7\n"))
    out = ok(cli(server, "lookup", pk, "1", "2", "--format", "json")).stdout
    assert out.splitlines() == ['{"id": 1, "v": "a", "x": null}', '{"id": 2, "v": "b", "x": 7}']
