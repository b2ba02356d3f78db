"""Keys of tables with `table.datalake.format` = iceberg (no lake tier
needed): the clients encode the bucket key as Iceberg's single value and
pick buckets with Iceberg's bucket transform (Fluss's IcebergKeyEncoder
and IcebergBucketingFunction), and the primary key the same way when it
is the bucket key, else compacted.

* The CLI (libfluss), the Java client 0.9.1 and pyfluss find each other's
  rows, and every row sits in the bucket Iceberg's transform gives.
* kill -9 and a restart: the server rebuilds the buckets from their
  changelogs with the keys encoded as the clients send them, for the
  primary key as bucket key (Iceberg's encoding) and for a composite key
  with a bucket key of its own (compacted primary key), so every row is
  still found.
* What cannot be bucketed so is refused at CREATE with a clear message:
  two bucket-key columns, a BOOLEAN bucket key, a primary-key table of a
  lake format whose keys the server does not encode (paimon).
"""

import shutil
import struct
import subprocess

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, connect, unique
from logutil import wait_ready
from test_cli_pk import cli, ok

ICEBERG = {"table.datalake.format": "iceberg"}


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Standard MurmurHash3 x86_32, unsigned."""
    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF

    def mix_k(k):
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        return (rotl(k, 15) * 0x1B873593) & 0xFFFFFFFF

    h = seed
    n4 = len(data) // 4 * 4
    for i in range(0, n4, 4):
        h ^= mix_k(int.from_bytes(data[i:i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    if len(data) > n4:
        h ^= mix_k(int.from_bytes(data[n4:], "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def iceberg_bucket_of_long(v: int, n: int) -> int:
    return (murmur3_32(struct.pack("<q", v)) & 0x7FFFFFFF) % n


def test_murmur3_spec_vectors():
    """The Python port the tests check buckets with, on the Iceberg spec's
    vectors (Appendix B)."""
    signed = lambda h: h - (1 << 32) if h >= 1 << 31 else h  # noqa: E731
    assert signed(murmur3_32(struct.pack("<q", 34))) == 2017239379
    assert signed(murmur3_32(b"iceberg")) == 1210000089
    assert signed(murmur3_32(bytes([0, 1, 2, 3]))) == -188683207


@pytest.mark.skipif(not IS_OURS, reason="the CLI ships with fluss-c's build")
async def test_iceberg_keys_across_clients(server, admin, db):
    buckets = 4
    name = unique("ice_kv")
    ok(cli(server, "table", "create", f"{db}.{name}", "--schema", "id BIGINT NOT NULL, v STRING",
           "--primary-key", "id", "--buckets", str(buckets), "--property",
           "table.datalake.format=iceberg"))
    path = fluss.TablePath(db, name)
    await wait_ready(admin, path, buckets)
    full = f"{db}.{name}"
    cli_keys = [999963, 1500, 1, 77777, -5]
    ok(cli(server, "upsert", full, stdin="".join(f"{k},cli\n" for k in cli_keys)))
    # every row sits in the bucket Iceberg's transform gives
    lines = ok(cli(server, "scan", full)).splitlines()[1:]
    assert len(lines) == len(cli_keys)
    for line in lines:
        bucket, _, key, _ = line.split(" | ")
        assert int(bucket) == iceberg_bucket_of_long(int(key), buckets), line
    assert len({iceberg_bucket_of_long(k, buckets) for k in cli_keys}) >= 2

    # pyfluss (fluss-rust) finds the CLI's rows and the CLI pyfluss's
    conn = await connect(server.bootstrap)
    try:
        table = await conn.get_table(path)
        lk = table.new_lookup().create_lookuper()
        for k in cli_keys:
            r = await lk.lookup({"id": k})
            assert r is not None and r["v"] == "cli", k
        w = table.new_upsert().create_writer()
        py_keys = [31, 2 ** 40, -77]
        for k in py_keys:
            w.upsert({"id": k, "v": "py"})
        await w.flush()
    finally:
        await conn.close()
    out = ok(cli(server, "lookup", full, *map(str, py_keys))).splitlines()
    assert out[1:] == [f"{k} | py" for k in py_keys]

    # the Java client 0.9.1 (tests/java JavaKv), both ways
    if not (shutil.which("java") and shutil.which("mvn")):
        return
    run = REPO / "tests" / "java" / "run"

    def java(*args):
        r = subprocess.run([str(run), server.bootstrap, "JavaKv", full, *map(str, args)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        return [x for x in r.stdout.splitlines() if not x.startswith("[java-smoke]")]

    assert java("lookup", *cli_keys, 5) == [f"{k}=cli" for k in cli_keys] + ["5 missing"]
    java_keys = [999964, 2000, 3, 123456789]
    assert java("upsert", "java", *java_keys) == ["upserted 4"]
    out = ok(cli(server, "lookup", full, *map(str, java_keys))).splitlines()
    assert out[1:] == [f"{k} | java" for k in java_keys]
    for line in ok(cli(server, "scan", full)).splitlines()[1:]:
        bucket, _, key, _ = line.split(" | ")
        assert int(bucket) == iceberg_bucket_of_long(int(key), buckets), line


SINGLE = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.int64())])
COMPOSITE = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                       pa.field("v", pa.int64())])
KEYS = 120


async def lookup_all(table, key_of):
    lk = table.new_lookup().create_lookuper()
    got = {}
    for k in range(KEYS):
        r = await lk.lookup(key_of(k))
        got[k] = None if r is None else r["v"]
    return got


@pytest.mark.restarts
@pytest.mark.parametrize("shape", ["pk-is-bucket-key", "composite-pk"])
async def test_iceberg_pk_state_survives_kill9(our_server, shape):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("icekill")
    await admin.create_database(db)
    path = fluss.TablePath(db, "pk")
    if shape == "pk-is-bucket-key":
        schema = fluss.Schema(SINGLE, primary_keys=["id"])
        desc = fluss.TableDescriptor(schema, bucket_count=3, properties=ICEBERG)

        def key_of(k):
            return {"id": k}

        def row_of(k, v):
            return {"id": k, "v": v}
    else:
        schema = fluss.Schema(COMPOSITE, primary_keys=["id", "name"])
        desc = fluss.TableDescriptor(schema, bucket_count=3, bucket_keys=["id"],
                                     properties=ICEBERG)

        def key_of(k):
            return {"id": k, "name": f"n{k % 7}"}

        def row_of(k, v):
            return {"id": k, "name": f"n{k % 7}", "v": v}
    await admin.create_table(path, desc)
    await wait_ready(admin, path, 3)
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    expect = {}
    for i in range(400):
        k = (i * 7) % KEYS
        if i % 9 == 8:
            w.delete(key_of(k))
            expect[k] = None
        else:
            w.upsert(row_of(k, i))
            expect[k] = i
    await w.flush()
    expect = {k: expect.get(k) for k in range(KEYS)}
    assert await lookup_all(table, key_of) == expect
    await conn.close()
    assert our_server.kill9() == -9
    our_server.start()
    conn = await connect(our_server.bootstrap)
    try:
        await wait_ready(conn.get_admin(), path, 3)
        table = await conn.get_table(path)
        assert await lookup_all(table, key_of) == expect
        # an upsert after the restart replaces the row it finds
        w = table.new_upsert().create_writer()
        w.upsert(row_of(1, -1))
        await w.flush()
        r = await table.new_lookup().create_lookuper().lookup(key_of(1))
        assert r["v"] == -1
    finally:
        await conn.close()


@pytest.mark.skipif(not IS_OURS, reason="fluss-c's stricter checks (KNOWN_DIFFERENCES)")
async def test_keys_a_lake_format_cannot_take_are_refused(admin, db):
    two = fluss.TableDescriptor(fluss.Schema(COMPOSITE), bucket_count=2,
                                bucket_keys=["id", "name"], properties=ICEBERG)
    with pytest.raises(Exception, match="exactly one bucket key column"):
        await admin.create_table(fluss.TablePath(db, "two"), two)
    boolean = pa.schema([pa.field("flag", pa.bool_()), pa.field("v", pa.int64())])
    bad_type = fluss.TableDescriptor(fluss.Schema(boolean), bucket_count=2, bucket_keys=["flag"],
                                     properties=ICEBERG)
    with pytest.raises(Exception, match="cannot bucket"):
        await admin.create_table(fluss.TablePath(db, "flag"), bad_type)
    paimon = fluss.TableDescriptor(fluss.Schema(SINGLE, primary_keys=["id"]), bucket_count=2,
                                   properties={"table.datalake.format": "paimon"})
    with pytest.raises(Exception, match="not supported by this server"):
        await admin.create_table(fluss.TablePath(db, "paimon"), paimon)
    # an Iceberg log table without a bucket key, and one with one column
    await admin.create_table(fluss.TablePath(db, "log"), fluss.TableDescriptor(
        fluss.Schema(SINGLE), bucket_count=2, properties=ICEBERG))
    await admin.create_table(fluss.TablePath(db, "logk"), fluss.TableDescriptor(
        fluss.Schema(SINGLE), bucket_count=2, bucket_keys=["id"], properties=ICEBERG))
