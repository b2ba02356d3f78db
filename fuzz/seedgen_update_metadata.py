#!/usr/bin/env python3
"""Seeds for fuzz_update_metadata: UPDATE_METADATA requests as fluss-c's
coordinator sends them (a log table, a partitioned primary-key table with
two schemas, a deleted table), protobuf-encoded by hand."""
import hashlib
import os
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vint(field, v):
    return key(field, 0) + varint(v)


def blob(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def bucket(bid, leader, replicas, epoch=0):
    packed = b"".join(varint(r) for r in replicas)
    return vint(1, bid) + vint(2, leader) + blob(3, packed) + vint(4, epoch)


def path(db, name):
    return blob(1, db) + blob(2, name)


def node(nid, port):
    return vint(1, nid) + blob(2, "127.0.0.1") + vint(3, port)


SCHEMA1 = ('{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER","nullable":false},'
           '"id":0},{"name":"dt","data_type":{"type":"STRING","nullable":false},"id":1}],'
           '"primary_key":["id","dt"],"highest_field_id":1}')
SCHEMA2 = ('{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER","nullable":false},'
           '"id":0},{"name":"dt","data_type":{"type":"STRING","nullable":false},"id":1},'
           '{"name":"v","data_type":{"type":"BIGINT"},"id":2}],'
           '"primary_key":["id","dt"],"highest_field_id":2}')


def table(tid, db, name, schema_id, table_json, buckets, schemas=()):
    body = blob(1, path(db, name)) + vint(2, tid) + vint(3, schema_id) + blob(4, table_json)
    for b in buckets:
        body += blob(5, b)
    body += vint(6, 1700000000000) + vint(7, 1700000000000)
    for sid, sj in schemas:
        body += blob(1000, vint(1, sid) + blob(2, sj))
    return body


def request(tables, partitions=()):
    body = blob(1, node(0, 9123)) + blob(2, node(0, 9124)) + blob(2, node(1, 9125))
    for t in tables:
        body += blob(3, t)
    for p in partitions:
        body += blob(4, p)
    return body + vint(5, 0)


def seeds():
    log_json = ('{"version":1,"schema":{"version":1,"columns":[{"name":"a","data_type":'
                '{"type":"INTEGER"},"id":0}],"highest_field_id":0},"partition_key":[],'
                '"bucket_key":[],"bucket_count":2,"properties":{"table.log.format":"ARROW"},'
                '"custom_properties":{}}')
    yield request([table(5, "fluss", "log", 1, log_json,
                         [bucket(0, 0, [0]), bucket(1, 1, [1])], [(1, log_json)])])
    pk_json = ('{"version":1,"schema":' + SCHEMA2 + ',"partition_key":["dt"],"bucket_key":["id"],'
               '"bucket_count":1,"properties":{"table.merge-engine":"FIRST_ROW"},'
               '"custom_properties":{}}')
    part = lambda pid, n: vint(1, 6) + blob(2, n) + vint(3, pid) + blob(4, bucket(0, 0, [0, 1], 3))
    yield request([table(6, "fluss", "pk", 2, pk_json, [], [(1, SCHEMA1), (2, SCHEMA2)])],
                  [part(11, "2024"), part(12, "2025")])
    yield request([blob(1, path("fluss", "gone")) + vint(2, (1 << 64) - 2) + vint(3, 0) +
                   blob(4, "{}") + vint(6, 0) + vint(7, 0)])
    yield request([])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "corpus", "fuzz_update_metadata")
    os.makedirs(out, exist_ok=True)
    for s in seeds():
        with open(os.path.join(out, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)


if __name__ == "__main__":
    main()
