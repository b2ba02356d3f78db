#!/usr/bin/env python3
"""Generates the Arrow IPC fixtures of tests/unit/test_arrow_*.c with pyarrow.

Each fixture is ONE encapsulated RecordBatch message (continuation marker,
metadata length, Message flatbuffer, body) with no Schema message, as it sits
in the body of a Fluss ARROW log batch (protocol.md section 4.3):

  all_types_<codec>.arrow        5 rows of every Fluss->Arrow type, with nulls
                                 and empty strings/lists/maps
  all_types_empty_<codec>.arrow  the same schema, zero rows
  all_types_<codec>_p<k>.arrow   pyarrow's own message of batch.select(P[k])
                                 (the expected projection)

for codec in none, lz4 (LZ4_FRAME), zstd. Run from the repository root:
    .venv/bin/python tests/unit/data/arrow/make_fixtures.py
check_projection.py imports SCHEMA and PROJECTIONS from here; the C test
mirrors them (FLUSS SQL types in the same order).
"""
import datetime
import decimal
import os
import sys

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, pyarrow type name as check_projection.py spells it, Fluss SQL type)
SCHEMA = [
    ("i8", "int8", "TINYINT"),
    ("i16", "int16", "SMALLINT"),
    ("i32", "int32", "INT"),
    ("i64", "int64", "BIGINT"),
    ("b", "bool", "BOOLEAN"),
    ("f32", "float32", "FLOAT"),
    ("f64", "float64", "DOUBLE"),
    ("s", "utf8", "STRING"),
    ("bin", "binary", "BYTES"),
    ("fbin", "fixed_size_binary[4]", "BINARY(4)"),
    ("dec", "decimal128(10,2)", "DECIMAL(10, 2)"),
    ("d", "date32", "DATE"),
    ("t32", "time32[ms]", "TIME(3)"),
    ("t64", "time64[us]", "TIME(6)"),
    ("ts_s", "timestamp[s]", "TIMESTAMP(0)"),
    ("ts_ms", "timestamp[ms]", "TIMESTAMP(3)"),
    ("ts_us", "timestamp[us]", "TIMESTAMP_LTZ(6)"),
    ("ts_ns", "timestamp[ns]", "TIMESTAMP(9)"),
    ("l", "list<utf8>", "ARRAY<STRING>"),
    ("m", "map<utf8,int32>", "MAP<STRING NOT NULL, INT>"),
    ("st", "struct<a:int32,b:utf8>", "ROW<a INT, b STRING>"),
]

# Projections checked by the C test (strictly ascending positions).
PROJECTIONS = [
    [0],
    [7],
    [1, 4, 8],
    [18, 19, 20],
    [2, 9, 10, 11, 12, 13],
    [3, 5, 6, 14, 15, 16, 17, 19],
    [20],
    list(range(len(SCHEMA))),
]

CODECS = {"none": None, "lz4": "lz4", "zstd": "zstd"}

TYPES = {
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "bool": pa.bool_(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "utf8": pa.utf8(),
    "binary": pa.binary(),
    "fixed_size_binary[4]": pa.binary(4),
    "decimal128(10,2)": pa.decimal128(10, 2),
    "date32": pa.date32(),
    "time32[ms]": pa.time32("ms"),
    "time64[us]": pa.time64("us"),
    "timestamp[s]": pa.timestamp("s"),
    "timestamp[ms]": pa.timestamp("ms"),
    "timestamp[us]": pa.timestamp("us"),
    "timestamp[ns]": pa.timestamp("ns"),
    "list<utf8>": pa.list_(pa.utf8()),
    "map<utf8,int32>": pa.map_(pa.utf8(), pa.int32()),
    "struct<a:int32,b:utf8>": pa.struct([("a", pa.int32()), ("b", pa.utf8())]),
}


def arrow_type(name):
    return TYPES[name]


def schema_of(fields):
    """fields: [(name, type name)] -> pa.schema"""
    return pa.schema([pa.field(n, arrow_type(t)) for n, t in fields])


def all_types_schema():
    return schema_of([(n, t) for n, t, _ in SCHEMA])


def all_types_batch():
    ts = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)
    cols = {
        "i8": [1, None, -128, 127, 0],
        "i16": [None, 2, -32768, 32767, 0],
        "i32": [3, -3, None, 2**31 - 1, -(2**31)],
        "i64": [2**62, None, -1, 0, 42],
        "b": [True, False, None, True, False],
        "f32": [1.5, None, -0.0, float("inf"), 3.25],
        "f64": [2.5, -1e300, None, 0.0, 1e-300],
        "s": ["hello", "", None, "h\u00e9llo w\u00f6rld", "x" * 40],
        "bin": [b"\x00\x01", b"", None, b"\xff" * 9, b"abc"],
        "fbin": [b"abcd", None, b"\x00\x00\x00\x00", b"wxyz", b"1234"],
        "dec": [decimal.Decimal("123.45"), None, decimal.Decimal("-0.01"),
                decimal.Decimal("99999999.99"), decimal.Decimal("0.00")],
        "d": [datetime.date(2024, 1, 1), None, datetime.date(1970, 1, 1),
              datetime.date(1, 1, 1), datetime.date(9999, 12, 31)],
        "t32": [datetime.time(1, 2, 3, 4000), None, datetime.time(0, 0),
                datetime.time(23, 59, 59, 999000), datetime.time(12, 0)],
        "t64": [datetime.time(1, 2, 3, 4), datetime.time(0, 0), None,
                datetime.time(23, 59, 59, 999999), datetime.time(12, 0)],
        "ts_s": [ts.replace(microsecond=0), None, datetime.datetime(1970, 1, 1),
                 datetime.datetime(1969, 12, 31, 23, 59, 59), ts.replace(microsecond=0)],
        "ts_ms": [ts.replace(microsecond=123000), None, datetime.datetime(1970, 1, 1),
                  datetime.datetime(2038, 1, 19, 3, 14, 8), ts.replace(microsecond=1000)],
        "ts_us": [ts, None, datetime.datetime(1970, 1, 1), ts, ts],
        "ts_ns": [1_700_000_000_123_456_789, None, 0, -1, 42],
        "l": [["a", "bc"], [], None, ["", None, "z"], ["only"]],
        "m": [[("k1", 1), ("k2", None)], [], None, [("", 0)], [("x", -5)]],
        "st": [{"a": 1, "b": "one"}, None, {"a": None, "b": ""}, {"a": -7, "b": None},
               {"a": 0, "b": "zero"}],
    }
    schema = all_types_schema()
    arrays = [pa.array(cols[f.name], type=f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def record_batch_message(batch, codec):
    """The encapsulated RecordBatch message alone (schema message stripped)."""
    opts = pa.ipc.IpcWriteOptions(compression=codec)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=opts) as w:
        w.write_batch(batch)
    reader = pa.ipc.MessageReader.open_stream(sink.getvalue())
    msgs = list(reader)
    assert msgs[0].type == "schema" and msgs[1].type == "record batch", msgs
    return msgs[1].serialize().to_pybytes()


def main():
    batch = all_types_batch()
    empty = batch.slice(0, 0)
    written = []
    for cname, codec in CODECS.items():
        outs = {
            f"all_types_{cname}.arrow": record_batch_message(batch, codec),
            f"all_types_empty_{cname}.arrow": record_batch_message(
                pa.RecordBatch.from_arrays(
                    [pa.array([], type=f.type) for f in batch.schema], schema=batch.schema),
                codec),
        }
        for k, cols in enumerate(PROJECTIONS):
            outs[f"all_types_{cname}_p{k}.arrow"] = record_batch_message(batch.select(cols), codec)
        for name, data in outs.items():
            with open(os.path.join(HERE, name), "wb") as f:
                f.write(data)
            written.append((name, len(data)))
    assert empty.num_rows == 0
    for name, n in written:
        print(f"{name}: {n} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
