#!/usr/bin/env python3
"""Readiness probe for a Fluss server port (stdlib only).

Usage: probe.py HOST:PORT [--expect-type coordinator|tablet] [--min-tablets N]

Sends API_VERSIONS (key 1000, v0) and checks that a SUCCESS response comes
back (optionally with the given server_type).  With --min-tablets N it then
sends GET_METADATA (key 1012, v0, empty body) and checks that at least N
tablet servers are listed.  Exit 0 when ready, 1 otherwise; prints one line.
"""
import argparse
import socket
import struct
import sys

API_VERSIONS = 1000
GET_METADATA = 1012
SERVER_TYPES = {"coordinator": 1, "tablet": 2}


def uvarint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def fields(buf):
    """Yield (field_number, wire_type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = uvarint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = uvarint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = uvarint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("bad wire type %d" % wt)
        yield num, wt, v


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("connection closed")
        out += chunk
    return out


def call(sock, api_key, request_id, body):
    frame = struct.pack(">hhi", api_key, 0, request_id) + body
    sock.sendall(struct.pack(">i", len(frame)) + frame)
    (length,) = struct.unpack(">i", read_exact(sock, 4))
    payload = read_exact(sock, length)
    rtype = payload[0]
    if rtype == 2:
        raise RuntimeError("SERVER_FAILURE response")
    (rid,) = struct.unpack(">i", payload[1:5])
    if rid != request_id:
        raise RuntimeError("request id mismatch %d != %d" % (rid, request_id))
    if rtype != 0:
        code = msg = None
        for num, _, v in fields(payload[5:]):
            if num == 1:
                code = v
            elif num == 2:
                msg = v.decode("utf-8", "replace")
        raise RuntimeError("ERROR_RESPONSE code=%s msg=%s" % (code, msg))
    return payload[5:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("address")
    ap.add_argument("--expect-type", choices=sorted(SERVER_TYPES))
    ap.add_argument("--min-tablets", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=5.0)
    args = ap.parse_args()
    host, port = args.address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=args.timeout) as s:
            name = b"fluss-c-probe"
            ver = b"0"
            body = b"\x0a" + bytes([len(name)]) + name + b"\x12" + bytes([len(ver)]) + ver
            resp = call(s, API_VERSIONS, 0, body)
            n_apis = 0
            server_type = None
            for num, _, v in fields(resp):
                if num == 1:
                    n_apis += 1
                elif num == 2:
                    server_type = v
            if args.expect_type and server_type != SERVER_TYPES[args.expect_type]:
                print("not ready: server_type=%s" % server_type)
                return 1
            tablets = 0
            if args.min_tablets:
                resp = call(s, GET_METADATA, 1, b"")
                tablets = sum(1 for num, _, _ in fields(resp) if num == 2)
                if tablets < args.min_tablets:
                    print("not ready: %d tablet server(s) in metadata" % tablets)
                    return 1
            print("ready: %s server_type=%s apis=%d tablets=%d"
                  % (args.address, server_type, n_apis, tablets))
            return 0
    except (OSError, RuntimeError, ValueError, IndexError) as e:
        print("not ready: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
