"""Filter pushdown (Fluss main's FETCH_LOG filter, ahead of 0.9.1; ours only).

A log table with `table.statistics.columns` is written by pyfluss 1.0.0,
which then sends magic 1 batches with per-column min/max/null counts
(Fluss main's layout). The server keeps them byte for byte and, for a fetch
with a filter, skips whole batches whose statistics prove no row matches,
reporting filtered_end_offset so the reader moves past them. Checked here:

* exactly the batches that can match are sent (counted) for leaves and
  AND/OR trees over several types, and the reader reaches the high
  watermark by following filtered_end_offset;
* pyfluss's filtered scan returns exactly the rows a client-side filter
  keeps, and only the rows of matching batches;
* a reader that did not announce the new layout (a 0.9.1 client) gets every
  batch as magic 0 with a valid CRC — the Java client 0.9.1 reads the table
  whole;
* CREATE checks the property as Fluss main does.
"""

import asyncio
import struct
import subprocess
import time

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, connect, unique
from logutil import (crc32c, create_log_table, fetch_log, parse_batches, raw_tablet, read_all,
                     wait_ready)
from rawwire import f_bytes, f_varint

pytestmark = pytest.mark.skipif(not IS_OURS, reason="filter pushdown is Fluss main's; "
                                "0.9.1 refuses table.statistics.columns")

BATCHES = 40
ROWS = 50
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()),
                    pa.field("score", pa.float64()), pa.field("tag", pa.string())])
RUST = ("fluss-rust", "1.0.0")

# Fluss main's PbLeafPredicate functions and literal type roots
EQ, NE, LT, LE, GT, GE, IS_NULL, IS_NOT_NULL, STARTS_WITH = 0, 1, 2, 3, 4, 5, 6, 7, 8
T_BIGINT, T_DOUBLE, T_STRING = 4, 6, 8


def lit(value):
    if isinstance(value, str):
        return f_varint(1, T_STRING) + f_varint(2, 0) + f_bytes(8, value)
    if isinstance(value, float):
        return f_varint(1, T_DOUBLE) + f_varint(2, 0) + bytes([7 << 3 | 1]) + struct.pack("<d", value)
    return f_varint(1, T_BIGINT) + f_varint(2, 0) + f_varint(5, value)


def leaf(fn, field_id, *values):
    body = f_varint(1, fn) + f_varint(2, field_id) + b"".join(f_bytes(3, lit(v)) for v in values)
    return f_varint(1, 0) + f_bytes(2, body)


def compound(fn, *children):
    return f_varint(1, 1) + f_bytes(3, f_varint(1, fn) + b"".join(f_bytes(2, c) for c in children))


def AND(*c):
    return compound(0, *c)


def OR(*c):
    return compound(1, *c)


def rows_of(i):
    """Batch i: ids i*ROWS .. i*ROWS+ROWS-1, names n<i>_<k>, score i, tag null
    in odd batches."""
    ids = list(range(i * ROWS, (i + 1) * ROWS))
    return pa.table({"id": ids, "name": [f"n{i:03d}_{k}" for k in range(ROWS)],
                     "score": [float(i)] * ROWS,
                     "tag": [None if i % 2 else f"t{i}"] * ROWS}, schema=SCHEMA)


@pytest.fixture
async def stats_table(stats_table_factory):
    path, info, _ = await stats_table_factory("pyfluss")
    return path, info


@pytest.fixture(params=["pyfluss", "java"])
async def written_table(request, stats_table_factory):
    return await stats_table_factory(request.param)


@pytest.fixture
def stats_table_factory(conn, admin, db, server):
    async def make(writer):
        if writer == "pyfluss":
            path = await create_log_table(admin, db, "filt", SCHEMA, bucket_count=1,
                                          properties={"table.statistics.columns": "*"})
            table = await conn.get_table(path)
            w = table.new_append().create_writer()
            for i in range(BATCHES):
                w.write_arrow(rows_of(i))
                await w.flush()
            return path, await admin.get_table_info(path), 1
        proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap,
                               "JavaWriteRows", db, "jfilt", str(BATCHES), str(ROWS),
                               "table.statistics.columns=id,name,score,tag"],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        path = fluss.TablePath(db, "jfilt")
        await wait_ready(admin, path)
        return path, await admin.get_table_info(path), 0
    return make


def scan_filtered(rc, info, predicate):
    """Follows a bucket from 0 to its high watermark with the filter as a
    client of the new layout does; -> (batch headers received, fetches)."""
    got, offset, fetches = [], 0, 0
    while True:
        _, resp = fetch_log(rc, info.table_id, {0: offset}, predicate=predicate,
                            filter_schema_id=info.schema_id)
        fetches += 1
        (b,) = resp
        assert b["error_code"] == 0, b
        hdrs = parse_batches(b["records"] or b"", new_layout=True)
        got += hdrs
        nxt = offset
        if hdrs:
            nxt = hdrs[-1]["base_offset"] + hdrs[-1]["last_offset_delta"] + 1
        if b["filtered_end_offset"] is not None:
            assert b["filtered_end_offset"] >= nxt, b
            nxt = b["filtered_end_offset"]
        if nxt >= b["high_watermark"]:
            return got, fetches
        assert nxt > offset, ("no progress", offset, b)
        offset = nxt
        assert fetches < 1000


def batch_ids(hdrs):
    return sorted(h["base_offset"] // ROWS for h in hdrs)


async def test_batches_skipped_by_statistics(admin, written_table):
    """pyfluss writes magic 1 batches with statistics; the Java client 0.9.1
    writes plain magic 0 ones and the server computes theirs at append."""
    path, info, magic = written_table
    rc = await raw_tablet(admin, software=RUST)
    try:
        # unfiltered: all batches, stored as the client wrote them
        all_batches, _ = scan_filtered(rc, info, None)
        assert len(all_batches) == BATCHES
        assert {h["magic"] for h in all_batches} == {magic}
        cases = [
            (leaf(GE, 0, (BATCHES - 1) * ROWS), [BATCHES - 1]),
            (leaf(EQ, 0, 5 * ROWS + 7), [5]),
            (leaf(LT, 0, 2 * ROWS), [0, 1]),
            (leaf(GT, 2, 37.5), [38, 39]),
            (OR(leaf(LT, 0, 3), leaf(STARTS_WITH, 1, "n020")), [0, 20]),
            (AND(leaf(GE, 2, 10.0), leaf(LE, 0, 11 * ROWS)), [10, 11]),
            (leaf(IS_NULL, 3), list(range(1, BATCHES, 2))),
            (AND(leaf(IS_NOT_NULL, 3), leaf(LT, 2, 6.0)), [0, 2, 4]),
            (leaf(EQ, 3, "t8"), [8]),
            (leaf(NE, 2, 3.0), [i for i in range(BATCHES) if i != 3]),
            (leaf(EQ, 0, -5), []),
            (leaf(IS_NULL, 0), []),
        ]
        for pred, want in cases:
            got, fetches = scan_filtered(rc, info, pred)
            assert batch_ids(got) == want, (pred.hex(), batch_ids(got), want)
            print(f"filter -> {len(got)} of {BATCHES} batches in {fetches} fetch(es)")
        # a predicate the server cannot use (CONTAINS) or an unknown field
        # id skips nothing
        for pred in (leaf(9, 1, "n0"), leaf(EQ, 77, 1)):
            got, _ = scan_filtered(rc, info, pred)
            assert len(got) == BATCHES
    finally:
        rc.close()


async def test_pyfluss_filtered_scan(conn, admin, stats_table):
    path, info = stats_table
    table = await conn.get_table(path)
    pred = (fluss.col("id") >= 31 * ROWS + 10) & (fluss.col("id") < 33 * ROWS)
    # polled, not to_arrow(): pyfluss 1.0.0's bounded read waits for a
    # record at the end offset, which a filtered tail never delivers
    scanner = await table.new_scan().filter(pred).create_record_batch_log_scanner()
    scanner.subscribe_buckets({0: fluss.EARLIEST_OFFSET})
    ids, quiet_since = [], None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        got = await scanner.poll_record_batch(300)
        for rb in got:
            ids += rb.batch.column("id").to_pylist()
        if got or len(ids) < 2 * ROWS:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:
            break
    # only batches 31 and 32 come back; the client-side filter keeps the rest
    assert sorted(ids) == list(range(31 * ROWS, 33 * ROWS)), (len(ids), ids[:5])
    kept = [i for i in ids if 31 * ROWS + 10 <= i < 33 * ROWS]
    assert kept == sorted(kept) and len(kept) == 2 * ROWS - 10


async def test_old_readers_get_magic_0(conn, admin, stats_table):
    path, info = stats_table
    legacy = await raw_tablet(admin)  # announces no reader of the new layout
    rust = await raw_tablet(admin, software=RUST)
    try:
        _, old = fetch_log(legacy, info.table_id, {0: 0})
        _, new = fetch_log(rust, info.table_id, {0: 0})
        old_b = parse_batches(old[0]["records"])
        new_b = parse_batches(new[0]["records"], new_layout=True)
        assert len(old_b) == len(new_b) > 0
        for o, n in zip(old_b, new_b):
            assert o["magic"] == 0 and n["magic"] == 1
            raw = o["raw"]
            assert struct.unpack_from("<I", raw, 21)[0] == crc32c(raw[25:])
            assert o["base_offset"] == n["base_offset"]
            assert o["commit_ts"] == n["commit_ts"]
            stats_len = struct.unpack_from("<i", n["raw"], 48)[0]
            assert raw[48:] == n["raw"][52 + stats_len:]  # the records, unchanged
    finally:
        legacy.close()
        rust.close()


async def test_create_checks_statistics_columns(admin, db):
    bad = [
        ({"table.statistics.columns": "nope"}, None, "does not exist"),
        ({"table.statistics.columns": " , "}, None, "cannot be empty"),
        ({"table.statistics.columns": "id"}, ["id"], "primary key tables"),
    ]
    for props, pk, text in bad:
        schema = pa.schema([pa.field("id", pa.int64()), pa.field("tags", pa.list_(pa.int32()))])
        with pytest.raises(Exception) as e:
            await admin.create_table(fluss.TablePath(db, unique("bad")), fluss.TableDescriptor(
                fluss.Schema(schema, primary_keys=pk), bucket_count=1, properties=props))
        assert text in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        await admin.create_table(fluss.TablePath(db, unique("bad")), fluss.TableDescriptor(
            fluss.Schema(pa.schema([pa.field("tags", pa.list_(pa.int32()))])), bucket_count=1,
            properties={"table.statistics.columns": "tags"}))
    assert "not supported for statistics" in str(e.value)


@pytest.mark.parametrize("project", [False, True], ids=["whole", "projected"])
async def test_java_091_reads_a_statistics_table(server, stats_table, project):
    path, _ = stats_table
    args = [str(REPO / "tests" / "java" / "run"), server.bootstrap, "JavaReadIds",
            path.database_name, path.table_name, str(BATCHES * ROWS)]
    proc = subprocess.run(args + (["--project"] if project else []), capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"ok: {BATCHES * ROWS} ids read" in out
