"""PUT_KV / LOOKUP / LIMIT_SCAN on the wire, for what the clients check
before sending (so only raw requests reach the server's refusals) and for
the exact bytes the server answers with: per-bucket error codes of the
reference (35 INVALID_TARGET_COLUMN, 9 SCHEMA_NOT_EXIST, 14 corrupt
records, 57 DELETION_DISABLED), the changelog LEO in the answer, an empty
changelog batch for a put that changes nothing (one offset, the writer's
sequence moves on), and the stored value (2-byte schema id + compacted row)
that LOOKUP returns.
"""

import struct

import fluss
import pyarrow as pa
import pytest

from conftest import SERVER_KIND, unique

OURS = SERVER_KIND == "ours"
# the reference fails on undecodable records with a Java exception (-1) or
# stores them; we refuse them with CORRUPT_RECORD_EXCEPTION (KNOWN_DIFFERENCES)
CORRUPT = 14 if OURS else -1
from logutil import fetch_log, kv_batch, parse_batches, raw_tablet, wait_ready
from rawwire import as_int32, as_int64, decode, enc_varint, f_bytes, f_varint

PUT_KV, LOOKUP, LIMIT_SCAN = 1016, 1017, 1033

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                    pa.field("score", pa.int64(), nullable=False)])


def compacted_row(id_, name, score):
    """CompactedRow of (INT id, STRING name, BIGINT NOT NULL score)."""
    nulls = (0 if id_ is not None else 1) | (0 if name is not None else 2) | \
        (0 if score is not None else 4)
    out = bytes([nulls])
    if id_ is not None:
        out += enc_varint(id_ & 0xFFFFFFFF)
    if name is not None:
        b = name.encode()
        out += enc_varint(len(b)) + b
    if score is not None:
        out += enc_varint(score & 0xFFFFFFFFFFFFFFFF)
    return out


def indexed_row(id_, name, score):
    """IndexedRow of (INT id, STRING name, BIGINT NOT NULL score), no NULLs:
    null bitmap, the STRING's length slot, then the fields in order."""
    b = name.encode()
    return (b"\x00" + struct.pack("<i", len(b)) + struct.pack("<i", id_) + b
            + struct.pack("<q", score))


def key(id_):
    return enc_varint(id_ & 0xFFFFFFFF)


def put_kv(rc, table_id, buckets, targets=(), acks=-1, version=1):
    body = f_varint(1, acks) + f_varint(2, table_id) + f_varint(3, 30000)
    if targets:
        body += f_bytes(4, b"".join(enc_varint(t) for t in targets))
    for b, records in buckets.items():
        body += f_bytes(5, f_varint(2, b) + f_bytes(3, records))
    rtype, resp = rc.call(PUT_KV, body, api_version=version)
    assert rtype == 0, resp
    out = []
    for raw in decode(resp).get(1, []):
        f = decode(raw)
        out.append(dict(bucket=as_int32(f[2][0]),
                        error_code=as_int32(f[3][0]) if 3 in f else 0,
                        error_message=f[4][0].decode() if 4 in f else None,
                        log_end_offset=as_int64(f[5][0]) if 5 in f else None))
    return out


def lookup(rc, table_id, bucket, keys):
    req = f_varint(2, bucket) + b"".join(f_bytes(3, k) for k in keys)
    rtype, resp = rc.call(LOOKUP, f_varint(1, table_id) + f_bytes(2, req), api_version=1)
    assert rtype == 0, resp
    (braw,) = decode(resp)[1]
    f = decode(braw)
    assert 3 not in f, f
    return [decode(v).get(1, [None])[0] for v in f.get(5, [])]


async def make_table(admin, db, name, **props):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=1, properties=props))
    await wait_ready(admin, path, 1)
    return (await admin.get_table_info(path)).table_id


async def test_put_lookup_wire_bytes(admin, db):
    tid = await make_table(admin, db, unique("raw_pk"))
    rc = await raw_tablet(admin)
    try:
        got = put_kv(rc, tid, {0: kv_batch([(key(7), compacted_row(7, "x", -5)),
                                             (key(8), compacted_row(8, None, 1))])})
        assert got == [dict(bucket=0, error_code=0, error_message=None, log_end_offset=2)]
        vals = lookup(rc, tid, 0, [key(7), key(9), key(8)])
        assert vals == [b"\x01\x00" + compacted_row(7, "x", -5), None,
                        b"\x01\x00" + compacted_row(8, None, 1)]
        # an update: -U and +U, two offsets
        got = put_kv(rc, tid, {0: kv_batch([(key(7), compacted_row(7, "y", 6))])})
        assert got[0]["log_end_offset"] == 4
        # a delete of a missing key changes nothing: an empty batch, one offset
        got = put_kv(rc, tid, {0: kv_batch([(key(99), None)])})
        assert got[0]["log_end_offset"] == 5
        _, fetched = fetch_log(rc, tid, {0: 0})
        hdrs = parse_batches(fetched[0]["records"])
        assert [(h["base_offset"], h["record_count"], h["attributes"] & 1) for h in hdrs] == \
            [(0, 2, 0), (2, 2, 0), (4, 0, 0)]
        assert all(h["crc_ok"] for h in hdrs)
        # change types: the vector right after the 48-byte header
        assert hdrs[0]["raw"][48:50] == b"\x01\x01"
        assert hdrs[1]["raw"][48:50] == b"\x02\x03"
    finally:
        rc.close()


async def test_idempotent_put_duplicate(admin, db):
    tid = await make_table(admin, db, unique("raw_idem"))
    rc = await raw_tablet(admin)
    try:
        from logutil import init_writer
        wid = init_writer(rc, db, "x")
        b0 = kv_batch([(key(1), compacted_row(1, "a", 1))], writer_id=wid, seq=0)
        assert put_kv(rc, tid, {0: b0})[0]["error_code"] == 0
        # the same batch again: answered as success, applied once
        assert put_kv(rc, tid, {0: b0})[0]["error_code"] == 0
        b1 = kv_batch([(key(1), compacted_row(1, "b", 2))], writer_id=wid, seq=1)
        assert put_kv(rc, tid, {0: b1})[0]["log_end_offset"] == 3
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "b", 2)]
        # the first batch once more, after the second: still a duplicate,
        # answered with its own end offset, and the row stays the second's
        got = put_kv(rc, tid, {0: b0})[0]
        assert (got["error_code"], got["log_end_offset"]) == (0, 1), got
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "b", 2)]
        # a gap in the sequence is refused
        b5 = kv_batch([(key(1), compacted_row(1, "c", 3))], writer_id=wid, seq=5)
        assert put_kv(rc, tid, {0: b5})[0]["error_code"] == 31
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "b", 2)]
    finally:
        rc.close()


@pytest.mark.parametrize("targets,words", [
    ([2], "must contain the primary key columns"),
    # score is NOT NULL: a partial update needs every non-key column nullable
    ([0, 2], "NOT NULL"),
])
async def test_partial_update_refusals(admin, db, targets, words):
    tid = await make_table(admin, db, unique("raw_partial"))
    rc = await raw_tablet(admin)
    try:
        got = put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, None, 1))])},
                     targets=targets)
        assert got[0]["error_code"] == 35, got
        assert words in got[0]["error_message"]
        assert lookup(rc, tid, 0, [key(1)]) == [None]
    finally:
        rc.close()


async def test_bad_batches_refused_and_bucket_stays_usable(admin, db):
    tid = await make_table(admin, db, unique("raw_bad"))
    rc = await raw_tablet(admin)
    try:
        good = kv_batch([(key(1), compacted_row(1, "a", 1))])
        assert put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, "a", 1))],
                                            schema_id=9)})[0]["error_code"] == 9
        assert put_kv(rc, tid, {0: good[:-3]})[0]["error_code"] == CORRUPT
        bad_row = kv_batch([(key(1), b"\x00\xff\xff")])  # varint runs off the row
        assert put_kv(rc, tid, {0: bad_row})[0]["error_code"] == CORRUPT
        if OURS:  # the reference takes 40 zero bytes as an empty batch
            assert put_kv(rc, tid, {0: b"\x00" * 40})[0]["error_code"] == 14
        got = put_kv(rc, tid, {0: good})[0]
        assert got["error_code"] == 0, got
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "a", 1)]
    finally:
        rc.close()


async def test_value_of_the_other_kv_format(admin, db, our_server):
    """A value written in the other kv format is refused with a message that
    names the table's kv format and what was sent (the reference decodes it
    as its own format: garbage or a Java exception, KNOWN_DIFFERENCES)."""
    for fmt, row, sent in (("COMPACTED", indexed_row(1, "abc", 7), "an INDEXED row"),
                           ("INDEXED", compacted_row(1, "abc", 7), "a COMPACTED row")):
        tid = await make_table(admin, db, unique("raw_fmt"), **{"table.kv.format": fmt})
        rc = await raw_tablet(admin)
        try:
            got = put_kv(rc, tid, {0: kv_batch([(key(1), row)])})[0]
            assert got["error_code"] == 14, got
            assert (f"the value is not a {fmt} row; this table's kv format is {fmt} "
                    f"(it is {sent})") in got["error_message"], got
            assert lookup(rc, tid, 0, [key(1)]) == [None]
        finally:
            rc.close()


async def test_limit_scan_zero(admin, db):
    tid = await make_table(admin, db, unique("raw_limit0"))
    rc = await raw_tablet(admin)
    try:
        put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, "a", 1))])})
        rtype, resp = rc.call(LIMIT_SCAN, f_varint(2, tid) + f_varint(4, 0) + f_varint(5, 0))
        f = decode(resp)
        assert 1 not in f and f[3] == [0]
        assert f[4] == [struct.pack("<ibi", 5, 0, 0)]  # an empty DefaultValueRecordBatch
    finally:
        rc.close()


async def test_delete_disabled_code(admin, db):
    tid = await make_table(admin, db, unique("raw_nodel"), **{"table.delete.behavior": "disable"})
    rc = await raw_tablet(admin)
    try:
        got = put_kv(rc, tid, {0: kv_batch([(key(1), None)])})
        assert got[0]["error_code"] == 57
        assert "disable" in got[0]["error_message"]
    finally:
        rc.close()


async def test_lookup_on_log_table_and_unknown_bucket(admin, db):
    from logutil import create_log_table
    path = await create_log_table(admin, db, unique("raw_log"), SCHEMA)
    tid = (await admin.get_table_info(path)).table_id
    rc = await raw_tablet(admin)
    try:
        got = put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, "a", 1))])})
        # the reference: a Java NullPointerException (-1); we: NON_PRIMARY_KEY_TABLE
        assert got[0]["error_code"] == (20 if OURS else -1)
        req = f_varint(2, 0) + f_bytes(3, key(1))
        rtype, resp = rc.call(LOOKUP, f_varint(1, tid) + f_bytes(2, req), api_version=1)
        f = decode(decode(resp)[1][0])
        assert as_int32(f[3][0]) == 20
        assert b"primary key table not exists" in f[4][0]
        got = put_kv(rc, tid, {5: kv_batch([(key(1), compacted_row(1, "a", 1))])})
        assert got[0]["error_code"] == 21
    finally:
        rc.close()


async def test_agg_mode_overwrite_bypasses_the_engine(admin, db):
    """agg_mode OVERWRITE (Flink's undo recovery) writes the row as given,
    NULLs included, past the aggregation engine."""
    tid = await make_table(admin, db, unique("raw_overwrite"),
                           **{"table.merge-engine": "aggregation"})
    rc = await raw_tablet(admin)
    try:
        put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, "a", 1))])})
        put_kv(rc, tid, {0: kv_batch([(key(1), compacted_row(1, None, 2))])})
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, "a", 2)]
        body = f_varint(1, -1) + f_varint(2, tid) + f_varint(3, 30000) + f_bytes(
            5, f_varint(2, 0) + f_bytes(3, kv_batch([(key(1), compacted_row(1, None, 3))]))) + \
            f_varint(6, 1)
        rtype, resp = rc.call(PUT_KV, body, api_version=1)
        f = decode(decode(resp)[1][0])
        assert 3 not in f or as_int32(f[3][0]) == 0, f
        assert lookup(rc, tid, 0, [key(1)]) == [b"\x01\x00" + compacted_row(1, None, 3)]
    finally:
        rc.close()
