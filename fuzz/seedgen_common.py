"""Shared by the fuzz seed generators (fuzz/seedgen_*.py): request frames
and log record batches of every header layout, written from protocol.md
rather than from the server's own encoders, so seeds also say what a
client would send.

Builds on the interop suite's raw helpers (tests/interop/rawwire.py for
protobuf fields, logutil.py for CRC-32C and Arrow IPC messages); run with
the project's virtualenv (pyarrow, pyfluss), e.g.
    /work/main/.venv/bin/python fuzz/seedgen_server_dispatch.py
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))

from logutil import arrow_message, crc32c  # noqa: E402
from rawwire import enc_varint, f_bytes, f_varint, table_path_msg  # noqa: E402,F401

CORPUS = os.path.join(HERE, "corpus")


def frame(api_key: int, request_id: int, body: bytes, version: int = 0) -> bytes:
    """A request frame (protocol.md §1): int32 BE length of the rest, int16
    api key, int16 version, int32 request id, protobuf body."""
    rest = struct.pack(">hhi", api_key, version, request_id) + body
    return struct.pack(">i", len(rest)) + rest


# Log record batch headers (protocol.md §4.1; record_batch.h's table).
# main's layouts (what src/record decodes):
#   magic 0: 48 bytes, CRC at 21 over [25, end)
#   magic 1: magic 0 + int32 StatisticsLength at 48, then the statistics
#   magic 2: LeaderEpoch at 21, CRC at 25 over [29, end), StatisticsLength at 52
# 0.9.1's magic 1 (LogRecordBatchFormat at v0.9.1-incubating): LeaderEpoch at
# 21, CRC at 25 over [29, end), RecordCount at 48, records from 52 -- no
# statistics. The same magic byte as main's magic 1 with another layout.

def _tail(schema_id, attributes, count, writer_id, seq):
    return struct.pack("<hbiqii", schema_id, attributes, max(count - 1, 0), writer_id, seq,
                       count)


def batch(body: bytes, count: int, schema_id: int = 1, attributes: int = 1,
          writer_id: int = -1, seq: int = -1, magic: int = 0, stats: bytes = b"",
          leader_epoch: int = -1) -> bytes:
    """One whole batch of main's layouts (magic 0, 1 or 2) with a good CRC.
    body: what follows the header and statistics (change-type vector and
    Arrow message, or the row records)."""
    tail = _tail(schema_id, attributes, count, writer_id, seq)
    if magic == 0:
        assert not stats
        covered = tail + body
        total = 25 + len(covered)
        return struct.pack("<qibqI", 0, total - 12, 0, 0, crc32c(covered)) + covered
    covered = tail + struct.pack("<i", len(stats)) + stats + body
    if magic == 1:
        total = 25 + len(covered)
        return struct.pack("<qibqI", 0, total - 12, 1, 0, crc32c(covered)) + covered
    assert magic == 2
    total = 29 + len(covered)
    return struct.pack("<qibqiI", 0, total - 12, 2, 0, leader_epoch, crc32c(covered)) + covered


def batch_v1_091(body: bytes, count: int, schema_id: int = 1, attributes: int = 1,
                 writer_id: int = -1, seq: int = -1, leader_epoch: int = -1) -> bytes:
    """0.9.1's magic-1 batch: 52-byte header with LeaderEpoch, no statistics."""
    covered = _tail(schema_id, attributes, count, writer_id, seq) + body
    total = 29 + len(covered)
    return struct.pack("<qibqiI", 0, total - 12, 1, 0, leader_epoch, crc32c(covered)) + covered


def aligned_row_ints(values) -> bytes:
    """AlignedRow (protocol.md §5.8) of INT fields: the null-bit region, one
    8-byte slot per field holding the int32."""
    n = len(values)
    out = bytes(((n + 63 + 8) // 64) * 8)
    for v in values:
        out += struct.pack("<iI", v, 0)
    return out


def statistics(columns, null_counts, mins, maxs) -> bytes:
    """V1 batch statistics (protocol.md §4.8) of INT columns."""
    n = len(columns)
    out = struct.pack("<bh", 1, n)
    out += b"".join(struct.pack("<h", c) for c in columns)
    out += b"".join(struct.pack("<i", c) for c in null_counts)
    lo, hi = aligned_row_ints(mins), aligned_row_ints(maxs)
    return out + struct.pack("<i", len(lo)) + lo + struct.pack("<i", len(hi)) + hi


def row_record(row: bytes, change: int = 0) -> bytes:
    """INDEXED / COMPACTED log record (protocol.md §4.4)."""
    return struct.pack("<ib", len(row) + 1, change) + row


def indexed_row_int_string(i: int, s: bytes) -> bytes:
    """IndexedRow (protocol.md §5.5) of (INT, STRING): null bitmap, one
    variable-length slot, the INT, the string bytes."""
    return b"\x00" + struct.pack("<i", len(s)) + struct.pack("<i", i) + s


def _compacted_field(typ: str, v) -> bytes:
    if typ == "int":
        return enc_varint(v & 0xFFFFFFFF)
    if typ == "bigint":
        return enc_varint(v & 0xFFFFFFFFFFFFFFFF)
    assert typ == "string"
    b = v.encode()
    return enc_varint(len(b)) + b


def compacted_row(fields) -> bytes:
    """CompactedRow (protocol.md §5.4) of [(type, value)] with type "int",
    "bigint" or "string", value None = null: the null bitmap, then each
    non-null field (uvarint of the two's complement, no zigzag; uvarint
    length + UTF-8)."""
    bits = bytearray((len(fields) + 7) // 8)
    out = b""
    for i, (typ, v) in enumerate(fields):
        if v is None:
            bits[i >> 3] |= 1 << (i & 7)
        else:
            out += _compacted_field(typ, v)
    return bytes(bits) + out


def compacted_key(fields) -> bytes:
    """A primary key (or a prefix of it) as the compacted key encoder writes
    it (protocol.md §5.6): the fields' compacted encodings, no bitmap."""
    return b"".join(_compacted_field(typ, v) for typ, v in fields)


def kv_batch(records, schema_id: int = 1, writer_id: int = -1, seq: int = -1) -> bytes:
    """KvRecordBatch (protocol.md §5.1): records = [(key, value row or None)]."""
    body = b""
    for k, row in records:
        rest = enc_varint(len(k)) + k + (row or b"")
        body += struct.pack("<i", len(rest)) + rest
    tail = struct.pack("<hbqii", schema_id, 0, writer_id, seq, len(records)) + body
    return struct.pack("<ibI", 1 + 4 + len(tail), 0, crc32c(tail)) + tail


def write_seed(target: str, name: str, data: bytes):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    print(f"{target}/{name}: {len(data)} bytes")
