"""Auto-increment columns of primary-key tables through pyfluss 1.0.0
(fluss.Schema(..., auto_increment_column=...)).

* the schema keeps the column (table info, get_table_schema);
* upserts name their target columns without it; every new key gets the
  next value of the table's sequence (1, 2, 3, ... with one bucket), an
  update keeps the stored one; the changelog's +I carries it;
* a delete names its targets too, and only clears them (the row keeps
  the server's value, as in the reference);
* several buckets draw distinct values from one durable counter in blocks
  of table.auto-increment.cache-size;
* after kill -9 and a restart (ours only) new keys get values never handed
  out before, and the old rows keep theirs.

pyfluss refuses writes that would set the column before sending, and has
no insert_if_not_exists lookup: test_pk_autoinc_raw.py covers the server's
refusals and both it and test_java_autoinc.py the insert lookup.
"""

import asyncio

import fluss
import pyarrow as pa
import pytest

from conftest import connect, expect_error, unique
from logutil import wait_ready

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                    pa.field("uid", pa.int64())])


async def create_table(admin, db, buckets=1, props=None, schema=SCHEMA):
    path = fluss.TablePath(db, unique("autoinc"))
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["id"], auto_increment_column="uid"),
        bucket_count=buckets, properties=props or {}))
    await wait_ready(admin, path, buckets)
    return path


async def upsert_names(table, rows):
    w = table.new_upsert().partial_update_by_name(["id", "name"]).create_writer()
    for i, name in rows:
        w.upsert({"id": i, "name": name})
    await w.flush()


async def uids(table, ids):
    # many lookupers side by side: pyfluss answers one per lookuper per ~100 ms
    ids = list(ids)
    lks = [table.new_lookup().create_lookuper() for _ in range(min(40, len(ids)) or 1)]
    rows = await asyncio.gather(*(lks[n % len(lks)].lookup({"id": i}) for n, i in enumerate(ids)))
    return {i: None if r is None else (r["name"], r["uid"]) for i, r in zip(ids, rows)}


async def changelog(conn, path, buckets, expect, timeout=20):
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(buckets)})
    out = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out) < expect and loop.time() < deadline:
        for r in await scanner.poll(500):
            out.append((r.change_type.short_string(), r.row["id"], r.row["name"], r.row["uid"]))
    return out


async def test_schema_keeps_the_column(admin, db):
    path = await create_table(admin, db)
    info = await admin.get_table_info(path)
    assert info.get_schema().get_auto_increment_columns() == ["uid"]
    assert info.get_schema().get_primary_keys() == ["id"]


async def test_new_keys_numbered_updates_keep_value(conn, admin, db):
    path = await create_table(admin, db)
    table = await conn.get_table(path)
    await upsert_names(table, [(10, "a"), (20, "b"), (30, "c")])
    assert await uids(table, [10, 20, 30, 40]) == {
        10: ("a", 1), 20: ("b", 2), 30: ("c", 3), 40: None}
    # an update keeps the stored value; a new key takes the next one
    await upsert_names(table, [(20, "b2"), (40, "d")])
    assert await uids(table, [10, 20, 30, 40]) == {
        10: ("a", 1), 20: ("b2", 2), 30: ("c", 3), 40: ("d", 4)}
    # a delete must name its targets too, and a partial delete only clears
    # them while another column (the server's value) is set: the row stays
    w = table.new_upsert().partial_update_by_name(["id", "name"]).create_writer()
    w.delete({"id": 10})
    await w.flush()
    assert (await uids(table, [10]))[10] == (None, 1)
    await upsert_names(table, [(10, "a2")])
    assert (await uids(table, [10]))[10] == ("a2", 1)
    log = await changelog(conn, path, 1, expect=10)
    assert log == [("+I", 10, "a", 1), ("+I", 20, "b", 2), ("+I", 30, "c", 3),
                   ("-U", 20, "b", 2), ("+U", 20, "b2", 2), ("+I", 40, "d", 4),
                   ("-U", 10, "a", 1), ("+U", 10, None, 1),
                   ("-U", 10, None, 1), ("+U", 10, "a2", 1)]


async def test_buckets_share_one_sequence(conn, admin, db):
    path = await create_table(admin, db, buckets=3,
                              props={"table.auto-increment.cache-size": "4"})
    table = await conn.get_table(path)
    ids = list(range(60))
    await upsert_names(table, [(i, f"n{i}") for i in ids])
    got = await uids(table, ids)
    values = [got[i][1] for i in ids]
    assert len(set(values)) == len(values), values
    assert all(v >= 1 for v in values)


@pytest.mark.ours_only
async def test_kill9_never_reissues(our_server):
    conn = await connect(our_server.bootstrap)
    admin = conn.get_admin()
    db = unique("autoinc_kill")
    await admin.create_database(db)
    path = await create_table(admin, db, buckets=2,
                              props={"table.auto-increment.cache-size": "10"})
    table = await conn.get_table(path)
    await upsert_names(table, [(i, f"a{i}") for i in range(25)])
    before = await uids(table, range(25))
    await conn.close()
    assert our_server.kill9() == -9
    our_server.start()
    conn = await connect(our_server.bootstrap)
    try:
        await wait_ready(conn.get_admin(), path, 2)
        table = await conn.get_table(path)
        assert await uids(table, range(25)) == before
        await upsert_names(table, [(i, f"b{i}") for i in range(25, 50)])
        after = await uids(table, range(50))
        old = {v[1] for v in before.values()}
        new = [after[i][1] for i in range(25, 50)]
        assert len(set(new)) == 25 and not old & set(new), (sorted(old), new)
        # each bucket's new block lies past everything reserved before
        assert min(new) > max(old)
        assert all(after[i] == before[i] for i in range(25))
    finally:
        await conn.close()
