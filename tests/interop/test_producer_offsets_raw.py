"""Producer offsets on the wire (REGISTER/GET/DELETE_PRODUCER_OFFSETS,
1053-1055), for what the Java client's Admin cannot send or see: a
request's ttl_ms, a bucket given twice, a bucket without log_end_offset,
the error codes, the default expiration; and (ours only) the coordinator's
`coordinator.producer-offsets.ttl` and `.cleanup-interval`, the tablet
server's refusal, and a damaged producer file fencing its producer.

The reference answers the same, except that it may keep returning an
expired entry until its hourly sweep (ours treats it as gone at once,
KNOWN_DIFFERENCES.md): those checks are ours only."""

import time
import uuid

import pytest

import rawwire as w
from conftest import IS_OURS, OurServer, REPO

REGISTER, GET, DELETE = 1053, 1054, 1055
DAY_MS = 24 * 3600 * 1000

ours_only = pytest.mark.skipif(not IS_OURS, reason="needs FLUSS_SERVER=ours")


def pid(prefix="raw-po"):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def bucket(b, offset=None, partition=None):
    out = b""
    if partition is not None:
        out += w.f_varint(1, partition)
    out += w.f_varint(2, b)
    if offset is not None:
        out += w.f_varint(4, offset)
    return out


def table(table_id, *buckets):
    return w.f_varint(1, table_id) + b"".join(w.f_bytes(2, x) for x in buckets)


def register(c, producer, *tables, ttl_ms=None):
    body = w.f_bytes(1, producer) + b"".join(w.f_bytes(2, t) for t in tables)
    if ttl_ms is not None:
        body += w.f_varint(3, ttl_ms)
    rtype, resp = c.call(REGISTER, body)
    if rtype != w.RESPONSE_SUCCESS:
        return w.decode_error(resp)
    return w.as_int32(w.decode(resp)[1][0])  # 0 CREATED, 1 ALREADY_EXISTS


def get(c, producer):
    """-> None (no entry), (code, msg) on error, else
    (expiration_time, {(table, partition or None, bucket): offset})."""
    rtype, resp = c.call(GET, w.f_bytes(1, producer))
    if rtype != w.RESPONSE_SUCCESS:
        return w.decode_error(resp)
    f = w.decode(resp)
    if 1 not in f:
        assert f == {}, f
        return None
    assert f[1][0].decode() == producer
    offsets = {}
    for rt in f.get(3, []):
        t = w.decode(rt)
        tid = w.as_int64(t[1][0])
        for rb in t.get(2, []):
            b = w.decode(rb)
            key = (tid, w.as_int64(b[1][0]) if 1 in b else None, w.as_int32(b[2][0]))
            assert key not in offsets, key
            offsets[key] = w.as_int64(b[4][0])
    return w.as_int64(f[2][0]), offsets


def delete(c, producer):
    rtype, resp = c.call(DELETE, w.f_bytes(1, producer))
    return None if rtype == w.RESPONSE_SUCCESS else w.decode_error(resp)


@pytest.fixture
def raw(server):
    c = w.handshake(server.host, server.coordinator_port)
    try:
        yield c
    finally:
        c.close()


def test_register_get_delete_on_the_wire(raw):
    p = pid()
    before = int(time.time() * 1000)
    # table 5 twice, bucket 1 twice: the last offset counts; (7, p0, 0) and
    # (7, p1, 0) are two buckets; an unknown table id is fine
    assert register(raw, p,
                    table(5, bucket(0, 10), bucket(1, 11)),
                    table(7, bucket(0, 70, partition=0), bucket(0, 71, partition=1)),
                    table(5, bucket(1, 12)),
                    table(987654321, bucket(3, 0))) == 0
    exp, offsets = get(raw, p)
    assert offsets == {(5, None, 0): 10, (5, None, 1): 12, (7, 0, 0): 70, (7, 1, 0): 71,
                       (987654321, None, 3): 0}
    after = int(time.time() * 1000)
    assert before + DAY_MS <= exp <= after + DAY_MS
    assert register(raw, p, table(5, bucket(0, 99))) == 1
    assert get(raw, p)[1] == offsets
    assert delete(raw, p) is None
    assert get(raw, p) is None
    assert delete(raw, p) is None
    # no tables at all is an entry; a table without buckets adds none
    assert register(raw, p, table(8)) == 0
    assert get(raw, p)[1] == {}
    assert delete(raw, p) is None


def test_table_mixing_partitioned_and_plain_buckets(raw):
    """0.9.1's per-table offsets file holds either kind, not both: -1,
    whether or not the producer has an entry."""
    p = pid()
    mixed = table(7, bucket(0, 70, partition=0), bucket(1, 72))
    code, msg = register(raw, p, mixed)
    assert code == -1 and msg, msg
    assert get(raw, p) is None
    assert register(raw, p, table(7, bucket(0, 1))) == 0
    code, msg = register(raw, p, mixed)
    assert code == -1 and msg, msg
    assert get(raw, p)[1] == {(7, None, 0): 1}
    assert delete(raw, p) is None


@ours_only
def test_values_kept_as_given(raw):
    """The reference's offsets file is an array indexed by bucket id with
    -1 for "none": it loses offsets of -1 and moves negative bucket ids.
    Ours keeps every value (KNOWN_DIFFERENCES.md)."""
    p = pid()
    assert register(raw, p, table(3, bucket(-1, 5), bucket(1, -1)),
                    table(-4, bucket(2, -7, partition=-9))) == 0
    assert get(raw, p)[1] == {(3, None, -1): 5, (3, None, 1): -1, (-4, -9, 2): -7}
    assert delete(raw, p) is None


def test_request_ttl(raw):
    p = pid()
    assert register(raw, p, table(1, bucket(0, 1)), ttl_ms=60_000) == 0
    exp, _ = get(raw, p)
    assert abs(exp - (int(time.time() * 1000) + 60_000)) < 30_000
    assert delete(raw, p) is None
    # an expired entry is replaced by the next register
    assert register(raw, p, table(1, bucket(0, 1)), ttl_ms=1) == 0
    time.sleep(0.05)
    assert register(raw, p, table(1, bucket(0, 2)), ttl_ms=60_000) == 0
    assert get(raw, p)[1] == {(1, None, 0): 2}
    assert delete(raw, p) is None


@ours_only
def test_expired_entry_reads_as_none(raw):
    p = pid()
    assert register(raw, p, table(1, bucket(0, 1)), ttl_ms=-1) == 0
    assert get(raw, p) is None
    assert register(raw, p, table(1, bucket(0, 1)), ttl_ms=1) == 0
    time.sleep(0.05)
    assert get(raw, p) is None


@pytest.mark.parametrize("bad", ["", ".", "..", "a b", "a/b", "x" * 201, "ü"])
def test_invalid_producer_ids(raw, bad):
    for code, msg in (register(raw, bad, table(1, bucket(0, 1))), get(raw, bad),
                      delete(raw, bad)):
        assert code == 63, msg
        assert "Invalid producer ID" in msg, msg


def test_bucket_without_offset(raw):
    p = pid()
    code, msg = register(raw, p, table(1, bucket(0, 1), bucket(1)))
    assert code == -1 and msg, msg
    assert get(raw, p) is None


def test_two_hundred_character_id(raw):
    p = "p" * 200
    delete(raw, p)
    assert register(raw, p, table(1, bucket(0, 1))) == 0
    assert get(raw, p)[1] == {(1, None, 0): 1}
    assert delete(raw, p) is None


@ours_only
def test_tablet_server_refuses(our_server):
    with w.handshake(our_server.host, our_server.tablet_port) as c:
        code, msg = register(c, pid(), table(1, bucket(0, 1)))
    assert code == 2, msg


def own_server(tmp_path, *extra):
    import os
    from pathlib import Path
    (tmp_path / "data").mkdir(exist_ok=True)
    srv = OurServer(Path(os.environ.get("FLUSSD", REPO / "build" / "flussd")),
                    tmp_path / "data", tmp_path, list(extra))
    srv.start()
    return srv


@ours_only
def test_configured_ttl_and_sweep(tmp_path):
    srv = own_server(tmp_path, "-D", "coordinator.producer-offsets.ttl=1s",
                     "-D", "coordinator.producer-offsets.cleanup-interval=200ms")
    try:
        d = srv.data_dir / "coordinator" / "producer-offsets"
        with w.handshake(srv.host, srv.coordinator_port) as c:
            t0 = int(time.time() * 1000)
            assert register(c, "short", table(1, bucket(0, 1))) == 0
            assert register(c, "long", table(1, bucket(0, 1)), ttl_ms=3_600_000) == 0
            exp, _ = get(c, "short")
            assert t0 + 1000 <= exp <= int(time.time() * 1000) + 1000
            assert (d / "short.json").exists()
            deadline = time.monotonic() + 10
            while (d / "short.json").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not (d / "short.json").exists(), "the sweep did not remove the expired entry"
            assert (d / "long.json").exists()
            assert get(c, "short") is None
            assert get(c, "long") is not None
    finally:
        assert srv.stop() == 0


@ours_only
def test_damaged_file_fences_its_producer(tmp_path):
    """A producer file that does not decode after a restart: that producer
    answers 26 STORAGE_EXCEPTION to GET and REGISTER (never "none" or
    CREATED, which would make a sink skip its undo) until a DELETE; the
    others and the coordinator carry on."""
    srv = own_server(tmp_path)
    d = srv.data_dir / "coordinator" / "producer-offsets"
    with w.handshake(srv.host, srv.coordinator_port) as c:
        assert register(c, "keep", table(1, bucket(0, 5))) == 0
        assert register(c, "torn", table(1, bucket(0, 6))) == 0
    assert srv.stop() == 0
    text = (d / "torn.json").read_bytes()
    (d / "torn.json").write_bytes(text[: len(text) // 2])
    (d / "left.json.tmp").write_bytes(b"{\"half")  # an interrupted write
    srv.start()
    try:
        assert "torn.json" in srv.stderr_tail()
        assert not (d / "left.json.tmp").exists()
        with w.handshake(srv.host, srv.coordinator_port) as c:
            assert get(c, "keep")[1] == {(1, None, 0): 5}
            code, msg = get(c, "torn")
            assert code == 26 and "did not load" in msg, msg
            code, msg = register(c, "torn", table(1, bucket(0, 7)))
            assert code == 26, msg
            assert register(c, "new", table(1, bucket(0, 8))) == 0
            assert delete(c, "torn") is None
            assert not (d / "torn.json").exists()
            assert get(c, "torn") is None
            assert register(c, "torn", table(1, bucket(0, 7))) == 0
    finally:
        assert srv.stop() == 0
