"""Idempotent log writers on the raw wire (protocol.md §3.9, §4.7):
INIT_WRITER hands out distinct writer ids; a batch resent with a sequence
among the last 5 of its writer is answered success with the original
base_offset and not appended again; a gap -> error 31.  Same answers on
both servers (checked against Fluss 0.9.1):
* the retained window is 5 batches: after seqs 0..6, resending 2..6 is a
  duplicate, resending 1 is error 31;
* the first batch of a writer must have seq 0 (seq 3 first -> 31), but a
  writer id never handed out by INIT_WRITER is accepted with seq 0;
* a duplicate is recognised by (writer, seq) only: a resend with other
  content is still answered with the original offset and not appended.
"""

import pyarrow as pa

from logutil import (OUT_OF_ORDER_SEQUENCE, build_batch, create_log_table, fetch_log,
                     init_writer, latest_offsets, parse_batches, produce_log,
                     raw_tablet, read_all)

SCHEMA = pa.schema([pa.field("id", pa.int32())])


def rows(*ids):
    return pa.record_batch([pa.array(list(ids), pa.int32())], schema=SCHEMA)


def produce(rc, tid, batch, bucket=0):
    _, resp = produce_log(rc, tid, {bucket: batch})
    (r,) = resp
    return r


async def setup(admin, db, name, buckets=1):
    path = await create_log_table(admin, db, name, SCHEMA, bucket_count=buckets)
    info = await admin.get_table_info(path)
    return path, info.table_id, info.schema_id, await raw_tablet(admin)


async def test_duplicate_batch_appended_once(conn, admin, db):
    path, tid, sid, rc = await setup(admin, db, "idem")
    try:
        w = init_writer(rc, db, "idem")
        w2 = init_writer(rc, db, "idem")
        assert w >= 0 and w2 >= 0 and w != w2

        b0 = build_batch(rows(1, 2, 3), sid, writer_id=w, seq=0)
        first = produce(rc, tid, b0)
        assert first["error_code"] == 0 and first["base_offset"] == 0, first
        again = produce(rc, tid, b0)
        assert again["error_code"] == 0 and again["base_offset"] == 0, again
        assert await latest_offsets(admin, path) == {0: 3}

        # a gap in the sequence -> 31, nothing appended
        r = produce(rc, tid, build_batch(rows(9), sid, writer_id=w, seq=5))
        assert r["error_code"] == OUT_OF_ORDER_SEQUENCE and r["error_message"], r
        assert await latest_offsets(admin, path) == {0: 3}

        # the next sequence goes on; the old duplicate still maps to offset 0
        r = produce(rc, tid, build_batch(rows(4, 5), sid, writer_id=w, seq=1))
        assert r["error_code"] == 0 and r["base_offset"] == 3, r
        assert produce(rc, tid, b0)["base_offset"] == 0

        # another writer is independent; its first batch must be seq 0
        r = produce(rc, tid, build_batch(rows(50), sid, writer_id=w2, seq=3))
        assert r["error_code"] == OUT_OF_ORDER_SEQUENCE, r
        r = produce(rc, tid, build_batch(rows(6), sid, writer_id=w2, seq=0))
        assert r["error_code"] == 0 and r["base_offset"] == 5, r

        assert await latest_offsets(admin, path) == {0: 6}
        got = await read_all(conn, admin, path)
        assert got.column("id").to_pylist() == [1, 2, 3, 4, 5, 6]

        # stored batches keep the writer id and sequence
        _, resp = fetch_log(rc, tid, {0: 0})
        hdrs = parse_batches(resp[0]["records"])
        assert [(h["base_offset"], h["writer_id"], h["seq"]) for h in hdrs] == \
            [(0, w, 0), (3, w, 1), (5, w2, 0)]
    finally:
        rc.close()


async def test_retained_window_of_five(conn, admin, db):
    path, tid, sid, rc = await setup(admin, db, "window")
    try:
        w = init_writer(rc, db, "window")
        for s in range(7):
            r = produce(rc, tid, build_batch(rows(s), sid, writer_id=w, seq=s))
            assert r["error_code"] == 0 and r["base_offset"] == s, r
        for s in (6, 2, 4, 3):  # the last 5: duplicates with their own offsets
            r = produce(rc, tid, build_batch(rows(100 + s), sid, writer_id=w, seq=s))
            assert r["error_code"] == 0 and r["base_offset"] == s, (s, r)
        for s in (1, 0, 8, -5):  # older than the window, or a gap
            r = produce(rc, tid, build_batch(rows(200), sid, writer_id=w, seq=s))
            assert r["error_code"] == OUT_OF_ORDER_SEQUENCE, (s, r)
        # two batches in one request, in sequence
        recs = (build_batch(rows(7), sid, writer_id=w, seq=7)
                + build_batch(rows(8), sid, writer_id=w, seq=8))
        _, resp = produce_log(rc, tid, {0: recs})
        assert resp[0]["error_code"] == 0 and resp[0]["base_offset"] == 7, resp
        assert await latest_offsets(admin, path) == {0: 9}
        got = await read_all(conn, admin, path)
        assert got.column("id").to_pylist() == list(range(9))
    finally:
        rc.close()


async def test_sequences_are_per_bucket(conn, admin, db):
    path, tid, sid, rc = await setup(admin, db, "perbucket", buckets=2)
    try:
        w = init_writer(rc, db, "perbucket")
        for b in (0, 1):
            r = produce(rc, tid, build_batch(rows(b), sid, writer_id=w, seq=0), bucket=b)
            assert r["error_code"] == 0 and r["base_offset"] == 0, r
        r = produce(rc, tid, build_batch(rows(10), sid, writer_id=w, seq=1), bucket=1)
        assert r["error_code"] == 0 and r["base_offset"] == 1
        r = produce(rc, tid, build_batch(rows(11), sid, writer_id=w, seq=2), bucket=0)
        assert r["error_code"] == OUT_OF_ORDER_SEQUENCE, r
        assert await latest_offsets(admin, path, 2) == {0: 1, 1: 2}
    finally:
        rc.close()


async def test_unknown_writer_id_and_non_idempotent(conn, admin, db):
    path, tid, sid, rc = await setup(admin, db, "unknown_writer")
    try:
        w = 10 ** 12 + 17  # never handed out
        r = produce(rc, tid, build_batch(rows(1), sid, writer_id=w, seq=0))
        assert r["error_code"] == 0 and r["base_offset"] == 0, r
        # writer id -1: no idempotence, the same batch is appended each time
        plain = build_batch(rows(2), sid)
        assert [produce(rc, tid, plain)["base_offset"] for _ in range(3)] == [1, 2, 3]
        assert await latest_offsets(admin, path) == {0: 4}
        got = await read_all(conn, admin, path)
        assert got.column("id").to_pylist() == [1, 2, 2, 2]
    finally:
        rc.close()


async def test_pyfluss_writer_is_idempotent(conn, admin, db):
    """pyfluss writes with a writer id from INIT_WRITER and consecutive
    sequences from 0 (idempotence is on by default)."""
    path, tid, sid, rc = await setup(admin, db, "client")
    try:
        table = await conn.get_table(path)
        writer = table.new_append().create_writer()
        for i in range(4):
            await writer.append({"id": i}).wait()
        _, resp = fetch_log(rc, tid, {0: 0})
        hdrs = parse_batches(resp[0]["records"])
        assert [h["seq"] for h in hdrs] == list(range(len(hdrs)))
        assert len({h["writer_id"] for h in hdrs}) == 1 and hdrs[0]["writer_id"] >= 0
        assert sum(h["record_count"] for h in hdrs) == 4
        assert all(h["crc_ok"] for h in hdrs)
    finally:
        rc.close()


async def test_duplicate_in_a_multi_batch_request(conn, admin, db):
    """A request whose batches include one the writer state holds is
    answered as that duplicate as a whole, appending nothing: new batches
    before or after it in the request included (as the reference does)."""
    path, tid, sid, rc = await setup(admin, db, "multi")
    try:
        wid = init_writer(rc, db, "multi")
        for seq in range(3):
            r = produce(rc, tid, build_batch(rows(seq), sid, wid, seq))
            assert r["error_code"] == 0, r
        # [new seq 3, duplicate seq 1] and [duplicate seq 2, new seq 3]
        for batches in ((3, 1), (2, 3)):
            records = b"".join(build_batch(rows(100 + s), sid, wid, s) for s in batches)
            r = produce(rc, tid, records)
            assert r["error_code"] == 0, r
            dup = [s for s in batches if s < 3][0]
            assert r["base_offset"] == dup, r  # the duplicate's base offset
        assert (await latest_offsets(admin, path))[0] == 3
        # seq 3 was never appended: it is still the next one
        r = produce(rc, tid, build_batch(rows(3), sid, wid, 3))
        assert r["error_code"] == 0 and r["base_offset"] == 3, r
        got = await read_all(conn, admin, path)
        assert sorted(got.column("id").to_pylist()) == [0, 1, 2, 3]
    finally:
        rc.close()
