"""Primary-key tables through pyfluss: upsert, delete, partial update,
lookup, prefix lookup, limit scan, and the changelog (+I/-U/+U/-D) the
server writes into the bucket's log, for every merge engine pyfluss can
declare (table properties) and both changelog images.

Every assertion reads data back: lookups of the current rows, the exact
change types and rows of the changelog from the earliest offset.
"""

import asyncio
import datetime as dt
from decimal import Decimal

import fluss
import pyarrow as pa
import pytest

from conftest import expect_error, unique
from logutil import wait_ready

SCHEMA = pa.schema([
    pa.field("id", pa.int32()),
    pa.field("name", pa.string()),
    pa.field("score", pa.int64()),
    pa.field("note", pa.string()),
])



async def create_pk_table(admin, db, name, schema=SCHEMA, pk=("id",), buckets=1, **kw):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=list(pk)), bucket_count=buckets, **kw))
    await wait_ready(admin, path, buckets)
    return path


async def upsert_all(table, rows, deletes=()):
    writer = table.new_upsert().create_writer()
    for r in rows:
        writer.upsert(r)
    for d in deletes:
        writer.delete(d)
    await writer.flush()


async def changelog(conn, path, buckets=1, expect=None, timeout=20):
    """(change type, row) of every changelog record, bucket by bucket, in
    offset order; waits until `expect` records arrived."""
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(buckets)})
    out = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        recs = await scanner.poll(500)
        for r in recs:
            out.append((r.change_type.short_string(), r.row))
        if expect is not None and len(out) >= expect:
            break
        if expect is None and not len(recs) and out:
            break
    return out


def cells(row, cols=("id", "name", "score", "note")):
    return tuple(row[c] for c in cols)


async def test_upsert_lookup_delete_changelog(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk"))
    table = await conn.get_table(path)
    await upsert_all(table, [
        {"id": 1, "name": "a", "score": 10, "note": None},
        {"id": 2, "name": "b", "score": 20, "note": "x"},
        {"id": 1, "name": "a2", "score": 11, "note": "y"},
    ], deletes=[{"id": 2}, {"id": 99}])
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "a2", 11, "y")
    assert await lk.lookup({"id": 2}) is None
    assert await lk.lookup({"id": 99}) is None
    log = await changelog(conn, path, expect=5)
    assert [(t, cells(r)) for t, r in log] == [
        ("+I", (1, "a", 10, None)),
        ("+I", (2, "b", 20, "x")),
        ("-U", (1, "a", 10, None)),
        ("+U", (1, "a2", 11, "y")),
        ("-D", (2, "b", 20, "x")),
    ]


async def test_read_your_writes_many_keys_buckets(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_many"), buckets=3)
    table = await conn.get_table(path)
    rows = [{"id": i, "name": f"n{i}", "score": i * i, "note": None} for i in range(500)]
    await upsert_all(table, rows, deletes=[{"id": i} for i in range(0, 500, 7)])
    # many lookupers side by side: pyfluss answers one per lookuper per ~100 ms
    lks = [table.new_lookup().create_lookuper() for _ in range(40)]
    keys = list(range(0, 500, 3))
    answers = await asyncio.gather(*(lks[n % len(lks)].lookup({"id": i})
                                     for n, i in enumerate(keys)))
    for i, got in zip(keys, answers):
        if i % 7 == 0:
            assert got is None, i
        else:
            assert cells(got) == (i, f"n{i}", i * i, None), i


async def test_partial_update_keeps_other_columns(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_partial"))
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "name": "a", "score": 1, "note": "keep"}])
    w = table.new_upsert().partial_update_by_name(["id", "score"]).create_writer()
    w.upsert({"id": 1, "score": 5})
    w.upsert({"id": 2, "score": 7})  # a new key: the other columns are NULL
    await w.flush()
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "a", 5, "keep")
    assert cells(await lk.lookup({"id": 2})) == (2, None, 7, None)
    log = await changelog(conn, path, expect=4)
    assert [(t, cells(r)) for t, r in log] == [
        ("+I", (1, "a", 1, "keep")),
        ("-U", (1, "a", 1, "keep")),
        ("+U", (1, "a", 5, "keep")),
        ("+I", (2, None, 7, None)),
    ]


async def test_first_row_engine(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_first"),
                                 properties={"table.merge-engine": "first_row"})
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "name": "first", "score": 1, "note": None},
                             {"id": 1, "name": "second", "score": 2, "note": None}],
                     deletes=[{"id": 1}])  # ignored: first_row's delete behaviour
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "first", 1, None)
    log = await changelog(conn, path, expect=1)
    assert [(t, cells(r)) for t, r in log] == [("+I", (1, "first", 1, None))]


async def test_versioned_engine(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_ver"), properties={
        "table.merge-engine": "versioned",
        "table.merge-engine.versioned.ver-column": "score"})
    table = await conn.get_table(path)
    await upsert_all(table, [
        {"id": 1, "name": "v5", "score": 5, "note": None},
        {"id": 1, "name": "v3", "score": 3, "note": None},   # older: dropped
        {"id": 1, "name": "v5b", "score": 5, "note": None},  # equal: wins
        {"id": 1, "name": "v9", "score": 9, "note": None},
    ])
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "v9", 9, None)
    log = await changelog(conn, path, expect=5)
    assert [(t, r["name"]) for t, r in log] == [
        ("+I", "v5"), ("-U", "v5"), ("+U", "v5b"), ("-U", "v5b"), ("+U", "v9")]


async def test_delete_disabled(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_nodel"),
                                 properties={"table.delete.behavior": "disable"})
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "name": "a", "score": 1, "note": None}])
    w = table.new_upsert().create_writer()
    with pytest.raises(Exception) as e:
        await w.delete({"id": 1}).wait()
    assert "disable" in str(e.value).lower()
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "a", 1, None)


async def test_wal_changelog_image(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_wal"),
                                 properties={"table.changelog.image": "WAL"})
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "name": "a", "score": 1, "note": None},
                             {"id": 1, "name": "b", "score": 2, "note": None}],
                     deletes=[{"id": 1}])
    log = await changelog(conn, path, expect=3)
    assert [(t, r["name"]) for t, r in log] == [("+U", "a"), ("+U", "b"), ("-D", "b")]
    lk = table.new_lookup().create_lookuper()
    assert await lk.lookup({"id": 1}) is None


async def test_prefix_lookup(conn, admin, db):
    schema = pa.schema([pa.field("tenant", pa.string()), pa.field("id", pa.int32()),
                        pa.field("v", pa.string())])
    path = await create_pk_table(admin, db, unique("pk_prefix"), schema=schema,
                                 pk=("tenant", "id"), buckets=2, bucket_keys=["tenant"])
    table = await conn.get_table(path)
    rows = [{"tenant": t, "id": i, "v": f"{t}{i}"} for t in ("acme", "zeta") for i in range(5)]
    await upsert_all(table, rows, deletes=[{"tenant": "acme", "id": 3}])
    pl = table.new_lookup().lookup_by(["tenant"]).create_lookuper()
    got = await pl.lookup({"tenant": "acme"})
    assert sorted(r["id"] for r in got) == [0, 1, 2, 4]
    assert all(r["v"] == f"acme{r['id']}" for r in got)
    assert sorted(r["id"] for r in await pl.lookup({"tenant": "zeta"})) == [0, 1, 2, 3, 4]
    assert await pl.lookup({"tenant": "nobody"}) == []


async def test_limit_scan_returns_current_rows(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_limit"))
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": i, "name": "old", "score": i, "note": None}
                             for i in range(20)])
    await upsert_all(table, [{"id": i, "name": "new", "score": i, "note": None}
                             for i in range(10)], deletes=[{"id": 19}])
    tid = (await admin.get_table_info(path)).table_id
    scanner = table.new_scan().limit(100).create_bucket_batch_scanner(fluss.TableBucket(tid, 0))
    got = (await scanner.to_arrow()).to_pylist()
    assert sorted(r["id"] for r in got) == list(range(19))
    assert all(r["name"] == ("new" if r["id"] < 10 else "old") for r in got)
    few = table.new_scan().limit(5).create_bucket_batch_scanner(fluss.TableBucket(tid, 0))
    assert len((await few.to_arrow()).to_pylist()) == 5


TYPES = pa.schema([
    pa.field("id", pa.int64()),
    pa.field("b", pa.bool_()),
    pa.field("i8", pa.int8()),
    pa.field("i16", pa.int16()),
    pa.field("i32", pa.int32()),
    pa.field("f32", pa.float32()),
    pa.field("f64", pa.float64()),
    pa.field("s", pa.string()),
    pa.field("bin", pa.binary()),
    pa.field("dec", pa.decimal128(10, 2)),
    pa.field("dec38", pa.decimal128(38, 6)),
    pa.field("d", pa.date32()),
    pa.field("t", pa.time32("ms")),
    pa.field("ts", pa.timestamp("us")),
    pa.field("ltz", pa.timestamp("ms", tz="UTC")),
])


async def test_every_type_round_trips(conn, admin, db):
    path = await create_pk_table(admin, db, unique("pk_types"), schema=TYPES)
    table = await conn.get_table(path)
    row = {"id": -(2 ** 40), "b": True, "i8": -7, "i16": 30000, "i32": -2 ** 31,
           "f32": 1.5, "f64": -2.25e100, "s": "héllo 🌍", "bin": b"\x00\xff\x10",
           "dec": Decimal("-12345678.91"), "dec38": Decimal("12345678901234567890.123456"),
           "d": dt.date(1969, 7, 20), "t": dt.time(23, 59, 59, 999000),
           "ts": dt.datetime(2024, 2, 29, 12, 0, 0, 123456),
           "ltz": dt.datetime(2001, 9, 9, 1, 46, 40, tzinfo=dt.timezone.utc)}
    nulls = {"id": 5, **{k: None for k in row if k != "id"}}
    await upsert_all(table, [row, nulls])
    lk = table.new_lookup().create_lookuper()
    got = await lk.lookup({"id": row["id"]})
    for k, v in row.items():
        g = got[k]
        if k == "ltz" and isinstance(g, dt.datetime) and g.tzinfo is None:
            g = g.replace(tzinfo=dt.timezone.utc)
        assert g == v, (k, g, v)
    got = await lk.lookup({"id": 5})
    assert all(got[k] is None for k in row if k != "id")
    log = await changelog(conn, path, expect=2)
    assert log[0][0] == "+I" and log[0][1]["s"] == row["s"] and log[0][1]["dec38"] == row["dec38"]


async def test_nested_columns_stored(conn, admin, db):
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("tags", pa.list_(pa.int32())),
                        pa.field("name", pa.string())])
    path = await create_pk_table(admin, db, unique("pk_nested"), schema=schema)
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "tags": [3, 1, 2], "name": "a"},
                             {"id": 2, "tags": None, "name": "b"}])
    lk = table.new_lookup().create_lookuper()
    got = await lk.lookup({"id": 1})
    assert list(got["tags"]) == [3, 1, 2] and got["name"] == "a"
    assert (await lk.lookup({"id": 2}))["tags"] is None
    # the ARROW changelog carries the nested values too
    log = await changelog(conn, path, expect=2)
    assert [(t, r["id"], None if r["tags"] is None else list(r["tags"]), r["name"])
            for t, r in log] == [("+I", 1, [3, 1, 2], "a"), ("+I", 2, None, "b")]


async def test_aggregation_engine_default_function(conn, admin, db):
    """pyfluss cannot declare per-column functions; every non-key column
    then folds with last_value_ignore_nulls: a NULL keeps the stored value."""
    path = await create_pk_table(admin, db, unique("pk_agg"),
                                 properties={"table.merge-engine": "aggregation"})
    table = await conn.get_table(path)
    await upsert_all(table, [{"id": 1, "name": "a", "score": 1, "note": "n"},
                             {"id": 1, "name": None, "score": 2, "note": None}])
    lk = table.new_lookup().create_lookuper()
    assert cells(await lk.lookup({"id": 1})) == (1, "a", 2, "n")
    log = await changelog(conn, path, expect=3)
    assert [(t, cells(r)) for t, r in log] == [
        ("+I", (1, "a", 1, "n")), ("-U", (1, "a", 1, "n")), ("+U", (1, "a", 2, "n"))]


async def test_limit_scan_of_a_log_table(conn, admin, db):
    from logutil import create_log_table
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.string())])
    path = await create_log_table(admin, db, unique("log_limit"), schema)
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for i in range(20):
        w.append({"id": i, "v": f"v{i}"})
    await w.flush()
    tid = (await admin.get_table_info(path)).table_id
    scanner = table.new_scan().limit(5).create_bucket_batch_scanner(fluss.TableBucket(tid, 0))
    got = (await scanner.to_arrow()).to_pylist()
    assert [r["id"] for r in got] == [15, 16, 17, 18, 19]
