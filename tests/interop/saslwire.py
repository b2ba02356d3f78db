#!/usr/bin/env python3
"""Raw SASL/PLAIN helpers for tests/interop/test_security_sasl.py, on top of
rawwire.RawConnection (plain sockets, no pyfluss).

Run as a program it is a stand-in for the python that tests/reference/start
runs its readiness probe with (PYTHON=tests/interop/saslwire.py): it runs
tests/reference/probe.py authenticating (SASL/PLAIN, SASL_PROBE_USER /
SASL_PROBE_PASSWORD, default admin / admin-pass) before the probe's
GET_METADATA, which a SASL listener refuses before authentication.

AUTHENTICATE (api key 1038, v0):
  AuthenticateRequest  { required string protocol = 1; required bytes token = 2; }
  AuthenticateResponse { optional bytes challenge = 1; }
SASL/PLAIN token (RFC 4616): authzid NUL user NUL password.

Facts from apache/fluss v0.9.1-incubating (NettyServerHandler,
SaslServerAuthenticator, PlainSaslServer) and answers recorded from the
reference server; the tests cite them where they rely on them.
"""

import socket
import struct

from rawwire import (RESPONSE_ERROR, RawConnection, as_int32, decode, decode_error, f_bytes,
                     f_varint)

API_VERSIONS = 1000
LIST_DATABASES = 1003
GET_METADATA = 1012
AUTHENTICATE = 1038

AUTHENTICATE_EXCEPTION = 46

NOT_AUTHENTICATED = (
    "The connection has not completed authentication yet. This may be caused by a "
    "missing or incorrect configuration of 'client.security.protocol' on the client side.")
INVALID_CREDENTIALS = "Authentication failed: Invalid username or password"
NO_USERNAME = "Authentication failed: username not specified"
NO_PASSWORD = "Authentication failed: password not specified"
AUTHZID_DIFFERS = ("Authentication failed: Client requested an authorization id that is "
                   "different from username")


class Target:
    """A server under test: its client listeners (coordinator, tablet
    server) and, for ours, the OurServer process (None for the reference)."""

    def __init__(self, host, coordinator_port, tablet_port, server=None):
        self.host = host
        self.coordinator_port = coordinator_port
        self.tablet_port = tablet_port
        self.server = server

    @property
    def bootstrap(self):
        return f"{self.host}:{self.coordinator_port}"

    def ports(self):
        return {"coordinator": self.coordinator_port, "tablet": self.tablet_port}


def tokens_message(n: int) -> str:
    return f"Invalid SASL/PLAIN response: expected 3 tokens, got {n}"


def mechanism_message(client_mechanism: str, enabled=("PLAIN",)) -> str:
    """SaslServerAuthenticator.matchProtocol: the enabled list as Java prints
    a List ("[PLAIN]"), the client's protocol verbatim in quotes."""
    return (f"SASL server enables [{', '.join(enabled)}] while protocol of client is "
            f"'{client_mechanism}'")


def plain_token(user, password, authzid="") -> bytes:
    def b(x):
        return x.encode("utf-8") if isinstance(x, str) else bytes(x)
    return b(authzid) + b"\0" + b(user) + b"\0" + b(password)


def authenticate_body(mechanism: str, token: bytes) -> bytes:
    return f_bytes(1, mechanism) + f_bytes(2, token)


def error_body(code: int, message: str) -> bytes:
    """ErrorResponse as the reference encodes it: error_code, then error_message."""
    return f_varint(1, code) + f_bytes(2, message)


def call_frame(conn: RawConnection, api_key: int, body: bytes, request_id: int,
               api_version: int = 0) -> bytes:
    """Send one request; return the whole response frame after its length
    prefix (type byte, request id, body) so callers can compare bytes."""
    conn.send_request(api_key, body, request_id=request_id, api_version=api_version)
    frame = conn.recv_frame()
    assert len(frame) >= 5, f"short response frame {frame!r}"
    (rid,) = struct.unpack(">i", frame[1:5])
    assert rid == request_id, f"request id {request_id} answered as {rid}"
    return frame


def authenticate(conn: RawConnection, mechanism: str, token: bytes, request_id=None):
    """AUTHENTICATE -> (response_type, body)."""
    if request_id is None:
        request_id = conn.next_id
        conn.next_id += 1
    frame = call_frame(conn, AUTHENTICATE, authenticate_body(mechanism, token), request_id)
    return frame[0], frame[5:]


def expect_error(rtype: int, body: bytes):
    """-> (code, message) of an ErrorResponse; fails on a success answer."""
    assert rtype == RESPONSE_ERROR, f"expected an error response, got type {rtype}: {body!r}"
    return decode_error(body)


def wait_answer_or_close(conn: RawConnection, timeout: float):
    """What the peer does next within `timeout`: ('closed', bytes_before_eof),
    ('data', first_bytes) or ('silent', b'')."""
    conn.sock.settimeout(timeout)
    data = bytearray()
    try:
        while True:
            chunk = conn.sock.recv(65536)
            if not chunk:
                return "closed", bytes(data)
            data += chunk
            if len(data) >= 4:
                return "data", bytes(data)
    except (ConnectionResetError, BrokenPipeError):
        return "closed", bytes(data)
    except socket.timeout:
        return ("data", bytes(data)) if data else ("silent", b"")


def server_nodes(conn: RawConnection):
    """GET_METADATA (empty request: no tables) on an authenticated
    connection -> (coordinator (host, port) or None, [(id, host, port), ...])."""
    rtype, body = conn.call(GET_METADATA, b"")
    assert rtype == 0, f"GET_METADATA failed: {decode_error(body) if rtype == 1 else body!r}"
    f = decode(body)
    coord = None
    if 1 in f:
        c = decode(f[1][0])
        coord = (c[2][0].decode(), as_int32(c[3][0]))
    tablets = []
    for raw in f.get(2, []):
        n = decode(raw)
        tablets.append((as_int32(n[1][0]), n[2][0].decode(), as_int32(n[3][0])))
    return coord, tablets


# --------------------------------------------------------------------------
# A minimal request body per API key that 0.9.1 parses: every `required`
# field of the request message (FlussApi.proto at v0.9.1-incubating) at its
# zero value (varint 0, empty string/bytes), nested required messages
# likewise, nothing else.
#
# Why not an empty body: the reference parses the body before it looks at
# the connection's state (NettyServerHandler.channelRead), and a message
# with a required field missing throws "Some required fields are missing"
# before the response future has a listener — the request is then never
# answered at all (recorded: GET_TABLE_INFO, CREATE_DATABASE, PRODUCE_LOG,
# ... with an empty body before authentication get no answer within 3 s on
# an open connection; LIST_DATABASES, GET_METADATA, ... — no required
# fields — get 46). With these bodies every API is parsed and refused with
# 46, which is what the test compares.
# --------------------------------------------------------------------------

MINIMAL_BODIES = {
    1000: bytes.fromhex("0a001200"),  # API_VERSIONS
    1001: bytes.fromhex("0a001000"),  # CREATE_DATABASE
    1002: bytes.fromhex("0a0010001800"),  # DROP_DATABASE
    1003: bytes.fromhex(""),  # LIST_DATABASES
    1004: bytes.fromhex("0a00"),  # DATABASE_EXISTS
    1005: bytes.fromhex("0a040a00120012001800"),  # CREATE_TABLE
    1006: bytes.fromhex("0a040a0012001000"),  # DROP_TABLE
    1007: bytes.fromhex("0a040a001200"),  # GET_TABLE_INFO
    1008: bytes.fromhex("0a00"),  # LIST_TABLES
    1009: bytes.fromhex("0a040a001200"),  # LIST_PARTITION_INFOS
    1010: bytes.fromhex("0a040a001200"),  # TABLE_EXISTS
    1011: bytes.fromhex("0a040a001200"),  # GET_TABLE_SCHEMA
    1012: bytes.fromhex(""),  # GET_METADATA
    1013: bytes.fromhex(""),  # UPDATE_METADATA
    1014: bytes.fromhex("080010001800"),  # PRODUCE_LOG
    1015: bytes.fromhex("08001000"),  # FETCH_LOG
    1016: bytes.fromhex("080010001800"),  # PUT_KV
    1017: bytes.fromhex("0800"),  # LOOKUP
    1018: bytes.fromhex("0800"),  # NOTIFY_LEADER_AND_ISR
    1019: bytes.fromhex("0800"),  # STOP_REPLICA
    1020: bytes.fromhex("0800"),  # ADJUST_ISR
    1021: bytes.fromhex("080010001800"),  # LIST_OFFSETS
    1022: bytes.fromhex("0a0010001800"),  # COMMIT_KV_SNAPSHOT
    1023: bytes.fromhex("0a040a001200"),  # GET_LATEST_KV_SNAPSHOTS
    1024: bytes.fromhex("080018002000"),  # GET_KV_SNAPSHOT_METADATA
    1025: bytes.fromhex(""),  # GET_FILESYSTEM_SECURITY_TOKEN
    1026: bytes.fromhex(""),  # INIT_WRITER
    1027: bytes.fromhex("0800180022002800300038004000"),  # COMMIT_REMOTE_LOG_MANIFEST
    1028: bytes.fromhex("08001800200028003000"),  # NOTIFY_REMOTE_LOG_OFFSETS
    1029: bytes.fromhex("0800180020002800"),  # NOTIFY_KV_SNAPSHOT_OFFSET
    1030: bytes.fromhex(""),  # COMMIT_LAKE_TABLE_SNAPSHOT
    1031: bytes.fromhex("0800"),  # NOTIFY_LAKE_TABLE_OFFSET
    1032: bytes.fromhex("0a040a001200"),  # GET_LAKE_SNAPSHOT
    1033: bytes.fromhex("100020002800"),  # LIMIT_SCAN
    1034: bytes.fromhex("0800"),  # PREFIX_LOOKUP
    1035: bytes.fromhex("0a00"),  # GET_DATABASE_INFO
    1036: bytes.fromhex("0a040a00120012001800"),  # CREATE_PARTITION
    1037: bytes.fromhex("0a040a00120012001800"),  # DROP_PARTITION
    1038: bytes.fromhex("0a001200"),  # AUTHENTICATE
    1039: bytes.fromhex(""),  # CREATE_ACLS
    1040: bytes.fromhex("0a06100030003800"),  # LIST_ACLS
    1041: bytes.fromhex(""),  # DROP_ACLS
    1042: bytes.fromhex(""),  # LAKE_TIERING_HEARTBEAT
    1043: bytes.fromhex("08001000"),  # CONTROLLED_SHUTDOWN
    1044: bytes.fromhex("0a040a0012001000"),  # ALTER_TABLE
    1045: bytes.fromhex(""),  # DESCRIBE_CLUSTER_CONFIGS
    1046: bytes.fromhex(""),  # ALTER_CLUSTER_CONFIGS
    1047: bytes.fromhex("1000"),  # ADD_SERVER_TAG
    1048: bytes.fromhex("1000"),  # REMOVE_SERVER_TAG
    1049: bytes.fromhex(""),  # REBALANCE
    1050: bytes.fromhex(""),  # LIST_REBALANCE_PROGRESS
    1051: bytes.fromhex(""),  # CANCEL_REBALANCE
    1052: bytes.fromhex(""),  # PREPARE_LAKE_TABLE_SNAPSHOT
    1053: bytes.fromhex("0a00"),  # REGISTER_PRODUCER_OFFSETS
    1054: bytes.fromhex("0a00"),  # GET_PRODUCER_OFFSETS
    1055: bytes.fromhex("0a00"),  # DELETE_PRODUCER_OFFSETS
    1056: bytes.fromhex("0a001000"),  # ACQUIRE_KV_SNAPSHOT_LEASE
    1057: bytes.fromhex("0a00"),  # RELEASE_KV_SNAPSHOT_LEASE
    1058: bytes.fromhex("0a00"),  # DROP_KV_SNAPSHOT_LEASE
    1059: bytes.fromhex("0800"),  # GET_TABLE_STATS
}



def _probe_main(argv):
    """argv: probe.py's path, then its arguments (how start calls $PYTHON)."""
    import importlib.util
    import os
    import sys
    spec = importlib.util.spec_from_file_location("probe", argv[0])
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    plain_call = probe.call
    token = plain_token(os.environ.get("SASL_PROBE_USER", "admin"),
                        os.environ.get("SASL_PROBE_PASSWORD", "admin-pass"))

    def call(sock, api_key, request_id, body):
        if api_key == GET_METADATA:
            plain_call(sock, AUTHENTICATE, 1_000_000, authenticate_body("PLAIN", token))
        return plain_call(sock, api_key, request_id, body)

    probe.call = call
    sys.argv = argv
    return probe.main()


if __name__ == "__main__":
    import sys
    sys.exit(_probe_main(sys.argv[1:]))
