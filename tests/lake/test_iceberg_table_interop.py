"""Iceberg v2 tables written by lake_iceberg_table.h read by pyiceberg, and
pyiceberg's table metadata read by our decoder.

The helper (tests/lake/iceberg_table_sample.c, `write DIR`) creates a table
in the Hadoop layout as flussd's tiering will: a Fluss log table's columns
plus __bucket, __offset, __timestamp; identity(__bucket); sort order 1 on
__offset; two snapshots of one Parquet file each (v1 empty, v2, v3). It
prints what it wrote.

- pyiceberg's StaticTable, from metadata/v3.metadata.json and from the
  table directory (version-hint.text), scans exactly the rows written, at
  the current snapshot and at the first; its metrics evaluator, pruning
  files by our manifests' bounds, keeps the right files; schema, spec,
  sort order, properties, snapshots, refs and logs are as written.
- pyiceberg writes tables (SqlCatalog on SQLite: create, append, add a
  column, append; a partitioned, sorted one) and `--decode` reads every
  metadata file: the values it prints equal the file's.
- Nested columns (`write-nested DIR`: the table fl_lake_table_create makes
  for `a INT, b ARRAY<ROW<x INT, y STRING NOT NULL>>, c MAP<STRING, INT NOT
  NULL>`, then ALTER's ADD COLUMN d MAP<STRING, ARRAY<ROW<p INT NOT
  NULL>>>): pyiceberg loads both versions and sees the list, struct and map
  types with our ids and requiredness, and its Arrow schema; pyiceberg
  creating the same schema (its fresh ids, the order Java's
  TypeUtil.assignFreshIds numbers in) and adding the same column give the
  same ids as ours; and our decoder reads pyiceberg's nested tables.

Environment: LAKE_ICEBERG_TABLE_SAMPLE = path of the helper (default build/).
"""

import datetime
import decimal
import glob
import json
import os
import subprocess

import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual, IsNull
from pyiceberg.table import StaticTable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.environ.get("LAKE_ICEBERG_TABLE_SAMPLE",
                        os.path.join(ROOT, "build", "lake_iceberg_table_sample"))
UTC = datetime.timezone.utc
COLUMNS = ["id", "name", "ts", "amount", "__bucket", "__offset", "__timestamp"]


def run_sample(*args):
    assert os.path.exists(SAMPLE), "build the helper first (cmake --build build)"
    r = subprocess.run([SAMPLE, *args], timeout=60, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = os.path.realpath(str(tmp_path_factory.mktemp("iceberg_table")))
    written = run_sample("write", d)
    return d, written


def micros(v):
    return None if v is None else datetime.datetime(1970, 1, 1, tzinfo=UTC) + \
        datetime.timedelta(microseconds=v)


def expected_rows(snapshots):
    rows = []
    for s in snapshots:
        for r in s["rows"]:
            rows.append({"id": r["id"], "name": r["name"], "ts": micros(r["ts"]),
                         "amount": None if r["amount"] is None else decimal.Decimal(r["amount"]),
                         "__bucket": r["__bucket"], "__offset": r["__offset"],
                         "__timestamp": micros(r["__timestamp"])})
    return sorted(rows, key=lambda r: (r["__bucket"], r["__offset"]))


def scanned(tbl, **kw):
    t = tbl.scan(**kw).to_arrow()
    assert t.column_names == COLUMNS
    return sorted(t.to_pylist(), key=lambda r: (r["__bucket"], r["__offset"]))


# ---- pyiceberg reads ours ----


def test_scan_from_metadata_file_and_from_hint(table):
    d, w = table
    with open(os.path.join(d, "metadata", "version-hint.text"), "rb") as f:
        assert f.read() == b"3"  # digits only: pyiceberg takes the content literally
    want = expected_rows(w["snapshots"])
    assert len(want) == 5
    for where in (os.path.join(d, "metadata", "v3.metadata.json"), d):
        tbl = StaticTable.from_metadata(where)
        assert scanned(tbl) == want, where


def test_arrow_types(table):
    d, _ = table
    t = StaticTable.from_metadata(d).scan().to_arrow()
    assert t.schema.field("id").type == pa.int32() and not t.schema.field("id").nullable
    assert t.schema.field("name").type in (pa.string(), pa.large_string())
    assert t.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert t.schema.field("amount").type == pa.decimal128(10, 2)
    assert t.schema.field("__offset").type == pa.int64()


def test_time_travel_to_the_first_snapshot(table):
    d, w = table
    tbl = StaticTable.from_metadata(d)
    first = w["snapshots"][0]
    assert scanned(tbl, snapshot_id=first["snapshot_id"]) == expected_rows([first])


@pytest.mark.parametrize("expr,ids,files", [
    (GreaterThanOrEqual("id", 4), [4, 5], 1),
    (EqualTo("amount", decimal.Decimal("-5.00")), [2], 1),
    (EqualTo("amount", decimal.Decimal("999999.99")), [4], 1),
    (EqualTo("name", ""), [5], 1),
    (EqualTo("name", "e"), [], 0),  # above both files' upper bounds ("carol", "dave")
    (IsNull("ts"), [2], 1),
    (EqualTo("__bucket", 1), [4, 5], 1),
    (EqualTo("ts", datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)), [5], 1),
])
def test_filters_prune_by_our_bounds(table, expr, ids, files):
    """pyiceberg drops files whose bounds (or partition) exclude the
    predicate: wrong bounds (byte order, decimal width, string bytes) lose
    rows or keep files here."""
    tbl = StaticTable.from_metadata(table[0])
    assert sorted(r["id"] for r in scanned(tbl, row_filter=expr)) == ids
    assert len(list(tbl.scan(row_filter=expr).plan_files())) == files


def test_schema_spec_sort_order_properties(table):
    d, _ = table
    m = StaticTable.from_metadata(d).metadata
    assert m.format_version == 2
    s = m.schema()
    assert [(f.field_id, f.name, f.required, str(f.field_type)) for f in s.fields] == [
        (1, "id", True, "int"), (2, "name", False, "string"), (3, "ts", False, "timestamptz"),
        (4, "amount", False, "decimal(10, 2)"), (5, "__bucket", True, "int"),
        (6, "__offset", True, "long"), (7, "__timestamp", True, "timestamptz")]
    assert s.fields[1].doc == "a customer"
    assert list(s.identifier_field_ids) == [1]
    assert m.last_column_id == 7
    spec = m.spec()
    assert spec.spec_id == 0
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields] == [
        (5, 1000, "__bucket", "identity")]
    assert m.last_partition_id == 1000
    order = m.sort_order_by_id(m.default_sort_order_id)
    assert order.order_id == 1
    assert [(f.source_id, str(f.transform), f.direction.value, f.null_order.value)
            for f in order.fields] == [(6, "identity", "asc", "nulls-first")]
    assert m.properties == {"fluss.table.replication.factor": "1",
                            "fluss.table.datalake.enabled": "true",
                            "fluss.table.datalake.format": "iceberg",
                            "write.parquet.compression-codec": "zstd"}


def test_snapshots_refs_and_logs(table):
    d, w = table
    m = StaticTable.from_metadata(d).metadata
    assert str(m.table_uuid) == w["table_uuid"]
    assert m.location == w["location"] == "file://" + d
    assert m.last_sequence_number == 2
    assert m.current_snapshot_id == w["snapshots"][1]["snapshot_id"]
    assert m.refs["main"].snapshot_id == m.current_snapshot_id
    assert m.refs["main"].snapshot_ref_type.value == "branch"
    assert len(m.snapshots) == 2
    total = 0
    for s, ws in zip(m.snapshots, w["snapshots"]):
        assert s.snapshot_id == ws["snapshot_id"]
        assert s.parent_snapshot_id == ws["parent"]
        assert s.sequence_number == ws["sequence_number"]
        assert s.manifest_list == ws["manifest_list"]
        assert s.schema_id == 0
        f = ws["data_files"][0]
        total += f["file_size_in_bytes"]
        summary = dict(s.summary.additional_properties)
        assert s.summary.operation.value == "append"
        assert summary == {
            "commit-user": "__fluss_lake_tiering", "added-data-files": "1",
            "added-records": str(f["record_count"]), "added-files-size": str(f["file_size_in_bytes"]),
            "changed-partition-count": "1",
            "total-data-files": str(ws["sequence_number"]),
            "total-records": str(sum(len(x["rows"]) for x in
                                     w["snapshots"][:ws["sequence_number"]])),
            "total-files-size": str(total), "total-delete-files": "0",
            "total-position-deletes": "0", "total-equality-deletes": "0"}
    ids = [x["snapshot_id"] for x in w["snapshots"]]
    assert ids[1] == ids[0] + 1  # monotonic ids, not random ones
    assert [e.snapshot_id for e in m.snapshot_log] == ids
    assert [e.timestamp_ms for e in m.snapshot_log] == [s.timestamp_ms for s in m.snapshots]
    assert [e.metadata_file for e in m.metadata_log] == [
        "file://%s/metadata/v%d.metadata.json" % (d, v) for v in (1, 2)]
    assert m.last_updated_ms >= m.snapshots[1].timestamp_ms


def test_data_files_and_manifests(table):
    d, w = table
    tbl = StaticTable.from_metadata(d)
    tasks = sorted(tbl.scan().plan_files(), key=lambda t: t.file.file_path)
    want = sorted((s["data_files"][0] for s in w["snapshots"]), key=lambda f: f["file_path"])
    assert [t.file.file_path for t in tasks] == [f["file_path"] for f in want]
    for t, f in zip(tasks, want):
        assert t.file.record_count == f["record_count"]
        assert t.file.file_size_in_bytes == f["file_size_in_bytes"]
        assert t.file.file_size_in_bytes == os.path.getsize(f["file_path"][len("file://"):])
        assert t.file.partition[0] == f["bucket"]
        assert set(t.file.value_counts) == set(range(1, 8))
        assert t.file.null_value_counts[5] == 0
    manifests = tbl.current_snapshot().manifests(tbl.io)
    assert len(manifests) == 2  # the second round's list keeps the first manifest
    assert sorted(m.sequence_number for m in manifests) == [1, 2]


def test_our_loader(table):
    d, w = table
    got = run_sample("load", d)
    assert got["version"] == 3
    assert got["metadata_path"] == os.path.join(d, "metadata", "v3.metadata.json")
    assert got["metadata_location"] == "file://" + got["metadata_path"]
    with open(got["metadata_path"]) as f:
        assert got["metadata"] == json.load(f)


# ---- our decoder reads pyiceberg's ----


def normal_type(t):
    """A type as we write it: decimals without spaces, at every depth."""
    if isinstance(t, str):
        return t.replace(" ", "")
    if isinstance(t, dict):
        return {k: normal_type(v) if k in ("element", "key", "value") else
                [normal_field(f) for f in v] if k == "fields" else v for k, v in t.items()}
    return t


def normal_field(f):
    return {k: normal_type(v) if k == "type" else v for k, v in f.items()
            if k not in ("initial-default", "write-default") and not (k == "doc" and v is None)}


def assert_same_metadata(ours, theirs):
    """Every key we keep, as pyiceberg wrote it (defaults where it omits)."""
    for k in ("format-version", "table-uuid", "location", "last-sequence-number",
              "last-updated-ms", "last-column-id", "current-schema-id", "default-spec-id",
              "last-partition-id", "default-sort-order-id", "properties", "partition-specs",
              "sort-orders", "snapshot-log", "metadata-log"):
        assert ours[k] == theirs.get(k, [] if k.endswith("log") else None), k
    assert ours["current-snapshot-id"] == theirs.get("current-snapshot-id", -1)
    assert ours["refs"] == theirs.get("refs", {})
    assert len(ours["schemas"]) == len(theirs["schemas"])
    for a, b in zip(ours["schemas"], theirs["schemas"]):
        assert a["schema-id"] == b["schema-id"]
        assert a["identifier-field-ids"] == b.get("identifier-field-ids", [])
        assert [(f["id"], f["name"], f["required"], f["type"], f.get("doc")) for f in a["fields"]] == \
            [(f["id"], f["name"], f["required"], normal_type(f["type"]), f.get("doc"))
             for f in b["fields"]]
    assert ours["snapshots"] == theirs.get("snapshots", [])


def decode_all(metadata_dir):
    files = sorted(glob.glob(os.path.join(metadata_dir, "*.metadata.json")))
    assert files
    out = []
    for path in files:
        with open(path) as f:
            theirs = json.load(f)
        got = run_sample("--decode", path)
        assert_same_metadata(got["metadata"], theirs)
        out.append((theirs, got))
    return out


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    from pyiceberg.catalog.sql import SqlCatalog  # needs sqlalchemy (requirements.txt)
    wh = os.path.realpath(str(tmp_path_factory.mktemp("pyiceberg")))
    cat = SqlCatalog("interop", uri="sqlite:///%s/catalog.db" % wh, warehouse="file://" + wh)
    cat.create_namespace("db")
    return cat


def test_we_decode_pyiceberg_tables(catalog):
    from pyiceberg.schema import Schema
    from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType,
                                 FixedType, FloatType, IntegerType, LongType, NestedField,
                                 StringType, TimestampType, TimestamptzType, TimeType)
    schema = Schema(
        NestedField(1, "b", BooleanType()), NestedField(2, "i", IntegerType(), required=True),
        NestedField(3, "l", LongType()), NestedField(4, "f", FloatType()),
        NestedField(5, "d", DoubleType(), doc="a double"), NestedField(6, "day", DateType()),
        NestedField(7, "t", TimeType()), NestedField(8, "ts", TimestampType()),
        NestedField(9, "tz", TimestamptzType()), NestedField(10, "s", StringType()),
        NestedField(11, "bin", BinaryType()), NestedField(12, "dec", DecimalType(12, 3)),
        NestedField(13, "fx", FixedType(4)), identifier_field_ids=[2])
    tbl = catalog.create_table("db.types", schema=schema, properties={"owner": "interop"})
    arrow = tbl.schema().as_arrow()
    rows = pa.Table.from_pylist([
        {"b": True, "i": 1, "l": 2, "f": 1.5, "d": 2.5, "day": datetime.date(2024, 1, 2),
         "t": datetime.time(1, 2, 3), "ts": datetime.datetime(2024, 1, 2, 3, 4, 5),
         "tz": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "s": "x", "bin": b"\x00\x01",
         "dec": decimal.Decimal("1.250"), "fx": b"abcd"},
        {"b": None, "i": 2, "l": None, "f": None, "d": None, "day": None, "t": None, "ts": None,
         "tz": None, "s": None, "bin": None, "dec": None, "fx": None}], schema=arrow)
    tbl.append(rows)
    with tbl.update_schema() as u:
        u.add_column("extra", StringType())
    tbl.append(pa.Table.from_pylist([{"i": 3, "extra": "e"}], schema=tbl.schema().as_arrow()))
    decoded = decode_all(os.path.dirname(tbl.metadata_location[len("file://"):]))
    assert len(decoded) == 4  # create, append, add column, append
    last = decoded[-1][1]["metadata"]
    assert len(last["schemas"]) == 2 and last["current-schema-id"] == 1
    assert [s["sequence-number"] for s in last["snapshots"]] == [1, 2]
    assert last["schemas"][0]["fields"][11]["type"] == "decimal(12,3)"  # pyiceberg: "decimal(12, 3)"
    assert last["schemas"][0]["fields"][12]["type"] == "fixed[4]"


def test_we_decode_a_partitioned_sorted_pyiceberg_table(catalog):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.types import DateType, LongType, NestedField, StringType
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "region", StringType()), NestedField(3, "day", DateType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"),
                         PartitionField(1, 1001, BucketTransform(8), "id_bucket"),
                         PartitionField(3, 1002, IdentityTransform(), "day"))
    order = SortOrder(SortField(source_id=1, transform=IdentityTransform()),
                      SortField(source_id=3, transform=IdentityTransform(),
                                direction=SortDirection.DESC, null_order=NullOrder.NULLS_LAST))
    catalog.create_table("db.parts", schema=schema, partition_spec=spec, sort_order=order)
    # an identity-partitioned one with data (pyiceberg writes bucket[N] only with pyiceberg-core)
    t2 = catalog.create_table("db.regions", schema=schema,
                              partition_spec=PartitionSpec(
                                  PartitionField(2, 1000, IdentityTransform(), "region")))
    t2.append(pa.Table.from_pylist([{"id": 1, "region": "eu"}, {"id": 2, "region": "us"}],
                                   schema=t2.schema().as_arrow()))
    wh = catalog.properties["warehouse"][len("file://"):]
    (theirs, got), = decode_all(os.path.join(wh, "db", "parts", "metadata"))
    assert got["partition_value_types"] == [["string", "int", "date"]]
    assert got["metadata"]["sort-orders"][0]["fields"][1]["direction"] == "desc"
    for theirs, got in decode_all(os.path.join(wh, "db", "regions", "metadata")):
        assert got["partition_value_types"] == [["string"]]


# ---- nested columns ----


def ids_by_path(schema):
    """{column path: (field id, required)} of a pyiceberg schema, at every depth."""
    out = {}
    for fid in schema._lazy_id_to_field:  # every id, nested ones included
        out[schema.find_column_name(fid)] = (fid, schema.find_field(fid).required)
    return out


OUR_NESTED_IDS = {
    "a": (1, False), "b": (2, False), "b.element": (7, False), "b.element.x": (8, False),
    "b.element.y": (9, True), "c": (3, False), "c.key": (10, True), "c.value": (11, True),
    "__bucket": (4, True), "__offset": (5, True), "__timestamp": (6, True)}
OUR_ADDED_IDS = {
    "d": (12, False), "d.key": (13, True), "d.value": (14, False),
    "d.value.element": (15, False), "d.value.element.p": (16, True)}


@pytest.fixture(scope="module")
def nested_table(tmp_path_factory):
    d = os.path.realpath(str(tmp_path_factory.mktemp("iceberg_nested")))
    run_sample("write-nested", d)
    return d


def test_pyiceberg_reads_our_nested_schema(nested_table):
    from pyiceberg.types import IntegerType, ListType, MapType, StringType, StructType
    tbl = StaticTable.from_metadata(nested_table)
    s = tbl.schema()
    assert [f.name for f in s.fields] == ["a", "b", "c", "d", "__bucket", "__offset",
                                          "__timestamp"]
    assert ids_by_path(s) == {**OUR_NESTED_IDS, **OUR_ADDED_IDS}
    b = s.find_field("b")
    assert isinstance(b.field_type, ListType) and b.doc == "rows"
    assert b.field_type.element_id == 7 and not b.field_type.element_required
    elem = b.field_type.element_type
    assert isinstance(elem, StructType) and [f.name for f in elem.fields] == ["x", "y"]
    assert elem.fields[0].field_type == IntegerType() and elem.fields[1].field_type == StringType()
    c = s.find_field("c").field_type
    assert isinstance(c, MapType) and (c.key_id, c.value_id) == (10, 11) and c.value_required
    d = s.find_field("d").field_type
    assert isinstance(d, MapType) and not d.value_required
    assert isinstance(d.value_type, ListType) and d.value_type.element_id == 15
    assert tbl.metadata.last_column_id == 16
    # the first version, as create made it
    first = StaticTable.from_metadata(os.path.join(nested_table, "metadata", "v1.metadata.json"))
    assert first.metadata.last_column_id == 11
    assert ids_by_path(first.schema()) == OUR_NESTED_IDS
    assert [sc.schema_id for sc in tbl.schemas().values()] == [0, 1]


def test_pyiceberg_arrow_schema_of_our_nested_table(nested_table):
    t = StaticTable.from_metadata(nested_table).scan().to_arrow()  # no snapshot: no rows
    assert t.num_rows == 0
    b = t.schema.field("b").type
    assert pa.types.is_list(b) or pa.types.is_large_list(b)
    assert [f.name for f in b.value_type] == ["x", "y"]
    assert b.value_type.field("x").nullable and not b.value_type.field("y").nullable
    c = t.schema.field("c").type
    assert pa.types.is_map(c) and c.item_type == pa.int32()
    assert not c.item_field.nullable  # value-required
    d = t.schema.field("d").type
    assert pa.types.is_map(d) and d.item_field.nullable


def test_pyiceberg_numbers_nested_ids_as_we_do(catalog, nested_table):
    """pyiceberg's create renumbers a schema as Java's catalogs do
    (assignFreshIds: a struct's fields first, then their insides; a list's
    element; a map's key and value, then their insides), and its add_column
    numbers the added type after last-column-id the same way: our ids."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import (IntegerType, ListType, LongType, MapType, NestedField,
                                 StringType, StructType, TimestamptzType)
    # ids as Fluss's converter might hand them over: anything unique
    schema = Schema(
        NestedField(91, "a", IntegerType()),
        NestedField(92, "b", ListType(93, StructType(
            NestedField(94, "x", IntegerType()),
            NestedField(95, "y", StringType(), required=True)), element_required=False),
            doc="rows"),
        NestedField(96, "c", MapType(97, StringType(), 98, IntegerType(), value_required=True)),
        NestedField(99, "__bucket", IntegerType(), required=True),
        NestedField(100, "__offset", LongType(), required=True),
        NestedField(101, "__timestamp", TimestamptzType(), required=True))
    tbl = catalog.create_table("db.nested", schema=schema)
    assert ids_by_path(tbl.schema()) == OUR_NESTED_IDS
    assert tbl.metadata.last_column_id == 11
    with tbl.update_schema() as u:
        u.add_column("d", MapType(1, StringType(), 2, ListType(3, StructType(
            NestedField(4, "p", IntegerType(), required=True)), element_required=False),
            value_required=False))
        u.move_before("d", "__bucket")
    assert ids_by_path(tbl.schema()) == {**OUR_NESTED_IDS, **OUR_ADDED_IDS}
    assert [f.name for f in tbl.schema().fields] == \
        [f.name for f in StaticTable.from_metadata(nested_table).schema().fields]
    # and our decoder reads what pyiceberg wrote, nested types whole
    decoded = decode_all(os.path.dirname(tbl.metadata_location[len("file://"):]))
    assert len(decoded) == 2  # create, add column
    last = decoded[-1][1]["metadata"]
    assert last["last-column-id"] == 16
    dcol = last["schemas"][1]["fields"][3]
    assert dcol["name"] == "d" and dcol["type"]["type"] == "map"
    assert dcol["type"]["value"]["element"]["fields"][0] == \
        {"id": 16, "name": "p", "required": True, "type": "int"}
