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

Nested: the helper's `write-nested` file (a list of structs, a map, a list
of lists, a required struct; Iceberg's layout and field ids) read by
pyarrow and duckdb as the Python values of nested_rows, its schema (groups'
annotations, field ids, paths, levels) as written; pyarrow's nested files
(compliant LIST/MAP layout, v1 pages, small pages, every codec, dictionary
or not) read by ours as exactly the levels and values that shredding the
same Python values gives (shred: Parquet's Dremel striping).

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


# ---- nested ----

YS = ["s%d" % i for i in range(13)]


def nested_rows(n=ROWS):
    """parquet_sample.c's nested_row, as Python values."""
    rows = []
    for r in range(n):
        b = None
        if r % 7:
            b = [None if (r + k) % 5 == 0 else
                 {"x": None if (r + k) % 3 == 0 else r * 10 + k,
                  "y": None if (r + k) % 4 == 1 else YS[(r * 7 + k) % 13]}
                 for k in range(r % 4)]
        c = None if r % 6 == 1 else [("k%d" % k, None if (r + k) % 4 == 0 else r * 1000 + k)
                                     for k in range(r % 3)]
        ll = None
        if r % 9 != 2:
            ll = [None if (r + k) % 4 == 3 else
                  [None if (r + k + j) % 5 == 0 else r + 10 * k + 100 * j for j in range((r + k) % 3)]
                  for k in range(r % 3)]
        st = {"p": r * r, "q": None if r % 5 == 3 else "q%d" % (r % 7)}
        rows.append({"a": r * 3 - 100, "b": b, "c": c, "ll": ll, "st": st})
    return rows


NESTED_SCHEMA = pa.schema([
    pa.field("a", pa.int32(), nullable=False),
    pa.field("b", pa.list_(pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())]))),
    pa.field("c", pa.map_(pa.string(), pa.int64())),
    pa.field("ll", pa.list_(pa.list_(pa.int32()))),
    pa.field("st", pa.struct([pa.field("p", pa.int64(), nullable=False),
                              pa.field("q", pa.string())]), nullable=False),
])
# Iceberg's ids as the helper writes them: field -> id, list element and
# map key/value ids inside
NESTED_IDS = {"a": 1, "b": 2, "b.element": 3, "b.element.x": 4, "b.element.y": 5, "c": 6,
              "c.key": 7, "c.value": 8, "ll": 9, "ll.element": 10, "ll.element.element": 11,
              "st": 12, "st.p": 13, "st.q": 14}
# leaves: path_in_schema, max def, max rep
NESTED_LEAVES = [("a", 0, 0), ("b.list.element.x", 4, 1), ("b.list.element.y", 4, 1),
                 ("c.key_value.key", 2, 1), ("c.key_value.value", 3, 1),
                 ("ll.list.element.list.element", 5, 2), ("st.p", 0, 0), ("st.q", 1, 0)]


def leaf_types(t):
    if pa.types.is_struct(t):
        return [x for i in range(t.num_fields) for x in leaf_types(t.field(i).type)]
    if pa.types.is_map(t):
        return leaf_types(t.key_type) + leaf_types(t.item_type)
    if pa.types.is_list(t):
        return leaf_types(t.value_type)
    return [t]


def shred(t, nullable, v, r, d, rd, out):
    """Appends (rep, def, value) of v to each leaf's list in out."""
    if v is None:
        assert nullable
        for leaf in out:
            leaf.append((r, d, None))
        return
    if nullable:
        d += 1
    if pa.types.is_struct(t):
        k = 0
        for i in range(t.num_fields):
            f = t.field(i)
            n = len(leaf_types(f.type))
            shred(f.type, f.nullable, v[f.name], r, d, rd, out[k:k + n])
            k += n
    elif pa.types.is_list(t) or pa.types.is_map(t):
        if not v:
            for leaf in out:
                leaf.append((r, d, None))
            return
        for i, x in enumerate(v):
            ri = r if i == 0 else rd + 1
            if pa.types.is_list(t):
                shred(t.value_type, t.value_field.nullable, x, ri, d + 1, rd + 1, out)
            else:
                kn = len(leaf_types(t.key_type))
                shred(t.key_type, False, x[0], ri, d + 1, rd + 1, out[:kn])
                shred(t.item_type, t.item_field.nullable, x[1], ri, d + 1, rd + 1, out[kn:])
    else:
        out[0].append((r, d, v))


def expected_levels(schema, rows):
    """Per leaf (in schema order): its type, and (rep, def, value) entries."""
    out = []
    for f in schema:
        leaves = [[] for _ in leaf_types(f.type)]
        for row in rows:
            shred(f.type, f.nullable, row[f.name], 0, 0, 0, leaves)
        out += list(zip(leaf_types(f.type), leaves))
    return out


def check_ours_levels(path, schema, rows):
    """Our reader's levels and values of every leaf against shredded rows."""
    got = subprocess.run([SAMPLE, "read", path], check=True, timeout=120, capture_output=True,
                         text=True).stdout.splitlines()
    want = expected_levels(schema, rows)
    assert len(got) == len(want)
    for line, (typ, entries) in zip(got, want):
        col = json.loads(line)
        name = ".".join(col["path"])
        max_def = col["max_def"]
        vals = [as_ours(v, typ) if d == max_def else None for (_, d, v) in entries]
        assert col["values"] == vals, name
        if col["max_rep"] > 0 or max_def > 1:
            assert col["def"] == [d for (_, d, _) in entries], name
            assert col["rep"] == ([r for (r, _, _) in entries] if col["max_rep"] else []), name
        else:
            assert all(r == 0 for (r, _, _) in entries) and len(vals) == len(rows), name
    return [json.loads(line) for line in got]


@pytest.fixture(scope="module", params=[("zstd", "dict"), ("snappy", "plain"), ("gzip", "dict"),
                                        ("none", "plain")])
def ours_nested(request, tmp_path_factory):
    assert os.path.exists(SAMPLE), "build the helper first (cmake --build build)"
    codec, dic = request.param
    path = str(tmp_path_factory.mktemp("lake") / ("nested-%s-%s.parquet" % (codec, dic)))
    subprocess.run([SAMPLE, "write-nested", path, codec, dic], check=True, timeout=60)
    return path, codec, dic


def test_nested_pyarrow_reads_ours(ours_nested):
    path, codec, dic = ours_nested
    table = pq.read_table(path)
    assert table.num_rows == ROWS
    want = nested_rows()
    got = table.to_pylist()
    bad = [k for k in range(ROWS) if got[k] != want[k]]
    assert not bad, "row %d: %r != %r" % (bad[0], got[bad[0]], want[bad[0]])
    # types: lists, a map, structs; nullability as written
    for f in NESTED_SCHEMA:
        g = table.schema.field(f.name)
        assert g.nullable == f.nullable, f.name
        assert str(g.type).split("<")[0] == str(f.type).split("<")[0], (f.name, g.type)
    assert pa.types.is_map(table.schema.field("c").type)
    # field ids on every field, groups included
    ids = {}

    def walk(field, prefix):
        name = prefix + field.name
        if field.metadata and b"PARQUET:field_id" in field.metadata:
            ids[name] = int(field.metadata[b"PARQUET:field_id"])
        t = field.type
        if pa.types.is_map(t):
            walk(t.key_field, name + "."), walk(t.item_field, name + ".")
        elif pa.types.is_list(t):
            walk(t.value_field, name + ".")
        elif pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i), name + ".")
    for f in table.schema:
        walk(f, "")
    assert ids == NESTED_IDS


def test_nested_metadata(ours_nested):
    path, codec, dic = ours_nested
    f = pq.ParquetFile(path)
    md = f.metadata
    assert md.num_row_groups > 1 and md.num_rows == ROWS
    sch = f.schema
    text = str(sch)
    # groups: annotations (pyarrow prints the logical type), the unnamed levels without ids
    for line in ["optional group field_id=2 b (List)", "repeated group field_id=-1 list",
                 "optional group field_id=3 element", "optional group field_id=6 c (Map)",
                 "repeated group field_id=-1 key_value", "required binary field_id=7 key (String)",
                 "optional group field_id=10 element (List)", "required group field_id=12 st"]:
        assert line in text, line
    want = nested_rows()
    start = 0
    for i, (p, max_def, max_rep) in enumerate(NESTED_LEAVES):
        c = sch.column(i)
        assert c.path == p
        assert (c.max_definition_level, c.max_repetition_level) == (max_def, max_rep), p
    levels = expected_levels(NESTED_SCHEMA, want)
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        n = rg.num_rows
        for i, (p, max_def, max_rep) in enumerate(NESTED_LEAVES):
            col = rg.column(i)
            assert col.path_in_schema == p
            assert col.compression == ("UNCOMPRESSED" if codec == "none" else codec.upper())
            # num_values: level entries; null_count: entries below max_def
            entries = levels[i][1]
            starts = [k for k, e in enumerate(entries) if e[0] == 0] + [len(entries)]
            mine = entries[starts[start]:starts[start + n]]
            assert col.num_values == len(mine), (g, p)
            st = col.statistics
            assert st.null_count == sum(1 for e in mine if e[1] < max_def), (g, p)
            present = [e[2] for e in mine if e[1] == max_def]
            if present:
                key = (lambda v: v.encode()) if isinstance(present[0], str) else None
                assert st.has_min_max
                assert st.min == min(present, key=key) and st.max == max(present, key=key), (g, p)
            if p == "b.list.element.y":
                assert ("RLE_DICTIONARY" in col.encodings) == (dic == "dict"), col.encodings
        start += n
    assert start == ROWS


def test_nested_duckdb_reads_ours(ours_nested):
    duckdb = pytest.importorskip("duckdb")
    path, _, _ = ours_nested
    got = duckdb.sql("select a, b, c, ll, st from read_parquet('%s')" % path).fetchall()
    want = nested_rows()
    assert len(got) == ROWS
    for k, (row, w) in enumerate(zip(got, want)):
        # duckdb: a MAP as a dict, a struct as a dict, lists as lists
        c = None if w["c"] is None else dict(w["c"])
        assert row == (w["a"], w["b"], c, w["ll"], w["st"]), k


def test_nested_our_reader_reads_ours(ours_nested):
    path, _, _ = ours_nested
    cols = check_ours_levels(path, NESTED_SCHEMA, nested_rows())
    assert [c["field_id"] for c in cols] == [1, 4, 5, 7, 8, 11, 13, 14]


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("compression", ["zstd", "snappy", "gzip", "none"])
def test_nested_pyarrow_files(tmp_path, dictionary, compression):
    rows = nested_rows(3000)
    table = pa.Table.from_pylist(rows, schema=NESTED_SCHEMA)
    path = str(tmp_path / "nested.parquet")
    pq.write_table(table, path, use_dictionary=dictionary, compression=compression,
                   data_page_version="1.0", use_compliant_nested_type=True,
                   row_group_size=1100, data_page_size=512, write_batch_size=64)
    md = pq.ParquetFile(path).metadata
    assert md.num_row_groups == 3
    assert md.row_group(0).column(5).path_in_schema == "ll.list.element.list.element"
    check_ours_levels(path, NESTED_SCHEMA, rows)
