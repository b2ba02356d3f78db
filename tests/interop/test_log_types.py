"""Log tables: rows of every type pyfluss supports survive PRODUCE_LOG ->
FETCH_LOG unchanged.

Rows go in three ways -- AppendWriter.append() of dicts, write_arrow() of a
pyarrow Table (several record batches) and write_arrow_batch() -- and are
read back with a record-batch log scanner (to_arrow()).  With one bucket the
read-back order must be the write order; with several buckets the rows are
compared sorted by id.

pyfluss 1.0.0 limitation (client side, not server): append() of a dict
rejects TIME values with sub-millisecond digits, so the TIME(6) column gets
whole milliseconds through append() and microseconds only through the Arrow
paths.
Likewise append() fails client-side on a pre-1970 TIMESTAMP with
sub-millisecond digits ("nanoOfMillisecond must be in range [0, 999999],
got: -500000"), so pre-epoch values here are whole milliseconds.
"""

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from conftest import unique
from logutil import (assert_tables_equal, create_log_table, earliest_offsets,
                     latest_offsets, read_all, sort_by)

UTC = dt.timezone.utc

SCHEMA = pa.schema([
    pa.field("id", pa.int32()),
    pa.field("i8", pa.int8()),
    pa.field("i16", pa.int16()),
    pa.field("i64", pa.int64()),
    pa.field("flag", pa.bool_()),
    pa.field("f32", pa.float32()),
    pa.field("f64", pa.float64()),
    pa.field("s", pa.string()),
    pa.field("bin", pa.binary()),
    pa.field("fbin", pa.binary(4)),
    pa.field("dec", pa.decimal128(10, 2)),
    pa.field("dec38", pa.decimal128(38, 18)),
    pa.field("d", pa.date32()),
    pa.field("t32", pa.time32("ms")),
    pa.field("t64", pa.time64("us")),
    pa.field("ts_ms", pa.timestamp("ms")),
    pa.field("ts_us", pa.timestamp("us")),
    pa.field("ltz_ms", pa.timestamp("ms", tz="UTC")),
    pa.field("ltz_us", pa.timestamp("us", tz="UTC")),
    pa.field("lst", pa.list_(pa.int32())),
    pa.field("lst_s", pa.list_(pa.string())),
    pa.field("mp", pa.map_(pa.string(), pa.int64())),
    pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
    pa.field("nn", pa.int64(), nullable=False),
])


def full_row(i: int) -> dict:
    """A row with every column set; values vary with i."""
    return {
        "id": i,
        "i8": [-128, 127, 0, -1][i % 4],
        "i16": [-32768, 32767, 7, -300][i % 4],
        "i64": [-(2 ** 63), 2 ** 63 - 1, 0, 1234567890123][i % 4],
        "flag": i % 2 == 0,
        "f32": [1.5, -0.25, 3.0e38, float("inf")][i % 4],
        "f64": [-2.25, 1e-300, 6.02214076e23, float("-inf")][i % 4],
        "s": ["héllo wörld 🌍", "", "日本語テキスト", "x" * 300][i % 4] + str(i),
        "bin": [b"\x00\x01\xff", b"", bytes(range(256)), b"\x00"][i % 4],
        "fbin": [b"abcd", b"\x00\x00\x00\x00", b"\xff\xfe\xfd\xfc", b"1234"][i % 4],
        "dec": [Decimal("123.45"), Decimal("-99999999.99"), Decimal("0.00"),
                Decimal("0.01")][i % 4],
        "dec38": [Decimal("12345678901234567890.123456789012345678"),
                  Decimal("-0.000000000000000001"), Decimal("0E-18"),
                  Decimal("99999999999999999999.999999999999999999")][i % 4],
        "d": [dt.date(2024, 2, 29), dt.date(1970, 1, 1), dt.date(1, 1, 1),
              dt.date(9999, 12, 31)][i % 4],
        "t32": [dt.time(12, 34, 56, 789000), dt.time(0, 0), dt.time(23, 59, 59, 999000),
                dt.time(1, 2, 3)][i % 4],
        "t64": [dt.time(1, 2, 3, 456000), dt.time(23, 59, 59, 999000), dt.time(0, 0),
                dt.time(12, 0, 0, 1000)][i % 4],
        "ts_ms": [dt.datetime(2024, 1, 2, 3, 4, 5, 678000), dt.datetime(1970, 1, 1),
                  dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
                  dt.datetime(2262, 4, 11)][i % 4],
        "ts_us": [dt.datetime(2024, 1, 2, 3, 4, 5, 678901), dt.datetime(1970, 1, 1, 0, 0, 0, 1),
                  dt.datetime(1900, 6, 15, 12, 0, 0, 250000), dt.datetime(2100, 1, 1)][i % 4],
        "ltz_ms": [dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
                   dt.datetime(1970, 1, 1, tzinfo=UTC),
                   dt.datetime(2000, 2, 29, 23, 59, 59, 1000, tzinfo=UTC),
                   dt.datetime(1960, 5, 5, tzinfo=UTC)][i % 4],
        "ltz_us": [dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
                   dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
                   dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC),
                   dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)][i % 4],
        "lst": [[1, None, 3], [], [2 ** 31 - 1, -(2 ** 31)], [i]][i % 4],
        "lst_s": [["a", "", None, "ü"], [], [None], ["x" * 50] * 3][i % 4],
        "mp": [[("a", 1), ("b", None)], [], [("", -1)], [("k%d" % j, j) for j in range(5)]][i % 4],
        "st": [{"a": 7, "b": "x"}, {"a": None, "b": None}, {"a": -1, "b": ""},
               {"a": i, "b": "é"}][i % 4],
        "nn": i * 1000,
    }


def null_row(i: int) -> dict:
    """Only id and the NOT NULL column set; everything else null."""
    row = {name: None for name in SCHEMA.names}
    row.update(id=i, nn=-i)
    return row


def arrow_table(rows) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def with_micro_times(rows):
    """Rows for the Arrow paths: TIME(6) may carry microseconds there."""
    out = []
    for r in rows:
        r = dict(r)
        if r["t64"] is not None:
            r["t64"] = r["t64"].replace(microsecond=(r["id"] * 7919) % 1_000_000)
        out.append(r)
    return out


def for_append(row: dict) -> dict:
    """append() takes maps as dicts too; use one for some rows."""
    row = dict(row)
    if row["mp"] is not None and row["id"] % 2:
        row["mp"] = dict(row["mp"])
    # a nullable column may be omitted from the dict entirely
    return {k: v for k, v in row.items() if not (v is None and k in ("st", "lst"))}


async def test_all_types_one_bucket_order_preserved(conn, admin, db):
    path = await create_log_table(admin, db, "types", SCHEMA, bucket_count=1)
    table = await conn.get_table(path)
    assert table.arrow_schema.names == SCHEMA.names

    dict_rows = [full_row(i) for i in range(0, 8)] + [null_row(8), null_row(9)]
    arrow_rows = with_micro_times([full_row(i) for i in range(10, 30)] + [null_row(30)])
    batch_rows = with_micro_times([null_row(31)] + [full_row(i) for i in range(32, 40)])

    writer = table.new_append().create_writer()
    for row in dict_rows:
        writer.append(for_append(row))
    await writer.flush()
    # several record batches in one pyarrow Table
    writer.write_arrow(pa.Table.from_batches(
        arrow_table(arrow_rows).to_batches(max_chunksize=7)))
    await writer.flush()
    handle = writer.write_arrow_batch(arrow_table(batch_rows).to_batches()[0])
    await handle.wait()
    await writer.flush()

    want = arrow_table(dict_rows + arrow_rows + batch_rows)
    got = await read_all(conn, admin, path)
    assert got.num_rows == want.num_rows
    # one bucket, one writer: the log keeps the write order
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert_tables_equal(got, want)

    assert await earliest_offsets(admin, path) == {0: 0}
    assert await latest_offsets(admin, path) == {0: want.num_rows}


async def test_all_types_three_buckets(conn, admin, db):
    path = await create_log_table(admin, db, "types3", SCHEMA, bucket_count=3)
    table = await conn.get_table(path)
    rows = [full_row(i) if i % 5 else null_row(i) for i in range(60)]
    writer = table.new_append().create_writer()
    for row in rows[:30]:
        writer.append(for_append(row))
    writer.write_arrow(arrow_table(with_micro_times(rows[30:])))
    await writer.flush()

    want = arrow_table(rows[:30] + with_micro_times(rows[30:]))
    got = await read_all(conn, admin, path)
    assert_tables_equal(sort_by(got), sort_by(want))


async def test_empty_table_reads_nothing(conn, admin, db):
    path = await create_log_table(admin, db, unique("empty"), SCHEMA, bucket_count=2)
    got = await read_all(conn, admin, path)
    assert got.num_rows == 0
    assert await latest_offsets(admin, path, 2) == {0: 0, 1: 0}
    assert await earliest_offsets(admin, path, 2) == {0: 0, 1: 0}
