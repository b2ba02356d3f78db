"""`fluss produce` and `fluss scan` (libfluss's append writer and log
scanner) against our server, cross-checked with pyfluss: what the CLI
writes the official client reads back equal, what pyfluss writes the CLI
prints equal, rows of a bucket-key table land where the Java client would
put them, --follow sees new rows, and 100k rows go through (throughput
printed)."""

import csv
import datetime as dt
import io
import json
import os
import re
import struct
import subprocess
import time
from decimal import Decimal

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO
from logutil import (create_log_table, latest_offsets, read_all, read_batches, sort_by,
                     wait_ready)

pytestmark = pytest.mark.skipif(not IS_OURS, reason="the CLI ships with fluss-c's build")

# FLUSS_CLI=build-asan/fluss runs libfluss itself under ASan+UBSan
CLI = REPO / os.environ.get("FLUSS_CLI", "build/fluss")
UTC = dt.timezone.utc


def cli(server, *args, stdin=None, timeout=60):
    return subprocess.run([str(CLI), "--bootstrap-server", server.bootstrap, *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def create(server, path, schema, *extra):
    r = cli(server, "table", "create", path, "--schema", schema, *extra)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------
# Fluss bucketing (protocol.md §5.6, §6.1), ported from the Java client
# ---------------------------------------------------------------------------

M32 = 0xFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def _mix_k1(k):
    k = (k * 0xCC9E2D51) & M32
    k = _rotl(k, 15)
    return (k * 0x1B873593) & M32


def _mix_h1(h, k):
    h ^= k
    h = _rotl(h, 13)
    return (h * 5 + 0xE6546B64) & M32


def _fmix(h, length):
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def murmur_flink(data: bytes, seed=42) -> int:
    h = seed
    n4 = len(data) // 4 * 4
    for i in range(0, n4, 4):
        h = _mix_h1(h, _mix_k1(struct.unpack_from("<I", data, i)[0]))
    for b in data[n4:]:  # Java: each tail byte sign-extended, mixed as a block
        h = _mix_h1(h, _mix_k1((b - 256 if b >= 128 else b) & M32))
    return _fmix(h, len(data))


def murmur_int(code: int) -> int:
    k = _mix_k1(code & M32)
    h = (_rotl(k, 13) * 5 + 0xE6546B64) & M32
    h = _fmix(h, 4)
    h = h - (1 << 32) if h & 0x80000000 else h
    return 0 if h == -(1 << 31) else abs(h)


def uvarint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def bucket_of(key: bytes, n: int) -> int:
    return murmur_int(murmur_flink(key)) % n


def test_hash_port_matches_protocol_vectors():
    assert murmur_flink(b"") == 0x087FCD5C
    assert murmur_flink(b"\x01") == 0xE8F30D16
    assert murmur_int(42) == 0x43A46E1D
    assert bucket_of(b"\x01", 8) == 4 and bucket_of(b"\x01", 16) == 12
    assert bucket_of(b"\x00\x0a", 7) == 1
    assert bucket_of(b"\x00\x0a\x0a\x0a", 12) == 0
    assert bucket_of(b"2bb87d68-baf9-4e64-90f9-f80910419fa6", 16) == 6
    assert murmur_flink(b"\x80\x01") == 0x660FC139


# ---------------------------------------------------------------------------
# produce → pyfluss
# ---------------------------------------------------------------------------

TYPES_SCHEMA = ("id INT NOT NULL, name STRING, v DOUBLE, f FLOAT, d DECIMAL(10, 2), "
                "big DECIMAL(38, 10), dt DATE, t TIME(3), ts TIMESTAMP(3), "
                "ltz TIMESTAMP_LTZ(6), b BYTES, fb BINARY(2), flag BOOLEAN, "
                "small SMALLINT, tiny TINYINT, l BIGINT")

TYPES_CSV = (
    '1,hello,1.5,0.25,12.34,12345678901234567890.0123456789,2024-02-29,12:34:56.789,'
    '2024-01-02 03:04:05.678,2024-01-02T03:04:05.123456Z,0aff,abcd,true,-32768,-128,'
    '9223372036854775807\n'
    '2,,,,,,,,,,,,,,,\n'
    '3,"a,""quoted""\nline",-2.25,-1,-0.5,-1,1970-01-01,00:00,0,'
    '1999-12-31 23:59:59.999999+02:00,,0000,false,7,1,-1\n'
    '4,"",1e300,3.5,0.01,0,1900-06-15,23:59:59.999,1969-12-31T23:59:59.999,'
    '86400000,"",ffff,1,0,0,0\n')

TYPES_EXPECTED = [
    dict(id=1, name="hello", v=1.5, f=0.25, d=Decimal("12.34"),
         big=Decimal("12345678901234567890.0123456789"), dt=dt.date(2024, 2, 29),
         t=dt.time(12, 34, 56, 789000), ts=dt.datetime(2024, 1, 2, 3, 4, 5, 678000),
         ltz=dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), b=b"\x0a\xff", fb=b"\xab\xcd",
         flag=True, small=-32768, tiny=-128, l=2 ** 63 - 1),
    dict(id=2, name=None, v=None, f=None, d=None, big=None, dt=None, t=None, ts=None, ltz=None,
         b=None, fb=None, flag=None, small=None, tiny=None, l=None),
    dict(id=3, name='a,"quoted"\nline', v=-2.25, f=-1.0, d=Decimal("-0.50"),
         big=Decimal("-1.0000000000"), dt=dt.date(1970, 1, 1), t=dt.time(0, 0),
         ts=dt.datetime(1970, 1, 1), ltz=dt.datetime(1999, 12, 31, 21, 59, 59, 999999, tzinfo=UTC),
         b=None, fb=b"\x00\x00", flag=False, small=7, tiny=1, l=-1),
    dict(id=4, name="", v=1e300, f=3.5, d=Decimal("0.01"), big=Decimal("0E-10"),
         dt=dt.date(1900, 6, 15), t=dt.time(23, 59, 59, 999000),
         ts=dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
         ltz=dt.datetime(1970, 1, 2, tzinfo=UTC), b=b"", fb=b"\xff\xff", flag=True, small=0,
         tiny=0, l=0),
]


def normalize(v):
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC)
    return v


async def read_rows(conn, admin, path, column="id"):
    got = sort_by(await read_all(conn, admin, path), column)
    return [{k: normalize(v) for k, v in r.items()} for r in got.to_pylist()]


@pytest.mark.parametrize("compression", ["NONE", "LZ4_FRAME", "ZSTD"])
async def test_produce_csv_all_types_read_by_pyfluss(server, conn, admin, db, compression):
    path = f"{db}.types_{compression.lower()}"
    create(server, path, TYPES_SCHEMA, "--buckets", "1",
           "--property", f"table.log.arrow.compression.type={compression}")
    await wait_ready(admin, fluss.TablePath(db, path.split(".")[1]))
    r = cli(server, "produce", path, stdin=TYPES_CSV)
    assert r.returncode == 0, r.stderr
    assert "produced 4 rows" in r.stderr
    got = await read_rows(conn, admin, fluss.TablePath(db, path.split(".")[1]))
    assert got == TYPES_EXPECTED


async def test_produce_csv_header_and_json_lines(server, conn, admin, db):
    create(server, f"{db}.people", "id BIGINT NOT NULL, name STRING, score DOUBLE, born DATE",
           "--buckets", "2")
    tp = fluss.TablePath(db, "people")
    await wait_ready(admin, tp, 2)
    r = cli(server, "produce", f"{db}.people", "--header",
            stdin="name,id\nann,1\n\"bob\",2\n,3\n")
    assert r.returncode == 0, r.stderr
    lines = [json.dumps({"id": 10, "name": "x\u00e9\"y", "score": 0.5, "born": "2001-09-09"}),
             json.dumps({"id": 11, "score": 7}),
             "",
             json.dumps({"id": 12, "name": None, "born": None, "score": -1e-5})]
    r = cli(server, "produce", f"{db}.people", "--format", "json", stdin="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    got = await read_rows(conn, admin, tp)
    assert got == [
        dict(id=1, name="ann", score=None, born=None),
        dict(id=2, name="bob", score=None, born=None),
        dict(id=3, name=None, score=None, born=None),
        dict(id=10, name="x\u00e9\"y", score=0.5, born=dt.date(2001, 9, 9)),
        dict(id=11, name=None, score=7.0, born=None),
        dict(id=12, name=None, score=-1e-5, born=None),
    ]


async def test_produce_bad_input_and_errors(server, admin, db):
    create(server, f"{db}.e", "id INT NOT NULL, d DATE", "--buckets", "1")
    await wait_ready(admin, fluss.TablePath(db, "e"))
    r = cli(server, "produce", f"{db}.e", stdin="1,2024-01-01\nx,2024-01-01\n")
    assert r.returncode == 1 and "line 2" in r.stderr and "not an integer" in r.stderr
    r = cli(server, "produce", f"{db}.e", stdin="1,2024-13-01\n")
    assert r.returncode == 1 and "not a date" in r.stderr
    r = cli(server, "produce", f"{db}.e", stdin=",2024-01-01\n")
    assert r.returncode == 1 and "NOT NULL" in r.stderr
    r = cli(server, "produce", f"{db}.e", stdin="1\n")
    assert r.returncode == 1 and "fields" in r.stderr
    r = cli(server, "produce", f"{db}.e", "--format", "json", stdin='{"id": 1, "nope": 2}\n')
    assert r.returncode == 1 and "unknown column" in r.stderr
    r = cli(server, "produce", f"{db}.absent", stdin="1\n")
    assert r.returncode == 1 and "TABLE_NOT_EXIST" in r.stderr
    r = cli(server, "produce", f"{db}.e", "--format", "xml")
    assert r.returncode == 2
    for cmd in ("produce", "scan"):
        r = subprocess.run([str(CLI), cmd, "--help"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and "usage:" in r.stdout
    r = subprocess.run([str(CLI), "--help"], capture_output=True, text=True, timeout=10)
    assert "produce DB.TABLE" in r.stdout and "scan DB.TABLE" in r.stdout


# ---------------------------------------------------------------------------
# pyfluss → scan
# ---------------------------------------------------------------------------

PY_SCHEMA = pa.schema([
    pa.field("id", pa.int32()),
    pa.field("s", pa.string()),
    pa.field("f64", pa.float64()),
    pa.field("flag", pa.bool_()),
    pa.field("bin", pa.binary()),
    pa.field("dec", pa.decimal128(10, 2)),
    pa.field("d", pa.date32()),
    pa.field("t32", pa.time32("ms")),
    pa.field("ts_us", pa.timestamp("us")),
    pa.field("ltz_ms", pa.timestamp("ms", tz="UTC")),
    pa.field("lst", pa.list_(pa.int32())),
    pa.field("mp", pa.map_(pa.string(), pa.int64())),
    pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
])


def py_row(i):
    return {
        "id": i,
        "s": ["héllo \"wörld\"\n", "", None, "日本"][i % 4],
        "f64": [-2.25, 1e-300, None, 0.1][i % 4],
        "flag": [True, False, None, True][i % 4],
        "bin": [b"\x00\x01\xff", b"", None, b"ab"][i % 4],
        "dec": [Decimal("123.45"), Decimal("-99999999.99"), None, Decimal("0.01")][i % 4],
        "d": [dt.date(2024, 2, 29), dt.date(1970, 1, 1), None, dt.date(1969, 12, 31)][i % 4],
        "t32": [dt.time(12, 34, 56, 789000), dt.time(0, 0), None, dt.time(23, 59, 59)][i % 4],
        "ts_us": [dt.datetime(2024, 1, 2, 3, 4, 5, 678901), dt.datetime(1970, 1, 1), None,
                  dt.datetime(1969, 12, 31, 23, 59, 59, 1)][i % 4],
        "ltz_ms": [dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
                   dt.datetime(1970, 1, 1, tzinfo=UTC), None,
                   dt.datetime(2000, 2, 29, 23, 59, 59, 1000, tzinfo=UTC)][i % 4],
        "lst": [[1, None, 3], [], None, [i]][i % 4],
        "mp": [[("a", 1), ("b", None)], [], None, [("k", i)]][i % 4],
        "st": [{"a": 7, "b": "x"}, {"a": None, "b": None}, None, {"a": i, "b": "é"}][i % 4],
    }


def as_json(row):
    """What `fluss scan --format json` prints for a py_row."""
    out = {}
    for k, v in row.items():
        if v is None:
            out[k] = None
        elif k == "bin":
            out[k] = v.hex()
        elif k == "dec":
            out[k] = float(v)
        elif k == "d":
            out[k] = v.isoformat()
        elif k == "t32":
            out[k] = v.strftime("%H:%M:%S.") + "%03d" % (v.microsecond // 1000)
        elif k == "ts_us":
            out[k] = v.strftime("%Y-%m-%dT%H:%M:%S.") + "%06d" % v.microsecond
        elif k == "ltz_ms":
            out[k] = v.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (v.microsecond // 1000)
        elif k == "mp":
            out[k] = dict(v)
        else:
            out[k] = v
    return out


async def test_pyfluss_rows_scanned_as_json(server, conn, admin, db):
    path = await create_log_table(admin, db, "py", PY_SCHEMA, bucket_count=2)
    table = await conn.get_table(path)
    writer = table.new_append().create_writer()
    writer.write_arrow(pa.Table.from_pylist([py_row(i) for i in range(40)], schema=PY_SCHEMA))
    await writer.flush()
    r = cli(server, "scan", f"{db}.py", "--format", "json")
    assert r.returncode == 0, r.stderr
    got = sorted((json.loads(line) for line in r.stdout.splitlines()), key=lambda x: x["id"])
    assert got == [as_json(py_row(i)) for i in range(40)]

    # projection (reordered), limit, csv and table formats
    r = cli(server, "scan", f"{db}.py", "--format", "json", "--columns", "s,id")
    assert r.returncode == 0, r.stderr
    got = sorted((json.loads(line) for line in r.stdout.splitlines()), key=lambda x: x["id"])
    assert [list(x) for x in got[:1]] == [["s", "id"]]
    assert got == [{"s": py_row(i)["s"], "id": i} for i in range(40)]
    r = cli(server, "scan", f"{db}.py", "--format", "csv", "--columns", "id,s", "--limit", "5")
    assert r.returncode == 0, r.stderr
    records = list(csv.reader(io.StringIO(r.stdout)))
    assert records[0] == ["id", "s"] and len(records) == 6
    for rec in records[1:]:
        want = py_row(int(rec[0]))["s"]
        assert rec[1] == (want if want is not None else "")
    r = cli(server, "scan", f"{db}.py", "--columns", "id", "--limit", "3")
    assert r.stdout.splitlines()[0] == "bucket | offset | id"
    assert all(re.fullmatch(r"[01] \| \d+ \| \d+", x) for x in r.stdout.splitlines()[1:])
    assert len(r.stdout.splitlines()) == 4


async def test_scan_from_latest_and_timestamp(server, conn, admin, db):
    create(server, f"{db}.tl", "id INT", "--buckets", "1")
    await wait_ready(admin, fluss.TablePath(db, "tl"))
    assert cli(server, "produce", f"{db}.tl", stdin="1\n2\n").returncode == 0
    time.sleep(0.05)
    middle = int(time.time() * 1000)
    time.sleep(0.05)
    assert cli(server, "produce", f"{db}.tl", stdin="3\n").returncode == 0
    r = cli(server, "scan", f"{db}.tl", "--from", "latest", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines() == ["id"]
    r = cli(server, "scan", f"{db}.tl", "--from", str(middle), "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["id", "3"]
    r = cli(server, "scan", f"{db}.tl", "--format", "csv")
    assert r.stdout.splitlines() == ["id", "1", "2", "3"]


# ---------------------------------------------------------------------------
# bucket keys
# ---------------------------------------------------------------------------

async def test_bucket_key_rows_land_where_java_puts_them(server, conn, admin, db):
    buckets = 5
    create(server, f"{db}.keyed", "k INT NOT NULL, s STRING NOT NULL, v BIGINT",
           "--buckets", str(buckets), "--bucket-key", "k,s")
    tp = fluss.TablePath(db, "keyed")
    await wait_ready(admin, tp, buckets)
    rows = [(k, f"key-{k % 7}", k * 3) for k in range(-20, 200)]
    text = "".join(f"{k},{s},{v}\n" for k, s, v in rows)
    r = cli(server, "produce", f"{db}.keyed", "--batch-bytes", "512", stdin=text)
    assert r.returncode == 0, r.stderr
    want = {}
    for k, s, v in rows:
        key = uvarint(k & M32) + uvarint(len(s.encode())) + s.encode()
        want.setdefault(bucket_of(key, buckets), []).append(v)
    batches = await read_batches(conn, admin, tp, len(rows))
    got = {}
    for rb in sorted(batches, key=lambda b: (b.bucket.bucket_id, b.base_offset)):
        got.setdefault(rb.bucket.bucket_id, []).extend(rb.batch.column("v").to_pylist())
    assert got == want
    assert len(want) > 1

    # the protocol's vector: INT key 1 → bucket 4 of 8
    create(server, f"{db}.k8", "id INT NOT NULL", "--buckets", "8", "--bucket-key", "id")
    await wait_ready(admin, fluss.TablePath(db, "k8"), 8)
    assert cli(server, "produce", f"{db}.k8", stdin="1\n").returncode == 0
    latest = await latest_offsets(admin, fluss.TablePath(db, "k8"), 8)
    assert latest == {b: (1 if b == 4 else 0) for b in range(8)}


async def test_no_bucket_key_spreads_batches(server, conn, admin, db):
    create(server, f"{db}.sticky", "id INT, pad STRING", "--buckets", "3")
    tp = fluss.TablePath(db, "sticky")
    await wait_ready(admin, tp, 3)
    text = "".join(f"{i},{'x' * 100}\n" for i in range(3000))
    r = cli(server, "produce", f"{db}.sticky", "--batch-bytes", "4096", stdin=text)
    assert r.returncode == 0, r.stderr
    latest = await latest_offsets(admin, tp, 3)
    assert sum(latest.values()) == 3000 and all(v > 0 for v in latest.values()), latest
    got = await read_all(conn, admin, tp)
    assert sorted(got.column("id").to_pylist()) == list(range(3000))


# ---------------------------------------------------------------------------
# follow, volume
# ---------------------------------------------------------------------------

async def test_follow_sees_rows_appended_later(server, admin, db):
    create(server, f"{db}.fol", "id INT, s STRING", "--buckets", "2")
    await wait_ready(admin, fluss.TablePath(db, "fol"), 2)
    assert cli(server, "produce", f"{db}.fol", stdin="1,first\n").returncode == 0
    p = subprocess.Popen([str(CLI), "--bootstrap-server", server.bootstrap, "scan", f"{db}.fol",
                          "--follow", "--format", "json", "--limit", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        assert json.loads(first) == {"id": 1, "s": "first"}
        assert p.poll() is None, "scan --follow exited early"
        assert cli(server, "produce", f"{db}.fol", stdin="2,second\n").returncode == 0
        out, err = p.communicate(timeout=20)
        assert p.returncode == 0, err
        assert [json.loads(x) for x in out.splitlines()] == [{"id": 2, "s": "second"}]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


async def test_produce_from_a_slow_pipe_sends_without_waiting_for_eof(server, admin, db):
    create(server, f"{db}.pipe", "id INT", "--buckets", "1")
    tp = fluss.TablePath(db, "pipe")
    await wait_ready(admin, tp)
    p = subprocess.Popen([str(CLI), "--bootstrap-server", server.bootstrap, "produce", f"{db}.pipe"],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        p.stdin.write("1\n2\n")
        p.stdin.flush()
        deadline = time.monotonic() + 10
        while (await latest_offsets(admin, tp)) != {0: 2}:
            assert time.monotonic() < deadline, "rows not sent while stdin stays open"
            time.sleep(0.05)
        p.stdin.write("3\n")
        p.stdin.close()
        assert p.wait(timeout=20) == 0, p.stderr.read()
        assert await latest_offsets(admin, tp) == {0: 3}
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


async def test_100k_rows_produce_and_scan(server, conn, admin, db):
    create(server, f"{db}.vol", "id BIGINT, name STRING, v DOUBLE, ts TIMESTAMP(3)",
           "--buckets", "3")
    tp = fluss.TablePath(db, "vol")
    await wait_ready(admin, tp, 3)
    n = 100_000
    text = "".join(f"{i},name-{i},{i / 4},{1700000000000 + i}\n" for i in range(n))
    t0 = time.monotonic()
    r = cli(server, "produce", f"{db}.vol", stdin=text, timeout=120)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    m = re.search(r"produced (\d+) rows \(([\d.]+) MB\) in ([\d.]+) s: (\d+) rows/s, ([\d.]+) MB/s",
                  r.stderr)
    assert m and int(m.group(1)) == n, r.stderr
    print(f"\nfluss produce: {n} rows, {len(text) / 1e6:.1f} MB of CSV: "
          f"{m.group(4)} rows/s, {m.group(5)} MB/s (CLI's own clock); "
          f"{n / elapsed:.0f} rows/s including process start")
    latest = await latest_offsets(admin, tp, 3)
    assert sum(latest.values()) == n
    r = cli(server, "scan", f"{db}.vol", "--format", "csv", timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == n + 1
    assert sorted(int(x.split(",")[0]) for x in lines[1:]) == list(range(n))
    got = await read_all(conn, admin, tp)
    assert got.num_rows == n
