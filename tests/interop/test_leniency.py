"""Every request fluss-c refuses where the 0.9.1 reference does something
else, sent raw to the server under test; what each server does is written
in KNOWN_DIFFERENCES.md §5 (the table after `<!-- table: leniency -->`),
and this test holds both servers to it.

Each case starts from a fresh table where it needs one, sends one request
and sums up the answer as one of:
  `served`                    a SUCCESS_RESPONSE (a non-write request)
  `error N`                   an ERROR_RESPONSE with code N
  `no answer`                 no frame within NO_ANSWER_S, the connection open
  `close`                     the connection closed without a frame
  `failure, close`            a SERVER_FAILURE frame (no request id), then closed
  `bucket N, nothing stored`  a per-bucket error N, the bucket's log unchanged
  `ok, stored`                per-bucket success, the log moved on
  `ok, nothing stored`        per-bucket success, nothing appended
and, where something was stored, how the bucket reads afterwards:
  `; fetch N` / `; projected fetch N`  FETCH_LOG of the stored batch,
                              unprojected / projected, answers bucket error N
A few cases where both servers answer alike are controls: they show the
case is built right (the same request with one byte changed is refused by
both) or that a decoder choice (unknown fields, packed repeated fields)
follows the reference.
"""

import socket
import struct
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
import rawwire
from conftest import IS_REFERENCE, SERVER_KIND, unique
from logutil import (build_batch, crc32c, create_log_table, fetch_log, produce_log, raw_tablet,
                     tablet_address, wait_ready)
from rawwire import (RESPONSE_ERROR, RESPONSE_SERVER_FAILURE, RESPONSE_SUCCESS,
                     ConnectionClosed, decode_error, f_bytes, f_varint)
from test_api_versions import md_table
from test_log_validation import (LZ4_MAGIC, OTHER, SCHEMA, arrow_message, batch_of,
                                 compacted_row as log_compacted_row, flip_first,
                                 indexed_row, row_record, rows)
import test_pk_raw as pk
from test_pk_autoinc_raw import autoinc_json, create as create_autoinc, lookup_insert

KNOWN_DIFFERENCES = Path(__file__).with_name("KNOWN_DIFFERENCES.md")
NO_ANSWER_S = 2.0
DATABASE_EXISTS = 1004
CREATE_DATABASE = 1001
GET_TABLE_INFO = 1007
LIST_OFFSETS = 1021


def documented() -> dict:
    """{case: (reference, fluss-c, why)} from KNOWN_DIFFERENCES §5."""
    out = {}
    for case, _request, reference, ours, why in md_table(KNOWN_DIFFERENCES.read_text(),
                                                         "leniency"):
        case = case.strip("`")
        assert case not in out, f"leniency case {case} twice"
        out[case] = (reference, ours, why)
    return out


# --------------------------------------------------------------------------
# answers summed up
# --------------------------------------------------------------------------

def frame_outcome(c: rawwire.RawConnection) -> str:
    """What the next frame on c is (the request already sent)."""
    c.sock.settimeout(NO_ANSWER_S)
    try:
        frame = c.recv_frame()
    except socket.timeout:
        return "no answer"
    except (ConnectionClosed, ConnectionResetError):
        return "close"
    if frame[0] == RESPONSE_SERVER_FAILURE:
        c.wait_closed(NO_ANSWER_S * 5)
        return "failure, close"
    if frame[0] == RESPONSE_ERROR:
        return f"error {decode_error(frame[5:])[0]}"
    assert frame[0] == RESPONSE_SUCCESS, frame[:8]
    return "served"


def wire_case(address, send) -> str:
    with rawwire.handshake(*address) as c:
        send(c)
        return frame_outcome(c)


def high_watermark(rc, tid) -> int:
    _, fetched = fetch_log(rc, tid, {0: 0})
    (b,) = fetched
    assert b["error_code"] == 0, b
    return b["high_watermark"]


def read_back(rc, tid, offset, projection) -> str:
    """'' when the stored batches fetch cleanly from offset, else '; ...'."""
    out = ""
    reads = [("fetch", None)] + ([("projected fetch", projection)] if projection else [])
    for what, proj in reads:
        try:
            rtype, fetched = fetch_log(rc, tid, {0: offset}, projection=proj)
        except ConnectionClosed:
            return out + f"; {what} cut off (connection closed mid-answer)"
        if rtype != RESPONSE_SUCCESS:
            out += f"; {what} error {fetched[0]}"
            continue
        (b,) = fetched
        if b["error_code"]:
            out += f"; {what} {b['error_code']}"
    return out


def write_outcome(rc, tid, code, projection=None, hw_before=0) -> str:
    head = f"bucket {code}" if code else "ok"
    if high_watermark(rc, tid) == hw_before:
        return f"{head}, nothing stored"
    return f"{head}, stored" + read_back(rc, tid, hw_before, projection)


def produce_case(rc, tid, records, projection=(1,)) -> str:
    rtype, resp = produce_log(rc, tid, {0: records})
    if rtype != RESPONSE_SUCCESS:
        return f"error {resp[0]}"
    (r,) = resp
    return write_outcome(rc, tid, r["error_code"], list(projection))


def put_case(rc, tid, records) -> str:
    (r,) = pk.put_kv(rc, tid, {0: records})
    return write_outcome(rc, tid, r["error_code"])


# --------------------------------------------------------------------------
# the cases: name -> async function(server, admin, db) -> outcome
# --------------------------------------------------------------------------

CASES = {}


def case(fn):
    CASES[fn.__name__.removeprefix("case_").replace("_", "-")] = fn
    return fn


async def coordinator(server, admin):
    return server.host, server.coordinator_port


async def log_table(admin, db, schema=SCHEMA, **props):
    path = await create_log_table(admin, db, unique("len"), schema, bucket_count=1,
                                  properties=props)
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    return info.table_id, info.schema_id, await raw_tablet(admin)


async def produce(admin, db, records_of_schema_id, schema=SCHEMA, **props) -> str:
    tid, sid, rc = await log_table(admin, db, schema, **props)
    with rc:
        return produce_case(rc, tid, records_of_schema_id(sid))


# ---- protocol and protobuf ----

@case
async def case_unknown_api_key(server, admin, db):
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(9999, b"\x08\x01"))


@case
async def case_api_of_the_other_role(server, admin, db):
    body = f_bytes(1, unique("db")) + f_varint(3, 1)
    return wire_case(await tablet_address(admin),
                     lambda c: c.send_request(CREATE_DATABASE, body))


@case
async def case_api_version_above_range(server, admin, db):
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(DATABASE_EXISTS, f_bytes(1, db), api_version=3))


@case
async def case_undecodable_body(server, admin, db):
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(GET_TABLE_INFO, b"\xff\xff\xff"))


@case
async def case_missing_required_field(server, admin, db):
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(GET_TABLE_INFO, b""))


@case
async def case_wrong_wire_type(server, admin, db):
    """DATABASE_EXISTS whose string field 1 comes as a varint."""
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(DATABASE_EXISTS, f_varint(1, 5)))


@case
async def case_unknown_field(server, admin, db):
    """DATABASE_EXISTS with fields 15 (varint) and 99 (bytes) it does not have."""
    body = f_bytes(1, db) + f_varint(15, 7) + f_bytes(99, b"xyz")
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(DATABASE_EXISTS, body))


@case
async def case_packed_repeated_field(server, admin, db):
    """LIST_OFFSETS with its repeated bucket ids packed (the clients send
    them one by one)."""
    tid, _sid, rc = await log_table(admin, db)
    with rc:
        body = (f_varint(1, -1) + f_varint(2, 0) + f_varint(3, tid)
                + f_bytes(5, bytes([0])))
        rc.send_request(LIST_OFFSETS, body)
        return frame_outcome(rc)


@case
async def case_string_not_utf8(server, admin, db):
    """DATABASE_EXISTS of a name that is not UTF-8."""
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(DATABASE_EXISTS, f_bytes(1, b"db\xff\xfe")))


@case
async def case_overlong_varint(server, admin, db):
    """LIST_OFFSETS whose table id is a 10-byte varint with padding bytes."""
    tid, _sid, rc = await log_table(admin, db)
    with rc:
        padded = bytearray(rawwire.enc_varint(tid))
        padded[-1] |= 0x80
        padded += b"\x80" * (9 - len(padded)) + b"\x00"
        body = f_varint(1, -1) + f_varint(2, 0) + b"\x18" + bytes(padded) + f_varint(5, 0)
        rc.send_request(LIST_OFFSETS, body)
        return frame_outcome(rc)


@case
async def case_bool_field_of_two(server, admin, db):
    """DROP_DATABASE of a missing database, ignore_if_not_exists = 2."""
    body = f_bytes(1, unique("absent")) + f_varint(2, 2) + f_varint(3, 0)
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_request(rawwire.DROP_DATABASE, body))


@case
async def case_fetch_projection_not_ascending(server, admin, db):
    tid, sid, rc = await log_table(admin, db)
    with rc:
        produce_log(rc, tid, {0: build_batch(rows(1, 2), sid)})
        rtype, fetched = fetch_log(rc, tid, {0: 0}, projection=[1, 0])
        return f"error {fetched[0]}" if rtype else f"bucket {fetched[0]['error_code']}"


@case
async def case_fetch_projection_repeats_a_column(server, admin, db):
    tid, sid, rc = await log_table(admin, db)
    with rc:
        produce_log(rc, tid, {0: build_batch(rows(1, 2), sid)})
        rtype, fetched = fetch_log(rc, tid, {0: 0}, projection=[0, 0])
        return f"error {fetched[0]}" if rtype else f"bucket {fetched[0]['error_code']}"


@case
async def case_produce_empty_records(server, admin, db):
    """A bucket whose records field is empty (no batch at all)."""
    return await produce(admin, db, lambda sid: b"")


@case
async def case_frame_too_short_for_a_header(server, admin, db):
    return wire_case(await coordinator(server, admin),
                     lambda c: c.send_frame(b"\x03\xe8\x00"))


@case
async def case_frame_over_max_request_size(server, admin, db):
    def send(c):
        c.sock.sendall(struct.pack(">i", 0x7FFFFFF0) + struct.pack(">hhi", 1004, 0, 1))
    return wire_case(await coordinator(server, admin), send)


# ---- PRODUCE_LOG ----

@case
async def case_produce_bad_crc(server, admin, db):
    """Control: a good batch with a wrong CRC."""
    return await produce(admin, db, lambda sid: build_batch(rows(1, 2), sid, bad_crc=True))


@case
async def case_produce_unknown_schema_id(server, admin, db):
    return await produce(admin, db, lambda sid: build_batch(rows(1, 2), sid + 7))


@case
async def case_produce_empty_batch_unknown_schema_id(server, admin, db):
    return await produce(admin, db, lambda sid: build_batch(None, sid + 7))


@case
async def case_produce_arrow_count_above_rows(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(arrow_message(rows(1, 2, 3)), 4, sid))


@case
async def case_produce_arrow_garbage_body(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(bytes(range(7, 250)), 3, sid))


@case
async def case_produce_arrow_cut_body(server, admin, db):
    return await produce(admin, db,
                         lambda sid: batch_of(arrow_message(rows(1, 2, 3))[:-12], 3, sid))


@case
async def case_produce_arrow_trailing_bytes(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(
        arrow_message(rows(1, 2, 3)) + b"\xff\xff\xff\xff\0\0\0\0", 3, sid))


@case
async def case_produce_arrow_body_of_another_schema(server, admin, db):
    other = pa.record_batch([pa.array([1, 2, 3], pa.int64()), pa.array([0.5, 1.5, 2.5]),
                             pa.array(["x", "y", "z"])], schema=OTHER)
    return await produce(admin, db, lambda sid: batch_of(arrow_message(other), 3, sid))


@case
async def case_produce_arrow_broken_lz4_frame(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(
        flip_first(arrow_message(rows(1, 2, 3), "lz4"), LZ4_MAGIC), 3, sid))


@case
async def case_produce_arrow_null_in_not_null_column(server, admin, db):
    strict = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("s", pa.string())])
    loose = pa.schema([pa.field("id", pa.int32()), pa.field("s", pa.string())])
    body = arrow_message(pa.record_batch([pa.array([1, None], pa.int32()),
                                          pa.array(["a", "b"])], schema=loose))
    return await produce(admin, db, lambda sid: batch_of(body, 2, sid), schema=strict)


@case
async def case_produce_bytes_in_an_empty_batch(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(arrow_message(rows(1, 2, 3)), 0, sid))


@case
async def case_produce_bad_change_type_byte(server, admin, db):
    return await produce(admin, db, lambda sid: batch_of(
        b"\x00\x01\x07" + arrow_message(rows(1, 2, 3)), 3, sid, attributes=0))


@case
async def case_produce_good_batch_then_a_bad_one(server, admin, db):
    return await produce(admin, db, lambda sid: build_batch(rows(5, 6), sid)
                         + batch_of(arrow_message(rows(1, 2, 3)), 4, sid))


@case
async def case_produce_records_end_inside_a_batch(server, admin, db):
    return await produce(admin, db, lambda sid: build_batch(rows(1, 2), sid)[:-5])


@case
async def case_produce_indexed_count_above_records(server, admin, db):
    recs = b"".join(row_record(indexed_row(i, b"v%d" % i)) for i in range(3))
    return await produce(admin, db, lambda sid: batch_of(recs, 4, sid),
                         **{"table.log.format": "INDEXED"})


@case
async def case_produce_compacted_length_past_the_end(server, admin, db):
    recs = b"".join(row_record(log_compacted_row(i, b"v%d" % i)) for i in range(3))
    return await produce(admin, db, lambda sid: batch_of(b"\x00\x01\x00\x00" + recs[4:], 3, sid),
                         **{"table.log.format": "COMPACTED"})


@case
async def case_produce_to_a_primary_key_table(server, admin, db):
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("s", pa.string())])
    path = fluss.TablePath(db, unique("len_pk"))
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["id"]), bucket_count=1))
    await wait_ready(admin, path)
    info = await admin.get_table_info(path)
    batch = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["a", "b"])], schema=schema)
    with await raw_tablet(admin) as rc:
        return produce_case(rc, info.table_id, build_batch(batch, info.schema_id))


# ---- PUT_KV and LOOKUP ----

async def put(admin, db, records) -> str:
    tid = await pk.make_table(admin, db, unique("len_kv"))
    with await raw_tablet(admin) as rc:
        return put_case(rc, tid, records)


def kv_with_count(records, count) -> bytes:
    """pk.kv_batch with another RecordCount in its header (CRC redone)."""
    batch = bytearray(pk.kv_batch(records))
    struct.pack_into("<i", batch, 9 + 2 + 1 + 8 + 4, count)
    struct.pack_into("<I", batch, 5, crc32c(bytes(batch[9:])))
    return bytes(batch)


GOOD_KV = [(pk.key(1), pk.compacted_row(1, "a", 1))]


@case
async def case_put_kv_unknown_schema_id(server, admin, db):
    """Control: both check the schema id of a KV batch."""
    return await put(admin, db, pk.kv_batch(GOOD_KV, schema_id=9))


@case
async def case_put_kv_cut_batch(server, admin, db):
    return await put(admin, db, pk.kv_batch(GOOD_KV)[:-3])


@case
async def case_put_kv_row_runs_off_its_record(server, admin, db):
    return await put(admin, db, pk.kv_batch([(pk.key(1), b"\x00\xff\xff")]))


@case
async def case_put_kv_forty_zero_bytes(server, admin, db):
    return await put(admin, db, b"\x00" * 40)


@case
async def case_put_kv_count_above_records(server, admin, db):
    return await put(admin, db, kv_with_count(GOOD_KV, 2))


@case
async def case_put_kv_count_below_records(server, admin, db):
    return await put(admin, db, kv_with_count(GOOD_KV * 2, 1))


@case
async def case_put_kv_trailing_bytes(server, admin, db):
    return await put(admin, db, pk.kv_batch(GOOD_KV) + b"\x00" * 8)


@case
async def case_put_kv_to_a_log_table(server, admin, db):
    tid, _sid, rc = await log_table(admin, db, pk.SCHEMA)
    with rc:
        return put_case(rc, tid, pk.kv_batch(GOOD_KV))


@case
async def case_lookup_key_not_of_the_key_encoding(server, admin, db):
    """A plain LOOKUP of bytes that are no INT key: no row either way."""
    tid = await pk.make_table(admin, db, unique("len_lk"))
    with await raw_tablet(admin) as rc:
        pk.put_kv(rc, tid, {0: pk.kv_batch(GOOD_KV)})
        return "served, " + ("no row" if pk.lookup(rc, tid, 0, [b"\xff" * 6]) == [None]
                             else "a row")


@case
async def case_lookup_insert_key_not_of_the_key_encoding(server, admin, db):
    _name, tid = await create_autoinc(server, admin, db, autoinc_json())
    with await raw_tablet(admin) as rc:
        rtype, got = lookup_insert(rc, tid, {0: [b"\xff" * 6]})
        if rtype != RESPONSE_SUCCESS:
            return f"error {got[0]}"
        code = got[0][0] if isinstance(got[0], tuple) else 0
        return write_outcome(rc, tid, code)


# --------------------------------------------------------------------------

def test_every_case_documented():
    doc = documented()
    assert sorted(doc) == sorted(CASES), (
        f"cases without a row: {sorted(set(CASES) - set(doc))}; "
        f"rows without a case: {sorted(set(doc) - set(CASES))}")
    for name, (reference, ours, why) in doc.items():
        assert reference and ours, name
        if reference != ours:
            assert why, f"{name}: the servers differ; KNOWN_DIFFERENCES §5 must say why"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_answer_as_documented(server, admin, db, name):
    outcome = await CASES[name](server, admin, db)
    reference, ours, _why = documented().get(name, ("?", "?", ""))
    want = reference if IS_REFERENCE else ours
    assert outcome == want, (
        f"{name} on {SERVER_KIND}: got {outcome!r}, KNOWN_DIFFERENCES §5 says {want!r}")
