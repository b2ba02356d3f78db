"""`fluss-perf` (src/perf, the load generator over libfluss) against the
suite's server: what `produce` acknowledges `consume` reads back, whole
and projected, `latency` sees every row it wrote, and `upsert` writes
every key of its key space, which `lookup` and pyfluss then find. The JSON summary
is what bench/run_core.sh parses, so its fields are checked here.

FLUSS_PERF=build-asan/fluss-perf runs libfluss itself under ASan+UBSan."""

import json
import os
import subprocess

import pytest

from conftest import REPO, unique

PERF = REPO / os.environ.get("FLUSS_PERF", "build/fluss-perf")

pytestmark = pytest.mark.skipif(not PERF.is_file(), reason=f"{PERF} is not built")


def perf(server, *args, timeout=120):
    r = subprocess.run([str(PERF), *args, "--bootstrap-server", server.bootstrap, "--json",
                        "--quiet"], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"fluss-perf {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return json.loads(lines[0])


def test_produce_then_consume(server):
    table = f"{unique('perfdb')}.t"
    n = 3000
    p = perf(server, "produce", "--table", table, "--records", str(n), "--record-size", "512",
             "--buckets", "3", "--threads", "2", "--compression", "LZ4_FRAME",
             "--batch-rows", "100")
    assert p["mode"] == "produce" and p["table"] == table
    assert p["records"] == n and p["errors"] == 0
    assert p["records_per_s"] > 0 and p["mb_per_s"] > 0 and p["wire_bytes"] > 0
    # 512-byte rows: the acknowledged Arrow bytes are about n x 512
    assert 0.9 * n * 512 <= p["bytes"] <= 1.2 * n * 512
    assert p["requests"] >= n // 100 and 0 < p["p50_ms"] <= p["p99_ms"] <= p["max_ms"]
    assert p["cpu_s"] > 0

    c = perf(server, "consume", "--table", table, "--threads", "2")
    assert c["records"] == n and c["errors"] == 0
    assert c["records_per_s"] > 0 and c["mb_per_s"] > 0

    # one of three columns: the server prunes the payload, so far fewer bytes arrive
    cp = perf(server, "consume", "--table", table, "--columns", "id")
    assert cp["records"] == n and cp["columns"] == "id"
    assert cp["bytes"] < c["bytes"] / 5


def test_replay_produce(server):
    """--replay resends one prepared request per thread: every copy is
    appended, and a consumer reads back exactly what was acknowledged."""
    table = f"{unique('perfdb')}.t"
    p = perf(server, "produce", "--table", table, "--records", "2000", "--record-size", "256",
             "--buckets", "2", "--threads", "2", "--max-inflight", "4", "--batch-rows", "100",
             "--replay", "--no-idempotence")
    assert p["errors"] == 0 and p["records"] >= 2000 and p["requests"] >= 20
    # each thread resends one request: its row count times the requests
    per = p["records"] // p["requests"]
    assert per > 1 and p["records"] == p["requests"] * per
    c = perf(server, "consume", "--table", table, "--threads", "1")
    assert c["records"] == p["records"] and c["errors"] == 0


def test_consume_records_limit_and_buckets(server):
    table = f"{unique('perfdb')}.t"
    perf(server, "produce", "--table", table, "--records", "1000", "--record-size", "100",
         "--buckets", "2", "--batch-rows", "50")
    one = perf(server, "consume", "--table", table, "--buckets", "1")
    assert 0 < one["records"] < 1000  # bucket 0 only
    some = perf(server, "consume", "--table", table, "--records", "10")
    assert some["records"] >= 10


def test_latency(server):
    table = f"{unique('perfdb')}.t"
    x = perf(server, "latency", "--table", table, "--records", "200", "--rate", "400",
             "--record-size", "128")
    assert x["mode"] == "latency"
    assert x["produced"] == 200 and x["records"] == 200 and x["errors"] == 0
    assert 0 < x["p50_ms"] <= x["p99_ms"] <= x["max_ms"] < 60_000


async def test_upsert_then_lookup(server, conn):
    import fluss
    from test_cli_pk import clients_agree  # pyfluss buckets some keys unlike Java
    db = unique("perfdb")
    table = f"{db}.kv"
    keys = 3000
    u = perf(server, "upsert", "--table", table, "--keys", str(keys), "--records", str(keys),
             "--value-size", "64", "--buckets", "3", "--threads", "2", "--batch-bytes", "20000")
    assert u["mode"] == "upsert" and u["records"] == keys and u["errors"] == 0
    assert u["keys"] == keys and u["value_size"] == 64 and u["requests"] >= 3
    assert 0 < u["p50_ms"] <= u["p99_ms"] <= u["max_ms"] and u["records_per_s"] > 0
    # the first pass wrote every key once: every lookup finds its row
    lk = perf(server, "lookup", "--table", table, "--keys", str(keys), "--records", "1000",
              "--threads", "2")
    assert lk["records"] == 1000 and lk["found"] == 1000 and lk["requests"] == 1000
    assert 0 < lk["p50_ms"] <= lk["p99_ms"] <= lk["max_ms"]
    assert lk["bytes"] == 1000 * (64 + 8)
    # keys beyond the written ones: about half found, in batches of 50
    half = perf(server, "lookup", "--table", table, "--keys", str(2 * keys), "--records", "2000",
                "--lookup-batch", "50")
    assert half["requests"] == 40 and 700 < half["found"] < 1300
    t = await conn.get_table(fluss.TablePath(db, "kv"))
    look = t.new_lookup().create_lookuper()
    checked = [k for k in range(0, keys, 97) if clients_agree(k, 3)]
    assert len(checked) > 10
    for k in checked:
        row = await look.lookup({"id": k})
        assert row is not None and len(row["v"]) == 64, k
    assert await look.lookup({"id": keys}) is None


def test_bad_usage():
    r = subprocess.run([str(PERF), "consume"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--table" in r.stderr
    r = subprocess.run([str(PERF), "produce", "--acks", "0"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2
