"""Arrow log compression (table.log.arrow.compression.type = NONE, LZ4_FRAME,
ZSTD, and ZSTD level 9): pyfluss compresses the Arrow buffers itself, the
server stores the batches verbatim; rows read back equal what was written.

Besides the pyfluss read-back, the stored batches are fetched with a raw
FETCH_LOG and decoded with pyarrow: CRCs still valid, offsets dense, commit
timestamps set, and compressed batches clearly smaller than uncompressed
ones for repetitive data.

pyfluss 1.0.0 only writes ZSTD at the default level 3; with
table.log.arrow.compression.zstd.level = 9 its writer fails client-side
("Rust client currently only implements default ZSTD compression level 3").
So the level-9 table is written with raw PRODUCE_LOG batches compressed by
pyarrow (ZSTD level 9, and LZ4_FRAME / other levels for good measure) and
read back with pyfluss."""

import pyarrow as pa
import pytest

import fluss
from conftest import unique
from logutil import (V0_HEADER, assert_tables_equal, build_batch, create_log_table,
                     fetch_log, latest_offsets, parse_batches, produce_log,
                     raw_tablet, read_all, records_of)

SCHEMA = pa.schema([
    pa.field("id", pa.int64()),
    pa.field("text", pa.string()),
    pa.field("n", pa.int32()),
    pa.field("blob", pa.binary()),
    pa.field("tags", pa.list_(pa.string())),
])

ROWS = 1500
CASES = {
    "none": {"table.log.arrow.compression.type": "NONE"},
    "lz4_frame": {"table.log.arrow.compression.type": "LZ4_FRAME"},
    "zstd": {"table.log.arrow.compression.type": "ZSTD"},
    "default": {},
}
ZSTD_9 = {"table.log.arrow.compression.type": "ZSTD",
          "table.log.arrow.compression.zstd.level": "9"}


def data() -> pa.Table:
    rows = [{"id": i,
             "text": ("the quick brown fox jumps over the lazy dog " * (1 + i % 4)) + str(i),
             "n": None if i % 11 == 0 else i % 97,
             "blob": bytes([i % 256]) * (i % 50),
             "tags": ["alpha", "beta", None][: i % 4]} for i in range(ROWS)]
    # one value bigger than an LZ4 frame block (64 KiB)
    rows[ROWS // 2]["text"] = "".join(chr(0x41 + (k * 7) % 26) for k in range(70_000))
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def decode_stored(records: bytes, schema: pa.Schema) -> tuple:
    """-> (pa.Table of all stored rows, total stored bytes, batch headers)."""
    batches = parse_batches(records)
    decoded = []
    expect = 0
    for b in batches:
        assert b["crc_ok"], f"stored batch CRC no longer matches: {b['base_offset']}"
        assert b["base_offset"] == expect, (b["base_offset"], expect)
        assert b["attributes"] & 1, "log-table batch is not append-only"
        assert b["commit_ts"] > 0
        expect = b["base_offset"] + b["last_offset_delta"] + 1
        msg = pa.ipc.read_message(pa.py_buffer(b["raw"][V0_HEADER:]))
        rb = pa.ipc.read_record_batch(msg, schema)
        assert rb.num_rows == b["record_count"]
        decoded.append(rb)
    return pa.Table.from_batches(decoded, schema=schema), len(records), batches


STORED_SIZES = {}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_compression_round_trip(conn, admin, db, case):
    path = await create_log_table(admin, db, unique(case), SCHEMA,
                                  properties=CASES[case])
    info = await admin.get_table_info(path)
    for k, v in CASES[case].items():
        assert info.get_properties().get(k) == v
    table = await conn.get_table(path)
    want = data()
    writer = table.new_append().create_writer()
    writer.write_arrow(want)
    await writer.flush()

    got = await read_all(conn, admin, path)
    assert_tables_equal(got, want)  # one bucket: write order kept
    assert await latest_offsets(admin, path) == {0: ROWS}

    rc = await raw_tablet(admin)
    try:
        records, total = b"", 0
        offset = 0
        while offset < ROWS:  # the server may answer in pieces
            _, fetched = fetch_log(rc, info.table_id, {0: offset},
                                   bucket_max_bytes=16 << 20)
            chunk = records_of(fetched)
            hdrs = parse_batches(chunk)
            assert hdrs, f"no batch at offset {offset}"
            records += b"".join(h["raw"] for h in hdrs if h["base_offset"] >= offset)
            offset = hdrs[-1]["base_offset"] + hdrs[-1]["last_offset_delta"] + 1
    finally:
        rc.close()
    stored, size, _ = decode_stored(records, table.arrow_schema)
    assert_tables_equal(stored, want)
    STORED_SIZES[case] = size
    if case != "none" and "none" in STORED_SIZES:
        assert size * 2 < STORED_SIZES["none"], \
            f"{case}: {size} bytes stored vs {STORED_SIZES['none']} uncompressed"


async def test_zstd_level_9_raw_batches(conn, admin, db):
    path = await create_log_table(admin, db, "zstd9", SCHEMA, properties=ZSTD_9)
    info = await admin.get_table_info(path)
    assert info.get_properties()["table.log.arrow.compression.zstd.level"] == "9"
    table = await conn.get_table(path)
    want = data()

    # the pyfluss writer refuses level 9 before anything is sent
    writer = table.new_append().create_writer()
    with pytest.raises(fluss.FlussError, match="compression level"):
        writer.write_arrow(want.slice(0, 10))

    pieces = [(0, 500, "zstd", 9), (500, 300, "lz4", None), (800, 300, None, None),
              (1100, 200, "zstd", 1), (1300, 200, "zstd", 19)]
    rc = await raw_tablet(admin)
    try:
        for start, n, codec, level in pieces:
            rb = pa.RecordBatch.from_pylist(want.slice(start, n).to_pylist(),
                                            schema=table.arrow_schema)
            _, resp = produce_log(rc, info.table_id, {0: build_batch(
                rb, info.schema_id, codec=codec, level=level)})
            assert resp[0]["error_code"] == 0, resp
            assert resp[0]["base_offset"] == start, resp
    finally:
        rc.close()
    assert await latest_offsets(admin, path) == {0: ROWS}
    got = await read_all(conn, admin, path)
    assert_tables_equal(got, want)
