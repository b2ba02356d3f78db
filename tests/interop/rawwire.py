"""Minimal raw Fluss RPC client (plain sockets, no pyfluss).

Framing (protocol.md §1):
  request : int32 BE frame length | int16 BE api_key | int16 BE api_version
            | int32 BE request_id | protobuf body
  response: int32 BE frame length | int8 response_type | int32 BE request_id
            | protobuf body   (type 0 = success, 1 = ErrorResponse)
  ErrorResponse { 1: int32 error_code; 2: string error_message }

Only what the interop tests need: a protobuf encoder for varint / bytes
fields and a decoder that returns {field_number: [values...]}.
"""

import json
import socket
import struct

# API keys (protocol.md §3.1)
API_VERSIONS = 1000
CREATE_DATABASE = 1001
DROP_DATABASE = 1002
LIST_DATABASES = 1003
DATABASE_EXISTS = 1004
CREATE_TABLE = 1005
DROP_TABLE = 1006
GET_TABLE_INFO = 1007
LIST_TABLES = 1008
TABLE_EXISTS = 1010
GET_METADATA = 1012
GET_DATABASE_INFO = 1035

RESPONSE_SUCCESS = 0
RESPONSE_ERROR = 1
RESPONSE_SERVER_FAILURE = 2


# --------------------------------------------------------------------------
# protobuf encoding
# --------------------------------------------------------------------------

def enc_varint(value: int) -> bytes:
    """Unsigned LEB128; negative int32/int64 become 10-byte two's complement."""
    if value < 0:
        value &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(field: int, value: int) -> bytes:
    return enc_varint(field << 3 | 0) + enc_varint(int(value))


def f_bytes(field: int, value) -> bytes:
    if isinstance(value, str):
        value = value.encode("utf-8")
    return enc_varint(field << 3 | 2) + enc_varint(len(value)) + bytes(value)


def table_path_msg(database: str, table: str) -> bytes:
    """PbTablePath {1 database_name, 2 table_name}."""
    return f_bytes(1, database) + f_bytes(2, table)


# --------------------------------------------------------------------------
# protobuf decoding
# --------------------------------------------------------------------------

class ProtoError(ValueError):
    pass


def dec_varint(buf: bytes, pos: int):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ProtoError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtoError("varint too long")


def as_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def as_int64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v & (1 << 63) else v


def decode(buf: bytes) -> dict:
    """Decode one protobuf message into {field_number: [raw values]}.

    varints come back as (unsigned) ints, length-delimited fields as bytes,
    fixed32/fixed64 as bytes of length 4/8.
    """
    fields = {}
    pos = 0
    while pos < len(buf):
        key, pos = dec_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise ProtoError("field number 0")
        if wire == 0:
            val, pos = dec_varint(buf, pos)
        elif wire == 2:
            n, pos = dec_varint(buf, pos)
            if pos + n > len(buf):
                raise ProtoError("truncated length-delimited field")
            val = bytes(buf[pos:pos + n])
            pos += n
        elif wire == 1:
            val = bytes(buf[pos:pos + 8])
            pos += 8
        elif wire == 5:
            val = bytes(buf[pos:pos + 4])
            pos += 4
        else:
            raise ProtoError(f"unsupported wire type {wire}")
        fields.setdefault(field, []).append(val)
    if pos != len(buf):
        raise ProtoError("trailing bytes")
    return fields


def decode_error(body: bytes):
    """ErrorResponse -> (error_code, error_message or None)."""
    f = decode(body)
    assert 1 in f, f"ErrorResponse without required error_code: {body!r}"
    code = as_int32(f[1][0])
    msg = f[2][0].decode("utf-8") if 2 in f else None
    return code, msg


def decode_packed_or_plain_ints(values) -> list:
    out = []
    for v in values:
        if isinstance(v, bytes):  # packed
            pos = 0
            while pos < len(v):
                x, pos = dec_varint(v, pos)
                out.append(x)
        else:
            out.append(v)
    return out


# --------------------------------------------------------------------------
# connection
# --------------------------------------------------------------------------

class ConnectionClosed(Exception):
    pass


class RawConnection:
    def __init__(self, host: str, port: int, timeout: float = 5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.next_id = 1

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- sending ----
    def send_frame(self, payload: bytes):
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def send_request(self, api_key: int, body: bytes, request_id=None,
                     api_version: int = 0) -> int:
        if request_id is None:
            request_id = self.next_id
            self.next_id += 1
        header = struct.pack(">hhi", api_key, api_version, request_id)
        self.send_frame(header + body)
        return request_id

    # ---- receiving ----
    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionClosed(f"EOF after {len(buf)} of {n} bytes")
            buf += chunk
        return bytes(buf)

    def recv_frame(self) -> bytes:
        (length,) = struct.unpack(">i", self._recv_exact(4))
        assert 0 < length < (1 << 28), f"implausible response frame length {length}"
        return self._recv_exact(length)

    def recv_response(self):
        """-> (response_type, request_id or None, body)."""
        frame = self.recv_frame()
        rtype = frame[0]
        if rtype == RESPONSE_SERVER_FAILURE:
            return rtype, None, frame[1:]
        assert len(frame) >= 5, f"response frame too short: {frame!r}"
        (rid,) = struct.unpack(">i", frame[1:5])
        return rtype, rid, frame[5:]

    def call(self, api_key: int, body: bytes, api_version: int = 0):
        rid = self.send_request(api_key, body, api_version=api_version)
        rtype, got_rid, resp = self.recv_response()
        assert got_rid == rid, f"request id {rid} answered as {got_rid}"
        return rtype, resp

    def wait_closed(self, timeout: float = 10.0) -> bytes:
        """Read until the peer closes; return whatever bytes arrived first.

        Raises AssertionError if the peer keeps the connection open longer
        than `timeout`.
        """
        self.sock.settimeout(timeout)
        data = bytearray()
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return bytes(data)
                data += chunk
        except (ConnectionResetError, BrokenPipeError):
            return bytes(data)
        except socket.timeout:
            raise AssertionError(
                f"server did not close the connection within {timeout}s "
                f"(received {bytes(data)!r})")

    # ---- typed helpers ----
    def api_versions(self, software=("fluss-c-interop", "0.0.1")):
        """-> (server_type or None, {api_key: (min, max)})."""
        body = f_bytes(1, software[0]) + f_bytes(2, software[1])
        rtype, resp = self.call(API_VERSIONS, body)
        assert rtype == RESPONSE_SUCCESS, (rtype, resp)
        f = decode(resp)
        apis = {}
        for raw in f.get(1, []):
            v = decode(raw)
            apis[as_int32(v[1][0])] = (as_int32(v.get(2, [0])[0]),
                                       as_int32(v.get(3, [0])[0]))
        server_type = as_int32(f[2][0]) if 2 in f else None
        return server_type, apis

    def create_table_json(self, database: str, table: str, table_json,
                          ignore_if_exists: bool = False):
        """CREATE_TABLE with a hand-written descriptor; -> (type, body)."""
        if not isinstance(table_json, (bytes, str)):
            table_json = json.dumps(table_json)
        body = (f_bytes(1, table_path_msg(database, table))
                + f_bytes(2, table_json)
                + f_varint(3, 1 if ignore_if_exists else 0))
        return self.call(CREATE_TABLE, body)

    def get_table_info(self, database: str, table: str):
        """-> (type, decoded dict or (code, msg))."""
        rtype, resp = self.call(GET_TABLE_INFO,
                                f_bytes(1, table_path_msg(database, table)))
        if rtype == RESPONSE_ERROR:
            return rtype, decode_error(resp)
        f = decode(resp)
        return rtype, {
            "table_id": as_int64(f[1][0]),
            "schema_id": as_int32(f[2][0]),
            "table_json": json.loads(f[3][0]),
            "created_time": as_int64(f[4][0]),
            "modified_time": as_int64(f[5][0]),
        }


def handshake(host: str, port: int, timeout: float = 5.0,
              software=("fluss-c-interop", "0.0.1")) -> RawConnection:
    """Open a raw connection and do the API_VERSIONS exchange like a client
    (software: the client_software_name and _version it announces)."""
    conn = RawConnection(host, port, timeout)
    conn.api_versions(software)
    return conn
