"""The CLI's primary-key commands (`fluss upsert`, `delete`, `lookup`,
`scan --changelog`; libfluss's upsert writer and lookuper) against our
server, cross-checked with pyfluss both ways: rows the CLI writes,
pyfluss's lookuper reads back equal (which also proves the key encoding
and bucketing match the official client's), rows pyfluss writes the CLI
looks up equal, and the changelog shows the exact change types.

Bucketing: libfluss hashes keys like the Java client (Flink's murmur,
whose tail bytes are sign-extended Java bytes). pyfluss 1.0.0 (fluss-rust)
mixes the tail bytes unsigned, so for a key whose last len % 4 bytes hold
a byte >= 0x80 the two clients pick different buckets and do not find
each other's rows. The cross-checks with pyfluss use keys on which both
agree; test_bucket_of_key_follows_java_client pins the Java choice on a
key where they differ."""

import datetime as dt
import os
import subprocess
from decimal import Decimal

import pytest

import fluss
from conftest import IS_OURS, REPO, unique
from logutil import wait_ready
from test_cli_data import _fmix, _mix_h1, _mix_k1, bucket_of, murmur_int, uvarint

pytestmark = pytest.mark.skipif(not IS_OURS, reason="the CLI ships with fluss-c's build")

CLI = REPO / os.environ.get("FLUSS_CLI", "build/fluss")
UTC = dt.timezone.utc

TYPES = ("id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, f64 DOUBLE, "
         "s STRING, bin BYTES, dec DECIMAL(10, 2), dec38 DECIMAL(38, 6), d DATE, t TIME(3), "
         "ts TIMESTAMP(6), ltz TIMESTAMP_LTZ(3)")
COLS = ["id", "b", "i8", "i16", "i32", "f64", "s", "bin", "dec", "dec38", "d", "t", "ts", "ltz"]


def bucket_unsigned_tail(key: bytes, n: int) -> int:
    """fluss-rust's bucket choice (tail bytes mixed unsigned)."""
    h = 42
    n4 = len(key) // 4 * 4
    for i in range(0, n4, 4):
        h = _mix_h1(h, _mix_k1(int.from_bytes(key[i:i + 4], "little")))
    for b in key[n4:]:
        h = _mix_h1(h, _mix_k1(b))
    return murmur_int(_fmix(h, len(key))) % n


def clients_agree(bigint_key: int, n: int) -> bool:
    key = uvarint(bigint_key)
    return bucket_of(key, n) == bucket_unsigned_tail(key, n)


def cli(server, *args, stdin=None, timeout=60):
    return subprocess.run([str(CLI), "--bootstrap-server", server.bootstrap, *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def ok(r):
    assert r.returncode == 0, r.stderr
    return r.stdout


async def create(server, admin, db, name, schema, pk, buckets, *extra):
    ok(cli(server, "table", "create", f"{db}.{name}", "--schema", schema, "--primary-key", pk,
           "--buckets", str(buckets), *extra))
    path = fluss.TablePath(db, name)
    await wait_ready(admin, path, buckets)
    return path


def expected_row(i):
    """Row i as pyfluss returns it and as CSV text for the CLI."""
    row = {"id": i * 1_000_003 - 40, "b": i % 2 == 0, "i8": i % 100 - 50, "i16": 300 * i,
           "i32": -(2 ** 31) + i, "f64": i / 4 + 0.125, "s": f"naïve, \"{i}\"", "bin": bytes([i % 256, 255]),
           "dec": Decimal(f"{i}.25"), "dec38": Decimal(f"12345678901234567890.{i:06d}"),
           "d": dt.date(1970, 1, 1) + dt.timedelta(days=i * 37 - 400),
           "t": dt.time(i % 24, 7, 9, 123000),
           "ts": dt.datetime(2024, 2, 29, 12, 0, 0, i),
           "ltz": dt.datetime(2001, 9, 9, 1, 46, 40, 0, tzinfo=UTC) + dt.timedelta(milliseconds=i)}
    csv = ",".join([
        str(row["id"]), "true" if row["b"] else "false", str(row["i8"]), str(row["i16"]),
        str(row["i32"]), repr(row["f64"]), '"' + row["s"].replace('"', '""') + '"',
        row["bin"].hex(), str(row["dec"]), str(row["dec38"]), row["d"].isoformat(),
        row["t"].isoformat(timespec="milliseconds"), row["ts"].isoformat(sep=" "),
        row["ltz"].strftime("%Y-%m-%dT%H:%M:%S.") + f"{row['ltz'].microsecond // 1000:03d}Z"])
    return row, csv


def same(got, want):
    for k, v in want.items():
        g = got[k]
        if isinstance(v, dt.datetime) and v.tzinfo and isinstance(g, dt.datetime) and not g.tzinfo:
            g = g.replace(tzinfo=UTC)
        assert g == v, (k, g, v)


async def test_cli_upsert_read_by_pyfluss_lookup(server, conn, admin, db):
    path = await create(server, admin, db, unique("cli_pk"), TYPES, "id", 4)
    rows = [expected_row(i) for i in range(1, 80) if clients_agree(expected_row(i)[0]["id"], 4)]
    assert len(rows) >= 30
    ok(cli(server, "upsert", f"{db}.{path.table_name}",
           stdin="".join(c + "\n" for _, c in rows)))
    table = await conn.get_table(path)
    lk = table.new_lookup().create_lookuper()
    for want, _ in rows:
        got = await lk.lookup({"id": want["id"]})
        assert got is not None, want["id"]
        same(got, want)
    # deletes through the CLI: keys as arguments and from stdin
    ok(cli(server, "delete", f"{db}.{path.table_name}", str(rows[0][0]["id"]),
           str(rows[1][0]["id"])))
    ok(cli(server, "delete", f"{db}.{path.table_name}", stdin=f"{rows[2][0]['id']}\n"))
    for k, (want, _) in enumerate(rows[:5]):
        got = await lk.lookup({"id": want["id"]})
        assert (got is None) == (k < 3), want["id"]


async def test_pyfluss_upsert_read_by_cli_lookup(server, conn, admin, db):
    path = await create(server, admin, db, unique("py_pk"), TYPES, "id", 3)
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    rows = [expected_row(i)[0] for i in range(1, 60) if clients_agree(expected_row(i)[0]["id"], 3)]
    assert len(rows) >= 15
    for r in rows:
        w.upsert(r)
    w.delete({"id": rows[4]["id"]})
    await w.flush()
    keys = [str(r["id"]) for r in rows] + ["7"]
    out = ok(cli(server, "lookup", f"{db}.{path.table_name}", *keys)).splitlines()
    assert out[0] == " | ".join(COLS)
    assert len(out) == 1 + len(keys)
    for line, r in zip(out[1:], rows):
        if r is rows[4]:
            assert line == f"not found: {r['id']}"
            continue
        ltz = r["ltz"].strftime("%Y-%m-%dT%H:%M:%S.") + f"{r['ltz'].microsecond // 1000:03d}Z"
        assert line == " | ".join([
            str(r["id"]), "true" if r["b"] else "false", str(r["i8"]), str(r["i16"]),
            str(r["i32"]), repr(r["f64"]), r["s"], r["bin"].hex(), str(r["dec"]), str(r["dec38"]),
            r["d"].isoformat(), r["t"].isoformat(timespec="milliseconds"),
            r["ts"].isoformat(timespec="microseconds"), ltz]), line
    assert out[-1] == "not found: 7"


async def test_cli_partial_update_and_composite_key(server, conn, admin, db):
    path = await create(server, admin, db, unique("cli_part"),
                        "tenant STRING NOT NULL, id INT NOT NULL, name STRING, score BIGINT",
                        "tenant,id", 2, "--bucket-key", "tenant")
    name = f"{db}.{path.table_name}"
    ok(cli(server, "upsert", name, stdin="acme,1,a,10\nacme,2,b,20\nzeta,1,z,30\n"))
    ok(cli(server, "upsert", name, "--columns", "tenant,id,score", stdin="acme,1,11\nacme,3,33\n"))
    table = await conn.get_table(path)
    lk = table.new_lookup().create_lookuper()
    got = await lk.lookup({"tenant": "acme", "id": 1})
    assert (got["name"], got["score"]) == ("a", 11)
    got = await lk.lookup({"tenant": "acme", "id": 3})
    assert (got["name"], got["score"]) == (None, 33)
    pl = table.new_lookup().lookup_by(["tenant"]).create_lookuper()
    assert sorted(r["id"] for r in await pl.lookup({"tenant": "acme"})) == [1, 2, 3]
    out = ok(cli(server, "lookup", name, "--format", "json", "acme,2", "zeta,1", "zeta,2"))
    assert out.splitlines() == ['{"tenant": "acme", "id": 2, "name": "b", "score": 20}',
                                '{"tenant": "zeta", "id": 1, "name": "z", "score": 30}',
                                "null"]
    r = cli(server, "lookup", name, "acme")
    assert r.returncode == 1 and "expected 2 values" in r.stderr
    # keys by column name (--key COL=VALUE,...), in any order, mixed with CSV keys
    out = ok(cli(server, "lookup", name, "--format", "json", "--key", "id=2,tenant=acme",
                 "zeta,1", "--key", "tenant=acme,id=9"))
    assert out.splitlines() == ['{"tenant": "acme", "id": 2, "name": "b", "score": 20}',
                                '{"tenant": "zeta", "id": 1, "name": "z", "score": 30}',
                                "null"]
    for bad in ("id=2", "tenant=acme,name=b", "tenant=acme,id=2,id=3", "tenant=acme,2"):
        r = cli(server, "lookup", name, "--key", bad)
        assert r.returncode == 1 and "--key" in r.stderr, (bad, r.stderr)
    ok(cli(server, "delete", name, "--key", "tenant=zeta,id=1"))
    assert await lk.lookup({"tenant": "zeta", "id": 1}) is None
    assert (await lk.lookup({"tenant": "acme", "id": 2}))["name"] == "b"


async def test_scan_changelog_change_types(server, conn, admin, db):
    path = await create(server, admin, db, unique("cli_log"), "id INT NOT NULL, v STRING", "id", 1)
    name = f"{db}.{path.table_name}"
    ok(cli(server, "upsert", name, stdin="1,a\n2,b\n"))
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    w.upsert({"id": 1, "v": "a2"})
    await w.flush()
    ok(cli(server, "delete", name, "2"))
    ok(cli(server, "upsert", name, stdin="2,c\n"))
    out = ok(cli(server, "scan", name, "--changelog")).splitlines()
    assert out == ["bucket | offset | change | id | v",
                   "0 | 0 | +I | 1 | a",
                   "0 | 1 | +I | 2 | b",
                   "0 | 2 | -U | 1 | a",
                   "0 | 3 | +U | 1 | a2",
                   "0 | 4 | -D | 2 | b",
                   "0 | 5 | +I | 2 | c"]
    out = ok(cli(server, "scan", name, "--changelog", "--format", "csv")).splitlines()
    assert out[0] == "_change,id,v" and out[3:5] == ["-U,1,a", "+U,1,a2"]
    # a plain scan follows the changelog too: every change is a row
    out = ok(cli(server, "scan", name, "--format", "json")).splitlines()
    assert [l for l in out] == ['{"id": 1, "v": "a"}', '{"id": 2, "v": "b"}',
                                '{"id": 1, "v": "a"}', '{"id": 1, "v": "a2"}',
                                '{"id": 2, "v": "b"}', '{"id": 2, "v": "c"}']


async def test_cli_kv_errors(server, admin, db):
    log = f"{db}.{unique('cli_logt')}"
    ok(cli(server, "table", "create", log, "--schema", "id INT, v STRING"))
    r = cli(server, "upsert", log, stdin="1,a\n")
    assert r.returncode == 1 and "has no primary key" in r.stderr
    r = cli(server, "lookup", log, "1")
    assert r.returncode == 1 and "has no primary key" in r.stderr
    path = await create(server, admin, db, unique("cli_pk_err"), "id INT NOT NULL, v STRING",
                        "id", 1)
    r = cli(server, "upsert", f"{db}.{path.table_name}", stdin="x,a\n")
    assert r.returncode == 1 and "line 1" in r.stderr
    # a partial update without the key: refused before anything is sent
    r = cli(server, "upsert", f"{db}.{path.table_name}", "--columns", "v", stdin="a\n")
    assert r.returncode == 1 and "column id is NULL" in r.stderr
    r = cli(server, "lookup", f"{db}.{path.table_name}", "x")
    assert r.returncode == 1 and "key 'x'" in r.stderr


async def test_bucket_of_key_follows_java_client(server, admin, db):
    """A key whose Java and fluss-rust buckets differ lands in the Java
    client's bucket, and the CLI finds it there."""
    key = 999963  # uvarint 9b 84 3d: tail bytes >= 0x80
    assert not clients_agree(key, 4)
    path = await create(server, admin, db, unique("cli_bkt"), "id BIGINT NOT NULL, v STRING",
                        "id", 4)
    name = f"{db}.{path.table_name}"
    ok(cli(server, "upsert", name, stdin=f"{key},x\n"))
    out = ok(cli(server, "scan", name)).splitlines()
    assert out[1] == f"{bucket_of(uvarint(key), 4)} | 0 | {key} | x"
    assert ok(cli(server, "lookup", name, str(key))).splitlines()[1] == f"{key} | x"


async def test_java_client_finds_cli_rows_and_back(server, admin, db):
    """The Java client 0.9.1 (tests/java JavaKv) looks up rows the CLI wrote
    and the CLI rows the Java client wrote, including keys on which
    fluss-rust's bucketing differs: libfluss buckets like Java."""
    import shutil
    if not (shutil.which("java") and shutil.which("mvn")):
        pytest.skip("needs java and mvn for tests/java")
    run = REPO / "tests" / "java" / "run"
    path = await create(server, admin, db, unique("cli_java"), "id BIGINT NOT NULL, v STRING",
                        "id", 4)
    name = f"{db}.{path.table_name}"
    cli_keys = [999963, 1500, 1, 77777]
    java_keys = [999964, 2000, 3, 123456789]
    assert sum(not clients_agree(k, 4) for k in cli_keys + java_keys) >= 3
    ok(cli(server, "upsert", name, stdin="".join(f"{k},cli\n" for k in cli_keys)))

    def java(*args):
        r = subprocess.run([str(run), server.bootstrap, "JavaKv", name, *map(str, args)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        return [l for l in r.stdout.splitlines() if not l.startswith("[java-smoke]")]

    assert java("lookup", *cli_keys, 5) == [f"{k}=cli" for k in cli_keys] + ["5 missing"]
    assert java("upsert", "java", *java_keys) == ["upserted 4"]
    out = ok(cli(server, "lookup", name, *map(str, java_keys))).splitlines()
    assert out[1:] == [f"{k} | java" for k in java_keys]
    # every row sits in the bucket the Java port of the hash gives
    for line in ok(cli(server, "scan", name)).splitlines()[1:]:
        bucket, _, key, _ = line.split(" | ")
        assert int(bucket) == bucket_of(uvarint(int(key)), 4), line


def test_cli_kv_help_and_usage():
    for cmd in ("upsert", "delete", "lookup"):
        r = subprocess.run([str(CLI), cmd, "--help"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and "usage:" in r.stdout and "A KEY is" in r.stdout, cmd
        r = subprocess.run([str(CLI), cmd], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and f"bad arguments for {cmd}" in r.stderr, cmd
    r = subprocess.run([str(CLI), "scan", "--help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and "--changelog" in r.stdout
