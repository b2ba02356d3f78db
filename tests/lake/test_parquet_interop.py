"""Our Parquet writer and reader (src/lake) against pyarrow.parquet.

Ours -> pyarrow: lake_parquet_sample writes its sample file (every type
and logical type, nulls, dictionary and PLAIN chunks, several pages and
row groups) with ZSTD, SNAPPY, GZIP and without compression; pyarrow reads it: values,
types and logical types, each column's field id (PARQUET:field_id),
encodings, and chunk statistics as the sample's formulas give them.

pyarrow -> ours: pyarrow writes the supported types with and without
dictionaries, ZSTD, SNAPPY, GZIP or none, v1 data pages, decimals in
FIXED_LEN_BYTE_ARRAY; our reader (the helper's
`read` mode) gives back equal values.

Environment: LAKE_SAMPLE = path of the helper (default build/).
"""

import decimal
import json
import math
import os
import subprocess
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.environ.get("LAKE_SAMPLE", os.path.join(ROOT, "build", "lake_parquet_sample"))
ROWS = 2500
WORDS = ["apple", "été", ""]


def f32(x):
    import struct
    return struct.unpack("<f", struct.pack("<f", x))[0]


def sample_rows():
    """The formulas of parquet_sample.c's sample_row, per column."""
    cols = {k: [] for k in ["b", "i", "l", "f", "d", "s", "w", "bin", "day", "ts", "tsl", "t",
                            "dec32", "dec64"]}
    for r in range(ROWS):
        cols["b"].append(None if r % 5 == 1 else r % 3 == 0)
        cols["i"].append(r * 7 - 1000)
        cols["l"].append(None if r % 7 == 0 else r * 1000000007 - (1 << 40))
        cols["f"].append(None if r % 6 == 2 else (math.nan if r % 13 == 5 else f32(r / 4.0 - 10.0)))
        cols["d"].append(r / 8.0 - 3.5)
        cols["s"].append(None if r % 4 == 2 else WORDS[r % 3])
        cols["w"].append("row-%d" % r)
        cols["bin"].append(None if r % 9 == 4 else bytes([r % 256, 0xFF, 0])[: r % 4])
        cols["day"].append(None if r % 8 == 5 else date(1970, 1, 1) + timedelta(days=19000 + r % 10))
        us = 1700000000000000 + r * 1000
        cols["ts"].append(None if r % 10 == 3 else
                          datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=us))
        cols["tsl"].append(datetime(1970, 1, 1) + timedelta(microseconds=-86400000000 + r * 999))
        tus = (r * 1000003) % 86400000000
        cols["t"].append(None if r % 11 == 7 else
                         (datetime(1970, 1, 1) + timedelta(microseconds=tus)).time())
        cols["dec32"].append(None if r % 12 == 1 else Decimal(r * 13 - 500).scaleb(-2))
        cols["dec64"].append(Decimal(r * 123456789 - 1000000000000).scaleb(-4))
    return cols


TYPES = {
    "b": pa.bool_(), "i": pa.int32(), "l": pa.int64(), "f": pa.float32(), "d": pa.float64(),
    "s": pa.string(), "w": pa.string(), "bin": pa.binary(), "day": pa.date32(),
    "ts": pa.timestamp("us", tz="UTC"), "tsl": pa.timestamp("us"), "t": pa.time64("us"),
    "dec32": pa.decimal128(9, 2), "dec64": pa.decimal128(18, 4),
}
REQUIRED = {"i", "d", "w", "tsl", "dec64"}


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@pytest.fixture(scope="module", params=["zstd", "snappy", "gzip", "none"])
def ours(request, tmp_path_factory):
    assert os.path.exists(SAMPLE), "build the helper first (cmake --build build)"
    path = str(tmp_path_factory.mktemp("lake") / ("sample-%s.parquet" % request.param))
    subprocess.run([SAMPLE, "write", path, request.param], check=True, timeout=60)
    return path, request.param


def test_values_types_field_ids(ours):
    path, codec = ours
    table = pq.read_table(path)
    want = sample_rows()
    assert table.num_rows == ROWS
    for fid, name in enumerate(want, start=1):
        field = table.schema.field(name)
        assert field.type == TYPES[name], name
        assert field.nullable == (name not in REQUIRED), name
        assert field.metadata[b"PARQUET:field_id"] == str(fid).encode(), name
        got = table.column(name).to_pylist()
        bad = [k for k in range(ROWS) if not same(got[k], want[name][k])]
        assert not bad, "%s: row %d: %r != %r" % (name, bad[0], got[bad[0]], want[name][bad[0]])


def test_metadata_and_statistics(ours):
    path, codec = ours
    f = pq.ParquetFile(path)
    md = f.metadata
    assert md.created_by.startswith("fluss-c version ")
    assert md.num_row_groups > 1
    sch = f.schema
    assert sch.column(5).logical_type.type == "STRING"
    assert sch.column(8).logical_type.type == "DATE"
    ts = json.loads(sch.column(9).logical_type.to_json())
    assert ts["isAdjustedToUTC"] is True and ts["timeUnit"] == "microseconds"
    tsl = json.loads(sch.column(10).logical_type.to_json())
    assert tsl["isAdjustedToUTC"] is False
    assert sch.column(12).logical_type.type == "DECIMAL"
    assert sch.column(12).physical_type == "INT32" and sch.column(13).physical_type == "INT64"
    want = sample_rows()
    names = list(want)
    start = 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        n = rg.num_rows
        for c, name in enumerate(names):
            col = rg.column(c)
            assert col.compression == ("UNCOMPRESSED" if codec == "none" else codec.upper())
            vals = want[name][start:start + n]
            present = [v for v in vals if v is not None]
            st = col.statistics
            assert st.null_count == len(vals) - len(present), (g, name)
            ordered = [v for v in present if not (isinstance(v, float) and math.isnan(v))]
            if name == "s" or name == "w" or name == "bin":
                key = (lambda v: v.encode() if isinstance(v, str) else v)
                ordered = sorted(ordered, key=key)
                lo, hi = ordered[0], ordered[-1]
            else:
                lo, hi = min(ordered), max(ordered)
            assert st.has_min_max, (g, name)
            assert same(st.min, lo) and same(st.max, hi), (g, name, st.min, st.max, lo, hi)
            if name == "s":
                assert "RLE_DICTIONARY" in col.encodings, col.encodings
            if name in ("w", "b"):
                assert "RLE_DICTIONARY" not in col.encodings and "PLAIN" in col.encodings
        start += n
    assert start == ROWS


def read_ours(path):
    out = subprocess.run([SAMPLE, "read", path], check=True, timeout=60, capture_output=True,
                         text=True).stdout
    return {c["name"]: c for c in map(json.loads, out.splitlines())}


def as_ours(v, typ):
    """A pyarrow value as the helper prints it."""
    if v is None:
        return None
    if pa.types.is_boolean(typ):
        return int(v)
    if pa.types.is_floating(typ):
        return "NaN" if math.isnan(v) else v
    if pa.types.is_string(typ):
        return v.encode().hex()
    if pa.types.is_binary(typ):
        return v.hex()
    if pa.types.is_date32(typ):
        return (v - date(1970, 1, 1)).days
    if pa.types.is_timestamp(typ):
        base = datetime(1970, 1, 1, tzinfo=v.tzinfo)
        return (v - base) // timedelta(microseconds=1)
    if pa.types.is_decimal(typ):
        return int(v.scaleb(typ.scale, decimal.Context(prec=80)))  # exact past 28 digits
    return v


def test_our_reader_reads_sample(ours):
    """Our reader over our own file (the same helper, the other mode)."""
    path, _ = ours
    got = read_ours(path)
    table = pq.read_table(path)
    for name in table.column_names:
        if name == "t":
            continue  # time64 -> int: checked in the pyarrow direction
        typ = table.schema.field(name).type
        want = [as_ours(v, typ) for v in table.column(name).to_pylist()]
        assert all(same(a, b) for a, b in zip(got[name]["values"], want)), name


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("compression", ["zstd", "snappy", "gzip", "none"])
def test_pyarrow_files(tmp_path, dictionary, compression):
    n = 3000
    data = {
        "b": pa.array([None if r % 7 == 3 else r % 2 == 0 for r in range(n)], pa.bool_()),
        "i": pa.array([r * 3 - 77 for r in range(n)], pa.int32()),
        "l": pa.array([None if r % 5 == 0 else (r % 17) * 10**12 for r in range(n)], pa.int64()),
        "f": pa.array([None if r % 9 == 1 else r / 2.0 for r in range(n)], pa.float32()),
        "d": pa.array([float(r % 13) - 0.5 for r in range(n)], pa.float64()),
        "s": pa.array([None if r % 4 == 0 else "str-%d" % (r % 50) for r in range(n)], pa.string()),
        "bin": pa.array([bytes([r % 256]) * (r % 5) for r in range(n)], pa.binary()),
        "day": pa.array([date(2024, 1, 1) + timedelta(days=r % 400) for r in range(n)], pa.date32()),
        "ts": pa.array([None if r % 6 == 0 else r * 1000003 for r in range(n)],
                       pa.timestamp("us", tz="UTC")),
        # FIXED_LEN_BYTE_ARRAY(16) and (9): decimals past 18 digits
        "dec38": pa.array([None if r % 8 == 2 else
                           Decimal(f"{'-' if r % 3 else ''}{r % 97}{'5' * 29}.{r:06d}")
                           for r in range(n)], pa.decimal128(38, 6)),
        "dec20": pa.array([Decimal(f"{'-' if r % 2 else ''}{r % 9 + 1}{r:019d}") for r in range(n)],
                          pa.decimal128(20, 0)),
    }
    schema = pa.schema([pa.field("i", pa.int32(), nullable=False)] +
                       [pa.field(k, v.type) for k, v in data.items() if k != "i"])
    table = pa.table(data, schema=schema)
    path = str(tmp_path / "pa.parquet")
    pq.write_table(table, path, use_dictionary=dictionary, compression=compression,
                   data_page_version="1.0", row_group_size=1100, data_page_size=2048)
    md = pq.ParquetFile(path).metadata
    assert md.num_row_groups == 3
    got = read_ours(path)
    for name in table.column_names:
        typ = table.schema.field(name).type
        want = [as_ours(v, typ) for v in table.column(name).to_pylist()]
        vals = got[name]["values"]
        assert len(vals) == n, name
        bad = [k for k in range(n) if not same(vals[k], want[k])]
        assert not bad, "%s: row %d: %r != %r" % (name, bad[0], vals[bad[0]], want[bad[0]])
