"""Raw TCP framing and bad-input robustness (plain sockets, no pyfluss)."""

import socket
import struct

import pyarrow as pa
import pytest

import fluss
import rawwire
from conftest import DEFAULT_RF, IS_OURS, IS_REFERENCE, connect, unique

ours_only = pytest.mark.skipif(
    not IS_OURS, reason="reference (Java) server behaves differently here; "
                        "this is the C server's contract")

# admin APIs the foundation issue needs on the coordinator
COORDINATOR_APIS = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1010, 1012, 1035}
# read-only admin APIs a tablet server must answer too (Java client routes them there)
TABLET_APIS = {1000, 1003, 1004, 1007, 1008, 1010, 1012, 1035}


@pytest.fixture
async def tablet_address(server):
    if getattr(server, "tablet_port", None):
        return server.host, server.tablet_port
    c = await connect(server.bootstrap)
    try:
        nodes = await c.get_admin().get_server_nodes()
    finally:
        await c.close()
    ts = sorted((n for n in nodes if n.server_type == "TabletServer"), key=lambda n: n.id)
    return ts[0].host, ts[0].port


async def assert_server_usable(server):
    c = await connect(server.bootstrap)
    try:
        assert "fluss" in await c.get_admin().list_databases()
    finally:
        await c.close()


def test_api_versions_coordinator(server):
    with rawwire.RawConnection(server.host, server.coordinator_port) as c:
        server_type, apis = c.api_versions()
    assert server_type == 1
    missing = COORDINATOR_APIS - set(apis)
    assert not missing, f"coordinator does not list {sorted(missing)}"
    for key in COORDINATOR_APIS:
        assert apis[key] == (0, 0), (key, apis[key])


async def test_api_versions_tablet_server(tablet_address):
    with rawwire.RawConnection(*tablet_address) as c:
        server_type, apis = c.api_versions()
    assert server_type == 2
    missing = TABLET_APIS - set(apis)
    assert not missing, f"tablet server does not list {sorted(missing)}"
    # mutating admin APIs are coordinator-only
    assert not {1001, 1002, 1005, 1006} & set(apis)


def test_api_versions_echoes_request_id(server):
    body = rawwire.f_bytes(1, "fluss-c-interop") + rawwire.f_bytes(2, "0")
    with rawwire.RawConnection(server.host, server.coordinator_port) as c:
        for rid in (0, 7, 0x7FFFFFFF, -5):
            c.send_request(rawwire.API_VERSIONS, body, request_id=rid)
            rtype, got, _ = c.recv_response()
            assert (rtype, got) == (rawwire.RESPONSE_SUCCESS, rid)


def test_raw_missing_table_error_response(server):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, res = c.get_table_info("fluss", unique("absent"))
    assert rtype == rawwire.RESPONSE_ERROR
    code, msg = res
    assert code == 7
    assert msg


def test_raw_pipelined_requests(server):
    """Several requests in flight on one connection, answered by request id."""
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        absent = unique("absent")
        ids = {
            c.send_request(rawwire.DATABASE_EXISTS, rawwire.f_bytes(1, "fluss")): "exists",
            c.send_request(rawwire.GET_TABLE_INFO, rawwire.f_bytes(
                1, rawwire.table_path_msg("fluss", absent))): "missing",
            c.send_request(rawwire.LIST_DATABASES, b""): "list",
        }
        got = {}
        for _ in ids:
            rtype, rid, body = c.recv_response()
            got[ids[rid]] = (rtype, body)
    assert got["exists"][0] == rawwire.RESPONSE_SUCCESS
    assert rawwire.decode(got["exists"][1])[1] == [1]
    assert got["missing"][0] == rawwire.RESPONSE_ERROR
    assert rawwire.decode_error(got["missing"][1])[0] == 7
    assert got["list"][0] == rawwire.RESPONSE_SUCCESS
    assert b"fluss" in rawwire.decode(got["list"][1])[1]


@ours_only
async def test_unknown_api_key(server):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rid = c.send_request(999, b"\x08\x01", request_id=4242)
        rtype, got, body = c.recv_response()
        assert rtype == rawwire.RESPONSE_ERROR
        assert got == rid == 4242
        code, msg = rawwire.decode_error(body)
        assert code == 2  # UNSUPPORTED_VERSION
        assert msg
        # the connection stays usable
        rtype, res = c.get_table_info("fluss", unique("absent"))
        assert rtype == rawwire.RESPONSE_ERROR and res[0] == 7
    await assert_server_usable(server)


@ours_only
async def test_undecodable_protobuf_body(server):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rid = c.send_request(rawwire.GET_TABLE_INFO, b"\xff\xff\xff", request_id=77)
        rtype, got, body = c.recv_response()
        assert rtype == rawwire.RESPONSE_ERROR
        assert got == rid
        code, msg = rawwire.decode_error(body)
        assert code == 3  # CORRUPT_MESSAGE
        assert msg
    await assert_server_usable(server)


@ours_only
async def test_missing_required_field(server):
    """GET_TABLE_INFO without its required table_path: rejected as corrupt."""
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, body = c.call(rawwire.GET_TABLE_INFO, b"")
        assert rtype == rawwire.RESPONSE_ERROR
        code, msg = rawwire.decode_error(body)
        assert code == 3
        assert msg
    await assert_server_usable(server)


def assert_closed_cleanly(conn):
    """The server closes the connection. The reference first sends a
    SERVER_FAILURE frame (type 2, error -1, Netty exception text); pyfluss
    cannot parse type 2, so ours may send nothing or a type-1 frame."""
    data = conn.wait_closed(timeout=10)
    if data and IS_OURS:
        assert len(data) >= 5 and data[4] == rawwire.RESPONSE_ERROR, data[:64]


async def test_oversized_frame_closes_connection(server):
    with rawwire.RawConnection(server.host, server.coordinator_port) as c:
        # declared length 0x7FFFFFF0 (> 100 MB max request size), a few bytes follow
        c.sock.sendall(struct.pack(">i", 0x7FFFFFF0) + struct.pack(">hhi", 1007, 0, 1))
        assert_closed_cleanly(c)
    await assert_server_usable(server)


async def test_frame_just_over_100mb_closes_connection(server):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        c.sock.sendall(struct.pack(">i", 100 * 1024 * 1024 + 1) + struct.pack(">hhi", 1007, 0, 1))
        assert_closed_cleanly(c)
    await assert_server_usable(server)


async def test_negative_frame_length_closes_connection(server):
    with rawwire.RawConnection(server.host, server.coordinator_port) as c:
        c.sock.sendall(struct.pack(">i", -1) + b"\x00" * 8)
        assert_closed_cleanly(c)
    await assert_server_usable(server)


async def test_frame_shorter_than_header(server):
    """A frame too short to hold the 8-byte request header. Reference:
    SERVER_FAILURE (type 2) + close. Ours: ERROR_RESPONSE 3 or close."""
    with rawwire.RawConnection(server.host, server.coordinator_port) as c:
        c.send_frame(b"\x03\xe8\x00")
        try:
            rtype, _, body = c.recv_response()
        except (rawwire.ConnectionClosed, ConnectionResetError):
            pass
        else:
            if IS_OURS:
                assert rtype == rawwire.RESPONSE_ERROR
                assert rawwire.decode_error(body)[0] == 3
            else:
                assert rtype == rawwire.RESPONSE_SERVER_FAILURE
    await assert_server_usable(server)


def test_unsupported_api_version(server):
    """The reference does not check api_version for admin APIs: a
    GET_TABLE_INFO with version 5 is served like version 0. fluss-c answers
    2 UNSUPPORTED_VERSION for a version outside the advertised range."""
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, body = c.call(rawwire.GET_TABLE_INFO, rawwire.f_bytes(
            1, rawwire.table_path_msg("fluss", unique("absent"))), api_version=5)
        assert rtype == rawwire.RESPONSE_ERROR
        code, msg = rawwire.decode_error(body)
        assert code == (7 if IS_REFERENCE else 2) and msg
        # the connection still serves a request with a good version
        rtype, body = c.call(rawwire.GET_TABLE_INFO, rawwire.f_bytes(
            1, rawwire.table_path_msg("fluss", unique("absent"))))
        assert rtype == rawwire.RESPONSE_ERROR
        assert rawwire.decode_error(body)[0] == 7


async def test_client_disconnect_mid_frame(server):
    """Half a frame, then the client goes away: the server must survive."""
    for port in {server.coordinator_port}:
        s = socket.create_connection((server.host, port), timeout=5)
        s.sendall(struct.pack(">i", 100) + b"\x03\xe8\x00\x00")
        s.close()
    await assert_server_usable(server)


async def test_raw_table_json_data_types(server, db):
    """CHAR (not expressible through pyarrow) and the DataType JSON the server
    returns for a table created with a hand-written descriptor."""
    columns = [
        {"name": "id", "data_type": {"type": "INTEGER"}},
        {"name": "ch", "data_type": {"type": "CHAR", "length": 5}},
        {"name": "ch_nn", "data_type": {"type": "CHAR", "length": 1, "nullable": False}},
        {"name": "bin", "data_type": {"type": "BINARY", "length": 3}},
        {"name": "t", "data_type": {"type": "TIME_WITHOUT_TIME_ZONE", "precision": 2}},
        {"name": "ts", "data_type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 4}},
        {"name": "ltz", "data_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 7}},
        {"name": "dec", "data_type": {"type": "DECIMAL", "precision": 20, "scale": 5}},
        {"name": "arr", "data_type": {"type": "ARRAY", "element_type": {"type": "CHAR", "length": 2}}},
    ]
    tj = {"version": 1,
          "schema": {"version": 1, "columns": columns, "primary_key": ["id"]},
          "comment": "raw", "partition_key": [], "bucket_key": [], "bucket_count": 2,
          "properties": {}, "custom_properties": {"src": "raw"}}
    name = "rawtypes"
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, body = c.create_table_json(db, name, tj)
        assert rtype == rawwire.RESPONSE_SUCCESS, rawwire.decode_error(body)
        rtype, info = c.get_table_info(db, name)
    assert rtype == rawwire.RESPONSE_SUCCESS, info
    assert info["schema_id"] == 1

    got = info["table_json"]
    assert got["version"] == 1
    assert got["comment"] == "raw"
    assert got["partition_key"] == []
    assert got["bucket_key"] == ["id"]
    assert got["bucket_count"] == 2
    assert got["properties"] == {"table.replication.factor": DEFAULT_RF,
                                 "table.kv.format-version": "2"}
    assert got["custom_properties"] == {"src": "raw"}
    schema = got["schema"]
    assert schema["version"] == 1
    assert schema["primary_key"] == ["id"]
    assert [c["name"] for c in schema["columns"]] == [c["name"] for c in columns]
    assert [c["id"] for c in schema["columns"]] == list(range(len(columns)))
    assert schema["highest_field_id"] == len(columns) - 1
    types = [c["data_type"] for c in schema["columns"]]
    assert types[0] == {"type": "INTEGER", "nullable": False}  # PK forced NOT NULL
    assert types[1:] == [c["data_type"] for c in columns[1:]]

    # and pyfluss renders them
    conn = await connect(server.bootstrap)
    try:
        ti = await conn.get_admin().get_table_info(fluss.TablePath(db, name))
    finally:
        await conn.close()
    assert ti.get_schema().get_columns() == [
        ("id", "int NOT NULL"), ("ch", "char(5)"), ("ch_nn", "char(1) NOT NULL"),
        ("bin", "binary(3)"), ("t", "time(2)"), ("ts", "timestamp(4)"),
        ("ltz", "timestamp_ltz(7)"), ("dec", "decimal(20,5)"), ("arr", "array<char(2)>")]


async def test_tablet_server_answers_read_only_admin(server, db, tablet_address):
    """The Java client sends read-only admin calls to a tablet server; it must
    return the same data as the coordinator."""
    conn = await connect(server.bootstrap)
    try:
        await conn.get_admin().create_table(
            fluss.TablePath(db, "t"),
            fluss.TableDescriptor(fluss.Schema(pa.schema([pa.field("a", pa.int32())]))))
    finally:
        await conn.close()
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        _, from_coord = c.get_table_info(db, "t")
    with rawwire.handshake(*tablet_address) as t:
        rtype, from_tablet = t.get_table_info(db, "t")
        assert rtype == rawwire.RESPONSE_SUCCESS, from_tablet
        assert from_tablet == from_coord
        rtype, body = t.call(rawwire.DATABASE_EXISTS, rawwire.f_bytes(1, db))
        assert rtype == rawwire.RESPONSE_SUCCESS and rawwire.decode(body)[1] == [1]
        rtype, body = t.call(rawwire.LIST_TABLES, rawwire.f_bytes(1, db))
        assert rtype == rawwire.RESPONSE_SUCCESS and rawwire.decode(body)[1] == [b"t"]
        rtype, body = t.call(rawwire.TABLE_EXISTS, rawwire.f_bytes(
            1, rawwire.table_path_msg(db, "nope")))
        assert rtype == rawwire.RESPONSE_SUCCESS and rawwire.decode(body)[1] == [0]
        rtype, res = t.get_table_info(db, "nope")
        assert rtype == rawwire.RESPONSE_ERROR and res[0] == 7 and res[1]
