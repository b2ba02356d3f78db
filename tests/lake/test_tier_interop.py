"""The tiering writer (src/tier) against pyarrow.parquet.

lake_tier_sample builds Fluss log batches of every primitive type in one
log format (ARROW, INDEXED, COMPACTED), tiers them into an Iceberg data
file and prints the file's manifest description. pyarrow reads the file:
values (times and timestamps as microseconds, TIMESTAMP_LTZ with tz UTC),
the system columns, each column's field id (PARQUET:field_id), required
or optional, the chunk statistics; and the description's metrics agree
with what pyarrow reads: counts, column sizes, split offsets, exact file
size, and bounds that decode (Iceberg Appendix D) to the column's min and
max (strings truncated to 16 characters, the upper one incremented), and
equal what pyiceberg computes from the file's footer.

Environment: LAKE_TIER_SAMPLE = path of the helper (default build/).
"""

import json
import math
import os
import struct
import subprocess
import decimal
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.environ.get("LAKE_TIER_SAMPLE", os.path.join(ROOT, "build", "lake_tier_sample"))
ROWS = 600
BATCH_ROWS = 200
BASE_OFFSET = 10000
BASE_TS = 1700000000000
BUCKET = 5
WORDS = ["apple", "été", ""]

NAMES = ["b", "ti", "si", "i", "l", "f", "d", "day", "t", "ts", "ltz", "dec9", "dec18", "dec38",
         "c", "s", "bin", "by"]
REQUIRED = {"i", "d", "dec18", "__bucket", "__offset", "__timestamp"}
TYPES = {
    "b": pa.bool_(), "ti": pa.int32(), "si": pa.int32(), "i": pa.int32(), "l": pa.int64(),
    "f": pa.float32(), "d": pa.float64(), "day": pa.date32(), "t": pa.time64("us"),
    "ts": pa.timestamp("us"), "ltz": pa.timestamp("us", tz="UTC"),
    "dec9": pa.decimal128(9, 2), "dec18": pa.decimal128(18, 4),
    "dec38": pa.decimal128(38, 10), "c": pa.string(),
    "s": pa.string(), "bin": pa.binary(), "by": pa.binary(),
    "__bucket": pa.int32(), "__offset": pa.int64(), "__timestamp": pa.timestamp("us", tz="UTC"),
}
FLOATS = {"f", "d"}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def nulls(r):
    return {"b": r % 5 == 1, "si": r % 7 == 2, "l": r % 7 == 0, "f": r % 6 == 2,
            "day": r % 8 == 5, "t": r % 11 == 7, "dec9": r % 12 == 1, "dec38": r % 10 == 3,
            "s": r % 4 == 2,
            "by": r % 9 == 4}


def sample_value(r, name):
    """tier_sample.c's sample_row, in the units the lake file holds
    (times and timestamps as integer microseconds, decimals unscaled)."""
    if nulls(r).get(name):
        return None
    if name == "b":
        return r % 3 == 0
    if name == "ti":
        return r % 256 - 128
    if name == "si":
        return r % 600 * 100 - 30000
    if name == "i":
        return r * 7 - 1000
    if name == "l":
        return r * 1000000007 - (1 << 40)
    if name == "f":
        return math.nan if r % 13 == 5 else f32(r / 4.0 - 10.0)
    if name == "d":
        return r / 8.0 - 3.5
    if name == "day":
        return r - 300
    if name == "t":
        return (r * 3600007) % 86400000 * 1000
    if name == "ts":  # TIMESTAMP(9): floor of the nanoseconds
        return ((-500000 + r * 1337) * 1000000 + (r * 123457) % 1000000) // 1000
    if name == "ltz":
        return (-1 - r * 99991) * 1000 + r % 1000
    if name == "dec9":
        return r * 13 - 500
    if name == "dec18":
        return r * 123456789 - 1000000000000
    if name == "dec38":  # FIXED_LEN_BYTE_ARRAY(16)
        return (-r if r % 2 else r) * 10**18 * 1000000007 + r
    if name == "c":
        return "c%05d" % (r % 100000)
    if name == "s":
        return "😀-long-string-value-%d" % r if r % 9 == 0 else "%s-%d" % (WORDS[r % 3], r)
    if name == "bin":
        return bytes([r % 256, 0xFF, (r * 3) % 256])
    if name == "by":
        return bytes([r % 256, 0xFF, 0])[: r % 4]
    if name == "__bucket":
        return BUCKET
    if name == "__offset":
        return BASE_OFFSET + r
    if name == "__timestamp":
        return (BASE_TS + 1000 * (r // BATCH_ROWS)) * 1000
    raise KeyError(name)


def as_units(col, name):
    """A pyarrow column as Python values in the sample's units."""
    t = col.type
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_date(t):
        return pc.cast(col, pa.int64() if not pa.types.is_date(t) else pa.int32()).to_pylist()
    if pa.types.is_decimal(t):
        exact = decimal.Context(prec=80)  # the default 28 digits would round DECIMAL(38)
        return [None if v is None else int(v.scaleb(t.scale, exact)) for v in col.to_pylist()]
    return col.to_pylist()


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


@pytest.fixture(scope="module", params=["ARROW", "INDEXED", "COMPACTED"])
def tiered(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("tier-" + request.param.lower())
    out = subprocess.run([SAMPLE, str(d), request.param, str(ROWS)], check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out)
    assert len(result["files"]) == 1
    f = result["files"][0]
    return result, f, pq.ParquetFile(f["path"]), pq.read_table(f["path"])


def test_result(tiered):
    result, f, _, _ = tiered
    assert result["bucket"] == BUCKET
    assert result["record_count"] == ROWS
    assert result["first_offset"] == BASE_OFFSET
    assert result["next_offset"] == BASE_OFFSET + ROWS
    assert f["file_path"] == "file://" + f["path"]
    assert os.path.isabs(f["path"])
    name = os.path.basename(f["path"])
    assert name.startswith("data-%d-0-" % BUCKET) and name.endswith(".parquet")
    assert f["file_format"] == "PARQUET"
    assert f["record_count"] == ROWS
    assert f["file_size_in_bytes"] == os.path.getsize(f["path"])
    assert (f["first_offset"], f["last_offset"]) == (BASE_OFFSET, BASE_OFFSET + ROWS - 1)
    assert f["sort_order_id"] == 1


def test_schema(tiered):
    _, _, _, table = tiered
    names = NAMES + ["__bucket", "__offset", "__timestamp"]
    assert table.schema.names == names
    for i, name in enumerate(names):
        field = table.schema.field(name)
        assert field.type == TYPES[name], name
        assert field.metadata[b"PARQUET:field_id"] == str(i + 1).encode(), name
        assert field.nullable == (name not in REQUIRED), name


def test_values(tiered):
    _, _, _, table = tiered
    assert table.num_rows == ROWS
    for name in table.schema.names:
        got = as_units(table.column(name), name)
        for r in range(ROWS):
            want = sample_value(r, name)
            assert same(got[r], want), (name, r, got[r], want)


def test_parquet_statistics(tiered):
    _, _, pf, _ = tiered
    md = pf.metadata
    assert md.num_row_groups >= 2
    for k, name in enumerate(pf.schema_arrow.names):
        for g in range(md.num_row_groups):
            stats = md.row_group(g).column(k).statistics
            assert stats is not None and stats.has_null_count
        total_nulls = sum(md.row_group(g).column(k).statistics.null_count
                          for g in range(md.num_row_groups))
        assert total_nulls == sum(1 for r in range(ROWS) if sample_value(r, name) is None), name


def decode_bound(name, hexbytes):
    """An Iceberg Appendix D single value, in the sample's units."""
    b = bytes.fromhex(hexbytes)
    t = TYPES[name]
    if pa.types.is_boolean(t):
        assert len(b) == 1
        return b[0] != 0
    if pa.types.is_decimal(t):
        return int.from_bytes(b, "big", signed=True)
    if pa.types.is_float32(t):
        return struct.unpack("<f", b)[0]
    if pa.types.is_float64(t):
        return struct.unpack("<d", b)[0]
    if pa.types.is_string(t):
        return b.decode("utf-8")
    if pa.types.is_binary(t):
        return b
    if len(b) == 4:
        return struct.unpack("<i", b)[0]
    assert len(b) == 8
    return struct.unpack("<q", b)[0]


def minimal_be(v):
    n = 1
    while not -(1 << (8 * n - 1)) <= v < (1 << (8 * n - 1)):
        n += 1
    return n


def test_metrics(tiered):
    _, f, pf, table = tiered
    md = pf.metadata
    cols = {c["field_id"]: c for c in f["columns"]}
    assert [c["field_id"] for c in f["columns"]] == sorted(cols)
    assert f["split_offsets"] == [
        min(x for x in (md.row_group(g).column(0).dictionary_page_offset,
                        md.row_group(g).column(0).data_page_offset) if x is not None)
        for g in range(md.num_row_groups)]
    for k, name in enumerate(table.schema.names):
        c = cols[k + 1]
        values = as_units(table.column(name), name)
        present = [v for v in values if v is not None]
        assert c["value_count"] == ROWS, name
        assert c["null_count"] == ROWS - len(present), name
        assert c["column_size"] == sum(md.row_group(g).column(k).total_compressed_size
                                       for g in range(md.num_row_groups)), name
        if name in FLOATS:
            nans = [v for v in present if math.isnan(v)]
            assert c["nan_count"] == len(nans), name
            present = [v for v in present if not math.isnan(v)]
        else:
            assert c["nan_count"] is None, name
        lo, hi = decode_bound(name, c["lower"]), decode_bound(name, c["upper"])
        mn, mx = min(present), max(present)
        if pa.types.is_string(TYPES[name]):
            assert lo == mn[:16], name
            assert hi == (mx if len(mx) <= 16 else mx[:15] + chr(ord(mx[15]) + 1)), name
            assert name != "s" or len(mx) > 16  # the sample's greatest string is cut
        elif pa.types.is_binary(TYPES[name]):
            assert (lo, hi) == (mn, mx), name
        else:
            assert lo == mn and hi == mx, (name, lo, mn, hi, mx)
        if pa.types.is_decimal(TYPES[name]):
            assert len(bytes.fromhex(c["lower"])) == minimal_be(mn)
            assert len(bytes.fromhex(c["upper"])) == minimal_be(mx)


def test_pyarrow_reads_bounds_order(tiered):
    """Bounds bracket every value pyarrow reads, by Iceberg's comparison
    (strings by UTF-8 bytes)."""
    _, f, _, table = tiered
    cols = {c["field_id"]: c for c in f["columns"]}
    for k, name in enumerate(table.schema.names):
        lo = decode_bound(name, cols[k + 1]["lower"])
        hi = decode_bound(name, cols[k + 1]["upper"])
        key = (lambda v: v.encode()) if isinstance(lo, str) else (lambda v: v)
        for v in as_units(table.column(name), name):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            assert key(lo) <= key(v) <= key(hi), (name, v)


def test_pyiceberg_metrics_agree(tiered):
    """pyiceberg computes a data file's metrics from the Parquet footer
    (its default truncate(16) mode): the same bounds, counts, column
    sizes and split offsets as ours. (It leaves NaN counts out: it reads
    them from writers, not footers.)"""
    from pyiceberg.io.pyarrow import (compute_statistics_plan,
                                      data_file_statistics_from_parquet_metadata,
                                      parquet_path_to_id_mapping, pyarrow_to_schema)
    _, f, pf, _ = tiered
    schema = pyarrow_to_schema(pf.schema_arrow)
    theirs = data_file_statistics_from_parquet_metadata(
        pf.metadata, compute_statistics_plan(schema, {}),
        parquet_path_to_id_mapping(schema)).to_serialized_dict()
    assert theirs["record_count"] == f["record_count"]
    assert theirs["split_offsets"] == f["split_offsets"]
    for c in f["columns"]:
        fid = c["field_id"]
        assert theirs["column_sizes"][fid] == c["column_size"], fid
        assert theirs["value_counts"][fid] == c["value_count"], fid
        assert theirs["null_value_counts"][fid] == c["null_count"], fid
        assert theirs["lower_bounds"][fid].hex() == c["lower"], fid
        assert theirs["upper_bounds"][fid].hex() == c["upper"], fid
