"""Writes the data-path seeds of fuzz/corpus/fuzz_server_dispatch/
(dispatch_*.bin): request frames against the fixture tables that
fuzz_server_dispatch.c creates at setup, so PRODUCE_LOG, FETCH_LOG,
LIST_OFFSETS, INIT_WRITER, PUT_KV, LOOKUP, PREFIX_LOOKUP and LIMIT_SCAN
reach the log and kv code with requests that succeed.

Each seed is one input, self-contained (a fetch or lookup seed writes its
data first): the harness keeps state between inputs and empties the
fixture tables every few inputs. Check what they reach with
    FUZZ_VERBOSE=1 build/fuzz_server_dispatch_replay fuzz/corpus/fuzz_server_dispatch

Run: /work/main/.venv/bin/python fuzz/seedgen_server_dispatch.py
"""


import pyarrow as pa

from seedgen_common import (arrow_message, batch, batch_v1_091, compacted_key, compacted_row,
                            enc_varint, f_bytes, f_varint, frame, indexed_row_int_string,
                            kv_batch, row_record, statistics, table_path_msg, write_seed)

TARGET = "fuzz_server_dispatch"

# The fixture (keep in step with fuzz_tables in fuzz_server_dispatch.c).
DB = "fuzz_fixture"
LOG_ARROW, LOG_INDEXED, LOG_COMPACTED, PK = 0, 1, 2, 3
ARROW_SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                          pa.field("score", pa.float64()),
                          pa.field("tags", pa.list_(pa.int64()))])

DROP_DATABASE = 1002
PRODUCE_LOG, FETCH_LOG, PUT_KV, LOOKUP = 1014, 1015, 1016, 1017
LIST_OFFSETS, INIT_WRITER, LIMIT_SCAN, PREFIX_LOOKUP = 1021, 1026, 1033, 1034

OFFSET_EARLIEST, OFFSET_LATEST, OFFSET_TIMESTAMP, OFFSET_LEO = 0, 1, 2, 3
WRITER = 4242  # a writer id INIT_WRITER would hand out much later


class Frames:
    """A seed: frames with request ids counting up."""

    def __init__(self):
        self.data = b""
        self.next_id = 1

    def add(self, api_key: int, body: bytes, version: int = 0):
        self.data += frame(api_key, self.next_id, body, version)
        self.next_id += 1
        return self


# ---- request bodies (fluss_api.proto) ----

def produce(table_id, buckets, acks=-1, timeout_ms=30000) -> bytes:
    body = f_varint(1, acks) + f_varint(2, table_id) + f_varint(3, timeout_ms)
    for bucket, records in buckets.items():
        body += f_bytes(4, f_varint(2, bucket) + f_bytes(3, records))
    return body


def fetch(table_id, bucket_offsets, projection=None, max_wait_ms=0, min_bytes=1,
          follower=-1, max_bytes=16 << 20, bucket_max=1 << 20, predicate=None,
          filter_schema_id=None) -> bytes:
    tbl = f_varint(1, table_id) + f_varint(2, 1 if projection is not None else 0)
    if projection:
        tbl += f_bytes(3, b"".join(enc_varint(p) for p in projection))
    for bucket, offset in bucket_offsets.items():
        tbl += f_bytes(4, f_varint(2, bucket) + f_varint(3, offset) + f_varint(4, bucket_max))
    if predicate is not None:
        tbl += f_bytes(5, predicate)
    if filter_schema_id is not None:
        tbl += f_varint(6, filter_schema_id)
    return (f_varint(1, follower) + f_varint(2, max_bytes) + f_bytes(3, tbl)
            + f_varint(4, max_wait_ms) + f_varint(5, min_bytes))


def leaf(fn, field_id, *literals) -> bytes:
    """Fluss main's PbPredicate leaf; literals are (literal_type, field, bytes)."""
    body = f_varint(1, fn) + f_varint(2, field_id)
    for lt, field, value in literals:
        body += f_bytes(3, f_varint(1, lt) + f_varint(2, 0) + f_bytes(field, value)
                        if field in (8, 9, 13) else
                        f_varint(1, lt) + f_varint(2, 0) + f_varint(field, value))
    return f_varint(1, 0) + f_bytes(2, body)


def compound(fn, *children) -> bytes:
    return f_varint(1, 1) + f_bytes(3, f_varint(1, fn) + b"".join(f_bytes(2, c) for c in children))


def list_offsets(table_id, buckets, offset_type, timestamp=None) -> bytes:
    body = f_varint(1, -1) + f_varint(2, offset_type) + f_varint(3, table_id)
    body += f_bytes(5, b"".join(enc_varint(b) for b in buckets))
    if timestamp is not None:
        body += f_varint(6, timestamp)
    return body


def init_writer(*tables) -> bytes:
    return b"".join(f_bytes(1, table_path_msg(DB, t)) for t in tables)


def put_kv(table_id, buckets, targets=(), acks=-1, timeout_ms=30000) -> bytes:
    body = f_varint(1, acks) + f_varint(2, table_id) + f_varint(3, timeout_ms)
    if targets:
        body += f_bytes(4, b"".join(enc_varint(t) for t in targets))
    for bucket, records in buckets.items():
        body += f_bytes(5, f_varint(2, bucket) + f_bytes(3, records))
    return body


def lookup(table_id, bucket, keys, insert=False) -> bytes:
    req = f_varint(2, bucket) + b"".join(f_bytes(3, k) for k in keys)
    body = f_varint(1, table_id) + f_bytes(2, req)
    if insert:
        body += f_varint(3, 1) + f_varint(4, -1) + f_varint(5, 30000)
    return body


def prefix_lookup(table_id, bucket, prefixes) -> bytes:
    req = f_varint(2, bucket) + b"".join(f_bytes(3, k) for k in prefixes)
    return f_varint(1, table_id) + f_bytes(2, req)


def limit_scan(table_id, bucket, limit) -> bytes:
    return f_varint(2, table_id) + f_varint(4, bucket) + f_varint(5, limit)


# ---- records ----

def arrow_rows(*ids) -> pa.RecordBatch:
    return pa.record_batch([
        pa.array(list(ids), pa.int32()),
        pa.array([f"name-{i}" if i % 3 else None for i in ids], pa.string()),
        pa.array([i * 1.5 for i in ids], pa.float64()),
        pa.array([[i, -i] if i % 2 else [] for i in ids], pa.list_(pa.int64())),
    ], schema=ARROW_SCHEMA)


def arrow_batch(*ids, codec=None, writer_id=-1, seq=-1, magic=0, stats=b""):
    body = arrow_message(arrow_rows(*ids), codec)
    return batch(body, len(ids), writer_id=writer_id, seq=seq, magic=magic, stats=stats)


def rows_batch(make_row, ids, writer_id=-1, seq=-1):
    body = b"".join(row_record(make_row(i)) for i in ids)
    return batch(body, len(ids), writer_id=writer_id, seq=seq)


def indexed(i):
    return indexed_row_int_string(i, b"v%d" % i)


def compacted(i):
    return compacted_row([("int", i), ("string", "v%d" % i)])


PK_TYPES = ("int", "string", "bigint")


def pk_value(id_, name, score):
    return compacted_row(list(zip(PK_TYPES, (id_, name, score))))


def pk_key(id_, name):
    return compacted_key([("int", id_), ("string", name)])


def pk_put(*rows, writer_id=-1, seq=-1):
    """rows: (id, name, score) to upsert, or (id, name) to delete."""
    recs = [(pk_key(r[0], r[1]), pk_value(*r) if len(r) == 3 else None) for r in rows]
    return kv_batch(recs, writer_id=writer_id, seq=seq)


def pk_fill(f: Frames):
    return f.add(PUT_KV, put_kv(PK, {0: pk_put((1, "a", 10), (1, "b", 11), (2, "a", 20))}),
                 version=1)


# ---- the seeds ----

def seeds():
    out = {}

    out["produce_arrow"] = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {
        0: arrow_batch(1, 2, 3),
        1: arrow_batch(4, 5, codec="zstd") + arrow_batch(6, codec="lz4")}))

    out["produce_arrow_acks1_empty"] = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {
        0: batch(b"", 0) + arrow_batch(7)}, acks=1)).add(PRODUCE_LOG, produce(LOG_ARROW, {
            1: arrow_batch(8, 9)}, acks=0))

    # magic 1 with statistics on id, magic 2 with a leader epoch, and
    # 0.9.1's magic 1 (which main's reader takes for a statistics layout)
    stats = statistics([0], [0], [1], [3])
    out["produce_arrow_v1_v2"] = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {
        0: arrow_batch(1, 2, 3, magic=1, stats=stats),
        1: arrow_batch(4, 5, magic=2) + arrow_batch(6, magic=1)})).add(
        PRODUCE_LOG, produce(LOG_ARROW, {
            0: batch_v1_091(arrow_message(arrow_rows(1, 2)), 2)}))

    # idempotent writer: INIT_WRITER, sequences 0 and 1, 1 again (a
    # duplicate, answered with its first offset), then a gap (31)
    w = Frames().add(INIT_WRITER, init_writer("log_arrow"))
    for seq in (0, 1, 1):
        w.add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(seq, writer_id=WRITER, seq=seq)}))
    w.add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(9, writer_id=WRITER, seq=5)}))
    out["produce_idempotent"] = w

    out["produce_indexed"] = Frames().add(PRODUCE_LOG, produce(LOG_INDEXED, {
        0: rows_batch(indexed, [1, 2, 3]) + rows_batch(indexed, [4], writer_id=WRITER, seq=0)}))
    out["produce_compacted"] = Frames().add(PRODUCE_LOG, produce(LOG_COMPACTED, {
        0: rows_batch(compacted, [1, 2]) + rows_batch(compacted, [3], writer_id=WRITER, seq=0)}))

    f = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(1, 2, 3),
                                                      1: arrow_batch(4, codec="zstd")}))
    f.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0, 1: 0}))
    f.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0, 1: 0}, projection=[0, 2]))
    f.add(FETCH_LOG, fetch(LOG_ARROW, {0: 1}, projection=[1, 3]))
    # filter pushdown: statistics-carrying batches, then filters the server
    # decides (a leaf, AND/OR of leaves with a string and a null literal) and
    # ones it cannot (unknown function and field id, a stray schema id)
    g = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {
        0: arrow_batch(1, 2, 3, magic=1, stats=stats) + arrow_batch(7, 8)}))
    both = compound(0, leaf(5, 0, (3, 4, 2)), compound(1, leaf(8, 1, (8, 8, b"n")),
                                                      leaf(6, 2), leaf(0, 0, (3, 4, 9))))
    g.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0}, predicate=leaf(4, 0, (3, 4, 5)),
                           filter_schema_id=1))
    g.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0}, predicate=both, projection=[0]))
    g.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0}, predicate=leaf(99, 77, (3, 4, 1)),
                           filter_schema_id=9))
    out["fetch_filtered"] = g
    out["fetch_arrow"] = f

    # a long poll that finds less than min_bytes; an offset past the end
    f = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(1)}))
    f.add(FETCH_LOG, fetch(LOG_ARROW, {0: 0, 1: 0}, max_wait_ms=500, min_bytes=1 << 20))
    f.add(FETCH_LOG, fetch(LOG_ARROW, {0: 1 << 40}, max_wait_ms=100))
    out["fetch_long_poll"] = f

    f = Frames().add(PRODUCE_LOG, produce(LOG_INDEXED, {0: rows_batch(indexed, [1, 2])}))
    f.add(FETCH_LOG, fetch(LOG_INDEXED, {0: 0}))
    f.add(PRODUCE_LOG, produce(LOG_COMPACTED, {0: rows_batch(compacted, [1, 2])}))
    f.add(FETCH_LOG, fetch(LOG_COMPACTED, {0: 0}))
    out["fetch_rows"] = f

    f = Frames().add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(1, 2), 1: arrow_batch(3)}))
    f.add(LIST_OFFSETS, list_offsets(LOG_ARROW, [0, 1], OFFSET_EARLIEST))
    f.add(LIST_OFFSETS, list_offsets(LOG_ARROW, [0, 1], OFFSET_LATEST))
    f.add(LIST_OFFSETS, list_offsets(LOG_ARROW, [0, 1], OFFSET_TIMESTAMP, timestamp=1))
    f.add(LIST_OFFSETS, list_offsets(LOG_ARROW, [0], OFFSET_LEO))
    out["list_offsets"] = f

    out["init_writer"] = Frames().add(INIT_WRITER, init_writer("log_arrow", "pk"))

    f = pk_fill(Frames())
    f.add(PUT_KV, put_kv(PK, {0: pk_put((1, "a", 12), (2, "a"), (5, "gone"))}), version=0)
    f.add(PUT_KV, put_kv(PK, {0: pk_put((3, "c", 30), writer_id=WRITER, seq=0)}, acks=1),
          version=1)
    f.add(PUT_KV, put_kv(PK, {0: kv_batch([(pk_key(1, "b"), compacted_row(
        [("int", 1), ("string", "b"), ("bigint", None)]))])}, targets=[0, 1]), version=1)
    out["put_kv"] = f

    f = pk_fill(Frames())
    f.add(LOOKUP, lookup(PK, 0, [pk_key(1, "a"), pk_key(9, "z"), pk_key(2, "a")]), version=1)
    f.add(LOOKUP, lookup(PK, 0, [pk_key(1, "b")]), version=0)
    f.add(LOOKUP, lookup(PK, 0, [pk_key(7, "new")], insert=True), version=1)
    out["lookup"] = f

    f = pk_fill(Frames())
    f.add(PREFIX_LOOKUP, prefix_lookup(PK, 0, [compacted_key([("int", 1)]),
                                              compacted_key([("int", 8)])]), version=1)
    f.add(PREFIX_LOOKUP, prefix_lookup(PK, 0, [compacted_key([("int", 2)])]), version=0)
    out["prefix_lookup"] = f

    f = pk_fill(Frames())
    f.add(LIMIT_SCAN, limit_scan(PK, 0, 10))
    f.add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(1, 2) + arrow_batch(3)}))
    f.add(LIMIT_SCAN, limit_scan(LOG_ARROW, 0, 2))
    out["limit_scan"] = f

    # an input that drops the fixture: its own later frames find no table,
    # the next input a rebuilt server with the same ids
    f = Frames().add(DROP_DATABASE, f_bytes(1, DB) + f_varint(2, 0) + f_varint(3, 1))
    f.add(PRODUCE_LOG, produce(LOG_ARROW, {0: arrow_batch(1)}))
    out["drop_fixture"] = f

    # the changelog PUT_KV writes, read back whole and projected
    f = pk_fill(Frames())
    f.add(FETCH_LOG, fetch(PK, {0: 0}))
    f.add(FETCH_LOG, fetch(PK, {0: 0}, projection=[0, 2]))
    out["fetch_pk_changelog"] = f
    return out


def main():
    for name, f in seeds().items():
        write_seed(TARGET, f"dispatch_{name}.bin", f.data)


if __name__ == "__main__":
    main()
